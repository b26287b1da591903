package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
)

// MountMany resolves refs in order and records them at consecutive
// positions of the open run runID in one commit, so that mounting 1,000
// URIs in one call costs about what RunOnce of them costs (Mount per URI
// writes a commit and moves the run's ref each time, and rewrites an
// entries tree that grows with every call). Concurrent mounts into the run
// still get distinct, gap-free positions; this call's entries stay
// together. It stops with ctx's error, recording nothing, when ctx ends
// before the commit. progress (nil: none) hears each document resolved as
// (done, total).
func (s *Store) MountMany(ctx context.Context, runID string, refs []string, progress func(done, total int)) ([]*Delivery, error) {
	ctx, span := startMount(ctx, runID)
	ds, err := s.mountMany(ctx, runID, refs, progress)
	var one *Delivery // the span names the document when there is one
	if len(ds) == 1 {
		one = ds[0]
	}
	endMount(span, one, err)
	return ds, err
}

func (s *Store) mountMany(ctx context.Context, runID string, refs []string, progress func(done, total int)) ([]*Delivery, error) {
	if _, _, err := s.mountTip(runID); err != nil {
		return nil, err
	}
	b := newRunBatch(len(refs))
	ds := make([]*Delivery, 0, len(refs))
	for i, ref := range refs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if progress != nil {
			progress(i, len(refs))
		}
		d, err := s.resolve(ctx, ref, b)
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	if progress != nil {
		progress(len(refs), len(refs))
	}
	if len(ds) == 0 {
		return ds, nil
	}
	// Entry blobs do not depend on the position but through it: they are
	// written when the position is known, inside publish (a retry after a
	// concurrent mount writes them again at the new positions).
	err := s.publish(b, func() ([]gitstore.RefUpdate, error) {
		return s.appendEntries(runID, ds, nil)
	})
	if err != nil {
		return nil, err
	}
	return ds, nil
}

// mountTip returns the open tip of runID, or the refusal to mount into it:
// an invalid id, a committed run, a run never started, or another
// caller's run (ownRun); with the tip's commit, which it read.
func (s *Store) mountTip(runID string) (gitstore.OID, gitstore.Commit, error) {
	if err := validRun(runID); err != nil {
		return "", gitstore.Commit{}, err
	}
	tip, committed, err := s.runStatus(runID)
	if err != nil {
		return "", gitstore.Commit{}, err
	}
	// committed first: an open ref beside the run's ref is one that a
	// killed commit left (HalfDone)
	if committed != "" {
		return "", gitstore.Commit{}, hint.With(fmt.Errorf("cannot mount into run %s: %w as manifest %s", runID, ErrRunCommitted, committed), "start a new run with another id")
	}
	if tip == "" {
		return "", gitstore.Commit{}, s.unknownRun(runID)
	}
	// whose run it is, before anything is resolved and fetched for it
	c, err := s.git.Commit(tip)
	if err != nil {
		return "", gitstore.Commit{}, err
	}
	st, err := s.runStateOf(tip, c)
	if err != nil {
		return "", gitstore.Commit{}, err
	}
	if err := s.ownRun(runID, st); err != nil {
		return "", gitstore.Commit{}, err
	}
	return tip, c, nil
}

// appendEntries writes ds at the next positions of the open run runID, in
// order, as one commit on its tip, and returns the ref update that moves the
// run to it (the body of a publish step: it runs again on a conflict, so it
// reads the tip afresh and sets each d.Position each time). decorate (nil:
// none) runs on each delivery once its position is set and may change its
// entry, not its position.
func (s *Store) appendEntries(runID string, ds []*Delivery, decorate func(*Delivery) error) ([]gitstore.RefUpdate, error) {
	tip, c, err := s.mountTip(runID)
	if err != nil {
		return nil, err
	}
	// The tip commit says whether a killed abort or reopen left the run
	// half done (HalfDone): no read more for a run that was never aborted.
	if isAbortCommit(c, runID) {
		return nil, abortedErr(runID)
	}
	ups, err := s.reopenedLeftover(runID, c)
	if err != nil {
		return nil, err
	}
	root, err := s.git.Tree(c.Tree)
	if err != nil {
		return nil, err
	}
	var list, rest []gitstore.TreeEntry
	for _, e := range root {
		if e.Name == "entries" {
			if list, err = s.git.Tree(e.OID); err != nil {
				return nil, err
			}
		} else {
			rest = append(rest, e)
		}
	}
	first := len(list)
	for i, d := range ds {
		d.Position = first + i
		if decorate != nil {
			if err := decorate(d); err != nil {
				return nil, err
			}
			d.Position = first + i // the position is the store's, not the hook's
		}
		data, err := json.MarshalIndent(d.Entry, "", "  ")
		if err != nil {
			return nil, err
		}
		blob, err := s.git.PutBlob(append(data, '\n'))
		if err != nil {
			return nil, err
		}
		list = append(list, gitstore.TreeEntry{Name: entryName(d.Position), Mode: gitstore.ModeFile, OID: blob})
	}
	sub, err := s.git.PutTree(list)
	if err != nil {
		return nil, err
	}
	tree, err := s.git.PutTree(append(rest, gitstore.TreeEntry{Name: "entries", Mode: gitstore.ModeDir, OID: sub}))
	if err != nil {
		return nil, err
	}
	sig := s.signature(s.now())
	msg := fmt.Sprintf("mount %d %s\n", first, refOf(ds[0].Entry))
	if len(ds) > 1 {
		msg = fmt.Sprintf("mount %d-%d (%d documents)\n", first, first+len(ds)-1, len(ds))
	}
	nc, err := s.git.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{tip}, Author: sig, Committer: sig, Message: msg})
	if err != nil {
		return nil, err
	}
	// a leftover aborted ref's removal first: killed after it, the run is
	// simply open
	return append(ups, gitstore.RefUpdate{Name: openRef(runID), Old: tip, New: nc}), nil
}
