package store

import (
	"context"
	"time"

	"github.com/readproof/readproof/gitstore"
)

// GCResult is what GC did: git's packing and pruning, and the aborted runs
// whose refs it deleted.
type GCResult struct {
	*gitstore.GCResult
	// Dropped lists the runs aborted before the grace period began; their
	// refs are gone and git pruned their objects.
	Dropped []AbortedRun `json:"dropped_aborted_runs"`
	// Recorded lists the committed runs the journal did not reach (a
	// writer stopped between the run's ref and the journal), which gc
	// recorded on it (RecordCommittedRuns).
	Recorded []RunRecord `json:"recorded_runs"`
}

// GC deletes the refs of runs aborted longer ago than the grace period
// (AbortRun), then packs the store's loose objects into delta-compressed
// packs and removes unreachable objects older than the grace period, with
// stock git (gitstore.GC). It is safe while other readproof processes
// write: see "Garbage collection" in docs/store-format.md.
func (s *Store) GC(ctx context.Context, opts gitstore.GCOptions) (*GCResult, error) {
	now := s.now
	if opts.Now != nil {
		now = opts.Now
	}
	grace := opts.Grace
	if grace <= 0 {
		grace = gitstore.DefaultGrace
	}
	cutoff := now().Add(-grace)
	if opts.PruneNow {
		cutoff = now().Add(time.Second)
	}
	// Half-done aborts, reopens and commits are completed first, so that
	// the aborted runs gc sees are the ones every reader sees, and so are
	// committed runs the journal does not record (one walk of the
	// journal).
	if _, err := s.SettleRuns(ctx); err != nil {
		return nil, err
	}
	recorded, err := s.RecordCommittedRuns(ctx)
	if err != nil {
		return nil, err
	}
	dropped, err := s.dropAborted(ctx, cutoff)
	if err != nil {
		return nil, err
	}
	if opts.StaleLockAge <= 0 {
		opts.StaleLockAge = s.opts.Git.StaleLockAge
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = s.opts.Git.LockTimeout
	}
	if opts.LockWait == nil {
		opts.LockWait, opts.LockWaitNotice = s.opts.Git.LockWait, s.opts.Git.LockWaitNotice
	}
	res, err := gitstore.GC(ctx, s.Path(), opts)
	if err != nil {
		return nil, err
	}
	return &GCResult{GCResult: res, Dropped: dropped, Recorded: recorded}, nil
}
