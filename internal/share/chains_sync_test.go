package share

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/receipts"
)

func testKey(t testing.TB) receipts.Key {
	t.Helper()
	k, err := receipts.NewKey(bytes.Repeat([]byte{7}, receipts.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// issue issues n receipts in session on p's store and returns their ids.
func issue(t testing.TB, p *project, key receipts.Key, session string, n int) []string {
	t.Helper()
	iss := receipts.NewIssuer(key, receipts.NewLedger(p.s.Git()))
	var ids []string
	for i := 0; i < n; i++ {
		end := p.clock()
		r, err := iss.Issue(context.Background(), receipts.Call{Session: session, Tool: "exec",
			Args: receipts.ArgvArgs([]string{"true", fmt.Sprint(i)}), Result: receipts.BytesResult([]byte("ok")), Start: end, End: end})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// claimsValid checks every id as a claim of session in p's store and
// returns the ids judged valid, and the session's receipts no claim cites.
func claimsValid(t testing.TB, p *project, key receipts.Key, session string, ids []string) (valid []string, omitted int) {
	t.Helper()
	rep, err := receipts.VerifyClaims(receipts.NewLedger(p.s.Git()), key, session, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Claims {
		if c.Verdict == receipts.Valid {
			valid = append(valid, c.ID)
		}
	}
	return valid, len(rep.Omitted)
}

// TestReceiptsTravel: receipts issued in A reach B through a bare
// repository (pull and clone) and verify there; receipts issued on both
// sides in one session merge into the union on both sides.
func TestReceiptsTravel(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	srvDir := bareServer(t, t.TempDir(), "shared.git")
	a := newProject(t, map[string]string{"policy": "refunds within 30 days\n"})
	b := newProject(t, map[string]string{"runbook": "drain, then deploy\n"})
	addRemote(t, a, "origin", srvDir)
	addRemote(t, b, "origin", srvDir)

	fromA := issue(t, a, key, "s", 3)
	if res := mustPush(t, a, "origin"); res.Refs < 2 {
		t.Fatalf("push sent %d refs, want the session and index chains", res.Refs)
	}
	res := mustPull(t, b, "origin")
	if !slices.Contains(res.Receipts, "sessions/s") {
		t.Fatalf("pull updated receipt chains %v, want sessions/s", res.Receipts)
	}
	if valid, _ := claimsValid(t, b, key, "s", fromA); len(valid) != 3 {
		t.Fatalf("in B, %v of %v are valid", valid, fromA)
	}
	cloned, err := Clone(context.Background(), srvDir, filepath.Join(t.TempDir(), "c"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cloned.Receipts, "sessions/s") {
		t.Fatalf("clone brought receipt chains %v", cloned.Receipts)
	}

	// Both sides issue more receipts in the same session.
	moreA := issue(t, a, key, "s", 2)
	moreB := issue(t, b, key, "s", 2)
	mustPush(t, a, "origin")
	res = mustPull(t, b, "origin")
	if !slices.Contains(res.ReceiptsMerged, "sessions/s") || len(res.ReceiptConflicts) != 0 {
		t.Fatalf("pull merged %v with conflicts %v, want sessions/s merged cleanly", res.ReceiptsMerged, res.ReceiptConflicts)
	}
	mustPush(t, b, "origin")
	mustPull(t, a, "origin")
	all := slices.Concat(fromA, moreA, moreB)
	for _, p := range []*project{a, b} {
		valid, omitted := claimsValid(t, p, key, "s", all)
		if len(valid) != len(all) || omitted != 0 {
			t.Fatalf("in %s: %d of %d valid, %d omitted", p.dir, len(valid), len(all), omitted)
		}
	}
	chainsA := git(t, a.path(), "for-each-ref", receipts.RefPrefix)
	if chainsB := git(t, b.path(), "for-each-ref", receipts.RefPrefix); chainsA != chainsB {
		t.Fatalf("receipt chains differ after pull, push, pull:\nA:\n%s\nB:\n%s", chainsA, chainsB)
	}
	if res := mustPull(t, b, "origin"); !res.UpToDate {
		t.Fatalf("second pull not up to date: %+v", res)
	}
}

func refOf(t testing.TB, p *project, name string) gitstore.OID {
	t.Helper()
	id, err := p.s.Git().Ref(name)
	if err != nil && !errors.Is(err, gitstore.ErrNotFound) {
		t.Fatal(err)
	}
	return id
}

// TestUnionReceiptTreesConflict: an id with other content on the remote side
// keeps the local blob and is reported.
func TestUnionReceiptTreesConflict(t *testing.T) {
	t.Parallel()
	p := newProject(t, map[string]string{"x": "x\n"})
	g := p.s.Git()
	put := func(files map[string]string) gitstore.OID {
		leaf := []gitstore.TreeEntry{}
		for name, body := range files {
			blob, err := g.PutBlob([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			leaf = append(leaf, gitstore.TreeEntry{Name: name, Mode: gitstore.ModeFile, OID: blob})
		}
		l, _ := g.PutTree(leaf)
		mid, _ := g.PutTree([]gitstore.TreeEntry{{Name: "b", Mode: gitstore.ModeDir, OID: l}})
		root, err := g.PutTree([]gitstore.TreeEntry{{Name: "a", Mode: gitstore.ModeDir, OID: mid}})
		if err != nil {
			t.Fatal(err)
		}
		return root
	}
	local := put(map[string]string{"rcpt_1.json": "one", "rcpt_2.json": "two"})
	remote := put(map[string]string{"rcpt_2.json": "TWO", "rcpt_3.json": "three"})
	var conflicts []string
	u, err := unionReceiptTrees(g, local, remote, &conflicts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(conflicts, []string{"rcpt_2"}) {
		t.Fatalf("conflicts %v, want [rcpt_2]", conflicts)
	}
	for name, want := range map[string]string{"rcpt_1.json": "one", "rcpt_2.json": "two", "rcpt_3.json": "three"} {
		id, err := gitstore.FileAt(g, u, "a/b/"+name)
		if err != nil {
			t.Fatalf("%s missing from the union: %v", name, err)
		}
		if got, _ := g.Blob(id); string(got) != want {
			t.Fatalf("%s = %q, want %q", name, got, want)
		}
	}
}

// TestPullRefusesBadReceipt: a receipt chain holding a blob that is not a
// receipt is refused, and nothing is adopted.
func TestPullRefusesBadReceipt(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	_, a, b := twoProjects(t)
	id := issue(t, a, key, "s", 1)[0]
	// Rewrite the session chain: the receipt's blob becomes garbage.
	g := a.s.Git()
	d := id[len(receipts.IDPrefix):]
	junk, _ := g.PutBlob([]byte(`{"v":1,"id":"not a receipt"}`))
	leaf, _ := g.PutTree([]gitstore.TreeEntry{{Name: id + ".json", Mode: gitstore.ModeFile, OID: junk}})
	mid, _ := g.PutTree([]gitstore.TreeEntry{{Name: d[1:2], Mode: gitstore.ModeDir, OID: leaf}})
	root, _ := g.PutTree([]gitstore.TreeEntry{{Name: d[0:1], Mode: gitstore.ModeDir, OID: mid}})
	sig := signature(a.clock())
	c, err := g.PutCommit(gitstore.Commit{Tree: root, Author: sig, Committer: sig, Message: "receipt " + id + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	old := refOf(t, a, receipts.SessionRef("s"))
	if err := g.Update(gitstore.RefUpdate{Name: receipts.SessionRef("s"), Old: old, New: c}); err != nil {
		t.Fatal(err)
	}
	mustPush(t, a, "origin")
	before := refsExcept(t, b.path(), "refs/nothing-excluded/")
	_, err = Pull(context.Background(), b.s, "origin", Options{})
	if !errors.Is(err, ErrUnverified) {
		t.Fatalf("pull of a forged receipt chain: %v, want ErrUnverified", err)
	}
	if after := refsExcept(t, b.path(), "refs/nothing-excluded/"); after != before {
		t.Fatalf("refused pull changed refs:\n%s\nwant\n%s", after, before)
	}
}

// probedRun commits run id over doc in p with a probe record on each entry,
// and records one check with the given time.
func probedRun(t testing.TB, p *project, id, doc string) *manifest.Manifest {
	t.Helper()
	if err := p.s.StartRun(id); err != nil {
		t.Fatal(err)
	}
	_, err := p.s.MountWithPosition(context.Background(), id, "readproof://demo/"+doc, func(d *store.Delivery) error {
		d.Probe = &manifest.Probe{Bucket: 1000, Length: 16, DeliveredHash: contentHash([]byte("x")), DeliveredSize: 1}
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

func check(t testing.TB, p *project, run, verdict string, at time.Time) *store.VerdictRecord {
	t.Helper()
	sum := sha256.Sum256([]byte("answer"))
	r, err := p.s.RecordVerdicts(run, func(m *manifest.Manifest, prev *store.VerdictRecord) (*store.VerdictRecord, error) {
		r := &store.VerdictRecord{Format: store.VerdictsFormat, RunID: run, ManifestID: m.ID, CheckedAt: at, Check: 1}
		if prev != nil {
			r.Check = prev.Check + 1
		}
		for _, e := range m.Entries {
			r.Entries = append(r.Entries, store.VerdictEntry{Position: e.Position, URI: e.URI, Session: fmt.Sprintf("%s.%d", run, e.Position),
				Verdict: verdict, Reason: "test", Bucket: e.Probe.Bucket, AnswerSHA256: "sha256:" + hex.EncodeToString(sum[:])})
		}
		return r, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestVerdictsTravel: a verdict chain reaches a clone and a pull; checks
// recorded on both sides merge, the later check's record on top.
func TestVerdictsTravel(t *testing.T) {
	t.Parallel()
	srvDir := bareServer(t, t.TempDir(), "shared.git")
	a := newProject(t, map[string]string{"policy": "p\n"})
	addRemote(t, a, "origin", srvDir)
	probedRun(t, a, "r1", "policy")
	first := check(t, a, "r1", "READ_VERIFIED", a.clock())
	mustPush(t, a, "origin")

	dir := filepath.Join(t.TempDir(), "b")
	if _, err := Clone(context.Background(), srvDir, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	b := &project{dir: t.TempDir(), now: a.now.Add(time.Hour)}
	writeFile(t, filepath.Join(b.dir, "readproof.toml"), "version = 1\n")
	s, err := store.Open(dir, nil, store.Options{Now: b.clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	b.s = s
	got, err := b.s.Verdicts("r1")
	if err != nil || got == nil || got.ID != first.ID {
		t.Fatalf("verdicts of r1 in the clone: %+v, %v; want %s", got, err, first.ID)
	}

	// Both sides check again; B's check is later.
	check(t, a, "r1", "REPLAY_SUSPECT", a.clock())
	later := check(t, b, "r1", "READ_STALE", b.clock())
	mustPush(t, a, "origin")
	res, err := Pull(context.Background(), b.s, "origin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.VerdictsMerged, []string{"r1"}) {
		t.Fatalf("verdicts merged %v, want [r1]", res.VerdictsMerged)
	}
	top, err := b.s.Verdicts("r1")
	if err != nil || top.Entries[0].Verdict != "READ_STALE" || !top.CheckedAt.Equal(later.CheckedAt) {
		t.Fatalf("after merge the newest record is %+v, %v; want B's later check", top, err)
	}
	hist, err := b.s.VerdictHistory("r1")
	if err != nil || len(hist) != 3 || hist[1].ID != later.ID || hist[2].ID != first.ID {
		t.Fatalf("history %d records (%v), want the merge, then B's check, then the first check", len(hist), err)
	}
	if _, err := Push(context.Background(), b.s, "origin", Options{}); err != nil {
		t.Fatal(err)
	}
	res = mustPull(t, a, "origin")
	if !slices.Equal(res.Verdicts, []string{"r1"}) {
		t.Fatalf("A's pull fast-forwarded %v, want [r1]", res.Verdicts)
	}
	if top, _ := a.s.Verdicts("r1"); top.Entries[0].Verdict != "READ_STALE" {
		t.Fatalf("A's newest verdict %q", top.Entries[0].Verdict)
	}
}

// TestPullRefusesBadVerdicts: a verdict chain whose verdicts.json does not
// decode is refused.
func TestPullRefusesBadVerdicts(t *testing.T) {
	t.Parallel()
	srvDir, b := pushedUndecodableVerdicts(t)
	_, err := Pull(context.Background(), b.s, "origin", Options{})
	if !errors.Is(err, ErrUnverified) {
		t.Fatalf("pull of a forged verdict chain: %v, want ErrUnverified", err)
	}
	if id := refOf(t, b, store.VerdictsPrefix+"r1"); id != "" {
		t.Fatalf("refused verdict chain adopted at %s", id)
	}
	if _, err := Clone(context.Background(), srvDir, filepath.Join(t.TempDir(), "c"), Options{}); !errors.Is(err, ErrUnverified) {
		t.Fatalf("clone of a forged verdict chain: %v, want ErrUnverified", err)
	}
}

// pushedUndecodableVerdicts pushes, from a project with run r1, a verdict
// chain of r1 whose verdicts.json does not decode to a new shared remote,
// and returns the remote and a second project with it as origin.
func pushedUndecodableVerdicts(t *testing.T) (string, *project) {
	t.Helper()
	srvDir, a, b := twoProjects(t)
	probedRun(t, a, "r1", "policy")
	g := a.s.Git()
	blob, _ := g.PutBlob([]byte(`{"format":"readproof-verdicts/1","run_id":"other"}`))
	tree, _ := g.PutTree([]gitstore.TreeEntry{{Name: store.VerdictsFile, Mode: gitstore.ModeFile, OID: blob}})
	sig := signature(a.clock())
	c, _ := g.PutCommit(gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: "probe check r1\n"})
	if err := g.Update(gitstore.RefUpdate{Name: store.VerdictsPrefix + "r1", New: c}); err != nil {
		t.Fatal(err)
	}
	mustPush(t, a, "origin")
	return srvDir, b
}

// TestPullRefusesReceiptFileRemovedLater: a receipt chain commit in the
// middle of the chain that adds a file a later commit removes is refused
// by pull and clone (`git log -p` of the chain would show the file, its
// tip does not): chains only grow, so no commit drops what its first
// parent holds.
func TestPullRefusesReceiptFileRemovedLater(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	srvDir, a, b := twoProjects(t)
	issue(t, a, key, "s", 2)
	g := a.s.Git()
	ref := receipts.SessionRef("s")
	tip := refOf(t, a, ref)
	second, err := g.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	first, err := g.Commit(second.Parents[0])
	if err != nil {
		t.Fatal(err)
	}
	// Between the two appends, a commit adds NOTES.md; the second append
	// (its tree as readproof wrote it) drops it again.
	entries, err := g.Tree(first.Tree)
	if err != nil {
		t.Fatal(err)
	}
	notes, _ := g.PutBlob([]byte("Approved by legal.\n"))
	planted, err := g.PutTree(append(slices.Clone(entries), gitstore.TreeEntry{Name: "NOTES.md", Mode: gitstore.ModeFile, OID: notes}))
	if err != nil {
		t.Fatal(err)
	}
	sig := signature(a.clock())
	mid, err := g.PutCommit(gitstore.Commit{Tree: planted, Parents: second.Parents, Author: sig, Committer: sig, Message: "notes\n"})
	if err != nil {
		t.Fatal(err)
	}
	second.Parents = []gitstore.OID{mid}
	forged, err := g.PutCommit(second)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: ref, Old: tip, New: forged}); err != nil {
		t.Fatal(err)
	}
	mustPush(t, a, "origin")
	before := refsExcept(t, b.path(), "refs/nothing-excluded/")
	_, err = Pull(context.Background(), b.s, "origin", Options{})
	if !errors.Is(err, ErrUnverified) {
		t.Fatalf("pull of a receipt chain whose middle commit adds NOTES.md: %v, want ErrUnverified", err)
	}
	if !strings.Contains(err.Error(), "NOTES.md") {
		t.Fatalf("pull's refusal does not name NOTES.md: %v", err)
	}
	if h := hint.Of(err); !strings.Contains(h, "someone wrote commit "+string(mid)+" by hand (it holds NOTES.md)") {
		t.Fatalf("pull's hint %q does not name commit %s and NOTES.md", h, mid)
	}
	if after := refsExcept(t, b.path(), "refs/nothing-excluded/"); after != before {
		t.Fatalf("refused pull changed refs:\n%s\nwant\n%s", after, before)
	}
	if _, err := Clone(context.Background(), srvDir, filepath.Join(t.TempDir(), "c"), Options{}); !errors.Is(err, ErrUnverified) {
		t.Fatalf("clone of a receipt chain whose middle commit adds NOTES.md: %v, want ErrUnverified", err)
	}
	u := guardedRemote(t, t.TempDir(), "guarded.git")
	if out := pushRefused(t, a.path(), u, ref+":"+ref); !strings.Contains(out, "NOTES.md") {
		t.Fatalf("the guarded remote refused the chain without naming NOTES.md:\n%s", out)
	}
}

// TestReceiptConflictMergeTravels: a merge that kept the local blob of a
// receipt id the two sides hold with other bytes (either of its sorted
// parents may be the local one) passes the check of every new commit on a
// later pull and clone: the other parent's blob is a receipt of that id.
func TestReceiptConflictMergeTravels(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	srvDir, a, b := twoProjects(t)
	id := issue(t, a, key, "s", 1)[0]
	mustPush(t, a, "origin")
	// b holds the same id with other bytes (another tool) in its own chain.
	ga := a.s.Git()
	blob, err := gitstore.FileAt(ga, commitTreeOf(t, ga, refOf(t, a, receipts.SessionRef("s"))), strings.Join([]string{id[5:6], id[6:7], id + ".json"}, "/"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := ga.Blob(blob)
	other := bytes.Replace(data, []byte(`"tool":"exec"`), []byte(`"tool":"exed"`), 1)
	if bytes.Equal(other, data) {
		t.Fatalf("receipt %s has no tool exec: %s", id, data)
	}
	g := b.s.Git()
	ob, _ := g.PutBlob(other)
	leaf, _ := g.PutTree([]gitstore.TreeEntry{{Name: id + ".json", Mode: gitstore.ModeFile, OID: ob}})
	mid, _ := g.PutTree([]gitstore.TreeEntry{{Name: id[6:7], Mode: gitstore.ModeDir, OID: leaf}})
	root, _ := g.PutTree([]gitstore.TreeEntry{{Name: id[5:6], Mode: gitstore.ModeDir, OID: mid}})
	sig := signature(b.clock())
	c, err := g.PutCommit(gitstore.Commit{Tree: root, Author: sig, Committer: sig, Message: "receipt " + id + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: receipts.SessionRef("s"), New: c}); err != nil {
		t.Fatal(err)
	}
	if res := mustPull(t, b, "origin"); len(res.ReceiptConflicts) != 1 {
		t.Fatalf("pull merged with conflicts %v, want %s", res.ReceiptConflicts, id)
	}
	mustPush(t, b, "origin")
	mustPull(t, a, "origin")
	if _, err := Clone(context.Background(), srvDir, filepath.Join(t.TempDir(), "c"), Options{}); err != nil {
		t.Fatal(err)
	}
}

func commitTreeOf(t testing.TB, g gitstore.Store, id gitstore.OID) gitstore.OID {
	t.Helper()
	tr, err := commitTree(g, id)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// twoProjects is a new bare server and two projects that name it "origin":
// a holds the document policy, b the document runbook.
func twoProjects(t *testing.T) (srvDir string, a, b *project) {
	t.Helper()
	srvDir = bareServer(t, t.TempDir(), "shared.git")
	a = newProject(t, map[string]string{"policy": "p\n"})
	b = newProject(t, map[string]string{"runbook": "r\n"})
	addRemote(t, a, "origin", srvDir)
	addRemote(t, b, "origin", srvDir)
	return srvDir, a, b
}
