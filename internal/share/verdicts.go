package share

import (
	"context"
	"errors"
	"fmt"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/probe"
)

// Verdict records carry a MAC under the probe key (docs/PROBE_PROTOCOL.md
// §10.6). A pull that holds the key (Options.ProbeKeys) checks the MAC of
// every verdict record it would bring in before it adopts anything, so a
// record edited on the remote (or in transit through a shared remote that
// anyone can write) is refused rather than adopted; verify would report it
// only afterwards. Without the key the MACs cannot be checked here, and the
// caller says so.

// checkIncomingVerdicts checks, with keys, the MAC of every verdict record
// that the remote tips in incoming (run id -> tip) bring and the local tips
// in have (run id -> tip, "" or absent for none) do not hold. Records of
// merges that copy their first parent's record are checked through that
// record. A record under another probe key (rotated since) cannot be
// checked and passes unless a record under the key in use precedes it in
// its chain (keys rotate forward: rotatedBackwards), as does a record
// without a MAC whose predecessor has none either (written before records
// were authenticated); a record that drops the MAC its predecessor carries
// is refused. It returns the failures,
// each naming the run and the record.
func checkIncomingVerdicts(ctx context.Context, g gitstore.Store, t *gitstore.Transport, incoming, have map[string]gitstore.OID, keys probe.Keys) ([]string, error) {
	var failures []string
	for _, run := range sortedKeys(incoming) {
		tip, old := incoming[run], have[run]
		if tip == old || identity.ValidateRunID(run) != nil {
			continue // not a chain readproof writes; the plan ignores it as well
		}
		commits, err := revList(ctx, g, t, tip, old)
		if err != nil {
			return nil, fmt.Errorf("verdicts of run %s: %w", run, err)
		}
		var otherKey map[gitstore.OID]error
		for _, c := range commits {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			f, other := checkVerdictRecordMAC(g, run, c.ID, keys)
			if f != "" {
				failures = append(failures, f)
			}
			if other != nil {
				if otherKey == nil {
					otherKey = map[gitstore.OID]error{}
				}
				otherKey[c.ID] = other
			}
		}
		if len(otherKey) > 0 {
			failures = append(failures, rotatedBackwards(g, run, tip, otherKey, keys)...)
		}
	}
	return failures, nil
}

// rotatedBackwards applies the rule of PROBE_PROTOCOL.md §10.6 that verify
// applies (internal/storecheck): keys rotate forward, so a record under
// another key (otherKey: incoming records, with CheckVerdictMAC's error)
// that a record under the key in use precedes in run's chain was written
// without the key. It walks the first-parent chain from tip to its start,
// as verify does, and returns a failure for each such record. Only a pull
// that brings a record under another key pays for the walk.
func rotatedBackwards(g gitstore.Store, run string, tip gitstore.OID, otherKey map[gitstore.OID]error, keys probe.Keys) []string {
	var failures, pending []string
	for id := tip; id != ""; {
		c, err := g.Commit(id)
		if err != nil {
			break // checkVerdictRecordMAC or the chain check names it
		}
		next := gitstore.OID("")
		if len(c.Parents) > 0 {
			next = c.Parents[0]
			if p, err := g.Commit(next); err == nil && store.IsVerdictMergeCopy(c, p.Tree) {
				id = next // a sync merge repeats its first parent's record
				continue
			}
		}
		if err, ok := otherKey[id]; ok {
			pending = append(pending, fmt.Sprintf("verdicts of run %s, commit %s: %v", run, id, err))
		} else if len(pending) > 0 {
			rec, _, err := verdictsAt(g, run, id)
			if err == nil && store.CheckVerdictMAC(rec, next, keys) == nil {
				for _, f := range pending {
					failures = append(failures, fmt.Sprintf("%s; check %d before it is under the probe key in use, and keys only rotate forward", f, rec.Check))
				}
				pending = pending[:0]
			}
		}
		id = next
	}
	return failures
}

// checkVerdictRecordMAC checks the record of verdict commit id of run and
// returns "" when it passes, else what is wrong with it; other is
// CheckVerdictMAC's error for a record under another probe key, which
// passes here and is judged by its place in the chain (rotatedBackwards).
func checkVerdictRecordMAC(g gitstore.Store, run string, id gitstore.OID, keys probe.Keys) (failure string, other error) {
	c, err := g.Commit(id)
	if err != nil {
		return fmt.Sprintf("verdicts of run %s, commit %s: %v", run, id, err), nil
	}
	var parent gitstore.OID // the MAC's parent (store.VerdictMACParentIn)
	if len(c.Parents) > 0 {
		p, err := g.Commit(c.Parents[0])
		if err != nil {
			return fmt.Sprintf("verdicts of run %s, commit %s: %v", run, id, err), nil
		}
		if store.IsVerdictMergeCopy(c, p.Tree) {
			return "", nil // a merge copying its first parent's record: that record is checked on its own
		}
		parent = c.Parents[0]
	}
	rec, _, err := verdictsAt(g, run, id)
	if err != nil {
		return "", nil // a record that does not decode is refused by the chain check (checkVerdictChain)
	}
	err = store.CheckVerdictMAC(rec, parent, keys)
	switch {
	case err == nil:
		return "", nil
	case errors.Is(err, store.ErrVerdictOtherKey):
		return "", err
	case errors.Is(err, store.ErrVerdictUnauthenticated):
		if parent == "" {
			return "", nil
		}
		prev, _, perr := verdictsAt(g, run, parent)
		if perr != nil || prev.MAC == "" {
			return "", nil
		}
		return fmt.Sprintf("%v, although check %d before it does: it was written or edited without the probe key", err, prev.Check), nil
	}
	return err.Error(), nil
}

// pullVerdictMACs is the verdict MAC check of a pull from remote whose
// refs were fetched into the tracking refs: nothing when opts carries no
// probe key, else an ErrUnverified error naming each record that fails.
func pullVerdictMACs(ctx context.Context, g gitstore.Store, t *gitstore.Transport, remote string, opts Options) error {
	if opts.ProbeKeys == nil {
		return nil
	}
	// the verdict chains alone: a state of each side (every run ref) cost
	// a pull with the probe key two more readings of 10^5 refs at 10^5 runs
	local, err := readRefMap(g, localPrefixes().verdicts)
	if err != nil {
		return err
	}
	rem, err := readRefMap(g, trackingPrefixes(remote).verdicts)
	if err != nil {
		return err
	}
	failures, err := checkIncomingVerdicts(ctx, g, t, rem, local, *opts.ProbeKeys)
	if err != nil {
		return fmt.Errorf("pull %s: %w", remote, err)
	}
	if len(failures) > 0 {
		return hint.With(fmt.Errorf("pull %s: %w: nothing was adopted: %s", remote, ErrUnverified, summarize(failures, 3)),
			"the remote holds a verdict record edited after its check recorded it; keep your store as it is and tell whoever runs the remote: `readproof verify` with the probe key on a copy of it names the record")
	}
	return nil
}
