package storecheck_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
)

// TestCheckWhileAResourceMoves (session 17): a run recorded while verify
// works moves resource refs after verify has walked them. verify listed
// the resource chains a second time to check their observations, found
// tips it had not walked, and skipped each such chain whole: `readproof
// verify` beside a run of 400 documents said "store ok; … 400 resources (0
// observations)", having checked none. It now checks each chain at the tip
// it walked.
func TestCheckWhileAResourceMoves(t *testing.T) {
	t.Parallel()
	p := newProject(t, map[string]string{"a.md": "a one\n", "b.md": "b one\n"}, "version = 1")
	p.run(t, "r1", uriOf("a.md"), uriOf("b.md"))
	moved := false
	rep := p.check(t, storecheck.Options{Progress: func(done, total int) {
		if done != total || moved {
			return
		}
		// every ref walked: a writer moves a's chain now
		moved = true
		writeFile(t, filepath.Join(p.dir, "a.md"), "a two\n")
		if _, _, err := p.s.RunOnce(context.Background(), "r2", []string{uriOf("a.md")}); err != nil {
			t.Fatal(err)
		}
	}})
	if !moved {
		t.Fatal("the progress callback never saw every ref walked")
	}
	if !rep.OK() || rep.Counts.Resources != 2 || rep.Counts.Observations != 2 {
		t.Errorf("check while a resource moved: ok %v, %d resources, %d observations, want ok, 2 and 2 (as walked)\n%s",
			rep.OK(), rep.Counts.Resources, rep.Counts.Observations, problems(rep))
	}
	after := p.check(t, storecheck.Options{})
	if !after.OK() || after.Counts.Observations != 3 {
		t.Errorf("check after: ok %v, %d observations, want 3\n%s", after.OK(), after.Counts.Observations, problems(after))
	}
}

// TestMissingManifestIsNotCalledIntact (session 17): with a run's manifest
// commit gone (its pack's index deleted, a loose object removed), verify
// reported the run broken and also warned that "the journal does not reach
// this manifest (its writer stopped before recording it); the run is
// intact": the journal, which reaches it, could not be read either. A run
// or a journal whose objects are broken gets no such warning now.
func TestMissingManifestIsNotCalledIntact(t *testing.T) {
	t.Parallel()
	p := newProject(t, map[string]string{"a.md": "a one\n"}, "version = 1")
	id := p.run(t, "r1", uriOf("a.md"))
	if err := os.Remove(p.looseObject(t, id)); err != nil {
		t.Fatal(err)
	}
	p.reopen(t, store.Options{})
	rep := p.check(t, storecheck.Options{})
	if len(find(rep, storecheck.Broken, "run r1", "missing commit")) == 0 {
		t.Fatalf("the missing manifest is not reported broken:\n%s", problems(rep))
	}
	if w := find(rep, storecheck.Warning, "intact"); len(w) > 0 {
		t.Errorf("a run whose manifest is missing is called intact:\n%s", problems(rep))
	}
}
