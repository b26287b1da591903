package storecheck_test

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
)

// TestDeletedRunRef (issue 13.1): a run ref deleted while the journal still
// records the run is broken.
func TestDeletedRunRef(t *testing.T) {
	t.Parallel()
	p := newProject(t, twoDocs, "")
	p.run(t, "run-a", uriOf("policies/refunds.md"))
	m := p.run(t, "run-b", uriOf("policies/shipping.md"))
	if rep := p.check(t, storecheck.Options{}); !rep.OK() {
		t.Fatalf("healthy store:\n%s", problems(rep))
	}
	if err := p.s.Git().Update(gitstore.RefUpdate{Name: store.RunsPrefix + "run-b", Old: gitstore.OID(m)}); err != nil {
		t.Fatal(err)
	}
	rep := p.check(t, storecheck.Options{})
	if got := find(rep, storecheck.Broken, "run run-b", "journal records run run-b", m, "missing"); len(got) != 1 {
		t.Fatalf("want the deleted run ref named, got:\n%s", problems(rep))
	}
}

// TestFlippedChecksumByte (issue 13.1): one byte of a loose object's zlib
// checksum flipped: the content still reads, but git fsck fails; verify
// --read-data and replay fail too.
func TestFlippedChecksumByte(t *testing.T) {
	t.Parallel()
	p := newProject(t, twoDocs, "")
	p.run(t, "run-a", uriOf("policies/refunds.md"))
	snap := p.snapshotOf(t, "run-a")
	path := p.looseObject(t, snap)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 0x01
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o444); err != nil {
		t.Fatal(err)
	}
	if data, err := p.s.Git().Blob(gitstore.OID(snap)); err != nil || len(data) == 0 {
		t.Fatalf("the content still reads: %q, %v", data, err)
	}
	if exec.Command("git", "--git-dir", p.storePath(), "fsck", "--no-dangling").Run() == nil {
		t.Fatal("git fsck passes")
	}
	rep := p.check(t, storecheck.Options{ReadData: true})
	if got := find(rep, storecheck.Broken, snap, "corrupt"); len(got) != 1 {
		t.Fatalf("want the object named, got:\n%s", problems(rep))
	}
	if _, err := p.s.Replay("run-a"); !errors.Is(err, store.ErrMismatch) {
		t.Fatalf("replay = %v, want a mismatch", err)
	}
}
