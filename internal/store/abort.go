package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
)

// Aborted runs (docs/store-format.md, "Aborted runs"): `run abort ID` moves
// an open run's chain under AbortedPrefix, on top of an abort commit that
// records when; `run reopen ID` moves it back; gc deletes an aborted run's
// ref once the abort is older than the grace period, and git's prune then
// removes its objects.

// AbortedPrefix + <run-id>/<abort-commit-id>: an aborted open run. Local
// only, like open runs: never pushed nor fetched.
const AbortedPrefix = "refs/heads/readproof/aborted/"

// ErrNotAborted: `run reopen` of a run that has no aborted chain.
var ErrNotAborted = errors.New("no aborted run")

// AbortedRun is one aborted open run.
type AbortedRun struct {
	RunID     string       `json:"run_id"`
	Ref       string       `json:"ref"`
	Commit    gitstore.OID `json:"commit"` // the abort commit
	Tip       gitstore.OID `json:"tip"`    // the open run's tip when aborted
	AbortedAt time.Time    `json:"aborted_at"`
	StartedAt time.Time    `json:"started_at"`
	Entries   int          `json:"entries"`

	tree gitstore.OID // the tip's tree (and the abort commit's), as read
}

func abortedRef(id string, commit gitstore.OID) string {
	return AbortedPrefix + id + "/" + string(commit)
}

// SplitAbortedRef parses the part of an aborted run's ref after
// AbortedPrefix into the run id and the abort commit's id.
func SplitAbortedRef(rest string) (id string, commit gitstore.OID, err error) {
	id, c, ok := strings.Cut(rest, "/")
	if !ok || !identity.IsObjectID(c) {
		return "", "", fmt.Errorf("aborted run ref %q: want <run-id>/<abort commit id>", AbortedPrefix+rest)
	}
	if err := identity.ValidateRunID(id); err != nil {
		return "", "", err
	}
	return id, gitstore.OID(c), nil
}

// AbortRun aborts the open run id in two ref transactions (docs/store-format.md,
// "Aborted run"). An abort commit (parent: the open tip, tree: the tip's
// tree) is written; the first transaction moves the open ref onto it
// (compare-and-swap: a concurrent mount or commit wins or retries, never
// loses an entry), and from then on every reader takes the run as aborted
// and every mount refuses it; the second creates the aborted ref and
// deletes the open one. A process killed after the first leaves an open ref
// on an abort commit: the next write to the run, or gc, completes it, and
// so does `run abort` again.
func (s *Store) AbortRun(id string) (*AbortedRun, error) {
	if err := validRun(id); err != nil {
		return nil, err
	}
	var out *AbortedRun
	err := retry("run abort", func() error {
		tip, committed, err := s.runStatus(id)
		if err != nil {
			return err
		}
		if committed != "" {
			return hint.With(fmt.Errorf("run %s: %w as manifest %s", id, ErrRunCommitted, committed), "a committed run is a record: it is never aborted")
		}
		if tip == "" {
			return hint.With(fmt.Errorf("run %s: %w (not open)", id, ErrUnknownRun), "`readproof run list` shows the open runs")
		}
		st, entries, c, err := s.openEntries(tip)
		// The store's own user aborts a run whose run.json names no
		// caller's name (edited by hand): commit and mount refuse it, and
		// the abort is what clears it.
		if err != nil && (s.opts.Caller != "" || !isBadRunCaller(err)) {
			return err
		}
		if err := s.ownRun(id, st); err != nil {
			return err
		}
		ac := tip
		if isAbortCommit(c, id) {
			// A killed abort moved the open ref onto its abort commit:
			// this abort completes that one.
			out = &AbortedRun{RunID: id, Ref: abortedRef(id, ac), Commit: ac, Tip: c.Parents[0], AbortedAt: c.Committer.When.UTC(), StartedAt: st.StartedAt, Entries: len(entries)}
		} else {
			// An aborted ref that a killed reopen (or a killed abort of an
			// earlier version) left: it goes first, in the same transaction.
			ups, err := s.staleAborted(id, tip, c)
			if err != nil {
				return err
			}
			now := s.now()
			sig := s.signature(now)
			ac, err = s.git.PutCommit(gitstore.Commit{Tree: c.Tree, Parents: []gitstore.OID{tip}, Author: sig, Committer: sig,
				Message: fmt.Sprintf("abort run %s\n\n%d %s mounted\n", id, len(entries), plural(len(entries), "entry", "entries"))})
			if err != nil {
				return err
			}
			if err := s.git.Update(append(ups, gitstore.RefUpdate{Name: openRef(id), Old: tip, New: ac})...); err != nil {
				return err
			}
			// the time as the abort commit records it (whole seconds),
			// as run list and run reopen read it back
			out = &AbortedRun{RunID: id, Ref: abortedRef(id, ac), Commit: ac, Tip: tip, AbortedAt: now.UTC().Truncate(time.Second), StartedAt: st.StartedAt, Entries: len(entries)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The run is aborted from here on; the second transaction only
	// renames it (settleRun: the aborted ref before the open ref's
	// removal, so a killed process leaves both, never neither).
	if err := s.settleRun(id); err != nil {
		return nil, err
	}
	return out, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// AbortedRuns lists the aborted runs, by run id, then newest abort first:
// the refs under AbortedPrefix and the open refs that a killed abort left
// on their abort commit, without the aborted refs that a killed reopen
// left (HalfDone). Refs that do not parse or do not decode are skipped
// (verify reports them).
func (s *Store) AbortedRuns() ([]AbortedRun, error) { return s.abortedRuns("") }

// abortedRuns is AbortedRuns of every run (id empty) or of run id.
func (s *Store) abortedRuns(id string) ([]AbortedRun, error) {
	prefix := AbortedPrefix
	var opens []gitstore.Ref
	if id == "" {
		var err error
		if opens, err = s.git.Refs(OpenPrefix); err != nil {
			return nil, err
		}
	} else {
		prefix += id + "/"
		open, err := s.ref(openRef(id))
		if err != nil {
			return nil, err
		}
		if open != "" {
			opens = []gitstore.Ref{{Name: openRef(id), OID: open}}
		}
	}
	refs, err := s.git.Refs(prefix)
	if err != nil {
		return nil, err
	}
	// Each open ref's tip is read: it could be an abort commit (the run
	// is aborted) or a reopen commit (its aborted ref is stale).
	skip := map[string]bool{}
	for _, o := range opens {
		oid := strings.TrimPrefix(o.Name, OpenPrefix)
		if validRun(oid) != nil {
			continue
		}
		kind, stale, err := s.HalfDone(oid, o.OID, "")
		if err != nil {
			continue
		}
		switch kind {
		case HalfDoneReopen, HalfDoneOldAbort:
			skip[stale] = true
		case HalfDoneAbort:
			name := abortedRef(oid, o.OID)
			if !slices.ContainsFunc(refs, func(r gitstore.Ref) bool { return r.Name == name }) {
				refs = append(refs, gitstore.Ref{Name: name, OID: o.OID})
			}
		}
	}
	var out []AbortedRun
	for _, r := range refs {
		if skip[r.Name] {
			continue
		}
		a, err := s.abortedAt(r)
		if err != nil {
			continue
		}
		out = append(out, *a)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].RunID != out[j].RunID {
			return out[i].RunID < out[j].RunID
		}
		return out[i].AbortedAt.After(out[j].AbortedAt)
	})
	return out, nil
}

// AbortedRunAt decodes the aborted run that ref r names: the abort commit
// must be the one the ref's name gives, have one parent (the open tip) and
// the parent's tree, and that tree must decode as the open run the name
// gives.
func (s *Store) AbortedRunAt(r gitstore.Ref) (*AbortedRun, error) { return s.abortedAt(r) }

func (s *Store) abortedAt(r gitstore.Ref) (*AbortedRun, error) {
	id, commit, err := SplitAbortedRef(strings.TrimPrefix(r.Name, AbortedPrefix))
	if err != nil {
		return nil, err
	}
	if commit != r.OID {
		return nil, fmt.Errorf("aborted run %s: the ref names commit %s but points at %s", id, commit, r.OID)
	}
	c, err := s.git.Commit(r.OID)
	if err != nil {
		return nil, fmt.Errorf("aborted run %s: %w", id, err)
	}
	if len(c.Parents) != 1 || !strings.HasPrefix(c.Message, "abort run "+id+"\n") {
		return nil, fmt.Errorf("aborted run %s: commit %s is not an abort commit of the run", id, r.OID)
	}
	st, entries, pc, err := s.openEntries(c.Parents[0])
	if err != nil && !isBadRunCaller(err) { // aborted, whoever started it
		return nil, fmt.Errorf("aborted run %s: %w", id, err)
	}
	if pc.Tree != c.Tree {
		return nil, fmt.Errorf("aborted run %s: the abort commit's tree differs from the open run's", id)
	}
	if st.RunID != id {
		return nil, fmt.Errorf("aborted run %s: run.json records run %q", id, st.RunID)
	}
	return &AbortedRun{RunID: id, Ref: r.Name, Commit: r.OID, Tip: c.Parents[0], AbortedAt: c.Committer.When.UTC(),
		StartedAt: st.StartedAt, Entries: len(entries), tree: c.Tree}, nil
}

// ReopenRun undoes the newest abort of run id: its open ref points at a
// reopen commit on the abort commit and the aborted ref is deleted, in one
// compare-and-swap transaction. It refuses while the id is open or
// committed. A killed reopen leaves both refs; the reopen commit says the
// run is open (HalfDone), and the next write to the run deletes the
// aborted ref.
func (s *Store) ReopenRun(id string) (*AbortedRun, error) {
	if err := validRun(id); err != nil {
		return nil, err
	}
	var out *AbortedRun
	err := retry("run reopen", func() error {
		// a killed abort is completed first (liveOpen)
		open, committed, err := s.liveOpen(id)
		if err != nil {
			return err
		}
		if committed != "" {
			return committedErr(id, committed)
		}
		if open != "" {
			return hint.With(fmt.Errorf("run %s: %w", id, ErrRunOpen), "commit or abort the open run first: readproof run abort "+id)
		}
		// this run's aborts only (each decodes its entries), newest first
		all, err := s.abortedRuns(id)
		if err != nil {
			return err
		}
		if len(all) == 0 {
			return hint.With(fmt.Errorf("run %s: %w", id, ErrNotAborted),
				"`readproof run list` shows the aborted runs; gc removes them once older than its grace period")
		}
		// The open ref gets a new commit (the tip's tree, on top of the
		// abort commit), never the tip it had: git pack-refs prunes a loose
		// ref it packed by comparing values, so a pack-refs that packed the
		// tip before the abort, then pruned after this reopen, would find
		// the value it expects and delete the reopened run (an A-B-A race
		// seen with gc running beside abort and reopen).
		// abortedAt read the tip and checked that its tree is the abort
		// commit's: a.tree is that tree.
		a := &all[0]
		now := s.now()
		sig := s.signature(now)
		rc, err := s.git.PutCommit(gitstore.Commit{Tree: a.tree, Parents: []gitstore.OID{a.Commit}, Author: sig, Committer: sig,
			Message: fmt.Sprintf("reopen run %s\n", id)})
		if err != nil {
			return err
		}
		// The reopened run first, then the aborted one's removal (so a
		// killed process leaves both, never neither; HalfDone tells that
		// the run is open).
		if err := s.git.Update(
			gitstore.RefUpdate{Name: openRef(id), Old: "", New: rc},
			gitstore.RefUpdate{Name: runRef(id), Old: "", New: ""},
			gitstore.RefUpdate{Name: a.Ref, Old: a.Commit, New: ""},
		); err != nil {
			return err
		}
		out = a
		return nil
	})
	return out, err
}

// dropAborted deletes the refs of runs aborted before cutoff (each by
// compare-and-swap: a reopen that won keeps its run) and returns them.
func (s *Store) dropAborted(ctx context.Context, cutoff time.Time) ([]AbortedRun, error) {
	all, err := s.AbortedRuns()
	if err != nil {
		return nil, err
	}
	var dropped []AbortedRun
	for _, a := range all {
		if err := ctx.Err(); err != nil {
			return dropped, err
		}
		if !a.AbortedAt.Before(cutoff) {
			continue
		}
		err := s.git.Update(gitstore.RefUpdate{Name: a.Ref, Old: a.Commit, New: ""})
		if errors.Is(err, gitstore.ErrConflict) {
			continue // reopened (or dropped by another gc) meanwhile
		}
		if err != nil {
			return dropped, err
		}
		dropped = append(dropped, a)
	}
	return dropped, nil
}
