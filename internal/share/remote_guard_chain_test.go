package share

import (
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/store"
)

// TestGuardRefusesForgedChainCommits: the hook of a guarded remote checks
// every commit a push adds to a resource or tag chain, as pull and clone
// do, not the new tip alone: a forged observation, or a tag move to other
// bytes, under a good tip was taken, and every pull from the remote was
// then refused.
func TestGuardRefusesForgedChainCommits(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	for _, kind := range []string{"observation-below", "tag-below"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			u := guardedRemote(t, base, kind+".git")
			p := newProject(t, map[string]string{"doc": "the real text\n"})
			addRemote(t, p, "origin", u)
			p.run(t, "first", "doc")
			p.tag(t, "doc", "prod")
			mustPush(t, p, "origin")
			before := allRefs(t, u)
			forge(t, p, kind)
			ref := store.ResourcesPrefix + "demo/doc"
			want := "hashes to" // the observation's snapshot is other bytes
			if kind == "tag-below" {
				ref, want = store.TagsPrefix+"demo/doc/prod", "content is" // the move's content file
			}
			out := pushRefused(t, p.path(), u, ref+":"+ref)
			if !strings.Contains(out, want) {
				t.Errorf("refused without naming the forged commit (%q):\n%s", want, out)
			}
			if after := allRefs(t, u); after != before {
				t.Fatalf("the forged chain was taken:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

// TestGuardRefusesRunNamedForAnother: the hook refuses a run tag naming a
// manifest recorded under another run id with no rename on the journal
// (pull and clone refuse it: checkRunNames), and takes a rename readproof
// pushes with its journal.
func TestGuardRefusesRunNamedForAnother(t *testing.T) {
	t.Parallel()
	u := guardedRemote(t, t.TempDir(), "shared.git")
	p := newProject(t, map[string]string{"doc": "the real text\n"})
	addRemote(t, p, "origin", u)
	p.run(t, "a-1", "doc")
	mustPush(t, p, "origin")
	before := allRefs(t, u)
	out := pushRefused(t, p.path(), u, store.RunsPrefix+"a-1:"+store.RunsPrefix+"evil")
	if !strings.Contains(out, "records run a-1") {
		t.Errorf("refused without saying whose manifest it is:\n%s", out)
	}
	if after := allRefs(t, u); after != before {
		t.Fatalf("the run named for another was taken:\n%s\nwas\n%s", after, before)
	}
	// a rename readproof records on its journal is pushed with it, and taken
	if _, err := RenameRun(p.s, "a-1", "a-2", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	// the journal first, then the run alone: the remote's journal has it
	git(t, p.path(), "push", u, store.JournalRef+":"+store.JournalRef)
	git(t, p.path(), "push", u, store.RunsPrefix+"a-2:"+store.RunsPrefix+"a-2")
	mustPush(t, p, "origin")
	if got := git(t, u, "rev-parse", store.RunsPrefix+"a-2"); got != git(t, p.path(), "rev-parse", store.RunsPrefix+"a-2") {
		t.Fatalf("the renamed run is not on the remote: %s", got)
	}
	mustPull(t, p, "origin")
}

// TestGuardRefusesJournalOrphan: the hook refuses a journal that records a
// run no run ref names once the push lands (pull and clone refuse it:
// journalOrphans), and takes the same journal pushed with the run.
func TestGuardRefusesJournalOrphan(t *testing.T) {
	t.Parallel()
	u := guardedRemote(t, t.TempDir(), "shared.git")
	p := newProject(t, map[string]string{"doc": "the real text\n"})
	addRemote(t, p, "origin", u)
	p.run(t, "a-1", "doc")
	mustPush(t, p, "origin")
	p.run(t, "b-1", "doc")
	before := allRefs(t, u)
	out := pushRefused(t, p.path(), u, store.JournalRef+":"+store.JournalRef)
	if !strings.Contains(out, "the journal records run b-1") {
		t.Errorf("refused without naming the run:\n%s", out)
	}
	if after := allRefs(t, u); after != before {
		t.Fatalf("the journal was taken without its run:\n%s\nwas\n%s", after, before)
	}
	mustPush(t, p, "origin")
	mustPull(t, p, "origin")
}
