package share

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/probe"
)

// checkKeyed records one check of run in p, authenticated under keys.
func checkKeyed(t testing.TB, p *project, keys probe.Keys, run, verdict string, at time.Time) *store.VerdictRecord {
	t.Helper()
	return checkAt(t, p, keys, run, func() time.Time { return at }, func(v *store.VerdictEntry) { v.Verdict = verdict })
}

// rewriteTip replaces the tip of run's verdict chain in p by a commit with
// the same parents and message whose verdicts.json is edit's output.
func rewriteTip(t testing.TB, p *project, run string, edit func(map[string]any)) {
	t.Helper()
	g := p.s.Git()
	tip := refOf(t, p, store.VerdictsPrefix+run)
	c, err := g.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := gitstore.FileAt(g, c.Tree, store.VerdictsFile)
	if err != nil {
		t.Fatal(err)
	}
	data, err := g.Blob(blob)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	edit(rec)
	data, _ = json.MarshalIndent(rec, "", "  ")
	nb, _ := g.PutBlob(append(data, '\n'))
	nt, _ := g.PutTree([]gitstore.TreeEntry{{Name: store.VerdictsFile, Mode: gitstore.ModeFile, OID: nb}})
	c.Tree = nt
	nc, err := g.PutCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: store.VerdictsPrefix + run, Old: tip, New: nc}); err != nil {
		t.Fatal(err)
	}
}

// TestPullVerdictMACs: with the probe key, a pull checks the MAC of every
// verdict record it brings in: intact chains (a new one, a fast-forward, a
// sync merge on both sides) are adopted; an edited record and a record whose
// MAC was stripped are refused with nothing adopted; without the key the
// edited one goes through, and the stripped one, which needs no key to be
// seen, is refused as well (since session 30).
func TestPullVerdictMACs(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	withKey := Options{ProbeKeys: &keys}
	_, a, b := twoProjects(t)
	probedRun(t, a, "r1", "policy")
	checkKeyed(t, a, keys, "r1", "HALLUCINATED", a.clock())
	mustPush(t, a, "origin")
	res, err := Pull(context.Background(), b.s, "origin", withKey)
	if err != nil || !slices.Equal(res.Verdicts, []string{"r1"}) {
		t.Fatalf("pull of an intact chain: %+v, %v", res, err)
	}

	// Both sides check: B merges A's check, A then takes B's merge (a
	// record copied by a sync merge is checked through its first parent).
	checkKeyed(t, a, keys, "r1", "HALLUCINATED", a.clock())
	checkKeyed(t, b, keys, "r1", "HALLUCINATED", b.clock().Add(time.Hour))
	mustPush(t, a, "origin")
	if res, err = Pull(context.Background(), b.s, "origin", withKey); err != nil || !slices.Equal(res.VerdictsMerged, []string{"r1"}) {
		t.Fatalf("pull merging two checks: %+v, %v", res, err)
	}
	if _, err := Push(context.Background(), b.s, "origin", Options{}); err != nil {
		t.Fatal(err)
	}
	if res, err = Pull(context.Background(), a.s, "origin", withKey); err != nil || !slices.Equal(res.Verdicts, []string{"r1"}) {
		t.Fatalf("pull of B's merge: %+v, %v", res, err)
	}

	// Both cases start from c0 having pushed one keyed check that d0
	// pulled, made once and copied (server and both projects).
	srv0 := bareServer(t, t.TempDir(), "shared.git")
	c0 := newProject(t, map[string]string{"policy": "p\n"})
	d0 := newProject(t, map[string]string{"runbook": "r\n"})
	addRemote(t, c0, "origin", srv0)
	addRemote(t, d0, "origin", srv0)
	probedRun(t, c0, "r1", "policy")
	checkKeyed(t, c0, keys, "r1", "HALLUCINATED", c0.clock())
	mustPush(t, c0, "origin")
	if _, err := Pull(context.Background(), d0.s, "origin", withKey); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"edited", func(r map[string]any) {
			r["entries"].([]any)[0].(map[string]any)["verdict"] = "READ_VERIFIED"
		}, "fails its MAC"},
		{"stripped", func(r map[string]any) { delete(r, "mac"); delete(r, "mac_key") }, "carries no MAC, although check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := filepath.Join(t.TempDir(), "shared.git")
			if err := testproc.CopyTree(srv0, srv); err != nil {
				t.Fatal(err)
			}
			c := c0.copyProject(t, srv0, srv)
			d := d0.copyProject(t, srv0, srv)
			checkKeyed(t, c, keys, "r1", "HALLUCINATED", c.clock())
			rewriteTip(t, c, "r1", tc.edit)
			mustPush(t, c, "origin")
			before := refsExcept(t, d.path(), RemotesPrefix)
			_, err := Pull(context.Background(), d.s, "origin", withKey)
			if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "of run r1 (check 2)") {
				t.Fatalf("pull of a %s record: %v, want ErrUnverified naming run r1, check 2 and %q", tc.name, err, tc.want)
			}
			if after := refsExcept(t, d.path(), RemotesPrefix); after != before {
				t.Fatalf("refused pull changed refs:\n%s\nwant\n%s", after, before)
			}
			// Without the key the MACs are not checked here (the CLI says
			// so); a stripped MAC needs no key to be seen, and verify
			// without the key reports it broken: since session 30 such a
			// pull refuses it too (it was adopted).
			res, err := Pull(context.Background(), d.s, "origin", Options{})
			if tc.name != "stripped" {
				if err != nil || !slices.Equal(res.Verdicts, []string{"r1"}) {
					t.Fatalf("pull without the key: %+v, %v", res, err)
				}
				return
			}
			if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), "of run r1 (check 2): verdict record carries no MAC, although check 1") {
				t.Fatalf("pull of a stripped record without the key: %v, want ErrUnverified naming check 2 and check 1", err)
			}
			if after := refsExcept(t, d.path(), RemotesPrefix); after != before {
				t.Fatalf("refused pull without the key changed refs:\n%s\nwant\n%s", after, before)
			}
			// A record without a MAC after the stripped one is refused as
			// well: check 1 before it has a MAC (as verify judges it), not
			// only the record just before it.
			checkKeyed(t, c, probe.Keys{}, "r1", "HALLUCINATED", c.clock())
			mustPush(t, c, "origin")
			if _, err := Pull(context.Background(), d.s, "origin", withKey); !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), "of run r1 (check 3): verdict record carries no MAC, although check 1") {
				t.Fatalf("pull of check 3 without a MAC after stripped check 2: %v, want ErrUnverified naming check 3 and check 1", err)
			}
		})
	}
}

// TestPullVerdictMACsUndecodable: with the key, a verdict record that does
// not decode is still refused by the chain check, with its own message and
// hint, not reported as an edited record.
func TestPullVerdictMACsUndecodable(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	_, b := pushedUndecodableVerdicts(t)
	_, err := Pull(context.Background(), b.s, "origin", Options{ProbeKeys: &keys})
	if !errors.Is(err, ErrUnverified) || strings.Contains(err.Error(), "MAC") || strings.Contains(hint.Of(err), "edited") {
		t.Fatalf("pull of an undecodable verdict record with the key: %v (hint %q), want the chain check's refusal", err, hint.Of(err))
	}
}
