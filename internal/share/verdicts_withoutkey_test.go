package share

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// randomKeys returns new random probe keys.
func randomKeys(t testing.TB) probe.Keys {
	t.Helper()
	keys, err := probe.NewRandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// boundRun commits run id in p with one entry, doc, mounted as readproof
// mounts it now: its probe session bound to its content, its delivered
// hash the one keys give, so keys reproduce it.
func boundRun(t testing.TB, p *project, keys probe.Keys, id, doc string) *manifest.Manifest {
	t.Helper()
	if err := p.s.StartRun(id); err != nil {
		t.Fatal(err)
	}
	_, err := p.s.MountWithPosition(context.Background(), id, "readproof://demo/"+doc, func(d *store.Delivery) error {
		session, err := probe.ContentSession(id, d.Position, d.ContentHash)
		if err != nil {
			return err
		}
		out, err := keys.Deliver(d.Content, probe.Issued{Session: session, Bucket: 1000, Length: 16})
		if err != nil {
			return err
		}
		d.Probe = &manifest.Probe{Bucket: 1000, Length: 16, Session: manifest.ProbeSessionContent, DeliveredHash: contentHash(out), DeliveredSize: int64(len(out))}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := p.s.CommitRun(id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkAs records one check of run in p under keys (none: no MAC), each
// entry's verdict set by edit, checked at the project's clock.
func checkAs(t testing.TB, p *project, keys probe.Keys, run string, edit func(*store.VerdictEntry)) *store.VerdictRecord {
	t.Helper()
	return checkAt(t, p, keys, run, p.clock, edit)
}

// checkAt is checkAs checked at the time at gives (asked as the record is
// made): each entry HALLUCINATED, then edited by edit.
func checkAt(t testing.TB, p *project, keys probe.Keys, run string, at func() time.Time, edit func(*store.VerdictEntry)) *store.VerdictRecord {
	t.Helper()
	sum := sha256.Sum256([]byte("answer"))
	r, err := p.s.RecordVerdictsWithKey(run, keys, func(m *manifest.Manifest, prev *store.VerdictRecord) (*store.VerdictRecord, error) {
		r := &store.VerdictRecord{Format: store.VerdictsFormat, RunID: run, ManifestID: m.ID, CheckedAt: at(), Check: 1}
		if prev != nil {
			r.Check = prev.Check + 1
		}
		for _, e := range m.Entries {
			v := store.VerdictEntry{Position: e.Position, URI: e.URI, Session: fmt.Sprintf("%s.%d", run, e.Position),
				Verdict: string(probe.Hallucinated), Reason: "test", Bucket: e.Probe.Bucket, AnswerSHA256: "sha256:" + hex.EncodeToString(sum[:])}
			edit(&v)
			r.Entries = append(r.Entries, v)
		}
		return r, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPullVerdictWithoutKey (session 30): a pull judges the verdict
// records it would adopt by the rule `evidence verify` and `readproof
// verify` apply to records written without the probe key
// (store.VerdictWithoutKey), and refuses the whole pull, naming the remote,
// the run and the record, before any ref moves: a record without a MAC of
// a manifest bound to its content (with or without the key), and, with the
// key, one under a made-up key that gives an entry mounted with the key in
// use READ_VERIFIED, or HALLUCINATED adjudicated (READ_VERIFIED, or with no
// adjudicated verdict). A teammate's
// remote planted them: before session 30 the pull adopted all three, and
// verify then reported the store broken. A genuine rotation (a record under
// another key that judges the entry only HALLUCINATED) is still adopted, and
// a clone refuses what a pull refuses.
func TestPullVerdictWithoutKey(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	madeUp := randomKeys(t)
	readVerified := func(v *store.VerdictEntry) { v.Verdict = string(probe.ReadVerified) }
	for _, tc := range []struct {
		name    string
		keys    probe.Keys // the key the remote's record is under (zero: no MAC)
		edit    func(*store.VerdictEntry)
		want    string // in the refusal; "" when the pull adopts the record
		keyless bool   // refused without the key too
	}{
		{"no MAC", probe.Keys{}, readVerified, "carries no MAC, but entry 0 of manifest", true},
		{"made-up key", madeUp, readVerified, `so a check under another key could not give it READ_VERIFIED`, false},
		{"made-up key, adjudicated", madeUp, func(v *store.VerdictEntry) {
			v.Adjudicated, v.AdjudicatedVerdict = true, string(probe.ReadVerified)
		}, `could not give it HALLUCINATED, adjudicated "READ_VERIFIED"`, false},
		{"made-up key, adjudicated without a verdict", madeUp, func(v *store.VerdictEntry) { v.Adjudicated = true },
			`could not give it HALLUCINATED, adjudicated (delivered_hash_verified false)`, false},
		{"rotated key, HALLUCINATED", madeUp, func(*store.VerdictEntry) {}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, a, b := twoProjects(t)
			boundRun(t, a, keys, "r1", "policy")
			mustPush(t, a, "origin")
			if _, err := Pull(context.Background(), b.s, "origin", Options{ProbeKeys: &keys}); err != nil {
				t.Fatal(err)
			}
			rec := checkAs(t, a, tc.keys, "r1", tc.edit)
			mustPush(t, a, "origin")
			before := refsExcept(t, b.path(), RemotesPrefix)
			if tc.want != "" {
				// refused with the key, and without it when the rule
				// needs none
				for _, k := range []*probe.Keys{&keys, nil} {
					if k == nil && !tc.keyless {
						continue
					}
					_, err := Pull(context.Background(), b.s, "origin", Options{ProbeKeys: k})
					if err == nil {
						t.Fatalf("pull (key %v) adopted the record; want it refused with %q", k != nil, tc.want)
					}
					msg := err.Error()
					if !errors.Is(err, ErrUnverified) || !strings.HasPrefix(msg, "pull origin: ") || !strings.Contains(msg, "verdict record "+rec.ID+" of run r1 (check 1)") || !strings.Contains(msg, tc.want) {
						t.Fatalf("pull (key %v): %v; want ErrUnverified naming origin, record %s of run r1 and %q", k != nil, err, rec.ID, tc.want)
					}
					if h := hint.Of(err); !strings.Contains(h, "without the probe key") || !strings.Contains(h, "readproof verify") {
						t.Fatalf("pull (key %v): hint %q", k != nil, h)
					}
					if after := refsExcept(t, b.path(), RemotesPrefix); after != before {
						t.Fatalf("refused pull (key %v) moved refs:\n%s\nwant\n%s", k != nil, after, before)
					}
				}
				// a clone of the same remote is refused as the pull was,
				// without the key too when the rule needs none (before
				// session 30's re-read no test cloned without the key)
				for _, k := range []*probe.Keys{&keys, nil} {
					if k == nil && !tc.keyless {
						continue
					}
					dir := filepath.Join(t.TempDir(), "clone")
					_, err := Clone(context.Background(), srv, dir, Options{ProbeKeys: k})
					if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), tc.want) {
						t.Fatalf("clone (key %v): %v; want ErrUnverified with %q", k != nil, err, tc.want)
					}
					if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
						t.Fatalf("refused clone (key %v) left %s behind: %v", k != nil, dir, err)
					}
				}
			}
			// adopted: a rotation with the key; without it, nothing tells
			// a made-up key from a rotated one (verify with the key
			// reports what the rule finds, as it did before)
			k := &keys
			if tc.want != "" {
				k = nil
			}
			if tc.want != "" && tc.keyless {
				return
			}
			res, err := Pull(context.Background(), b.s, "origin", Options{ProbeKeys: k})
			if err != nil || !slices.Equal(res.Verdicts, []string{"r1"}) {
				t.Fatalf("pull (key %v): %+v, %v; want the record adopted", k != nil, res, err)
			}
		})
	}
}

// TestIncomingVerdictsTwoManifests: a verdict chain that holds checks of two
// manifests (a pull's run conflict shares one) is judged with each record's
// own manifest, and which entries the key in use mounted is remembered per
// manifest: a record of manifest B, whose entry 0 another key mounted,
// passes as a rotation, and a later record of manifest A, whose entry 0 the
// key in use mounted, is still refused (judged with B's answer for entry 0,
// it passed).
func TestIncomingVerdictsTwoManifests(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	p := newProject(t, map[string]string{"policy": "p\n", "runbook": "r\n"})
	mb := probedRun(t, p, "r2", "runbook") // entry 0 mounted under no key of ours
	ma := boundRun(t, p, keys, "r1", "policy")
	g := p.s.Git()
	sum := sha256.Sum256([]byte("answer"))
	var tip gitstore.OID
	for i, m := range []*manifest.Manifest{mb, ma} {
		e := m.Entries[0]
		rec := store.VerdictRecord{Format: store.VerdictsFormat, RunID: "r1", ManifestID: m.ID, CheckedAt: p.clock(), Check: i + 1,
			Entries: []store.VerdictEntry{{Position: e.Position, URI: e.URI, Session: "r1.0", Verdict: string(probe.ReadVerified), Reason: "test",
				Bucket: e.Probe.Bucket, AnswerSHA256: "sha256:" + hex.EncodeToString(sum[:])}},
			MACKey: "0123456789abcdef", MAC: strings.Repeat("0", 64)}
		data, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		blob, _ := g.PutBlob(append(data, '\n'))
		tree, _ := g.PutTree([]gitstore.TreeEntry{{Name: store.VerdictsFile, Mode: gitstore.ModeFile, OID: blob}})
		sig := signature(p.clock())
		c := gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: fmt.Sprintf("probe check r1: %d verdicts\n", i+1)}
		if tip != "" {
			c.Parents = []gitstore.OID{tip}
		}
		if tip, err = g.PutCommit(c); err != nil {
			t.Fatal(err)
		}
	}
	failures, err := checkIncomingVerdicts(context.Background(), g, nil, map[string]gitstore.OID{"r1": tip}, nil, &keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(failures) != 1 || !strings.Contains(failures[0], "(check 2) names key \"0123456789abcdef\", but entry 0 was mounted with the probe key in use") {
		t.Fatalf("failures %q: want check 2 alone refused, as written without the key", failures)
	}
}

// verdictReads counts the verdict records read (BlobAtMost under
// verdicts.json's bound).
type verdictReads struct {
	gitstore.Store
	n int
}

func (c *verdictReads) BlobAtMost(id gitstore.OID, most int64) ([]byte, error) {
	if most == store.MaxBytesOf(store.VerdictsFile) {
		c.n++
	}
	return c.Store.BlobAtMost(id, most)
}

// TestCloneReadsVerdictsOnce: a clone's check of the verdict chains reads
// each record once, with the probe key or without it: the record check
// (checkIncomingRun) judges what the chain check decoded. Before session
// 30's re-read it read each record again, which since session 30 a keyless
// clone did as well (+8% CPU on a keyless clone of 200 runs). The chain
// holds a sync merge that copies its first parent's record. The journal's
// check (checkCloneObjects, which reads the records its record check
// commits name) is made beforehand, as precheckClone makes it.
func TestCloneReadsVerdictsOnce(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	_, a, b := twoProjects(t)
	boundRun(t, a, keys, "r1", "policy")
	checkAs(t, a, keys, "r1", func(*store.VerdictEntry) {})
	mustPush(t, a, "origin")
	if _, err := Pull(context.Background(), b.s, "origin", Options{ProbeKeys: &keys}); err != nil {
		t.Fatal(err)
	}
	checkAs(t, a, keys, "r1", func(*store.VerdictEntry) {})
	checkAs(t, b, keys, "r1", func(*store.VerdictEntry) {})
	mustPush(t, a, "origin")
	res, err := Pull(context.Background(), b.s, "origin", Options{ProbeKeys: &keys})
	if err != nil || !slices.Equal(res.VerdictsMerged, []string{"r1"}) {
		t.Fatalf("pull: %+v, %v; want the verdict chains of r1 merged", res, err)
	}
	// b's chain: check 1, then its own check 2 and a's check 2 merged
	commits := strings.Fields(git(t, b.path(), "rev-list", store.VerdictsPrefix+"r1"))
	if len(commits) != 4 {
		t.Fatalf("b's verdict chain holds %d commits, want 4: %v", len(commits), commits)
	}
	for _, k := range []*probe.Keys{&keys, nil} {
		local, err := readState(b.s.Git(), localPrefixes())
		if err != nil {
			t.Fatal(err)
		}
		manifests, _ := cloneManifests(local, newPullResult("origin", false))
		pre := checkCloneObjects(b.s.Git(), local, manifests, Options{})
		g := &verdictReads{Store: b.s.Git()}
		res, err := verifyClone(context.Background(), g, nil, Options{ProbeKeys: k}, pre)
		if err != nil || !slices.Equal(res.Verdicts, []string{"r1"}) {
			t.Fatalf("verifyClone (key %v): %+v, %v", k != nil, res, err)
		}
		if g.n != len(commits) {
			t.Errorf("verifyClone (key %v) read %d verdict records for a chain of %d commits, want each once", k != nil, g.n, len(commits))
		}
	}
}

// TestPullVerdictBeforeItsManifest: a verdict record the rule of records
// written without the key would judge (no MAC, here) that names a manifest
// neither the store nor the remote holds is refused: a remote that serves
// a run's verdict chain before the run (its manifest) would otherwise have
// it adopted unjudged, and a later pull of the run, which judges only the
// records it brings, adopts the manifest beside it; verify then reports the
// store broken. Before session 30's re-read the record was adopted.
func TestPullVerdictBeforeItsManifest(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	_, a, b := twoProjects(t)
	boundRun(t, a, keys, "r1", "policy")
	rec := checkAs(t, a, probe.Keys{}, "r1", func(v *store.VerdictEntry) { v.Verdict = string(probe.ReadVerified) })
	early := bareServer(t, t.TempDir(), "early.git")
	git(t, a.path(), "push", "-q", early, store.VerdictsPrefix+"r1")
	addRemote(t, b, "early", early)
	before := refsExcept(t, b.path(), RemotesPrefix)
	for _, k := range []*probe.Keys{&keys, nil} {
		_, err := Pull(context.Background(), b.s, "early", Options{ProbeKeys: k})
		if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), "verdict record "+rec.ID+" of run r1 (check 1) names manifest ") {
			t.Fatalf("pull of a verdict chain before its run (key %v): %v; want ErrUnverified naming record %s", k != nil, err, rec.ID)
		}
		if after := refsExcept(t, b.path(), RemotesPrefix); after != before {
			t.Fatalf("refused pull (key %v) moved refs:\n%s\nwant\n%s", k != nil, after, before)
		}
	}
	// with the run, the same record is judged with its manifest
	mustPush(t, a, "origin")
	_, err := Pull(context.Background(), b.s, "origin", Options{})
	if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), "carries no MAC, but entry 0 of manifest") {
		t.Fatalf("pull of the run and its chain: %v; want the record refused", err)
	}
}
