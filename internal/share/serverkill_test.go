package share

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/testsize"
)

// TestServerKilledDuringFetch kills the git daemon (and the upload-pack it
// runs) while it sends a pull's and a clone's objects: the pull fails
// without a verification error and leaves every local ref but the
// tracking ones as it was, fsck clean, no scratch repository behind; the
// clone leaves nothing at its directory nor beside it. Against the
// restarted server the same pull and clone succeed. (TestInterruptedPush
// kills the server during a push; TestKilledPull and TestKilledClone kill
// the client.)
func TestServerKilledDuringFetch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := t.TempDir()
	bareServer(t, base, "shared.git")
	d := startDaemon(t, base)
	size := testsize.Pick(t, 128<<10, 2<<20)
	big := func() string {
		b := make([]byte, size)
		rand.Read(b)
		return hex.EncodeToString(b)
	}
	alice := newProject(t, map[string]string{"small": "small\n", "big1": big(), "big2": big()})
	addRemote(t, alice, "origin", d.url("shared.git"))
	alice.run(t, "small", "small")
	alice.run(t, "large", "big1", "big2")
	mustPush(t, alice, "origin")

	// The first fetch reads main alone (its tree holds every document,
	// about 2.2*size bytes compressed), the second the rest: a kill at
	// size bytes lands in the first, at 3*size in the second. By default
	// the pull is killed in its second fetch and the clone in its first;
	// READPROOF_LONG_TESTS=1 kills each in both.
	cases := []struct {
		kind  string
		limit int64
	}{{"pull", 3 * int64(size)}, {"clone", int64(size)}}
	if testsize.Long() {
		cases = append(cases, struct {
			kind  string
			limit int64
		}{"pull", int64(size)}, struct {
			kind  string
			limit int64
		}{"clone", 3 * int64(size)})
	}
	for i, c := range cases {
		kind := c.kind
		bob := newProject(t, map[string]string{"small": "small\n"}) // a store of its own, which lacks alice's runs
		bob.run(t, "mine", "small")
		proxy := startKillingProxyDown(t, d, 1<<40, c.limit)
		dst := filepath.Join(t.TempDir(), "clone")
		remote := fmt.Sprintf("flaky%d", i)
		var err error
		before := refsExcept(t, bob.path(), RemotesPrefix)
		if kind == "pull" {
			addRemote(t, bob, remote, proxy.url("shared.git"))
			_, err = Pull(ctx, bob.s, remote, Options{})
		} else {
			_, err = Clone(ctx, proxy.url("shared.git"), dst, Options{})
		}
		if err == nil || errors.Is(err, ErrUnverified) || !proxy.killed.Load() {
			t.Fatalf("%s from a server killed mid-transfer (killed: %v): %v", kind, proxy.killed.Load(), err)
		}
		t.Logf("%s: %v", kind, err)
		if after := refsExcept(t, bob.path(), RemotesPrefix); after != before {
			t.Fatalf("%s: local refs changed:\n%s\n%s", kind, before, after)
		}
		gitstore.Fsck(t, bob.path())
		if entries, _ := filepath.Glob(filepath.Join(bob.path(), "readproof-fetch-*")); len(entries) > 0 {
			t.Fatalf("%s left scratch repositories: %v", kind, entries)
		}
		if _, serr := os.Stat(dst); !os.IsNotExist(serr) {
			t.Fatalf("%s left %s (%v)", kind, dst, serr)
		}
		nothingBeside(t, dst)

		// the server back: the same command succeeds
		d = startDaemon(t, base)
		if kind == "pull" {
			if err := RemoveRemote(ctx, bob.s, remote); err != nil {
				t.Fatal(err)
			}
			addRemote(t, bob, remote, d.url("shared.git"))
			res := mustPull(t, bob, remote)
			if got := len(res.NewRuns); got != 2 {
				t.Fatalf("pull after the restart: %d new runs, want 2: %+v", got, res)
			}
			replayAll(t, bob.s)
		} else {
			res, err := Clone(ctx, d.url("shared.git"), dst, Options{})
			if err != nil || len(res.NewRuns) != 2 {
				t.Fatalf("clone after the restart: %+v, %v", res, err)
			}
		}
	}
}
