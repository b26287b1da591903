package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
)

// journalMover is a store on which another writer moves the journal (to
// next) just before the first transaction that moves it: that transaction
// loses its compare-and-swap.
type journalMover struct {
	gitstore.Store
	from, next gitstore.OID
	moved      bool
}

func (j *journalMover) Update(ups ...gitstore.RefUpdate) error {
	for _, u := range ups {
		if u.Name == JournalRef && !j.moved {
			j.moved = true
			if err := j.Store.Update(gitstore.RefUpdate{Name: JournalRef, Old: j.from, New: j.next}); err != nil {
				return fmt.Errorf("the other writer: %w", err)
			}
		}
	}
	return j.Store.Update(ups...)
}

// unrecorded commits run id over uris and moves the journal back to where
// it was, as a writer stopped between the run's ref and the journal leaves
// it (docs/store-format.md, "Half-done transitions"). It returns the
// manifest.
func (f *fixture) unrecorded(t *testing.T, id string, uris []string) gitstore.OID {
	t.Helper()
	f.clock.Add(time.Second)
	before := f.journalTip(t)
	m, _, err := f.s.RunOnce(context.Background(), id, uris)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.git.Update(gitstore.RefUpdate{Name: JournalRef, Old: f.journalTip(t), New: before}); err != nil {
		t.Fatal(err)
	}
	return gitstore.OID(m.ID)
}

func (f *fixture) journalTip(t *testing.T) gitstore.OID {
	t.Helper()
	tip, err := f.s.git.Ref(JournalRef)
	if err != nil {
		t.Fatal(err)
	}
	return tip
}

// records returns the `record run` commits on the journal's first-parent
// line, newest first, as "RUN MANIFEST".
func (f *fixture) records(t *testing.T) []string {
	t.Helper()
	var out []string
	for id := f.journalTip(t); id != ""; {
		c, err := f.s.git.Commit(id)
		if err != nil {
			t.Fatal(err)
		}
		if head, _, _ := strings.Cut(c.Message, "\n"); strings.HasPrefix(head, "record run ") {
			out = append(out, strings.TrimPrefix(head, "record run ")+" "+string(c.Parents[len(c.Parents)-1]))
		}
		id = ""
		if len(c.Parents) > 1 || (len(c.Parents) == 1 && !strings.HasPrefix(c.Message, "record run ")) {
			id = c.Parents[0]
		}
	}
	return out
}

// checkView fails unless the journal's tip carries the view of every run
// it records.
func (f *fixture) checkView(t *testing.T) {
	t.Helper()
	tip := f.journalTip(t)
	c, err := f.s.git.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	want, err := FullJournalTree(f.s.git, tip)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tree != want {
		t.Fatalf("journal tip %s carries tree %s, the view of its runs is %s", tip, c.Tree, want)
	}
}

// TestCommittedRunRecorded: a run committed but not recorded on the
// journal (a writer stopped at the journal's move) is recorded by the next
// `run commit` and `run --id` of it, once, on the current tip, which
// another writer moved meanwhile (its record stays); both then refuse the
// committed run, saying the record was added; again, they only refuse.
// The journal's view stays the view of every run it records (the run
// recorded late sorts before the other writer's).
func TestCommittedRunRecorded(t *testing.T) {
	toml, files, uris := manyDocs(3, 40)
	f := newFixture(t, toml, files)
	ctx := context.Background()
	if _, _, err := f.s.RunOnce(ctx, "r0", uris[:1]); err != nil {
		t.Fatal(err)
	}
	m1 := f.unrecorded(t, "r1", uris[:2])
	m3 := f.unrecorded(t, "r3", uris[1:])
	m2 := f.unrecorded(t, "r2", uris[2:])
	tip0 := f.journalTip(t)
	// The other writer records r2 (as a pull or gc would) on tip0.
	tree, err := JournalTree(f.s.git, []gitstore.OID{tip0}, m2)
	if err != nil {
		t.Fatal(err)
	}
	sig := f.s.signature(f.clock.Now())
	other, err := f.s.git.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{tip0, m2}, Author: sig, Committer: sig,
		Message: fmt.Sprintf("record run r2\n\nmanifest %s\n", m2)})
	if err != nil {
		t.Fatal(err)
	}
	inner := f.s.git
	mover := &journalMover{Store: inner, from: tip0, next: other}
	f.s.git = mover

	_, err = f.s.CommitRun("r1")
	if !errors.Is(err, ErrRunCommitted) || !strings.Contains(err.Error(), "run already committed as manifest "+string(m1)) ||
		!strings.Contains(err.Error(), "added the record now") {
		t.Fatalf("run commit r1, committed and not recorded: %v; want the refusal saying the journal's record was added", err)
	}
	if !mover.moved {
		t.Fatal("the journal was not moved: the test did not race the record")
	}
	f.s.git = inner
	if got, want := strings.Join(f.records(t), "\n"), strings.Join([]string{"r1 " + string(m1), "r2 " + string(m2)}, "\n"); !strings.HasPrefix(got, want+"\n") {
		t.Fatalf("journal records (newest first):\n%s\nwant first\n%s", got, want)
	}
	f.checkView(t)

	_, err = f.s.RunOnceProgress(ctx, "r3", uris[:1], nil)
	if !errors.Is(err, ErrRunCommitted) || !strings.Contains(err.Error(), "run already committed as manifest "+string(m3)) ||
		!strings.Contains(err.Error(), "added the record now") {
		t.Fatalf("run --id r3, committed and not recorded: %v; want the refusal saying the journal's record was added", err)
	}
	f.checkView(t)
	if got := f.records(t); len(got) != 4 || got[0] != "r3 "+string(m3) {
		t.Fatalf("journal records after run --id r3: %q", got)
	}

	tip := f.journalTip(t)
	for _, again := range []func() error{
		func() error { _, err := f.s.CommitRun("r1"); return err },
		func() error { _, err := f.s.RunOnceProgress(ctx, "r3", uris[:1], nil); return err },
		func() error { _, err := f.s.CommitRun("r0"); return err },
	} {
		err := again()
		if !errors.Is(err, ErrRunCommitted) || strings.Contains(err.Error(), "added") {
			t.Fatalf("a recorded run again: %v; want the plain refusal", err)
		}
	}
	if f.journalTip(t) != tip {
		t.Fatal("a refusal of a recorded run moved the journal")
	}
}

// TestRecordCommittedRuns (gc's step): every committed run whose manifest
// the journal does not reach is recorded, in run id order, in one move of
// the journal; a run the journal reaches in another form is left alone (a
// rename recorded as `rename run` after the `record run` of the old id, a
// run recorded on a side a `merge journals` joined), and so is a manifest
// already recorded under the id of another run ref naming it; a second
// pass records nothing. verify's rule: reached from the tip by any parents.
func TestRecordCommittedRuns(t *testing.T) {
	toml, files, uris := manyDocs(3, 40)
	f := newFixture(t, toml, files)
	ctx := context.Background()
	g := f.s.git
	if _, _, err := f.s.RunOnce(ctx, "r0", uris[:1]); err != nil {
		t.Fatal(err)
	}
	// renamed: recorded as "old", its ref renamed to "new" with the journal's record.
	f.clock.Add(time.Second)
	mOld, _, err := f.s.RunOnce(ctx, "old", uris[1:2])
	if err != nil {
		t.Fatal(err)
	}
	tip := f.journalTip(t)
	c, err := g.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	sig := f.s.signature(f.clock.Now())
	ren, err := g.PutCommit(gitstore.Commit{Tree: c.Tree, Parents: []gitstore.OID{tip}, Author: sig, Committer: sig,
		Message: JournalRenameMessage("old", "new", gitstore.OID(mOld.ID))})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: RunsPrefix + "new", New: gitstore.OID(mOld.ID)},
		gitstore.RefUpdate{Name: RunsPrefix + "old", Old: gitstore.OID(mOld.ID)},
		gitstore.RefUpdate{Name: JournalRef, Old: tip, New: ren}); err != nil {
		t.Fatal(err)
	}
	// side: recorded on a side journal that a merge joined.
	base := f.journalTip(t)
	mSide := f.unrecorded(t, "side", uris[2:])
	sideTree, err := JournalTree(g, []gitstore.OID{base}, mSide)
	if err != nil {
		t.Fatal(err)
	}
	side, err := g.PutCommit(gitstore.Commit{Tree: sideTree, Parents: []gitstore.OID{base, mSide}, Author: sig, Committer: sig,
		Message: fmt.Sprintf("record run side\n\nmanifest %s\n", mSide)})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Second)
	if _, _, err := f.s.RunOnce(ctx, "main1", uris[:2]); err != nil {
		t.Fatal(err)
	}
	mainTip := f.journalTip(t)
	ps := sortedOIDs(mainTip, side)
	mergeTree, err := JournalTree(g, ps, "")
	if err != nil {
		t.Fatal(err)
	}
	merge, err := g.PutCommit(gitstore.Commit{Tree: mergeTree, Parents: ps, Author: sig, Committer: sig, Message: "merge journals\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: JournalRef, Old: mainTip, New: merge}); err != nil {
		t.Fatal(err)
	}
	// unrecorded: two runs, and a second ref naming one of them.
	mB := f.unrecorded(t, "b", uris[:1])
	mA := f.unrecorded(t, "a", uris[1:])
	if err := g.Update(gitstore.RefUpdate{Name: RunsPrefix + "z", New: mA}); err != nil {
		t.Fatal(err)
	}
	before := f.records(t)
	// Another writer moves the journal (a rename's record) meanwhile.
	tip = f.journalTip(t)
	tc, err := g.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	other, err := g.PutCommit(gitstore.Commit{Tree: tc.Tree, Parents: []gitstore.OID{tip}, Author: sig, Committer: sig,
		Message: JournalRenameMessage("new", "newer", gitstore.OID(mOld.ID))})
	if err != nil {
		t.Fatal(err)
	}
	mover := &journalMover{Store: g, from: tip, next: other}
	f.s.git = mover

	got, err := f.s.RecordCommittedRuns(ctx)
	f.s.git = g
	if err != nil {
		t.Fatal(err)
	}
	if !mover.moved {
		t.Fatal("the journal was not moved: the test did not race the records")
	}
	if met, err := journalReaches(g, f.journalTip(t), map[gitstore.OID]bool{other: true}); err != nil || !met[other] {
		t.Fatalf("the other writer's journal commit is lost (%v)", err)
	}
	want := []RunRecord{{RunID: "a", Manifest: mA}, {RunID: "b", Manifest: mB}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
	after := f.records(t)
	if added := after[:len(after)-len(before)]; fmt.Sprint(added) != fmt.Sprint([]string{"b " + string(mB), "a " + string(mA)}) {
		t.Fatalf("journal records added (newest first): %q", added)
	}
	f.checkView(t)
	tip = f.journalTip(t)
	if got, err := f.s.RecordCommittedRuns(ctx); err != nil || len(got) != 0 || f.journalTip(t) != tip {
		t.Fatalf("a second pass recorded %v (%v)", got, err)
	}
}

func sortedOIDs(a, b gitstore.OID) []gitstore.OID {
	if b < a {
		a, b = b, a
	}
	return []gitstore.OID{a, b}
}

// recorderDuring is the store's repository with another writer that
// records a run on the journal while a completion walks it (at the first
// commit the walk reads): what a second `run commit r1`, `run --id r1` or
// gc does at the same moment.
type recorderDuring struct {
	gitstore.Store
	once  bool
	other func()
}

func (r *recorderDuring) Commit(id gitstore.OID) (gitstore.Commit, error) {
	if !r.once {
		r.once = true
		r.other()
	}
	return r.Store.Commit(id)
}

// TestCommittedRunRecordedOnce: two completions of the same run at once
// record it once. The completion builds its record on the journal tip it
// walked and swaps against that tip, so when another writer records the
// run meanwhile, the swap fails and the walk again finds the record. (A
// first version built on the tip read again after the walk and recorded
// the run twice.) A ref whose manifest records another run id is no run a
// writer left out of the journal: it gets no record (verify reports it).
func TestCommittedRunRecordedOnce(t *testing.T) {
	toml, files, uris := manyDocs(3, 40)
	f := newFixture(t, toml, files)
	m1 := f.unrecorded(t, "r1", uris[:2])
	inner := f.s.git
	w := &recorderDuring{Store: inner}
	w.other = func() {
		tip, err := inner.Ref(JournalRef)
		if err != nil {
			t.Fatal(err)
		}
		tree, err := JournalTree(inner, []gitstore.OID{tip}, m1)
		if err != nil {
			t.Fatal(err)
		}
		sig := f.s.signature(f.clock.Now())
		c, err := inner.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{tip, m1}, Author: sig, Committer: sig,
			Message: fmt.Sprintf("record run r1\n\nmanifest %s\n", m1)})
		if err != nil {
			t.Fatal(err)
		}
		if err := inner.Update(gitstore.RefUpdate{Name: JournalRef, Old: tip, New: c}); err != nil {
			t.Fatal(err)
		}
	}
	f.s.git = w
	_, err := f.s.CommitRun("r1")
	f.s.git = inner
	if !errors.Is(err, ErrRunCommitted) || errors.Is(err, ErrJournalRecorded) {
		t.Fatalf("run commit r1, recorded by another writer during the walk: %v, want the plain refusal", err)
	}
	n := 0
	for _, r := range f.records(t) {
		if r == "r1 "+string(m1) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("r1 recorded %d times on the journal: %q", n, f.records(t))
	}

	// a ref r9 on the manifest of run r2, which no ref of r2 names: no
	// writer left r9 out of the journal; neither gc's pass nor a commit of
	// r9 records it
	m2 := f.unrecorded(t, "r2", uris[2:])
	if err := inner.Update(gitstore.RefUpdate{Name: RunsPrefix + "r2", Old: m2}, gitstore.RefUpdate{Name: RunsPrefix + "r9", New: m2}); err != nil {
		t.Fatal(err)
	}
	before := f.records(t)
	got, err := f.s.RecordCommittedRuns(context.Background())
	if err != nil || len(got) != 0 {
		t.Fatalf("gc's pass over a ref on another run's manifest: recorded %v (%v), want nothing", got, err)
	}
	if _, err := f.s.CommitRun("r9"); !errors.Is(err, ErrRunCommitted) || errors.Is(err, ErrJournalRecorded) {
		t.Fatalf("run commit r9, a ref on run r2's manifest: %v, want the plain refusal", err)
	}
	if after := f.records(t); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Fatalf("the journal's records went from %q to %q", before, after)
	}
}
