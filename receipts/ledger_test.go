package receipts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/gitstore/gitobj"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/internal/testsize"
)

// TestMain doubles as the worker of TestLedgerManyProcesses: the test
// binary re-executed with RECEIPTS_TEST_WORKER set issues receipts into a
// shared store and prints their ids.
func TestMain(m *testing.M) {
	if os.Getenv("RECEIPTS_TEST_WORKER") != "" {
		os.Exit(worker())
	}
	os.Exit(testproc.Run(m))
}

func worker() int {
	store, err := gitstore.Open(os.Getenv("RECEIPTS_TEST_STORE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	defer store.Close()
	secret, _ := hex.DecodeString(os.Getenv("RECEIPTS_TEST_KEY"))
	key, err := NewKey(secret)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	n, _ := strconv.Atoi(os.Getenv("RECEIPTS_TEST_N"))
	issuer := NewIssuer(key, NewLedger(store))
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for i := 0; i < n; i++ {
		r, err := issuer.Issue(context.Background(), Call{
			Session: os.Getenv("RECEIPTS_TEST_SESSION"), Tool: "worker",
			Args: ArgvArgs([]string{"worker", strconv.Itoa(os.Getpid()), strconv.Itoa(i)}), Result: BytesResult(nil),
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			return 1
		}
		fmt.Fprintln(out, r.ID)
	}
	fmt.Fprintf(out, "attempts=%d\n", appendAttempts.Load())
	return 0
}

type fixture struct {
	store  gitstore.Store
	ledger *Ledger
	key    Key
	issuer *Issuer
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	store := gitstore.NewTestStore(t)
	key := testKey(t, 9)
	ledger := NewLedger(store)
	return &fixture{store: store, ledger: ledger, key: key, issuer: NewIssuer(key, ledger)}
}

// sealV1 is a version 1 receipt of tool (session s, run r1), sealed
// with f's key and not appended: its binding is its append commit's line.
func (f *fixture) sealV1(t testing.TB, tool string) Receipt {
	t.Helper()
	r, err := f.issuer.Seal(Call{Session: "s", Run: "r1", Tool: tool, Args: ArgvArgs([]string{tool}), Result: BytesResult(nil)})
	if err != nil {
		t.Fatal(err)
	}
	r.Format, r.Bound = Version, Binding{}
	if r, err = f.key.Seal(r); err != nil {
		t.Fatal(err)
	}
	return r
}

// rawCommit writes a commit of tree with message msg and parents, as
// one written by hand would be, at a fixed time.
func (f *fixture) rawCommit(t testing.TB, tree gitobj.OID, msg string, parents ...gitobj.OID) gitobj.OID {
	t.Helper()
	sig := gitobj.Signature{Name: "readproof", Email: "readproof@localhost", When: time.Unix(1_800_000_000, 0).UTC()}
	oid, err := f.store.PutCommit(gitobj.Commit{Tree: tree, Parents: parents, Author: sig, Committer: sig, Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	return oid
}

func (f *fixture) issue(t testing.TB, session, tool string) Receipt {
	t.Helper()
	r, err := f.issuer.Issue(context.Background(), Call{
		Session: session, Tool: tool, Args: ArgvArgs([]string{tool}), Result: BytesResult([]byte(tool)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ids(rs []Receipt) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func git(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := gitstore.GitCommand(t, dir, args...)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out))
}

func TestLedgerAppendListGet(t *testing.T) {
	f := newFixture(t)
	if rs, err := f.ledger.List("empty"); err != nil || len(rs) != 0 {
		t.Fatalf("List(no receipts) = %v, %v", rs, err)
	}
	var a, b []Receipt
	for i := 0; i < 6; i++ {
		a = append(a, f.issue(t, "sess-a", "tool-"+strconv.Itoa(i)))
		if i%2 == 0 {
			b = append(b, f.issue(t, "sess-b", "other"))
		}
	}
	gotA, err := f.ledger.List("sess-a")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(gotA), ids(a)) {
		t.Errorf("List(sess-a) order\n got %v\nwant %v", ids(gotA), ids(a))
	}
	for i := range a {
		if !gotA[i].Equal(a[i]) {
			t.Errorf("List returned a different receipt %s", a[i].ID)
		}
	}
	for _, r := range append(slices.Clone(a), b...) {
		got, err := f.ledger.Get(r.ID)
		if err != nil || !got.Equal(r) {
			t.Errorf("Get(%s) = %v, %v", r.ID, got.ID, err)
		}
		if err := Verify(got, f.key); err != nil {
			t.Errorf("Verify(stored %s): %v", r.ID, err)
		}
	}
	for _, id := range []string{NewID(), "rcpt_x", "", "../../etc"} {
		if _, err := f.ledger.Get(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%q) = %v, want ErrNotFound", id, err)
		}
	}
	sessions, err := f.ledger.Sessions()
	if err != nil || !slices.Equal(sessions, []string{"sess-a", "sess-b"}) {
		t.Errorf("Sessions() = %v, %v", sessions, err)
	}
	// Appending the same receipt again changes nothing; another receipt
	// under a stored id is refused.
	tip, _ := f.store.Ref(SessionRef("sess-a"))
	if err := f.ledger.Append(a[2]); err != nil {
		t.Errorf("re-append of a stored receipt: %v", err)
	}
	if tip2, _ := f.store.Ref(SessionRef("sess-a")); tip2 != tip {
		t.Error("re-append moved the session ref")
	}
	forged := a[2]
	forged.Tool = "forged"
	if err := f.ledger.Append(forged); !errors.Is(err, ErrExists) {
		t.Errorf("append over a stored id = %v, want ErrExists", err)
	}
	invalid := a[0]
	invalid.ID = "rcpt_bad"
	if err := f.ledger.Append(invalid); !errors.Is(err, ErrInvalid) {
		t.Errorf("append of an invalid receipt = %v, want ErrInvalid", err)
	}
	if _, err := f.ledger.List("../x"); err == nil {
		t.Error("List accepted an invalid session id")
	}

	// Stock git reads the same bytes at the documented path.
	r := a[0]
	d := r.ID[len(IDPrefix):]
	blob := git(t, f.store.Path(), nil, "cat-file", "-p", SessionRef("sess-a")+":"+d[0:1]+"/"+d[1:2]+"/"+r.ID+".json")
	if blob+"\n" != string(r.Encode()) {
		t.Errorf("git cat-file shows %q, want %q", blob, r.Encode())
	}
	idx := git(t, f.store.Path(), nil, "cat-file", "-p", IndexRefPrefix+d[0:1]+":"+d[1:2]+"/"+d[2:3]+"/"+r.ID+".json")
	if idx != blob {
		t.Error("the index copy differs from the session copy")
	}
	gitstore.Fsck(t, f.store.Path())

	// Reopened by a new Store (a later process): everything is there.
	store2, err := gitstore.Open(f.store.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer store2.Close()
	l2 := NewLedger(store2)
	got2, err := l2.List("sess-a")
	if err != nil || !slices.Equal(ids(got2), ids(a)) {
		t.Errorf("after reopen: List = %v, %v", ids(got2), err)
	}
	if r, err := l2.Get(b[1].ID); err != nil || Verify(r, f.key) != nil {
		t.Errorf("after reopen: Get(%s) = %v", b[1].ID, err)
	}
}

func TestLedgerConcurrentGoroutines(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var wg sync.WaitGroup
	// 6 goroutines appending to one session: 8 each (48 appends racing)
	// by default, 15 each under READPROOF_LONG_TESTS=1.
	g, n := 6, testsize.Pick(t, 8, 15)
	errs := make(chan error, g*n)
	for w := 0; w < g; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				_, err := f.issuer.Issue(context.Background(), Call{Session: "shared", Tool: "g", Args: ArgvArgs(nil), Result: BytesResult(nil)})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	rs, err := f.ledger.List("shared")
	if err != nil || len(rs) != g*n {
		t.Fatalf("List = %d, %v; want %d", len(rs), err, g*n)
	}
}

func TestLedgerManyProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 8 processes")
	}
	t.Parallel()
	const procs = 8
	// 8 each by default (64 concurrent appends to one session), 100 each
	// (800) under READPROOF_LONG_TESTS=1.
	each := testsize.Pick(t, 8, 100)
	store := gitstore.NewTestStore(t)
	path := store.Path()
	secret := bytes.Repeat([]byte{9}, KeySize)
	key, _ := NewKey(secret)
	start := time.Now()
	type out struct {
		ids []string
		err error
	}
	results := make(chan out, procs)
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(),
			"RECEIPTS_TEST_WORKER=1", "RECEIPTS_TEST_STORE="+path, "RECEIPTS_TEST_KEY="+hex.EncodeToString(secret),
			"RECEIPTS_TEST_N="+strconv.Itoa(each), "RECEIPTS_TEST_SESSION=shared")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		go func() {
			stdout, err := cmd.Output()
			if err != nil {
				err = fmt.Errorf("%v: %s", err, stderr.String())
			}
			results <- out{strings.Fields(string(stdout)), err}
		}()
	}
	issued := map[string]bool{}
	attempts := 0
	for p := 0; p < procs; p++ {
		o := <-results
		if o.err != nil {
			t.Fatalf("worker: %v", o.err)
		}
		if len(o.ids) != each+1 || !strings.HasPrefix(o.ids[each], "attempts=") {
			t.Fatalf("a worker reported %d receipts, want %d", len(o.ids)-1, each)
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(o.ids[each], "attempts="))
		attempts += n
		for _, id := range o.ids[:each] {
			issued[id] = true
		}
	}
	elapsed := time.Since(start)
	if len(issued) != procs*each {
		t.Fatalf("%d distinct ids issued, want %d", len(issued), procs*each)
	}
	// A fresh Store (this process did not issue them) sees all of them.
	store2, err := gitstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store2.Close()
	ledger := NewLedger(store2)
	rs, err := ledger.List("shared")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != procs*each {
		t.Fatalf("List = %d receipts, want %d: receipts were lost", len(rs), procs*each)
	}
	for _, r := range rs {
		if !issued[r.ID] {
			t.Errorf("listed receipt %s was never issued", r.ID)
		}
		if err := Verify(r, key); err != nil {
			t.Errorf("Verify(%s): %v", r.ID, err)
		}
	}
	listed := time.Since(start) - elapsed
	for _, r := range rs[:min(100, len(rs))] {
		if got, err := ledger.Get(r.ID); err != nil || !got.Equal(r) {
			t.Errorf("Get(%s): %v", r.ID, err)
		}
	}
	checkLayout(t, store2, "shared", procs*each)
	gitstore.Fsck(t, path)
	t.Logf("%d processes x %d receipts into one session: %v (%.0f receipts/s, %d append attempts), listed and verified in %v",
		procs, each, elapsed, float64(procs*each)/elapsed.Seconds(), attempts, listed)
}

// checkLayout checks the documented tree shape of a session with n
// receipts: at most 32 entries per fan-out level, every receipt in a leaf,
// one commit per receipt, and refs that grow with sessions, not receipts.
func checkLayout(t *testing.T, store gitstore.Store, session string, n int) {
	t.Helper()
	tip, _ := store.Ref(SessionRef(session))
	c, _ := store.Commit(tip)
	root, _ := store.Tree(c.Tree)
	if len(root) > 32 {
		t.Errorf("session root tree has %d entries, want at most 32", len(root))
	}
	total := 0
	for _, e := range root {
		mid, _ := store.Tree(e.OID)
		if len(mid) > 32 {
			t.Errorf("fan-out tree %s has %d entries", e.Name, len(mid))
		}
		for _, m := range mid {
			leaf, _ := store.Tree(m.OID)
			total += len(leaf)
		}
	}
	if total != n {
		t.Errorf("leaves hold %d receipts, want %d", total, n)
	}
	refs, _ := store.Refs(RefPrefix)
	if len(refs) > 33 {
		t.Errorf("%d refs for %d receipts in one session", len(refs), n)
	}
	if got := git(t, store.Path(), nil, "rev-list", "--count", SessionRef(session)); got != strconv.Itoa(n) {
		t.Errorf("session chain has %s commits, want %d", got, n)
	}
}

// rewriteReceipt replaces the blob at a receipt's path under ref with data,
// with stock git plumbing only (hash-object, a temporary index, write-tree,
// commit-tree, update-ref), as an attacker with write access would.
func rewriteReceipt(t *testing.T, gitDir, ref, path string, data []byte) {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	blob := git(t, gitDir, env, "hash-object", "-w", tmp)
	old := git(t, gitDir, env, "rev-parse", ref)
	git(t, gitDir, env, "read-tree", old)
	git(t, gitDir, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+path)
	tree := git(t, gitDir, env, "write-tree")
	commit := git(t, gitDir, env, "commit-tree", tree, "-p", old, "-m", "edit")
	git(t, gitDir, env, "update-ref", ref, commit, old)
}

func sessionBlobPath(id string) string { return strings.Join(sessionPath(id), "/") }
func indexBlobPath(id string) string   { return strings.Join(indexPath(id), "/") }

func TestLedgerDetectsEditThroughGit(t *testing.T) {
	f := newFixture(t)
	r := f.issue(t, "sess", "exec")
	keep := f.issue(t, "sess", "exec")
	edited := r
	edited.Tool = "something-else"
	rewriteReceipt(t, f.store.Path(), SessionRef("sess"), sessionBlobPath(r.ID), edited.Encode())
	rs, err := f.ledger.List("sess")
	if err != nil || len(rs) != 2 {
		t.Fatalf("List after edit = %d, %v", len(rs), err)
	}
	for _, got := range rs {
		err := Verify(got, f.key)
		switch got.ID {
		case r.ID:
			if !errors.Is(err, ErrTampered) || got.Tool != "something-else" {
				t.Errorf("edited receipt: Verify = %v (tool %q), want ErrTampered", err, got.Tool)
			}
		case keep.ID:
			if err != nil {
				t.Errorf("untouched receipt: Verify = %v", err)
			}
		}
	}
	// Garbage in place of the JSON: listing fails with ErrCorrupt, Scan
	// names the entry.
	rewriteReceipt(t, f.store.Path(), SessionRef("sess"), sessionBlobPath(keep.ID), []byte("not json"))
	if _, err := f.ledger.List("sess"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("List with a garbage blob = %v, want ErrCorrupt", err)
	}
	entries, err := f.ledger.Scan("sess")
	if err != nil || len(entries) != 2 || !errors.Is(entries[1].Err, ErrCorrupt) || entries[1].ID != keep.ID {
		t.Errorf("Scan = %+v, %v", entries, err)
	}
	// A stray file in the tree is reported, not ignored.
	rewriteReceipt(t, f.store.Path(), SessionRef("sess"), "README", []byte("hi"))
	entries, _ = f.ledger.Scan("sess")
	if last := entries[len(entries)-1]; last.ID != "README" || !errors.Is(last.Err, ErrCorrupt) {
		t.Errorf("stray file: last entry %+v", last)
	}
}

// TestLedgerCompletesHalfAppend simulates a crash between the two ref
// renames of an append: re-appending the receipt restores the missing half
// and leaves the other untouched.
func TestLedgerCompletesHalfAppend(t *testing.T) {
	f := newFixture(t)
	first := f.issue(t, "s", "a")
	r := f.issue(t, "s", "b")
	dir := f.store.Path()
	stip := git(t, dir, nil, "rev-parse", SessionRef("s"))
	git(t, dir, nil, "update-ref", SessionRef("s"), stip+"^", stip) // session half lost
	if rs, _ := f.ledger.List("s"); len(rs) != 1 || rs[0].ID != first.ID {
		t.Fatalf("setup: List = %v", ids(rs))
	}
	itip, _ := f.store.Ref(indexRef(r.ID))
	if err := f.ledger.Append(r); err != nil {
		t.Fatal(err)
	}
	if rs, _ := f.ledger.List("s"); !slices.Equal(ids(rs), []string{first.ID, r.ID}) {
		t.Errorf("after repair: List = %v", ids(rs))
	}
	if itip2, _ := f.store.Ref(indexRef(r.ID)); itip2 != itip {
		t.Error("repair moved the index ref although the index had the receipt")
	}
	gitstore.Fsck(t, dir)
}

// TestLedgerCommitsInUTC: the commits of the receipt chains carry their
// time in UTC, as every commit readproof writes (docs/store-format.md,
// "Commits"), whatever the clock's zone: they carried the local offset
// (`-0500` under TZ=America/New_York) beside the +0000 of every other
// chain, in `git log` of the store and of every clone.
func TestLedgerCommitsInUTC(t *testing.T) {
	f := newFixture(t)
	f.ledger.Now = func() time.Time {
		return time.Date(2026, 12, 5, 4, 0, 0, 0, time.FixedZone("EST", -5*3600))
	}
	r := f.issue(t, "sess-tz", "tool")
	for _, ref := range []string{SessionRef("sess-tz"), indexRef(r.ID)} {
		line := git(t, f.store.Path(), nil, "log", "-1", "--format=%ad %cd", "--date=raw", ref)
		if want := "1796461200 +0000 1796461200 +0000"; line != want {
			t.Errorf("%s: author and committer dates %q, want %q", ref, line, want)
		}
	}
}

// TestLedgerMessagesAsDocumented: docs/receipts.md ("Storage") gives the
// message of each chain's commit as it is written, the session chain's and
// the index chain's (whose first line differs), with `<id>`, `<session>` and
// `<tool>` for the values.
func TestLedgerMessagesAsDocumented(t *testing.T) {
	f := newFixture(t)
	r := f.issue(t, "sess-doc", "tool-doc")
	doc, err := os.ReadFile(filepath.Join("..", "docs", "receipts.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	placeholders := strings.NewReplacer(r.ID, "<id>", "sess-doc", "<session>", "tool-doc", "<tool>")
	for _, ref := range []string{SessionRef("sess-doc"), indexRef(r.ID)} {
		for _, line := range strings.Split(git(t, f.store.Path(), nil, "log", "-1", "--format=%B", ref), "\n") {
			if line == "" {
				continue
			}
			if want := "`" + placeholders.Replace(line) + "`"; !strings.Contains(text, want) {
				t.Errorf("%s: its message has the line %q; docs/receipts.md does not show %s", ref, line, want)
			}
		}
	}
}
