package share

import (
	"context"
	"fmt"
	"slices"

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
// in have (run id -> tip, "" or absent for none) do not hold, by the rules
// verify applies (store.JudgeVerdictChain, PROBE_PROTOCOL.md §10.6). Records
// of merges that copy their first parent's record are checked through that
// record. A record under another probe key (rotated since) cannot be
// checked and passes unless a record under the key in use precedes it in
// its chain (keys rotate forward), as does a record without a MAC that no
// record before it in its chain has (written before records were
// authenticated); a record that fails its MAC, or drops the MAC a record
// before it carries, is refused. It returns the failures, each naming the
// run and the record.
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
		isNew := make(map[gitstore.OID]bool, len(commits))
		starts := []gitstore.OID{tip}
		for _, c := range commits {
			isNew[c.ID] = true
			starts = append(starts, c.ID)
		}
		// each chain an incoming record is on: the remote tip's, then that
		// of each incoming commit no walk met (a side chain a sync merged)
		walked, judged := map[gitstore.OID]bool{}, map[string]bool{}
		for _, start := range starts {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if walked[start] {
				continue
			}
			links, f := verdictChainFrom(g, run, start, isNew, walked, keys)
			failures = append(failures, f...)
			for i, j := range store.JudgeVerdictChain(links, &keys) {
				rec := links[i].Record
				if !isNew[gitstore.OID(rec.ID)] || judged[rec.ID] {
					continue // adopted before, or judged on a chain walked already
				}
				judged[rec.ID] = true
				switch j.Standing {
				case store.VerdictFails:
					failures = append(failures, j.Err.Error())
				case store.VerdictStripped:
					failures = append(failures, fmt.Sprintf("%v, although check %d before it does: it was written or edited without the probe key", j.Err, j.Before.Check))
				case store.VerdictRotatedBackwards:
					failures = append(failures, fmt.Sprintf("verdicts of run %s, commit %s: %v; check %d before it is under the probe key in use, and keys only rotate forward", run, rec.ID, j.Err, j.Before.Check))
				}
			}
		}
	}
	return failures, nil
}

// verdictChainFrom reads run's verdict chain from commit start along first
// parents for store.JudgeVerdictChain (oldest first; a merge copying its
// first parent's record stands as that record), marking each commit in
// walked. It reads past the incoming commits (isNew) only while a record
// read so far needs the records before it to be judged: one without a MAC
// or under another key. A record that does not decode ends the chain (the
// chain check, checkVerdictChain, refuses it); an incoming commit that
// cannot be read is a failure.
func verdictChainFrom(g gitstore.Store, run string, start gitstore.OID, isNew, walked map[gitstore.OID]bool, keys probe.Keys) (links []store.VerdictLink, failures []string) {
	needOlder := false
	for id := start; id != "" && (isNew[id] || needOlder); {
		walked[id] = true
		c, err := g.Commit(id)
		if err != nil {
			if isNew[id] {
				failures = append(failures, fmt.Sprintf("verdicts of run %s, commit %s: %v", run, id, err))
			}
			break
		}
		next := gitstore.OID("")
		if len(c.Parents) > 0 {
			next = c.Parents[0]
			p, err := g.Commit(next)
			if err != nil {
				if isNew[id] {
					failures = append(failures, fmt.Sprintf("verdicts of run %s, commit %s: %v", run, id, err))
				}
				break
			}
			if store.IsVerdictMergeCopy(c, p.Tree) {
				id = next // judged through the record it copies, if that is new
				continue
			}
		}
		rec, _, err := verdictsAt(g, run, id)
		if err != nil {
			break
		}
		if rec.MAC == "" || rec.MACKey != keys.RecordKeyID() {
			needOlder = true
		}
		links = append(links, store.VerdictLink{Record: rec, Parent: next})
		id = next
	}
	slices.Reverse(links)
	return links, failures
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
