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
// checked and passes, as does a record without a MAC whose predecessor has
// none either (written before records were authenticated); a record that
// drops the MAC its predecessor carries is refused. It returns the failures,
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
		for _, c := range commits {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if f := checkVerdictRecordMAC(g, run, c.ID, keys); f != "" {
				failures = append(failures, f)
			}
		}
	}
	return failures, nil
}

// checkVerdictRecordMAC checks the record of verdict commit id of run and
// returns "" when it passes, else what is wrong with it.
func checkVerdictRecordMAC(g gitstore.Store, run string, id gitstore.OID, keys probe.Keys) string {
	c, err := g.Commit(id)
	if err != nil {
		return fmt.Sprintf("verdicts of run %s, commit %s: %v", run, id, err)
	}
	var parent gitstore.OID // the MAC's parent (store.VerdictMACParentIn)
	if len(c.Parents) > 0 {
		p, err := g.Commit(c.Parents[0])
		if err != nil {
			return fmt.Sprintf("verdicts of run %s, commit %s: %v", run, id, err)
		}
		if store.IsVerdictMergeCopy(c, p.Tree) {
			return "" // a merge copying its first parent's record: that record is checked on its own
		}
		parent = c.Parents[0]
	}
	rec, _, err := verdictsAt(g, run, id)
	if err != nil {
		return "" // a record that does not decode is refused by the chain check (checkVerdictChain)
	}
	err = store.CheckVerdictMAC(rec, parent, keys)
	switch {
	case err == nil, errors.Is(err, store.ErrVerdictOtherKey):
		return ""
	case errors.Is(err, store.ErrVerdictUnauthenticated):
		if parent == "" {
			return ""
		}
		prev, _, perr := verdictsAt(g, run, parent)
		if perr != nil || prev.MAC == "" {
			return ""
		}
		return fmt.Sprintf("%v, although check %d before it does: it was written or edited without the probe key", err, prev.Check)
	}
	return err.Error()
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
