package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/manifest"
)

// viewHelper writes manifests and journal commits directly, so the tests
// control run times and arrival order.
type viewHelper struct {
	t  *testing.T
	s  *Store
	at time.Time
}

func newViewHelper(t *testing.T) *viewHelper {
	f := newFixture(t, "", nil)
	return &viewHelper{t: t, s: f.s, at: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
}

// run writes a manifest created at second sec delivering docs: "URI[@TAG]=bytes".
func (h *viewHelper) run(id string, sec int, docs ...string) (gitstore.OID, *manifest.Manifest) {
	h.t.Helper()
	at := h.at.Add(time.Duration(sec) * time.Second)
	m := &manifest.Manifest{Format: manifest.Format, RunID: id, StartedAt: at, CreatedAt: at, Entries: []manifest.Entry{}}
	for i, d := range docs {
		ref, body, _ := strings.Cut(d, "=")
		uri, tag, _ := strings.Cut(ref, "@")
		blob, err := h.s.git.PutBlob([]byte(body + "\n"))
		if err != nil {
			h.t.Fatal(err)
		}
		m.Entries = append(m.Entries, manifest.Entry{Position: i, URI: uri, Ref: tag, Snapshot: string(blob),
			ContentHash: contentHash([]byte(body + "\n")), SourceRevision: "r", ObservedAt: at, Decision: "fetch",
			Bytes: int64(len(body) + 1), ContentType: "text/plain"})
	}
	mid, err := h.s.writeManifest(m)
	if err != nil {
		h.t.Fatal(err)
	}
	return mid, m
}

// record appends a record-run commit for mid to tip, as a writer does.
func (h *viewHelper) record(tip, mid gitstore.OID) gitstore.OID {
	h.t.Helper()
	var parents []gitstore.OID
	if tip != "" {
		parents = []gitstore.OID{tip}
	}
	tree, err := JournalTree(h.s.git, parents, mid)
	if err != nil {
		h.t.Fatal(err)
	}
	sig := h.s.signature(h.at)
	c, err := h.s.git.PutCommit(gitstore.Commit{Tree: tree, Parents: append(parents, mid), Author: sig, Committer: sig,
		Message: fmt.Sprintf("record run x\n\nmanifest %s\n", mid)})
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

func (h *viewHelper) merge(a, b gitstore.OID) gitstore.OID {
	h.t.Helper()
	tree, err := JournalTree(h.s.git, []gitstore.OID{a, b}, "")
	if err != nil {
		h.t.Fatal(err)
	}
	sig := h.s.signature(h.at)
	c, err := h.s.git.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{a, b}, Author: sig, Committer: sig, Message: "merge journals\n"})
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

func (h *viewHelper) tree(c gitstore.OID) gitstore.OID {
	h.t.Helper()
	cm, err := h.s.git.Commit(c)
	if err != nil {
		h.t.Fatal(err)
	}
	return cm.Tree
}

func (h *viewHelper) root() gitstore.OID {
	h.t.Helper()
	tip, err := h.s.ref(JournalRef)
	if err != nil {
		h.t.Fatal(err)
	}
	return tip
}

// files lists the view's files with their bytes.
func (h *viewHelper) files(tree gitstore.OID) map[string]string {
	h.t.Helper()
	ids := map[string]gitstore.OID{}
	if err := h.s.listFiles(tree, "", ids); err != nil {
		h.t.Fatal(err)
	}
	out := map[string]string{}
	for p, id := range ids {
		if p == ViewIndexFile {
			continue
		}
		b, err := h.s.git.Blob(id)
		if err != nil {
			h.t.Fatal(err)
		}
		out[p] = strings.TrimSuffix(string(b), "\n")
	}
	return out
}

// TestJournalViewSameRunsSameTree: the view depends on the set of runs, not
// on the order they arrived in or how the journals were merged: a linear
// journal, merges in either order, and merges whose runs interleave in time
// all give one tree; a run recorded out of order (a clock behind) is folded
// in its place.
func TestJournalViewSameRunsSameTree(t *testing.T) {
	h := newViewHelper(t)
	base1, _ := h.run("b1", 1, "readproof://demo/p=v1", "readproof://demo/q=q1")
	l1, _ := h.run("l1", 10, "readproof://demo/p=left-10")
	l2, _ := h.run("l2", 30, "readproof://demo/q=left-30")
	r1, _ := h.run("r1", 20, "readproof://demo/p=right-20", "readproof://demo/n/new=n")
	r2, _ := h.run("r2", 40, "readproof://demo/q=right-40")
	late, _ := h.run("late", 5, "readproof://demo/p=late-5", "readproof://demo/z=z")

	base := h.record(h.root(), base1)
	left := h.record(h.record(base, l1), l2)
	right := h.record(h.record(base, r1), r2)
	linear := h.record(h.record(h.record(h.record(base, l1), r1), l2), r2)

	m1, m2 := h.merge(left, right), h.merge(right, left)
	if h.tree(m1) != h.tree(linear) || h.tree(m2) != h.tree(linear) {
		t.Fatalf("merged trees %s, %s; linear %s", h.tree(m1), h.tree(m2), h.tree(linear))
	}
	want := map[string]string{
		"documents/demo/p": "right-20", "documents/demo/q": "right-40", "documents/demo/n/new": "n",
	}
	if got := h.files(h.tree(m1)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("view %v, want %v", got, want)
	}
	idx, err := readViewIndex(h.s.git, h.tree(m1))
	if err != nil || idx.RunID != "r2" || idx.Manifest != string(r2) {
		t.Fatalf("run.json %+v (%v), want r2", idx, err)
	}

	// A run created before runs the view already holds: p keeps right-20,
	// z appears, run.json still names r2.
	skewed := h.record(m1, late)
	full, err := FullJournalTree(h.s.git, skewed)
	if err != nil {
		t.Fatal(err)
	}
	if h.tree(skewed) != full {
		t.Fatalf("out-of-order run: tree %s, full recompute %s", h.tree(skewed), full)
	}
	if got := h.files(full)["documents/demo/p"]; got != "right-20" {
		t.Fatalf("p = %q after a late run, want right-20", got)
	}
	// The same run on the other side of a merge, also out of order.
	other := h.record(right, late)
	if m := h.merge(left, other); h.tree(m) != full {
		t.Fatalf("merge with a late run: %s, want %s", h.tree(m), full)
	}
	for _, c := range []gitstore.OID{m1, m2, linear, skewed} {
		want, err := ExpectedJournalTree(h.s.git, c)
		if err != nil || want != h.tree(c) {
			t.Fatalf("ExpectedJournalTree(%s) = %s (%v), tree %s", c, want, err, h.tree(c))
		}
	}
}

// TestJournalViewNameClashes: a document whose name another document holds
// as a directory (or the reverse) gets '~' appended, consistently in later
// runs; a tag delivery is its own file.
func TestJournalViewNameClashes(t *testing.T) {
	h := newViewHelper(t)
	r1, _ := h.run("r1", 1, "readproof://demo/a=file-a", "readproof://demo/x/y=xy")
	r2, _ := h.run("r2", 2, "readproof://demo/a/b=ab", "readproof://demo/x=file-x", "readproof://demo/a@prod=tagged")
	r3, _ := h.run("r3", 3, "readproof://demo/a=file-a2", "readproof://demo/a/b/c=abc", "readproof://demo/x=file-x2")
	tip := h.record(h.record(h.record(h.root(), r1), r2), r3)
	want := map[string]string{
		"documents/demo/a":       "file-a2",
		"documents/demo/a~/b":    "ab",
		"documents/demo/a@prod":  "tagged",
		"documents/demo/x/y":     "xy",
		"documents/demo/x~":      "file-x2",
		"documents/demo/a~/b~/c": "abc",
	}
	if got := h.files(h.tree(tip)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("view %v\nwant %v", got, want)
	}
	fsckStore(t, h.s.Path())
}

// TestJournalViewKeptByChecksAndRenames: commits that record no run carry
// their parent's view; a format-1 journal stays format 1 until migrated.
func TestJournalViewKeptByChecksAndRenames(t *testing.T) {
	h := newViewHelper(t)
	r1, _ := h.run("r1", 1, "readproof://demo/a=a")
	tip := h.record(h.root(), r1)
	if got, err := JournalTree(h.s.git, []gitstore.OID{tip}, ""); err != nil || got != h.tree(tip) {
		t.Fatalf("no-run commit: %s (%v), want %s", got, err, h.tree(tip))
	}
	// Format 1: an empty tree on a journal that records runs.
	sig := h.s.signature(h.at)
	old, err := h.s.git.PutCommit(gitstore.Commit{Tree: EmptyTree, Parents: []gitstore.OID{h.root(), r1}, Author: sig, Committer: sig, Message: "record run r1\n"})
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := JournalFormat(h.s.git, old); f != 1 {
		t.Fatalf("format %d, want 1", f)
	}
	r2, _ := h.run("r2", 2, "readproof://demo/a=b")
	if got := h.tree(h.record(old, r2)); got != EmptyTree {
		t.Fatalf("a run on a format-1 journal got tree %s", got)
	}
	if f, _ := JournalFormat(h.s.git, h.root()); f != 2 {
		t.Fatalf("a store with no runs: format %d, want 2", f)
	}
}

// TestJournalConcurrentWriters: two handles committing runs at once lose
// nothing: every run is on the journal and main carries the view of all of
// them (each writer recomputes the view when its compare-and-swap fails).
func TestJournalConcurrentWriters(t *testing.T) {
	t.Parallel()
	toml, files, uris := manyDocs(4, 64)
	f := newFixture(t, toml, files)
	g := &fixture{dir: f.dir, clock: f.clock}
	g.reopen(t, Options{Now: time.Now})
	f.reopen(t, Options{Now: time.Now})
	writeAtOnce(t, []*Store{f.s, g.s}, 8, func(_, i int) []string { return uris[i%4 : i%4+1] })
	tip, err := f.s.ref(JournalRef)
	if err != nil {
		t.Fatal(err)
	}
	records, err := journalWalk(f.s.git, tip)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 16 {
		t.Fatalf("journal records %d runs, want 16", len(records))
	}
	full, err := FullJournalTree(f.s.git, tip)
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.s.git.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tree != full {
		t.Fatalf("main's tree %s, the view of its runs %s", c.Tree, full)
	}
}

// FuzzViewIndex: run.json decoding never panics, and what decodes
// re-encodes to the same run.
func FuzzViewIndex(f *testing.F) {
	good, _ := encodeViewIndex(runKey{at: time.Date(2026, 11, 29, 12, 0, 0, 5, time.UTC), run: "r1", manifest: "0123456789abcdef0123456789abcdef01234567"})
	f.Add(good)
	f.Add([]byte(`{"format":"readproof-journal-view/1","run_id":"r","manifest":"x","created_at":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"format":"readproof-journal-view/1","extra":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := decodeViewIndex(data)
		if err != nil {
			return
		}
		again, err := encodeViewIndex(idx.key())
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeViewIndex(again)
		if err != nil || back.key().less(idx.key()) || idx.key().less(back.key()) {
			t.Fatalf("re-encoded %q: %+v (%v), want %+v", again, back, err, idx)
		}
	})
}

// countingReader counts blob reads.
type countingReader struct {
	gitstore.Reader
	blobs int
}

func (c *countingReader) Blob(id gitstore.OID) ([]byte, error) {
	c.blobs++
	return c.Reader.Blob(id)
}

// TestJournalViewLateRunReadsTheSuffix: a run committed just after a run
// created later than it (two writers at once) is folded with the runs that
// sort after it onto an older view, reading a few manifests, not all.
func TestJournalViewLateRunReadsTheSuffix(t *testing.T) {
	h := newViewHelper(t)
	tip := h.root()
	for i := 0; i < 40; i++ {
		m, _ := h.run(fmt.Sprintf("r%02d", i), 10*i, fmt.Sprintf("readproof://demo/d%d=v%d", i%5, i))
		tip = h.record(tip, m)
	}
	late, _ := h.run("late", 10*39-5, "readproof://demo/d4=late", "readproof://demo/e=e")
	tip = h.record(tip, late)
	full, err := FullJournalTree(h.s.git, tip)
	if err != nil || full != h.tree(tip) {
		t.Fatalf("late run: tree %s, full recompute %s (%v)", h.tree(tip), full, err)
	}
	if got := h.files(full)["documents/demo/d4"]; got != "v39" {
		t.Fatalf("d4 = %q, want v39 (r39 is newer than the late run)", got)
	}
	cr := &countingReader{Reader: h.s.git}
	if want, err := ExpectedJournalTree(cr, tip); err != nil || want != full {
		t.Fatalf("expected tree %s (%v), want %s", want, err, full)
	}
	if cr.blobs > 10 {
		t.Fatalf("the late run read %d blobs; the suffix is one run", cr.blobs)
	}
}

// TestJournalMergeReadsTheNewRuns: merging two journals that diverged
// after a long common history reads the runs new on either side, not the
// history; a side carrying a run older than the common history's newest
// folds everything again, and still gives the view of all runs.
func TestJournalMergeReadsTheNewRuns(t *testing.T) {
	h := newViewHelper(t)
	tip := h.root()
	for i := 0; i < 40; i++ {
		m, _ := h.run(fmt.Sprintf("base%02d", i), 10+i, fmt.Sprintf("readproof://demo/d%d=v%d", i%5, i))
		tip = h.record(tip, m)
	}
	l1, _ := h.run("l1", 100, "readproof://demo/d1=left")
	r1, _ := h.run("r1", 101, "readproof://demo/d1=right", "readproof://demo/n=n")
	left, right := h.record(tip, l1), h.record(tip, r1)
	merged := h.merge(left, right)
	full, err := FullJournalTree(h.s.git, merged)
	if err != nil || full != h.tree(merged) {
		t.Fatalf("merge: tree %s, full recompute %s (%v)", h.tree(merged), full, err)
	}
	cr := &countingReader{Reader: h.s.git}
	if want, err := ExpectedJournalTree(cr, merged); err != nil || want != full {
		t.Fatalf("expected tree %s (%v), want %s", want, err, full)
	}
	if cr.blobs > 10 {
		t.Fatalf("the merge read %d blobs for two new runs", cr.blobs)
	}

	// A run created before the whole common history, on one side.
	early, _ := h.run("early", 0, "readproof://demo/d1=early", "readproof://demo/old=old")
	m2 := h.merge(left, h.record(right, early))
	full2, err := FullJournalTree(h.s.git, m2)
	if err != nil || full2 != h.tree(m2) {
		t.Fatalf("merge with an early run: tree %s, full recompute %s (%v)", h.tree(m2), full2, err)
	}
	if got := h.files(full2); got["documents/demo/d1"] != "right" || got["documents/demo/old"] != "old" {
		t.Fatalf("view after an early run: %v", got)
	}
}

// TestJournalMergeWithFormat1Side: during an upgrade a store of format 2
// pulls a journal still in format 1 (empty trees): the merge carries the
// view of every run of both sides, as a full recompute gives it.
func TestJournalMergeWithFormat1Side(t *testing.T) {
	h := newViewHelper(t)
	root := h.root()
	a, _ := h.run("a", 1, "readproof://demo/p=a")
	b, _ := h.run("b", 2, "readproof://demo/p=b", "readproof://demo/q=q")
	c, _ := h.run("c", 3, "readproof://demo/r=r")
	sig := h.s.signature(h.at)
	old := root
	for _, m := range []gitstore.OID{a, b} {
		var err error
		if old, err = h.s.git.PutCommit(gitstore.Commit{Tree: EmptyTree, Parents: []gitstore.OID{old, m}, Author: sig, Committer: sig,
			Message: fmt.Sprintf("record run x\n\nmanifest %s\n", m)}); err != nil {
			t.Fatal(err)
		}
	}
	if f, _ := JournalFormat(h.s.git, old); f != 1 {
		t.Fatalf("format %d, want 1", f)
	}
	migrated := h.record(h.record(root, a), c)
	m := h.merge(migrated, old)
	full, err := FullJournalTree(h.s.git, m)
	if err != nil || full != h.tree(m) {
		t.Fatalf("merge with a format-1 side: %s, full %s (%v)", h.tree(m), full, err)
	}
	if got := h.files(full); got["documents/demo/p"] != "b" || got["documents/demo/r"] != "r" {
		t.Fatalf("view %v", got)
	}
	// Both sides in format 1: the merge keeps the empty tree.
	if tree, err := JournalTree(h.s.git, []gitstore.OID{old, old}, ""); err != nil || tree != EmptyTree {
		t.Fatalf("merge of format-1 sides: %s (%v)", tree, err)
	}
}

// TestMigrateAlongsideWriters: a migration that loses its compare-and-swap
// to a run committed meanwhile computes the view again on the new tip, so
// main ends with the view of every run, whatever the interleaving; a second
// migration finds nothing to do.
func TestMigrateAlongsideWriters(t *testing.T) {
	t.Parallel()
	toml, files, uris := manyDocs(3, 64)
	f := newFixture(t, toml, files)
	f.reopen(t, Options{Now: time.Now})
	// A format-1 journal: two runs recorded with the empty tree.
	for i := 0; i < 2; i++ {
		if _, _, err := f.s.RunOnce(context.Background(), fmt.Sprintf("old-%d", i), uris); err != nil {
			t.Fatal(err)
		}
		tip, err := f.s.ref(JournalRef)
		if err != nil {
			t.Fatal(err)
		}
		c, err := f.s.git.Commit(tip)
		if err != nil {
			t.Fatal(err)
		}
		c.Tree = EmptyTree
		flat, err := f.s.git.PutCommit(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.s.git.Update(gitstore.RefUpdate{Name: JournalRef, Old: tip, New: flat}); err != nil {
			t.Fatal(err)
		}
	}
	g := &fixture{dir: f.dir, clock: f.clock}
	g.reopen(t, Options{Now: time.Now})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 6; i++ {
			if _, _, err := g.s.RunOnce(context.Background(), fmt.Sprintf("new-%d", i), uris[i%3:i%3+1]); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 3; i++ {
			if _, err := f.s.Migrate(); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Whatever the interleaving, main is either still in format 1 (every
	// run landed before the first migration) or carries the right view.
	mid, _ := f.s.ref(JournalRef)
	if format, _ := JournalFormat(f.s.git, mid); format == 2 {
		want, err := FullJournalTree(f.s.git, mid)
		c, _ := f.s.git.Commit(mid)
		if err != nil || c.Tree != want {
			t.Fatalf("after concurrent writes: tree %s, the view of its runs %s (%v)", c.Tree, want, err)
		}
	}
	res, err := f.s.Migrate()
	if err != nil || res.Runs != 8 {
		t.Fatalf("final migrate: %+v (%v)", res, err)
	}
	again, err := f.s.Migrate()
	if err != nil || again.Changed {
		t.Fatalf("a second migrate changed something: %+v (%v)", again, err)
	}
	tip, _ := f.s.ref(JournalRef)
	full, err := FullJournalTree(f.s.git, tip)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.s.git.Commit(tip)
	if c.Tree != full {
		t.Fatalf("main's tree %s, the view of its runs %s", c.Tree, full)
	}
	fsckStore(t, f.s.Path())
}

// FuzzViewManifest: whatever manifest.json holds, the view's reading of it
// and folding it into a view return an error or a tree whose names git
// accepts, never a panic.
func FuzzViewManifest(f *testing.F) {
	f.Add([]byte(`{"run_id":"r1","created_at":"2026-11-29T12:00:00Z","entries":[{"position":0,"uri":"readproof://demo/a","ref":"","snapshot":"0123456789abcdef0123456789abcdef01234567"}]}`))
	f.Add([]byte(`{"run_id":"r1","created_at":"2026-11-29T12:00:00Z","entries":[{"position":1,"uri":"readproof://demo/a/b","ref":"prod","snapshot":"0123456789abcdef0123456789abcdef01234567"},{"position":0,"uri":"readproof://demo/a","ref":"","snapshot":"0123456789abcdef0123456789abcdef01234567"}]}`))
	f.Add([]byte(`{"run_id":"..","entries":[{"uri":"readproof://demo/.git/x","snapshot":"x"}]}`))
	f.Add([]byte(`{"run_id":"r","entries":[{"uri":"readproof://demo/a@b","ref":"c~1"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeViewRun(data, "0123456789abcdef0123456789abcdef01234567")
		if err != nil {
			return
		}
		ed := gitstore.NewTreeHasher(nil, "") // an empty view: nothing to read
		if err := applyRun(ed, r); err != nil {
			return
		}
		if _, err := ed.Write(); err != nil {
			t.Fatalf("a run that applied wrote no tree: %v", err)
		}
	})
}

// writeAtOnce has every store record runs runs ("w<writer>-<i>", of the
// documents pick names) at the same time as the others, and fails t on any
// error.
func writeAtOnce(t *testing.T, stores []*Store, runs int, pick func(writer, i int) []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(stores))
	for w, s := range stores {
		wg.Go(func() {
			for i := 0; i < runs; i++ {
				if _, _, err := s.RunOnce(context.Background(), fmt.Sprintf("w%d-%d", w, i), pick(w, i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
