package storecheck_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/internal/testsize"
	"github.com/readproof/readproof/manifest"
)

var twoDocs = map[string]string{
	"policies/refunds.md":  "Products can be refunded within 30 days.\n",
	"policies/shipping.md": "We ship within 2 days.\n",
}

// healthy builds a store with two resources, three runs, a tag moved twice
// and deleted once, and one open run. The store is built once per test
// binary (buildHealthy, about 20 ms and 1,300 logged file operations) and
// each of the 13 tests calling healthy gets a copy of it, opened
// with a clock where the build left it.
func healthy(t testing.TB) *project {
	t.Helper()
	tmpl := &healthyTemplate
	tmpl.once.Do(func() {
		dir, err := os.MkdirTemp("", "storecheck-healthy-")
		if err != nil {
			t.Fatal(err)
		}
		tmpl.dir = dir // removed by TestMain
		p := buildHealthy(t)
		p.s.Close()
		copyTree(t, p.dir, dir)
		tmpl.clock = p.clock.t
		tmpl.ok = true
	})
	if !tmpl.ok {
		t.Fatal("building the healthy store failed in another test")
	}
	p := &project{dir: t.TempDir(), clock: &clock{t: tmpl.clock}}
	copyTree(t, tmpl.dir, p.dir)
	p.reopen(t, store.Options{})
	return p
}

// healthyTemplate is the store healthy copies, built by the first call.
var healthyTemplate struct {
	once  sync.Once
	ok    bool
	dir   string
	clock time.Time
}

// copyTree copies the content of directory from into directory to,
// without a process (was cp -a).
func copyTree(t testing.TB, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := testproc.CopyTree(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// buildHealthy builds the store healthy copies.
func buildHealthy(t testing.TB) *project {
	p := newProject(t, twoDocs, "")
	refunds, shipping := uriOf("policies/refunds.md"), uriOf("policies/shipping.md")
	p.run(t, "run-a", refunds, shipping)
	writeFile(t, filepath.Join(p.dir, "policies/refunds.md"), "Products can be refunded within 14 days.\n")
	p.run(t, "run-b", refunds)
	u := mustURI(t, refunds)
	if _, err := p.s.SetTag(u, "prod", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.SetTag(u, "old", p.snapshotOf(t, "run-a")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.DeleteTag(u, "old"); err != nil {
		t.Fatal(err)
	}
	p.run(t, "run-c", refunds+"@prod", shipping)
	if err := p.s.StartRun("open-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.Mount(context.Background(), "open-1", shipping); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHealthyStore(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	gitstore.Fsck(t, p.storePath())
	for _, opts := range []storecheck.Options{{}, {ReadData: true}, {Subset: "1/2"}, {Subset: "50%"}} {
		var calls, lastDone, lastTotal int
		opts.Progress = func(done, total int) { calls++; lastDone, lastTotal = done, total }
		rep := p.check(t, opts)
		if !rep.OK() || len(rep.Problems) != 0 {
			t.Fatalf("%+v: healthy store reported problems:\n%s", opts, problems(rep))
		}
		c := rep.Counts
		// Three observations: run-c re-read shipping unchanged, which only its manifest records.
		want := storecheck.Counts{Runs: 3, OpenRuns: 1, Resources: 2, Observations: 3, Tags: 2, TagMoves: 3, Snapshots: 3}
		if c.Runs != want.Runs || c.OpenRuns != want.OpenRuns || c.Resources != want.Resources || c.Observations != want.Observations ||
			c.Tags != want.Tags || c.TagMoves != want.TagMoves || c.Snapshots != want.Snapshots {
			t.Errorf("%+v: counts %+v, want %+v", opts, c, want)
		}
		if calls == 0 || lastDone != lastTotal || lastTotal != c.Refs+c.Snapshots {
			t.Errorf("%+v: progress ended at %d/%d after %d calls; refs %d, snapshots %d", opts, lastDone, lastTotal, calls, c.Refs, c.Snapshots)
		}
		if !strings.HasPrefix(rep.Summary(), "store ok; 3 runs, 1 open, 2 resources (3 observations), 2 tags") {
			t.Errorf("summary %q", rep.Summary())
		}
	}
	// A small store is re-hashed completely by the default check, and by
	// --read-data.
	if rep := p.check(t, storecheck.Options{}); rep.Counts.Rehashed != 3 || rep.Mode != "structure" {
		t.Errorf("structure check re-hashed %d of 3 snapshots, mode %q", rep.Counts.Rehashed, rep.Mode)
	}
	if rep := p.check(t, storecheck.Options{ReadData: true}); rep.Counts.Rehashed != 3 || rep.Mode != "read-data" {
		t.Errorf("read-data re-hashed %d of 3 snapshots, mode %q", rep.Counts.Rehashed, rep.Mode)
	}
}

func TestCorruptedBlob(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	snap := p.snapshotOf(t, "run-a")
	p.rewriteObject(t, snap, func(b []byte) []byte { return bytes.Replace(b, []byte("30"), []byte("90"), 1) })
	for _, opts := range []storecheck.Options{{}, {ReadData: true}} {
		rep := p.check(t, opts)
		got := find(rep, storecheck.Broken, snap, "corrupt")
		if len(got) != 1 || rep.OK() {
			t.Fatalf("%+v: want one problem naming corrupt object %s, got:\n%s", opts, snap, problems(rep))
		}
		if got[0].Run != "run-a" || got[0].Path != "content/demo/policies/refunds" {
			t.Errorf("%+v: problem names run %q path %q, want run-a and the entry's file", opts, got[0].Run, got[0].Path)
		}
		if rep.Broken() != 1 {
			t.Errorf("%+v: one corrupt blob gave %d problems:\n%s", opts, rep.Broken(), problems(rep))
		}
	}
}

func TestMissingObject(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	m, err := p.s.Manifest("run-b")
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.s.Git().Commit(gitstore.OID(m.ID))
	if err != nil {
		t.Fatal(err)
	}
	// the manifest's root tree, then (separately) a snapshot blob
	if err := os.Remove(p.looseObject(t, string(c.Tree))); err != nil {
		t.Fatal(err)
	}
	rep := p.check(t, storecheck.Options{})
	if got := find(rep, storecheck.Broken, "run run-b", string(c.Tree), "missing tree"); len(got) != 1 {
		t.Fatalf("want the missing tree of run-b named, got:\n%s", problems(rep))
	}

	p = healthy(t)
	snap := p.snapshotOf(t, "run-b")
	if err := os.Remove(p.looseObject(t, snap)); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []storecheck.Options{{}, {ReadData: true}, {Subset: "1/1000"}} {
		rep := p.check(t, opts)
		got := find(rep, storecheck.Broken, snap, "missing blob")
		if len(got) != 1 || got[0].Run != "run-b" {
			t.Fatalf("%+v: want missing blob %s named with run-b, got:\n%s", opts, snap, problems(rep))
		}
	}
}

// forgeRun writes a manifest commit through gitstore whose first entry
// records content hash hash for the bytes content, and points a run ref at
// it.
func forgeRun(t testing.TB, p *project, run, content, hash string) gitstore.OID {
	t.Helper()
	g := p.s.Git()
	blob, err := g.PutBlob([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	m := &manifest.Manifest{Format: manifest.Format, RunID: run, StartedAt: sig().When, CreatedAt: sig().When, Entries: []manifest.Entry{{
		URI: uriOf("policies/refunds.md"), Snapshot: string(blob), ContentHash: hash, SourceRevision: hash,
		ObservedAt: sig().When, Decision: manifest.DecisionFetch, Bytes: int64(len(content)), ContentType: "text/markdown",
	}}}
	manifest.AssignFiles(m.Entries)
	data, err := manifest.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := g.PutBlob(data)
	if err != nil {
		t.Fatal(err)
	}
	tree := putFiles(t, g, map[string]gitstore.OID{"manifest.json": mb, m.Entries[0].File: blob})
	id, err := g.PutCommit(gitstore.Commit{Tree: tree, Author: sig(), Committer: sig(), Message: manifest.Message(m)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: store.RunsPrefix + run, New: id}); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestManifestHashMismatch(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	wrong := store.ContentHash([]byte("something else"))
	forgeRun(t, p, "forged", "Products can be refunded within 365 days.\n", wrong)
	for _, opts := range []storecheck.Options{{}, {ReadData: true}} {
		rep := p.check(t, opts)
		got := find(rep, storecheck.Broken, "run forged", "entry 0 readproof://demo/policies/refunds records content hash "+wrong)
		if len(got) != 1 || got[0].Check != "content" {
			t.Fatalf("%+v: want the forged entry named, got:\n%s", opts, problems(rep))
		}
		// the forged run is not in the journal: a warning, not a failure
		if len(find(rep, storecheck.Warning, "run forged", "journal")) != 1 {
			t.Errorf("%+v: want a journal warning for the forged run, got:\n%s", opts, problems(rep))
		}
		if rep.Broken() != 1 {
			t.Errorf("%+v: want exactly one broken problem, got:\n%s", opts, problems(rep))
		}
	}
}

func TestJournalGapIsAWarning(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	content := "Products can be refunded within 30 days.\n"
	forgeRun(t, p, "side", content, store.ContentHash([]byte(content)))
	rep := p.check(t, storecheck.Options{})
	if !rep.OK() || rep.Warnings() != 1 || len(find(rep, storecheck.Warning, "run side", "does not reach")) != 1 {
		t.Fatalf("want only a journal warning, got:\n%s", problems(rep))
	}
}

func TestRefToMissingObject(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	ghost := strings.Repeat("ab", 20)
	writeFile(t, filepath.Join(p.storePath(), "refs/tags/readproof/runs/ghost"), ghost+"\n")
	writeFile(t, filepath.Join(p.storePath(), "refs/heads/readproof/resources/demo/junk"), "not an object id\n")
	rep := p.check(t, storecheck.Options{})
	got := find(rep, storecheck.Broken, "run ghost", ghost, "missing commit")
	if len(got) != 1 || got[0].Ref != "refs/tags/readproof/runs/ghost" {
		t.Fatalf("want the ghost ref named, got:\n%s", problems(rep))
	}
	if len(find(rep, storecheck.Broken, "refs/heads/readproof/resources/demo/junk", "unreadable ref file")) != 1 {
		t.Fatalf("want the junk ref file named, got:\n%s", problems(rep))
	}
	if rep.Broken() != 2 {
		t.Errorf("want two problems, got:\n%s", problems(rep))
	}
}

func TestRefToNonCommit(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	blob, err := p.s.Git().PutBlob([]byte("not a commit\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.s.Git().Update(gitstore.RefUpdate{Name: store.OpenPrefix + "weird", New: blob}); err != nil {
		t.Fatal(err)
	}
	rep := p.check(t, storecheck.Options{})
	if len(find(rep, storecheck.Broken, "open run weird", "expected a commit, found a blob")) != 1 {
		t.Fatalf("want the blob-valued ref named, got:\n%s", problems(rep))
	}
}

// TestReplaceRefs: `git replace` and `git replace --graft` make stock git
// read another object in place of a manifest commit (git log, cat-file and
// verify-commit on a mirror clone all follow refs/replace/), while readproof
// reads the object itself; verify names the substitution.
func TestReplaceRefs(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	gitDir := p.storePath()
	rev := func(name string) string {
		out, err := exec.Command("git", "--git-dir", gitDir, "rev-parse", name).Output()
		if err != nil {
			t.Fatalf("git rev-parse %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	manifestA, manifestB := rev("refs/tags/readproof/runs/run-a"), rev("refs/tags/readproof/runs/run-b")
	if out, err := exec.Command("git", "--git-dir", gitDir, "replace", manifestA, manifestB).CombinedOutput(); err != nil {
		t.Fatalf("git replace: %v\n%s", err, out)
	}
	rep := p.check(t, storecheck.Options{})
	if len(find(rep, storecheck.Broken, "refs/replace/"+manifestA, manifestB, "stock git")) != 1 {
		t.Fatalf("want the replace ref named, got:\n%s", problems(rep))
	}
	if err := os.MkdirAll(filepath.Join(gitDir, "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitDir, "info", "grafts"), []byte(manifestA+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep = p.check(t, storecheck.Options{})
	if len(find(rep, storecheck.Broken, "info/grafts", "other parents")) != 1 {
		t.Fatalf("want info/grafts named, got:\n%s", problems(rep))
	}
}

func TestTagChecks(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	g := p.s.Git()
	// A tag move naming bytes that were never observed for the resource.
	u := mustURI(t, uriOf("policies/shipping.md"))
	content := []byte("never observed\n")
	blob, _ := g.PutBlob(content)
	st := fmt.Sprintf(`{"uri": %q, "tag": "rogue", "snapshot": %q, "content_hash": %q, "set_at": "2026-11-30T00:00:00Z"}`+"\n",
		u.String(), blob, store.ContentHash(content))
	tj, _ := g.PutBlob([]byte(st))
	tree := putFiles(t, g, map[string]gitstore.OID{"content": blob, "tag.json": tj})
	c, err := g.PutCommit(gitstore.Commit{Tree: tree, Author: sig(), Committer: sig(), Message: "tag\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: store.TagsPrefix + u.Key() + "/rogue", New: c}); err != nil {
		t.Fatal(err)
	}
	rep := p.check(t, storecheck.Options{})
	if len(find(rep, storecheck.Broken, "tag readproof://demo/policies/shipping@rogue", "not recorded in the observation chain")) != 1 || rep.Broken() != 1 {
		t.Fatalf("want the rogue tag named, got:\n%s", problems(rep))
	}
}

func TestObservationChecks(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	// Rewrite one observation.json so it no longer decodes: the blob's id
	// no longer matches, which the check reports as corruption of that
	// observation's blob, named with the resource.
	tip, err := p.s.Git().Ref(store.ResourcesPrefix + mustURI(t, uriOf("policies/shipping.md")).Key())
	if err != nil {
		t.Fatal(err)
	}
	c, _ := p.s.Git().Commit(tip)
	entries, _ := p.s.Git().Tree(c.Tree)
	var obs gitstore.OID
	for _, e := range entries {
		if e.Name == "observation.json" {
			obs = e.OID
		}
	}
	p.rewriteObject(t, string(obs), func(b []byte) []byte { return []byte("{") })
	p.reopen(t, store.Options{}) // the open store may hold the blob read before the rewrite
	rep := p.check(t, storecheck.Options{})
	if len(find(rep, storecheck.Broken, "resource readproof://demo/policies/shipping", string(obs), "corrupt")) != 1 {
		t.Fatalf("want the corrupt observation named, got:\n%s", problems(rep))
	}
}

// signingProject is a project whose manifests are signed with key, and
// whose readproof.toml trusts it through allowed_signers.
func signingProject(t testing.TB) (*project, evidence.Key) {
	seed := bytes.Repeat([]byte{7}, ed25519.SeedSize)
	key, err := evidence.NewKey(ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	p := newProject(t, twoDocs, "[signing]\nallowed_signers = \"allowed_signers\"\n")
	writeFile(t, filepath.Join(p.dir, "allowed_signers"), key.AllowedSignersLine("team@example.com")+"\n")
	p.reopen(t, store.Options{SignCommit: func(payload []byte) (string, error) { return evidence.SignCommit(payload, key) }})
	return p, key
}

func TestSignatures(t *testing.T) {
	t.Parallel()
	p, _ := signingProject(t)
	p.run(t, "signed-a", uriOf("policies/refunds.md"))
	p.run(t, "signed-b", uriOf("policies/shipping.md"))
	rep := p.check(t, storecheck.Options{})
	if !rep.OK() || rep.Counts.Signed != 2 || rep.Counts.Verified != 2 || !rep.Trust {
		t.Fatalf("signed store: %s\n%s", rep.Summary(), problems(rep))
	}

	// A manifest commit whose gpgsig header signs something else.
	g := p.s.Git()
	id, err := p.s.ManifestID("signed-a")
	if err != nil {
		t.Fatal(err)
	}
	good, _ := g.Commit(id)
	other, _ := g.Commit(mustManifest(t, p, "signed-b"))
	bad := good
	bad.Signature = other.Signature
	bad.Message = strings.Replace(good.Message, "signed-a", "resigned", 1)
	badID, err := g.PutCommit(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: store.RunsPrefix + "signed-a-copy", New: badID}); err != nil {
		t.Fatal(err)
	}
	// A manifest signed by a key nobody trusts.
	stranger, _ := evidence.NewKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize)))
	untrusted := good
	untrusted.Message += "\n"
	payload, err := gitstore.CommitPayload(untrusted)
	if err != nil {
		t.Fatal(err)
	}
	if untrusted.Signature, err = evidence.SignCommit(payload, stranger); err != nil {
		t.Fatal(err)
	}
	untrustedID, err := g.PutCommit(untrusted)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: store.RunsPrefix + "signed-a-stranger", New: untrustedID}); err != nil {
		t.Fatal(err)
	}
	rep = p.check(t, storecheck.Options{})
	t.Logf("problems:\n%s", problems(rep))
	if got := find(rep, storecheck.Broken, "run signed-a-copy", "bad signature", "changed after signing"); len(got) != 1 || got[0].Check != "signature" {
		t.Fatalf("want the bad signature named, got:\n%s", problems(rep))
	}
	if got := find(rep, storecheck.Broken, "run signed-a-stranger", "bad signature"); len(got) != 1 || !strings.Contains(got[0].Message, "trusted") && !strings.Contains(got[0].Message, "allowed") {
		t.Fatalf("want the untrusted signature named, got:\n%s", problems(rep))
	}
	// The manifest names run signed-a while the ref names another run.
	if len(find(rep, storecheck.Broken, "run signed-a-copy", "manifest.json records run \"signed-a\"")) != 1 {
		t.Errorf("want the run id mismatch named, got:\n%s", problems(rep))
	}

	// Trust configured but the allowed_signers file is gone: could not check.
	if err := os.Remove(filepath.Join(p.dir, "allowed_signers")); err != nil {
		t.Fatal(err)
	}
	rep = p.check(t, storecheck.Options{})
	if len(find(rep, storecheck.CouldNotCheck, "allowed_signers")) != 1 || rep.Counts.Verified != 0 {
		t.Fatalf("want could-not-check for the missing allowed_signers, got:\n%s", problems(rep))
	}
}

func mustManifest(t testing.TB, p *project, run string) gitstore.OID {
	t.Helper()
	id, err := p.s.ManifestID(run)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestUnsignedWithTrustWarns(t *testing.T) {
	t.Parallel()
	p, _ := signingProject(t)
	p.reopen(t, store.Options{})
	p.run(t, "plain", uriOf("policies/refunds.md"))
	rep := p.check(t, storecheck.Options{})
	if !rep.OK() || len(find(rep, storecheck.Warning, "run plain", "not signed")) != 1 {
		t.Fatalf("want an unsigned warning, got:\n%s", problems(rep))
	}
}

func TestSubsetsCoverEverySnapshotOnce(t *testing.T) {
	t.Parallel()
	p := buildRuns(t, 40)
	total := 0
	for n := 1; n <= 4; n++ {
		rep := p.check(t, storecheck.Options{Subset: fmt.Sprintf("%d/4", n)})
		if !rep.OK() {
			t.Fatal(problems(rep))
		}
		total += rep.Counts.Rehashed
	}
	if total != 40 {
		t.Fatalf("subsets 1/4..4/4 re-hashed %d snapshots, want 40", total)
	}
	if rep := p.check(t, storecheck.Options{Subset: "100%"}); rep.Counts.Rehashed != 40 {
		t.Fatalf("100%% re-hashed %d", rep.Counts.Rehashed)
	}
	for _, bad := range []string{"0/4", "5/4", "1/0", "x", "0%", "101%", "1/2/3", "-1/2", "NaN%"} {
		if _, err := storecheck.Check(context.Background(), p.s, storecheck.Options{Subset: bad}); !errors.Is(err, storecheck.ErrSubset) {
			t.Errorf("subset %q: err %v, want ErrSubset", bad, err)
		}
	}
}

// TestVerifyManyRuns is the healthy-store case at a size a test can build
// quickly; BenchmarkVerify10kRuns runs the 10,000-run store. By default its
// 264 snapshots (above defaultSampleAll) come from 66 runs of 4 documents,
// which builds in a third of the time 264 runs of one took (a run's commit,
// journal entry and ref moves cost more than a document's snapshot);
// READPROOF_LONG_TESTS=1 records 400 runs of one document.
func TestVerifyManyRuns(t *testing.T) {
	t.Parallel()
	runs, per := testsize.Pick(t, 66, 400), 4
	if testsize.Long() {
		per = 1
	}
	n := runs * per // snapshots: both sizes above defaultSampleAll (256)
	p := buildRunsOf(t, runs, per)
	rep := p.check(t, storecheck.Options{})
	if !rep.OK() || len(rep.Problems) != 0 || rep.Counts.Runs != runs || rep.Counts.Observations != n || rep.Counts.Snapshots != n {
		t.Fatalf("%s\n%s", rep.Summary(), problems(rep))
	}
	// more than defaultSampleAll snapshots: about one in 16 is re-hashed
	if r := rep.Counts.Rehashed; r < 5 || r > 60 {
		t.Errorf("default sample re-hashed %d of %d snapshots", r, n)
	}
}

func TestCancelled(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := storecheck.Check(ctx, p.s, storecheck.Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

func FuzzParseSubset(f *testing.F) {
	for _, s := range []string{"1/5", "5/5", "10%", "0.5%", "100%", "0/1", "1/65537", "", "%", "/", "1/", "1e2%", " 2/3 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := storecheck.ParseSubset(s)
		if err != nil && !errors.Is(err, storecheck.ErrSubset) {
			t.Fatalf("%q: error %v does not wrap ErrSubset", s, err)
		}
		if err == nil && !strings.Contains(s, "/") && !strings.HasSuffix(strings.TrimSpace(s), "%") {
			t.Fatalf("%q accepted without / or %%", s)
		}
	})
}

// TestCorruptedBlobInSmallPack: a write of a few objects stores them in a
// small pack (gitstore's writeSmallPack), so that is where a disk error
// or an attacker changes a snapshot's bytes in most stores now: one byte
// of the snapshot, changed in place in its pack, is a broken store naming
// the snapshot and its run, by the default check and by --read-data.
func TestCorruptedBlobInSmallPack(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	snap := p.snapshotOf(t, "run-a")
	content, err := exec.Command("git", "--git-dir", p.storePath(), "cat-file", "blob", snap).Output()
	if err != nil || len(content) < 8 {
		t.Fatalf("cat-file %s: %q, %v", snap, content, err)
	}
	packs, _ := filepath.Glob(filepath.Join(p.storePath(), "objects", "pack", "pack-*.pack"))
	changed := ""
	for _, pack := range packs {
		data, err := os.ReadFile(pack)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(data, content); i >= 0 { // stored, not deflated: under 1 KiB
			data[i+len(content)/2] ^= 0x01
			os.Chmod(pack, 0o644)
			if err := os.WriteFile(pack, data, 0o444); err != nil {
				t.Fatal(err)
			}
			changed = pack
			break
		}
	}
	if changed == "" {
		t.Fatalf("no pack of %v holds snapshot %s as it is: the test proves nothing", packs, snap)
	}
	p.reopen(t, store.Options{})
	for _, opts := range []storecheck.Options{{}, {ReadData: true}} {
		rep := p.check(t, opts)
		if got := find(rep, storecheck.Broken, snap); len(got) == 0 || rep.OK() {
			t.Fatalf("%+v: a snapshot changed in its pack (%s) was not reported broken:\n%s", opts, changed, problems(rep))
		} else if got[0].Run != "run-a" {
			t.Errorf("%+v: the problem names run %q, want run-a", opts, got[0].Run)
		}
	}
}
