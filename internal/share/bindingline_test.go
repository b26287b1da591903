package share

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/receipts"
)

// TestPullRefusesEditedBinding: a remote whose receipt chain binds a
// version 2 receipt, by a line added to its append commit's message, to a
// manifest its MAC does not name (docs/receipts.md, "Storage") is refused
// by pull, naming the receipt, and nothing is adopted; clone refuses it
// too.
func TestPullRefusesEditedBinding(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	srvDir := bareServer(t, t.TempDir(), "shared.git")
	a := newProject(t, map[string]string{"policy": "p\n"})
	b := newProject(t, map[string]string{"runbook": "r\n"})
	addRemote(t, a, "origin", srvDir)
	addRemote(t, b, "origin", srvDir)
	id := issue(t, a, key, "s", 1)[0]
	g := a.s.Git()
	old := refOf(t, a, receipts.SessionRef("s"))
	c, err := g.Commit(old)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Message, "receipt "+id+"\n") || strings.Contains(c.Message, "run-manifest") {
		t.Fatalf("append commit message %q", c.Message)
	}
	c.Message += "run-manifest: " + strings.Repeat("4b", 20) + "\n"
	edited, err := g.PutCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: receipts.SessionRef("s"), Old: old, New: edited}); err != nil {
		t.Fatal(err)
	}
	mustPush(t, a, "origin")
	before := refsExcept(t, b.path(), "refs/nothing-excluded/")
	_, err = Pull(context.Background(), b.s, "origin", Options{})
	if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "tampered binding") {
		t.Fatalf("pull of a chain with an edited binding line: %v, want ErrUnverified naming %s", err, id)
	}
	if after := refsExcept(t, b.path(), "refs/nothing-excluded/"); after != before {
		t.Fatalf("refused pull changed refs:\n%s\nwant\n%s", after, before)
	}
	if _, err := Clone(context.Background(), srvDir, filepath.Join(t.TempDir(), "c"), Options{}); !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), id) {
		t.Fatalf("clone of a chain with an edited binding line: %v, want ErrUnverified naming %s", err, id)
	}
}

// TestPullRefusesAppendNamingNoReceipt: an append commit whose first line
// was edited so that it names no receipt escaped the binding check (it is
// found by that line), so a version 2 receipt moved to another manifest
// came in through pull; a one-parent commit of a receipt chain whose message
// names no receipt is refused, by pull and by clone, changing no ref.
func TestPullRefusesAppendNamingNoReceipt(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	srvDir := bareServer(t, t.TempDir(), "shared.git")
	a := newProject(t, map[string]string{"policy": "p\n"})
	b := newProject(t, map[string]string{"runbook": "r\n"})
	addRemote(t, a, "origin", srvDir)
	addRemote(t, b, "origin", srvDir)
	issue(t, a, key, "s", 1)
	g := a.s.Git()
	old := refOf(t, a, receipts.SessionRef("s"))
	c, err := g.Commit(old)
	if err != nil {
		t.Fatal(err)
	}
	c.Message = "edited " + c.Message + "run-manifest: " + strings.Repeat("4b", 20) + "\n"
	edited, err := g.PutCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: receipts.SessionRef("s"), Old: old, New: edited}); err != nil {
		t.Fatal(err)
	}
	mustPush(t, a, "origin")
	before := refsExcept(t, b.path(), "refs/nothing-excluded/")
	_, err = Pull(context.Background(), b.s, "origin", Options{})
	if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), string(edited)) || !strings.Contains(err.Error(), "names no receipt") {
		t.Fatalf("pull of a chain whose append names no receipt: %v, want ErrUnverified naming commit %s", err, edited)
	}
	if after := refsExcept(t, b.path(), "refs/nothing-excluded/"); after != before {
		t.Fatalf("refused pull changed refs:\n%s\nwant\n%s", after, before)
	}
	if _, err := Clone(context.Background(), srvDir, filepath.Join(t.TempDir(), "c"), Options{}); !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), "names no receipt") {
		t.Fatalf("clone of a chain whose append names no receipt: %v, want ErrUnverified", err)
	}
}
