package share

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/internal/testsize"
	"github.com/readproof/readproof/receipts"
)

// TestRefKindsVerified plants a commit of each wrong kind under each shared
// namespace of a remote; clone and pull both refuse it (issue 12.3: one
// `verified` set shared between kinds let a manifest pass as a tag move).
func TestRefKindsVerified(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	good := bareServer(t, base, "good.git")
	a := newProject(t, map[string]string{"a": "alpha\n"})
	addRemote(t, a, "origin", good)
	probedRun(t, a, "r1", "a")
	check(t, a, "r1", "READ_VERIFIED", a.clock())
	a.tag(t, "a", "v1")
	issue(t, a, testKey(t), "s1", 1)
	mustPush(t, a, "origin")

	// the id of one ref of each kind, read by one git rev-parse
	kindRefs := map[string]string{
		"manifest":    store.RunsPrefix + "r1",
		"observation": store.ResourcesPrefix + "demo/a",
		"tag":         store.TagsPrefix + "demo/a/v1",
		"journal":     store.JournalRef,
		"receipt":     receipts.RefPrefix + "sessions/s1",
		"verdict":     store.VerdictsPrefix + "r1",
	}
	kinds := map[string]string{}
	names := sortedKeys(kindRefs)
	args := []string{"rev-parse"}
	for _, k := range names {
		args = append(args, kindRefs[k])
	}
	ids := strings.Fields(git(t, good, args...))
	if len(ids) != len(names) {
		t.Fatalf("git rev-parse printed %q for %d refs", ids, len(names))
	}
	for i, k := range names {
		kinds[k] = ids[i]
	}
	spots := map[string]string{ // the namespace's kind -> a new ref in it
		"manifest":    store.RunsPrefix + "planted",
		"observation": store.ResourcesPrefix + "demo/planted",
		"tag":         store.TagsPrefix + "demo/a/planted",
		"journal":     store.JournalRef,
		"receipt":     receipts.RefPrefix + "sessions/planted",
		"verdict":     store.VerdictsPrefix + "r1-planted",
	}
	// One wrong kind per namespace reaches the store through git daemon on
	// 127.0.0.1 (issue 12 acceptance 1: a real server where a remote is
	// involved), the others through the path (the check after the fetch is
	// the same; the path keeps the test quick).
	//
	// By default each namespace gets one wrong kind, and each kind is
	// planted once (namespace i of the sorted list gets kind i+1): 6 cases;
	// READPROOF_LONG_TESTS=1 plants every wrong kind in every namespace (30).
	served := t.TempDir()
	d := startDaemon(t, served)
	kindNames := sortedKeys(kinds)
	for i, spot := range sortedKeys(spots) {
		name := spots[spot]
		overDaemon := true
		for _, kind := range kindNames {
			id := kinds[kind]
			if kind == spot {
				continue
			}
			if !testsize.Long() && kind != kindNames[(i+1)%len(kindNames)] {
				continue
			}
			viaDaemon := overDaemon
			overDaemon = false
			t.Run(fmt.Sprintf("%s-as-%s", kind, spot), func(t *testing.T) {
				t.Parallel()
				repo := fmt.Sprintf("%s-as-%s.git", kind, spot)
				dir := filepath.Join(served, repo)
				// a copy of the good server (was git clone --mirror: five
				// processes for the same objects and refs), one ref changed
				if err := testproc.CopyTree(good, dir); err != nil {
					t.Fatal(err)
				}
				git(t, dir, "update-ref", name, id)
				url := dir
				if viaDaemon {
					url = d.url(repo)
				}
				ctx := context.Background()
				// Another kind planted as main is refused before anything is
				// fetched (the remote is not a store); elsewhere, after the
				// fetch, by verification.
				want := ErrUnverified
				if spot == "journal" {
					want = ErrNotStore
				}
				if _, err := Clone(ctx, url, filepath.Join(t.TempDir(), "c"), Options{}); !errors.Is(err, want) {
					t.Fatalf("clone: %v, want %v", err, want)
				} else if !strings.HasPrefix(err.Error(), "clone "+url+": ") {
					t.Fatalf("clone: %v, want the error to name the remote", err)
				}
				b := newProject(t, map[string]string{"a": "alpha\n"})
				addRemote(t, b, "origin", url)
				before := refsExcept(t, b.path(), "refs/nothing-excluded/")
				if _, err := Pull(ctx, b.s, "origin", Options{}); !errors.Is(err, want) {
					t.Fatalf("pull: %v, want %v", err, want)
				} else if !strings.HasPrefix(err.Error(), "pull origin: ") || strings.Count(err.Error(), "pull origin") != 1 {
					t.Fatalf("pull: %v, want the error to name the remote once", err)
				}
				if after := refsExcept(t, b.path(), "refs/nothing-excluded/"); after != before {
					t.Fatalf("refs changed by a refused pull:\n%s\nwas\n%s", after, before)
				}
			})
		}
	}
}
