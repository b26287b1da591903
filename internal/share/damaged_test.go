package share

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
)

// TestRemoteMissingObjects: a remote whose ref names an object it no longer
// holds (a disk fault, an rm in objects/, a broken backup) is reachable
// but damaged. Push, pull and clone fail without changing either side, and
// say so: before, push blamed "permissions, a hook or a protected ref", and
// pull and clone asked to check the URL and the network.
func TestRemoteMissingObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shared := bareServer(t, t.TempDir(), "shared.git")
	alice := newProject(t, map[string]string{"doc": "one\n"})
	addRemote(t, alice, "origin", shared)
	alice.run(t, "r1", "doc")
	mustPush(t, alice, "origin")
	tip := git(t, shared, "rev-parse", store.ResourcesPrefix+"demo/doc")
	if err := os.Remove(filepath.Join(shared, "objects", tip[:2], tip[2:])); err != nil {
		t.Fatal(err) // a small push is kept loose (receive.unpackLimit)
	}
	damaged := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s from a remote that lacks %s: succeeded", what, tip)
		}
		if h := hint.Of(err); !strings.Contains(h, "damaged") || !strings.Contains(h, "git fsck") {
			t.Fatalf("%s from a remote that lacks %s: %v\nhint: %s\nwant a hint that the remote is damaged (git fsck)", what, tip, err, h)
		}
	}

	alice.write(t, "doc", "two\n")
	alice.run(t, "r2", "doc")
	before := allRefs(t, shared)
	_, err := Push(ctx, alice.s, "origin", Options{})
	damaged("push", err)
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("push: %v, want ErrDenied (the server refused it)", err)
	}
	if after := allRefs(t, shared); after != before {
		t.Fatalf("a failed push changed the remote:\n%s\n%s", before, after)
	}

	bob := newProject(t, map[string]string{"doc": "one\n"})
	addRemote(t, bob, "origin", shared)
	bobBefore := allRefs(t, bob.path())
	_, err = Pull(ctx, bob.s, "origin", Options{})
	damaged("pull", err)
	if after := allRefs(t, bob.path()); after != bobBefore {
		t.Fatalf("a failed pull moved refs:\n%s\n%s", bobBefore, after)
	}

	dst := filepath.Join(t.TempDir(), "clone")
	_, err = Clone(ctx, shared, dst, Options{})
	damaged("clone", err)
	if _, serr := os.Stat(dst); !os.IsNotExist(serr) {
		t.Fatalf("a failed clone left %s (%v)", dst, serr)
	}
}

// TestPushFromDamagedStore: a store that lacks an object its own refs name
// (a snapshot blob removed from objects/) cannot send it: git's
// pack-objects fails here ("unable to read"), and the remote reports an
// unpacker error. The push says the fault is this store's and points at
// `readproof verify`; before, it blamed the remote's "permissions, a hook
// or a protected ref". Nothing reaches the remote.
func TestPushFromDamagedStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shared := bareServer(t, t.TempDir(), "shared.git")
	alice := newProject(t, map[string]string{"doc": "one\n"})
	addRemote(t, alice, "origin", shared)
	m := alice.run(t, "r1", "doc")
	blob := m.Entries[0].Snapshot
	if err := gitstore.UnpackForTest(alice.path()); err != nil { // a small write makes a small pack
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(alice.path(), "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	before := allRefs(t, shared)
	_, err := Push(ctx, alice.s, "origin", Options{})
	if err == nil {
		t.Fatal("push of a store that lacks a snapshot succeeded")
	}
	if h := hint.Of(err); !strings.Contains(err.Error(), blob) || !strings.Contains(h, "readproof verify") || strings.Contains(h, "permissions") {
		t.Fatalf("push of a store that lacks %s: %v\nhint: %s\nwant the missing object named and a hint to run readproof verify here", blob, err, h)
	}
	if errors.Is(err, ErrDenied) || errors.Is(err, ErrRejected) {
		t.Fatalf("push of a damaged store reads as the remote's refusal: %v", err)
	}
	if after := allRefs(t, shared); after != before {
		t.Fatalf("a failed push changed the remote:\n%s\n%s", before, after)
	}
}
