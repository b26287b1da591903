package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
)

// A run committed but not recorded on the journal: a writer killed (or
// failing) after its run's ref moved and before the journal did leaves the
// run intact and its manifest unreached by refs/heads/main, which `verify`
// warns about ("the journal ... does not reach this manifest"). The rule is
// verify's (storecheck checkJournal) and pull's and clone's (share
// recordJournal, verifyClone): a run's manifest is recorded when the
// journal's tip reaches it along any parents. A run recorded under a
// rename, or brought by a pull, is reached that way too (the `record run`
// commit that first recorded its manifest), so it is never recorded twice.
// Completing it adds the commit a run commit would have added (journal):
// `record run ID` on the current tip, with the view of version-2 stores.

// ErrJournalRecorded marks a refusal of a committed run that first added
// the journal record a stopped writer had left out.
var ErrJournalRecorded = errors.New("the journal did not record it (a writer stopped before adding its record); added the record now")

// journalReaches walks every commit reachable from tip (all parents, as
// verify and pull do) and reports which of want it met. It stops once it
// has met them all (want empty: it reads nothing). The manifest a
// `record run` commit records (its last parent) is met without being read:
// a manifest is a root commit (a commit with parents is none, which verify
// reports), so the walk reads the journal's commits and the verdict
// commits `record check` commits name, not the manifests (half the reads
// of a store's history).
func journalReaches(g gitstore.Reader, tip gitstore.OID, want map[gitstore.OID]bool) (map[gitstore.OID]bool, error) {
	met, _, err := journalReachesWithin(g, tip, want, 0)
	return met, err
}

// journalReachesWithin is journalReaches reading at most limit commits (0:
// no limit); whole is false when it stopped at the limit with some of want
// not met, which then says nothing of them.
func journalReachesWithin(g gitstore.Reader, tip gitstore.OID, want map[gitstore.OID]bool, limit int) (met map[gitstore.OID]bool, whole bool, err error) {
	met = map[gitstore.OID]bool{}
	if tip == "" {
		return met, true, nil
	}
	seen := map[gitstore.OID]bool{tip: true}
	stack := []gitstore.OID{tip}
	for read := 0; len(stack) > 0 && len(met) < len(want); read++ {
		if limit > 0 && read == limit {
			return met, false, nil
		}
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if want[id] {
			met[id] = true
		}
		c, err := g.Commit(id)
		if err != nil {
			return nil, false, fmt.Errorf("read journal commit %s: %w", id, err)
		}
		parents := c.Parents
		if _, m := journalEdges(c); m != "" {
			parents = parents[:len(parents)-1]
			seen[m] = true
			if want[m] {
				met[m] = true
			}
		}
		for _, p := range parents {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return met, true, nil
}

// recordCommitted records run id's manifest m on the journal if the
// journal does not reach it, by compare-and-swap on the journal, retried
// when another writer moves it; the run ref is read again each time, so a
// run renamed or deleted meanwhile is left alone. It reports whether it
// added the record.
func (s *Store) recordCommitted(id string, m gitstore.OID) (added bool, err error) {
	err = retry("record run "+id, func() error {
		added = false
		cur, err := s.ref(runRef(id))
		if err != nil || cur != m {
			return err
		}
		tip, err := s.ref(JournalRef)
		if err != nil || tip == "" {
			return err // no journal: verify reports it (as gc, nothing to append to)
		}
		met, err := journalReaches(s.git, tip, map[gitstore.OID]bool{m: true})
		if err != nil || met[m] {
			return err
		}
		mf, err := s.ManifestAt(m)
		if err != nil {
			return err
		}
		if mf.RunID != id {
			// not a manifest of this run: no writer left it out of the
			// journal, and verify reports the ref as broken
			return nil
		}
		// On the tip walked above, swapped against it: a writer that
		// recorded the run meanwhile makes this one walk again and find it.
		j, err := s.journalOn(tip, id, m, mf)
		if err != nil {
			return err
		}
		if err := s.git.Update(gitstore.RefUpdate{Name: JournalRef, Old: tip, New: j}); err != nil {
			return err
		}
		added = true
		return nil
	})
	return added, err
}

// committedRefusal is the refusal of a write to run id, committed as
// manifest m, after adding the journal record a stopped writer left out
// (and then it says so). Only this path, never a commit, walks the
// journal.
func (s *Store) committedRefusal(id string, m gitstore.OID) error {
	added, err := s.recordCommitted(id, m)
	if err != nil {
		return fmt.Errorf("run %s: %w as manifest %s; adding the journal's missing record of it: %w", id, ErrRunCommitted, m, err)
	}
	if added {
		return hint.With(fmt.Errorf("run %s: %w as manifest %s; %w", id, ErrRunCommitted, m, ErrJournalRecorded),
			"the run is complete now; start a new run with another id")
	}
	return committedErr(id, m)
}

// RecordCommittedRuns records on the journal every committed run whose
// manifest the journal does not reach (gc's step after SettleRuns), with
// one walk of the journal and one listing of run refs, and returns the
// runs it recorded. The records are added in run id order on the tip, in
// one compare-and-swap of the journal, made again if another writer moved
// it. A manifest two run refs name is recorded once, under the first id.
func (s *Store) RecordCommittedRuns(ctx context.Context) ([]RunRecord, error) {
	var out []RunRecord
	err := retry("record committed runs", func() error {
		out = nil
		if err := ctx.Err(); err != nil {
			return err
		}
		refs, err := s.git.Refs(RunsPrefix)
		if err != nil {
			return err
		}
		tip, err := s.ref(JournalRef)
		if err != nil {
			return err
		}
		if tip == "" {
			return nil // no journal: verify reports it; nothing to append to
		}
		want := map[gitstore.OID]bool{}
		for _, r := range refs {
			want[r.OID] = true
		}
		met, err := journalReaches(s.git, tip, want)
		if err != nil {
			return err
		}
		var todo []RunRecord
		named := map[gitstore.OID]bool{}
		for _, r := range refs {
			id := strings.TrimPrefix(r.Name, RunsPrefix)
			if met[r.OID] || validRun(id) != nil {
				continue
			}
			todo = append(todo, RunRecord{RunID: id, Manifest: r.OID})
		}
		sort.Slice(todo, func(i, j int) bool { return todo[i].RunID < todo[j].RunID })
		head := tip
		for _, r := range todo {
			if named[r.Manifest] {
				continue
			}
			mf, err := s.ManifestAt(r.Manifest)
			if err != nil || mf.RunID != r.RunID {
				continue // not a manifest of this run: verify reports it
			}
			named[r.Manifest] = true
			if head, err = s.journalOn(head, r.RunID, r.Manifest, mf); err != nil {
				return err
			}
			out = append(out, r)
		}
		if head == tip {
			return nil
		}
		return s.git.Update(gitstore.RefUpdate{Name: JournalRef, Old: tip, New: head})
	})
	return out, err
}

// RunRecord is a committed run that RecordCommittedRuns recorded on the
// journal.
type RunRecord struct {
	RunID    string       `json:"run_id"`
	Manifest gitstore.OID `json:"manifest"`
}
