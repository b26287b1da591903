package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
)

// Half-done transitions (docs/store-format.md, "Aborted run" and "Writing:
// crash and concurrency safety"). The renames of one ref transaction are
// not one atomic step, so a process killed among them can leave a run with
// two refs. The commits say which state the run is in:
//
//   - an open ref on an abort commit: `run abort` moved it there and was
//     killed before it renamed the run under AbortedPrefix. The run is
//     aborted; the open ref is stale.
//   - an open ref on a reopen commit whose parent (an abort commit) still
//     has its aborted ref: `run reopen` was killed before it deleted that
//     ref. The run is open; the aborted ref is stale.
//   - an open ref beside a committed run's ref: `run commit` was killed
//     before it deleted the open ref. The run is committed; the open ref is
//     stale.
//   - an open ref on the very commit an aborted ref's abort commit sits on:
//     `run abort` of a version before this rule (one transaction) was killed
//     between its renames. The run is open, with every entry the abort saw;
//     the aborted ref is stale. (A mount, which looks for none of this, may
//     have moved the open ref on: the aborted ref then reads as an earlier
//     abort of the id, as after `run start` of an aborted id.)
//
// Every reader reports the one state; the next write to the run (start,
// mount, commit, abort, reopen, `run --id`), and gc for every run, deletes
// the stale ref by compare-and-swap. Telling them apart costs a mount
// nothing: it reads its tip commit anyway.

// HalfDoneAbort, HalfDoneReopen and HalfDoneCommit name the transition a
// killed process left half done (HalfDone).
const (
	HalfDoneAbort  = "abort"
	HalfDoneReopen = "reopen"
	HalfDoneCommit = "commit"
	// HalfDoneOldAbort: an abort by a version before this rule.
	HalfDoneOldAbort = "old abort"
)

func isAbortCommit(c gitstore.Commit, id string) bool {
	return len(c.Parents) == 1 && strings.HasPrefix(c.Message, "abort run "+id+"\n")
}

func isReopenCommit(c gitstore.Commit, id string) bool {
	return len(c.Parents) == 1 && c.Message == "reopen run "+id+"\n"
}

// abortedTip reports whether open, the open ref's tip of run id, is an
// abort commit: a killed abort left the run aborted (HalfDoneAbort). One
// commit read; readers that need only this ask it instead of HalfDone,
// which may list the run's aborted refs.
func (s *Store) abortedTip(id string, open gitstore.OID) bool {
	c, err := s.git.Commit(open)
	return err == nil && isAbortCommit(c, id)
}

// abortedErr refuses a run whose open ref is on an abort commit.
func abortedErr(id string) error {
	return hint.With(fmt.Errorf("run %s: %w (aborted)", id, ErrUnknownRun), "open it again with: readproof run reopen "+id)
}

// reopenedLeftover returns the deletion of the aborted ref that a reopen
// to commit c (the open tip of run id) undid, when a killed reopen left it;
// nothing when c is no reopen commit or the ref is gone. A writer that
// moves the open ref off c lists it first: killed after it, the store is
// clean, and the open ref never leaves a reopen commit with its aborted
// ref still there.
func (s *Store) reopenedLeftover(id string, c gitstore.Commit) ([]gitstore.RefUpdate, error) {
	if !isReopenCommit(c, id) {
		return nil, nil
	}
	name := abortedRef(id, c.Parents[0])
	cur, err := s.ref(name)
	if err != nil || cur != c.Parents[0] {
		return nil, err
	}
	return []gitstore.RefUpdate{{Name: name, Old: cur, New: ""}}, nil
}

// HalfDone reports the transition a killed process left half done on run
// id, whose open ref is at open and whose run ref is at committed (empty:
// none): HalfDoneCommit, HalfDoneAbort, HalfDoneReopen or "" (none), and the
// stale ref that completing it deletes.
func (s *Store) HalfDone(id string, open, committed gitstore.OID) (kind, stale string, err error) {
	if open == "" {
		return "", "", nil
	}
	if committed != "" {
		return HalfDoneCommit, openRef(id), nil
	}
	c, err := s.git.Commit(open)
	if err != nil {
		return "", "", err
	}
	if isAbortCommit(c, id) {
		return HalfDoneAbort, openRef(id), nil
	}
	ups, err := s.reopenedLeftover(id, c)
	if err != nil {
		return "", "", err
	}
	if len(ups) > 0 {
		return HalfDoneReopen, ups[0].Name, nil
	}
	if ups, err = s.oldAbortLeftover(id, open); err != nil || len(ups) == 0 {
		return "", "", err
	}
	return HalfDoneOldAbort, ups[0].Name, nil
}

// oldAbortLeftover returns the deletion of an aborted ref of run id whose
// abort commit sits on tip, the open run's tip (HalfDoneOldAbort), or
// nothing. It lists the run's aborted refs: writers call it only where
// they read the run's state anyway (abort, commit), not on a mount.
func (s *Store) oldAbortLeftover(id string, tip gitstore.OID) ([]gitstore.RefUpdate, error) {
	refs, err := s.git.Refs(AbortedPrefix + id + "/")
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		if _, commit, err := SplitAbortedRef(strings.TrimPrefix(r.Name, AbortedPrefix)); err != nil || commit != r.OID {
			continue
		}
		c, err := s.git.Commit(r.OID)
		if err != nil {
			continue // verify reports it
		}
		if isAbortCommit(c, id) && c.Parents[0] == tip {
			return []gitstore.RefUpdate{{Name: r.Name, Old: r.OID, New: ""}}, nil
		}
	}
	return nil, nil
}

// staleAborted is the deletion of the aborted ref that a killed reopen, or
// a killed abort of an earlier version, left beside the open run at tip
// (commit c), for a writer that moves the open ref off tip or deletes it.
func (s *Store) staleAborted(id string, tip gitstore.OID, c gitstore.Commit) ([]gitstore.RefUpdate, error) {
	ups, err := s.reopenedLeftover(id, c)
	if err != nil || len(ups) > 0 {
		return ups, err
	}
	return s.oldAbortLeftover(id, tip)
}

// settleUpdates returns the ref updates that complete what a killed process
// left half done on run id (HalfDone), or none.
func (s *Store) settleUpdates(id string, open, committed gitstore.OID) ([]gitstore.RefUpdate, error) {
	kind, stale, err := s.HalfDone(id, open, committed)
	if err != nil {
		return nil, err
	}
	switch kind {
	case HalfDoneCommit:
		return []gitstore.RefUpdate{{Name: openRef(id), Old: open, New: ""}}, nil
	case HalfDoneAbort:
		// The aborted ref before the open ref's removal: killed between
		// the two, the state is still this one.
		var ups []gitstore.RefUpdate
		cur, err := s.ref(abortedRef(id, open))
		if err != nil {
			return nil, err
		}
		if cur == "" {
			ups = append(ups, gitstore.RefUpdate{Name: abortedRef(id, open), Old: "", New: open})
		}
		return append(ups, gitstore.RefUpdate{Name: openRef(id), Old: open, New: ""}), nil
	case HalfDoneReopen, HalfDoneOldAbort:
		a := strings.TrimPrefix(stale, AbortedPrefix+id+"/")
		return []gitstore.RefUpdate{{Name: stale, Old: gitstore.OID(a), New: ""}}, nil
	}
	return nil, nil
}

// settleRun completes what a killed process left half done on run id, if
// anything.
func (s *Store) settleRun(id string) error {
	return retry("settle run "+id, func() error {
		open, committed, err := s.runStatus(id)
		if err != nil || open == "" {
			return err
		}
		ups, err := s.settleUpdates(id, open, committed)
		if err != nil || len(ups) == 0 {
			return err
		}
		return s.git.Update(ups...)
	})
}

// liveOpen is runStatus for a writer that needs the run not open (start,
// `run --id`, reopen): an open ref that a killed abort or commit left is
// settled first, and open is then empty. It costs nothing when the run has
// no open ref.
func (s *Store) liveOpen(id string) (open, committed gitstore.OID, err error) {
	open, committed, err = s.runStatus(id)
	if err != nil || open == "" {
		return
	}
	kind, _, err := s.HalfDone(id, open, committed)
	if err != nil || (kind != HalfDoneAbort && kind != HalfDoneCommit) {
		return
	}
	if err = s.settleRun(id); err != nil {
		return
	}
	return s.runStatus(id)
}

// SettleRuns completes every half-done transition in the store (gc's
// first step) and returns how many it completed.
func (s *Store) SettleRuns(ctx context.Context) (int, error) {
	refs, err := s.git.Refs(OpenPrefix)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range refs {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		id := strings.TrimPrefix(r.Name, OpenPrefix)
		if validRun(id) != nil {
			continue // verify reports it
		}
		committed, err := s.ref(runRef(id))
		if err != nil {
			return n, err
		}
		kind, _, err := s.HalfDone(id, r.OID, committed)
		if err != nil {
			continue // an open run that does not read: verify reports it
		}
		if kind == "" {
			continue
		}
		if err := s.settleRun(id); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
