package share

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// recordReads counts the reads of the verdict records of blobs (their
// verdicts.json blobs; a manifest is read under the same bound), from any
// goroutine: a clone checks its journal while it checks its manifests.
type recordReads struct {
	gitstore.Store
	blobs map[gitstore.OID]bool
	n     atomic.Int64
}

func (c *recordReads) BlobAtMost(id gitstore.OID, most int64) ([]byte, error) {
	if c.blobs[id] {
		c.n.Add(1)
	}
	return c.Store.BlobAtMost(id, most)
}

// TestPullReadsVerdictsOnce (session 31): a pull reads each verdict record
// it brings once, with the probe key or without it: the record check
// (pullVerdictMACs) decodes each, and the plan's chain check and journal
// check take what it decoded. Before, a keyless pull read each record
// three times (the record check, the chain check, the journal check of
// `record check` commits), and a clone twice (the journal check, then the
// chains); a clone now checks the journal's records after the chains, and
// reads none of them again.
func TestPullReadsVerdictsOnce(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	srv, a, _ := twoProjects(t)
	for _, run := range []string{"r1", "r2"} {
		boundRun(t, a, keys, run, "policy")
		for range 3 {
			checkAs(t, a, keys, run, func(*store.VerdictEntry) {})
		}
	}
	mustPush(t, a, "origin")
	blobs := map[gitstore.OID]bool{}
	for _, run := range []string{"r1", "r2"} {
		for _, c := range strings.Fields(git(t, a.path(), "rev-list", store.VerdictsPrefix+run)) {
			blobs[gitstore.OID(strings.TrimSpace(git(t, a.path(), "rev-parse", c+":"+store.VerdictsFile)))] = true
		}
	}
	const records = 6
	if len(blobs) != records {
		t.Fatalf("the chains hold %d records, want %d", len(blobs), records)
	}
	for _, k := range []*probe.Keys{nil, &keys} {
		p := newProject(t, map[string]string{"runbook": "r\n"})
		addRemote(t, p, "origin", srv)
		g := &recordReads{Store: p.s.Git(), blobs: blobs}
		res, err := pullWith(context.Background(), p.s, g, "origin", Options{ProbeKeys: k})
		if err != nil || len(res.Verdicts) != 2 {
			t.Fatalf("pull (key %v): %+v, %v; want both verdict chains adopted", k != nil, res, err)
		}
		if n := g.n.Load(); n != records {
			t.Errorf("pull (key %v) read %d verdict records, want each of the %d once", k != nil, n, records)
		}
		// a clone's checks of the same store: the journal's, then the
		// chains' (as precheckClone and verifyClone make them)
		local, err := readState(p.s.Git(), localPrefixes())
		if err != nil {
			t.Fatal(err)
		}
		manifests, _ := cloneManifests(local, newPullResult("origin", false))
		c := &recordReads{Store: p.s.Git(), blobs: blobs}
		pre := checkCloneObjects(c, local, manifests, Options{})
		if res, err := verifyClone(context.Background(), c, nil, Options{ProbeKeys: k}, pre); err != nil || len(res.Verdicts) != 2 {
			t.Fatalf("verifyClone (key %v): %+v, %v", k != nil, res, err)
		}
		if n := c.n.Load(); n != records {
			t.Errorf("a clone's checks (key %v) read %d verdict records, want each of the %d once", k != nil, n, records)
		}
	}
}

// plantRecord appends to run's verdict chain in p a record of check
// check naming manifest m (its entries fitting m), under keys, as a
// teammate's store could hold it without `readproof probe check`, which
// writes only records of the run's manifest. It returns the commit.
func plantRecord(t *testing.T, p *project, keys probe.Keys, run string, check int, m *manifest.Manifest) gitstore.OID {
	t.Helper()
	g := p.s.Git()
	parent, err := g.Ref(store.VerdictsPrefix + run) // none: a chain's first record
	if err != nil && !errors.Is(err, gitstore.ErrNotFound) {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("answer"))
	e := m.Entries[0]
	rec := &store.VerdictRecord{Format: store.VerdictsFormat, RunID: run, ManifestID: m.ID, CheckedAt: p.clock(), Check: check,
		Entries: []store.VerdictEntry{{Position: e.Position, URI: e.URI, Session: fmt.Sprintf("%s.%d", run, e.Position), Verdict: string(probe.Hallucinated),
			Reason: "test", Bucket: e.Probe.Bucket, AnswerSHA256: "sha256:" + hex.EncodeToString(sum[:])}}}
	if keys.Valid() { // zero keys: a record without a MAC
		rec.MACKey = keys.RecordKeyID()
		if rec.MAC, err = keys.RecordMAC(store.VerdictMACInput(rec, string(parent))); err != nil {
			t.Fatal(err)
		}
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	blob, err := g.PutBlob(append(data, '\n'))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := g.PutTree([]gitstore.TreeEntry{{Name: store.VerdictsFile, Mode: gitstore.ModeFile, OID: blob}})
	if err != nil {
		t.Fatal(err)
	}
	sig := signature(p.clock())
	cm := gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: fmt.Sprintf("probe check %s: 1 verdict\n", run)}
	if parent != "" {
		cm.Parents = []gitstore.OID{parent}
	}
	id, err := g.PutCommit(cm)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: store.VerdictsPrefix + run, Old: parent, New: id}); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestPullVerdictOfAnotherManifest (session 31): a verdict record that
// names a manifest other than its run's (here run r2's, in r1's chain,
// authenticated under the key in use, so every MAC rule passes) is refused
// by pull and clone, with the probe key and without it, naming the run,
// the record and the manifest it names, before any ref moves: `readproof
// verify` reports it broken. Before session 31 both adopted it.
func TestPullVerdictOfAnotherManifest(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	srv, a, b := twoProjects(t)
	boundRun(t, a, keys, "r1", "policy")
	m2 := boundRun(t, a, keys, "r2", "policy")
	checkAs(t, a, keys, "r1", func(*store.VerdictEntry) {})
	mustPush(t, a, "origin")
	if _, err := Pull(context.Background(), b.s, "origin", Options{ProbeKeys: &keys}); err != nil {
		t.Fatal(err)
	}
	planted := plantRecord(t, a, keys, "r1", 2, m2)
	mustPush(t, a, "origin")
	want := fmt.Sprintf("verdict record %s of run r1 (check 2) names manifest %s, but run r1 names manifest ", planted, m2.ID)
	before := refsExcept(t, b.path(), RemotesPrefix)
	for _, k := range []*probe.Keys{nil, &keys} {
		_, err := Pull(context.Background(), b.s, "origin", Options{ProbeKeys: k})
		if !errors.Is(err, ErrUnverified) || !strings.HasPrefix(err.Error(), "pull origin: ") || !strings.Contains(err.Error(), want) {
			t.Fatalf("pull (key %v): %v; want ErrUnverified naming origin and %q", k != nil, err, want)
		}
		if after := refsExcept(t, b.path(), RemotesPrefix); after != before {
			t.Fatalf("refused pull (key %v) moved refs:\n%s\nwant\n%s", k != nil, after, before)
		}
		if _, err := Clone(context.Background(), srv, filepath.Join(t.TempDir(), "clone"), Options{ProbeKeys: k}); !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), want) {
			t.Fatalf("clone (key %v): %v; want ErrUnverified with %q", k != nil, err, want)
		}
	}
}

// TestPullVerdictOfConflictVerifies (session 31's re-read): two stores
// record run x with different manifests, a checks its x and pushes, and b
// pulls: b keeps a's manifest as a conflict of x and adopts a's verdict
// chain of x, whose record names that manifest (pull and clone accept a
// record naming one kept as a conflict of its run id). `readproof verify`
// of b, with the probe key and without, judges that record with the
// manifest it names and finds the store sound: before the re-read it
// judged it with run x's manifest and reported b's store broken after a
// pull that passed.
func TestPullVerdictOfConflictVerifies(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	_, a, b := twoProjects(t)
	ma := boundRun(t, a, keys, "x", "policy")
	mb := boundRun(t, b, keys, "x", "runbook")
	checkAs(t, a, keys, "x", func(*store.VerdictEntry) {})
	mustPush(t, a, "origin")
	res, err := Pull(context.Background(), b.s, "origin", Options{ProbeKeys: &keys})
	if err != nil || len(res.RunConflicts) != 1 || res.RunConflicts[0].Local != mb.ID || !slices.Equal(res.RunConflicts[0].Others, []string{ma.ID}) ||
		!slices.Equal(res.Verdicts, []string{"x"}) {
		t.Fatalf("pull: %+v, %v; want %s kept as a conflict of run x and a's verdict chain adopted", res, err, ma.ID)
	}
	for _, k := range []*probe.Keys{nil, &keys} {
		rep, err := storecheck.Check(context.Background(), b.s, storecheck.Options{ProbeKeys: k})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Errorf("verify (key %v) after the pull: %+v; want the store sound", k != nil, rep.Problems)
		}
	}
	// a record of that manifest is judged by the rules of its own: one
	// without a MAC, of a manifest bound to its content, is broken (here a
	// chain of x replaced by one such record)
	git(t, b.path(), "update-ref", "-d", store.VerdictsPrefix+"x")
	planted := plantRecord(t, b, probe.Keys{}, "x", 1, ma)
	for _, k := range []*probe.Keys{nil, &keys} {
		rep, err := storecheck.Check(context.Background(), b.s, storecheck.Options{ProbeKeys: k})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) == 0 || !strings.Contains(fmt.Sprint(rep.Problems), fmt.Sprintf("verdict record %s of run x (check 1) carries no MAC, but entry 0 of manifest %s", planted, ma.ID)) {
			t.Errorf("verify (key %v) of a record of %s without a MAC: %+v; want it broken", k != nil, ma.ID, rep.Problems)
		}
	}
}

// TestGuardRefusesVerdictOfAnotherManifest (session 31's re-read): a
// guarded remote's hook refuses a pushed verdict record that names a
// manifest other than its run's, as pull and clone do since session 31:
// before, the hook took it, and every pull from the remote was then
// refused. A record of the run's manifest pushed after it is taken.
func TestGuardRefusesVerdictOfAnotherManifest(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	u := guardedRemote(t, t.TempDir(), "shared.git")
	a := newProject(t, map[string]string{"policy": "p\n"})
	addRemote(t, a, "origin", u)
	boundRun(t, a, keys, "r1", "policy")
	m2 := boundRun(t, a, keys, "r2", "policy")
	checkAs(t, a, keys, "r1", func(*store.VerdictEntry) {})
	mustPush(t, a, "origin")
	good := git(t, a.path(), "rev-parse", store.VerdictsPrefix+"r1")
	planted := plantRecord(t, a, keys, "r1", 2, m2)
	before := allRefs(t, u)
	out := pushRefused(t, a.path(), u, store.VerdictsPrefix+"r1")
	if want := fmt.Sprintf("verdict record %s of run r1 (check 2) names manifest %s, but run r1 names manifest ", planted, m2.ID); !strings.Contains(out, want) {
		t.Fatalf("the hook's refusal:\n%s\nwant it to say %q", out, want)
	}
	if after := allRefs(t, u); after != before {
		t.Fatalf("a refused push moved the remote's refs:\n%s\nwant\n%s", after, before)
	}
	// the chain put back on its good tip, a record of r1's manifest is taken
	git(t, a.path(), "update-ref", store.VerdictsPrefix+"r1", strings.TrimSpace(good))
	checkAs(t, a, keys, "r1", func(*store.VerdictEntry) {})
	mustPush(t, a, "origin")
}

// TestPushLeavesConflictVerdictsOut (session 31's re-read): a and b both
// record and check run x (different manifests); a pushes, b pulls (a's
// manifest kept as a conflict, the verdict chains merged) and pushes. b's
// push leaves its run x out, and now its verdict chain of x too, saying
// so: the chain holds b's records, which name b's manifest, not the one
// run x names on the remote. Before, the chain was sent, and every later
// pull and clone from the remote refused it.
func TestPushLeavesConflictVerdictsOut(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	srv, a, b := twoProjects(t)
	boundRun(t, a, keys, "x", "policy")
	boundRun(t, b, keys, "x", "runbook")
	checkAs(t, a, keys, "x", func(*store.VerdictEntry) {})
	checkAs(t, b, keys, "x", func(*store.VerdictEntry) {})
	mustPush(t, a, "origin")
	if res, err := Pull(context.Background(), b.s, "origin", Options{ProbeKeys: &keys}); err != nil || len(res.RunConflicts) != 1 || !slices.Equal(res.VerdictsMerged, []string{"x"}) {
		t.Fatalf("b's pull: %+v, %v; want run x in conflict and its verdict chains merged", res, err)
	}
	remoteChain := git(t, srv, "rev-parse", store.VerdictsPrefix+"x")
	res := mustPush(t, b, "origin")
	if want := store.VerdictsPrefix + "x not pushed: it holds checks of this store's run x, whose id names another manifest on the remote"; !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("b's push warnings %q; want one saying %q", res.Warnings, want)
	}
	if got := git(t, srv, "rev-parse", store.VerdictsPrefix+"x"); got != remoteChain {
		t.Errorf("b's push moved the remote's verdict chain of x to %s", got)
	}
	if _, err := Pull(context.Background(), a.s, "origin", Options{ProbeKeys: &keys}); err != nil {
		t.Errorf("a's pull after b's push: %v", err)
	}
	if _, err := Clone(context.Background(), srv, filepath.Join(t.TempDir(), "c"), Options{ProbeKeys: &keys}); err != nil {
		t.Errorf("a clone after b's push: %v", err)
	}
}

// TestDecodedVerdictsShareManifest (session 31's re-read): what a pull or
// clone keeps of each verdict record it decoded holds the manifest id as
// one string per chain, not one per record: 10^5 records of 10^4 runs
// kept 14.2 MB (142 bytes a record), now 9.9 MB (99 bytes).
func TestDecodedVerdictsShareManifest(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	p := newProject(t, map[string]string{"policy": "p\n"})
	boundRun(t, p, keys, "r1", "policy")
	for range 3 {
		checkAs(t, p, keys, "r1", func(*store.VerdictEntry) {})
	}
	g := p.s.Git()
	tip, err := g.Ref(store.VerdictsPrefix + "r1")
	if err != nil {
		t.Fatal(err)
	}
	reads := decodedVerdicts{}
	failures, commits := checkVerdictChainRead(context.Background(), g, nil, "r1", tip, "", nil, reads)
	if len(failures) != 0 || len(commits) != 3 || len(reads) != 3 {
		t.Fatalf("chain check: %q, %d commits, %d kept; want 3 records kept", failures, len(commits), len(reads))
	}
	var data *byte
	for id, v := range reads {
		if data == nil {
			data = unsafe.StringData(v.manifest)
		} else if unsafe.StringData(v.manifest) != data {
			t.Fatalf("record %s keeps its own copy of manifest id %s; want the chain's records to share one", id, v.manifest)
		}
	}
}
