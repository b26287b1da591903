package share

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
