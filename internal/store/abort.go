package store

import (
	"context"
	"errors"
	"fmt"
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

// AbortRun aborts the open run id: an abort commit (parent: the open tip,
// tree: the tip's tree) is written, then in one ref transaction the open
// ref is deleted and the aborted ref created (compare-and-swap on both, so
// a concurrent mount or commit wins or retries, never loses an entry).
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
		if tip == "" {
			if committed != "" {
				return hint.With(fmt.Errorf("run %s: %w as manifest %s", id, ErrRunCommitted, committed), "a committed run is a record: it is never aborted")
			}
			return hint.With(fmt.Errorf("run %s: %w (not open)", id, ErrUnknownRun), "`readproof run list` shows the open runs")
		}
		st, entries, c, err := s.openEntries(tip)
		if err != nil {
			return err
		}
		now := s.now()
		sig := s.signature(now)
		ac, err := s.git.PutCommit(gitstore.Commit{Tree: c.Tree, Parents: []gitstore.OID{tip}, Author: sig, Committer: sig,
			Message: fmt.Sprintf("abort run %s\n\n%d %s mounted\n", id, len(entries), plural(len(entries), "entry", "entries"))})
		if err != nil {
			return err
		}
		// The aborted run's ref before the open run's removal: a process
		// killed between the two renames leaves both, never neither.
		if err := s.git.Update(
			gitstore.RefUpdate{Name: abortedRef(id, ac), Old: "", New: ac},
			gitstore.RefUpdate{Name: openRef(id), Old: tip, New: ""},
		); err != nil {
			return err
		}
		out = &AbortedRun{RunID: id, Ref: abortedRef(id, ac), Commit: ac, Tip: tip, AbortedAt: now.UTC(), StartedAt: st.StartedAt, Entries: len(entries)}
		return nil
	})
	return out, err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// AbortedRuns lists the aborted runs, by run id, then newest abort first.
// Refs under AbortedPrefix that do not parse or do not decode are skipped
// (verify reports them).
func (s *Store) AbortedRuns() ([]AbortedRun, error) { return s.abortedRuns(AbortedPrefix) }

// abortedRuns is AbortedRuns over the refs under prefix (AbortedPrefix, or
// AbortedPrefix + id + "/" for one run's aborts).
func (s *Store) abortedRuns(prefix string) ([]AbortedRun, error) {
	refs, err := s.git.Refs(prefix)
	if err != nil {
		return nil, err
	}
	var out []AbortedRun
	for _, r := range refs {
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
	if err != nil {
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

// ReopenRun undoes the newest abort of run id: its open ref points at the
// open tip again and the aborted ref is deleted, in one compare-and-swap
// transaction. It refuses while the id is open or committed.
func (s *Store) ReopenRun(id string) (*AbortedRun, error) {
	if err := validRun(id); err != nil {
		return nil, err
	}
	var out *AbortedRun
	err := retry("run reopen", func() error {
		open, committed, err := s.runStatus(id)
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
		all, err := s.abortedRuns(AbortedPrefix + id + "/")
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
		// killed process leaves both, never neither).
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
