package share

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// TestPullRefusesRunTagMovedToAnotherRun: a remote whose run tag r1 was
// force-moved (git update-ref, push --force) onto the manifest of another
// run the pulling store already holds, r0, is refused by pull as clone and
// verify refuse it (the manifest records r0 and no journal records a
// rename), whether or not anything else is new on the remote. Before,
// pull answered "already up to date", then adopted the remote's other news
// beside it, and push told the owner of r1 to rename a run that was
// theirs.
func TestPullRefusesRunTagMovedToAnotherRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shared := bareServer(t, t.TempDir(), "shared.git")
	alice := newProject(t, map[string]string{"doc": "one\n"})
	addRemote(t, alice, "origin", shared)
	m0 := alice.run(t, "r0", "doc")
	alice.write(t, "doc", "two\n")
	alice.run(t, "r1", "doc")
	mustPush(t, alice, "origin")
	bob := newProject(t, map[string]string{"doc": "one\n"})
	addRemote(t, bob, "origin", shared)
	mustPull(t, bob, "origin")

	git(t, shared, "update-ref", store.RunsPrefix+"r1", m0.ID)
	check := func(when string) {
		t.Helper()
		before := refsExcept(t, bob.path(), RemotesPrefix)
		res, err := Pull(ctx, bob.s, "origin", Options{})
		if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), "run r1 names manifest "+m0.ID+", which records run r0") {
			t.Fatalf("%s: pull from a remote whose run r1 was moved onto run r0's manifest: %+v, %v; want ErrUnverified naming r1 and r0", when, res, err)
		}
		if after := refsExcept(t, bob.path(), RemotesPrefix); after != before {
			t.Fatalf("%s: a refused pull moved refs:\nbefore:\n%s\nafter:\n%s", when, before, after)
		}
	}
	check("nothing else new")

	// alice records another run and pushes it: her push is refused too,
	// before anything is sent, naming what it found.
	alice.write(t, "doc", "three\n")
	alice.run(t, "r2", "doc")
	tips := gitAllRefs(t, shared)
	if res, err := Push(ctx, alice.s, "origin", Options{}); !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), "run r1 names manifest "+m0.ID+", which records run r0") {
		t.Fatalf("push to a remote whose run r1 was moved onto run r0's manifest: %+v, %v; want ErrUnverified naming r1 and r0", res, err)
	}
	if now := gitAllRefs(t, shared); now != tips {
		t.Fatalf("a refused push changed the remote:\nbefore:\n%s\nafter:\n%s", tips, now)
	}
	git(t, alice.path(), "push", "--quiet", shared, store.RunsPrefix+"r2")
	check("a new run beside it")
	gitstore.Fsck(t, bob.path())
}
