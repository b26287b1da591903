package share

import (
	"context"
	"fmt"
	"slices"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// Verdict records carry a MAC under the probe key (docs/PROBE_PROTOCOL.md
// §10.6). A pull checks every verdict record it would bring in before it
// adopts anything, by the rules verify and evidence verify apply
// (store.JudgeVerdictChain, store.VerdictWithoutKeyIn), so that a record
// edited or written on the remote (or in transit through a shared remote
// that anyone can write) is refused rather than adopted; verify would
// report it only afterwards. With the probe key (Options.ProbeKeys) the
// MACs are checked; without it what needs no key still is: a record that
// drops the MAC a record before it carries, and a record without a MAC of
// a manifest whose entries are bound to their content (before session 30
// a pull adopted both, and a record under a made-up key, which verify then
// reported broken). The caller says that the MACs were not checked.

// checkIncomingVerdicts checks every verdict record that the remote tips
// in incoming (run id -> tip) bring and the local tips in have (run id ->
// tip, "" or absent for none) do not hold, by the rules verify applies
// (store.JudgeVerdictChain, PROBE_PROTOCOL.md §10.6), with keys when not
// nil. Records of merges that copy their first parent's record are checked
// through that record. A record under another probe key (rotated since)
// cannot be checked and passes unless a record under the key in use
// precedes it in its chain (keys rotate forward), as does a record without
// a MAC that no record before it in its chain has (written before records
// were authenticated); a record that fails its MAC, or drops the MAC a
// record before it carries, is refused. So is a record the rules pass that
// was still written without the key (store.VerdictWithoutKeyIn, judged
// with the manifest the record names, as evidence verify judges it: no
// MAC for a manifest bound to its content; under another key, a verdict
// only the key in use could give). A record that rule would judge whose
// manifest neither the store nor the remote holds is refused: it cannot be
// judged, and the pull that later brings the manifest would not judge it
// again. It returns the failures, each naming the run and the record.
//
// It decodes first every commit incoming brings (decodeVerdictCommits),
// adding each that passes to reads, when not nil: the chain and journal
// checks of the pull's plan then read none of them again. What fails to
// decode is the chain check's to report (a record that does not decode
// ends the chain here).
func checkIncomingVerdicts(ctx context.Context, g gitstore.Store, t *gitstore.Transport, incoming, have map[string]gitstore.OID, keys *probe.Keys, reads decodedVerdicts) ([]string, error) {
	manifests := map[string]*manifest.Manifest{} // by id, nil when it does not read
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
		read := map[gitstore.OID]*store.VerdictRecord{}
		decodeVerdictCommits(g, run, commits, read, reads)
		f, err := checkIncomingRun(ctx, g, run, tip, commits, keys, manifests, read)
		if err != nil {
			return nil, err
		}
		failures = append(failures, f...)
	}
	return failures, nil
}

// decodedVerdicts is what one pull or clone learned of the verdict commits it
// decoded, by commit, so that no check of the command reads a record again
// (before session 31 a keyless pull read each new record three times: its
// record check, its chain check and its journal check; a clone twice):
// the run it decoded as, with nothing else in its tree, and what the plan
// checks of it after (verdictManifests). Nothing of a record is kept but
// these few fields, so a clone of many checks holds no record beyond its
// run's. A nil decodedVerdicts keeps nothing.
type decodedVerdicts map[gitstore.OID]decodedVerdict

type decodedVerdict struct {
	run, manifest string
	check         int
	copy          bool // a sync merge copying its first parent's record
}

// decoded reports whether commit id decoded as a verdict record of run.
func (r decodedVerdicts) decoded(run string, id gitstore.OID) bool {
	v, ok := r[id]
	return ok && v.run == run
}

// mergeCopy reports whether cm is a sync merge that copies its first
// parent's record (store.IsVerdictMergeCopy); only a merge has its parent
// read.
func mergeCopy(g gitstore.Store, cm gitstore.Commit) bool {
	if len(cm.Parents) != 2 {
		return false
	}
	p, err := g.Commit(cm.Parents[0])
	return err == nil && store.IsVerdictMergeCopy(cm, p.Tree)
}

// verdictManifests returns a failure for each of commits, verdict commits
// new on run's chain that reads holds (those that decoded), whose record
// names a manifest that is not the run's: named, the manifest run's ref
// names after the command ("" for none), nor one kept as a conflict of run
// (conflict), nor one recorded under run that the journal from renames'
// heads records renamed away from it (a settled conflict: the chain holds the checks of the manifest
// while it was run, docs/PROBE_PROTOCOL.md §10.6). `readproof verify`
// reports such a record broken ("record names manifest M, the run's
// manifest is N"), and `readproof probe check` never writes one. A merge
// copying its first parent's record stands as that record. The journal is
// read only for a record no other rule passes.
func verdictManifests(run string, commits []gitstore.OID, reads decodedVerdicts, named gitstore.OID, conflict func(gitstore.OID) bool, renames *journalRenames) ([]string, error) {
	var failures []string
	for _, id := range commits {
		v, ok := reads[id]
		if !ok || v.run != run || v.copy || gitstore.OID(v.manifest) == named && named != "" || conflict(gitstore.OID(v.manifest)) {
			continue
		}
		if away, err := renames.away(gitstore.OID(v.manifest), run); err != nil {
			return nil, err
		} else if away {
			continue
		}
		why := fmt.Sprintf("run %s names manifest %s", run, named)
		if named == "" {
			why = fmt.Sprintf("no run ref %s%s is held here or on the remote", store.RunsPrefix, run)
		}
		failures = append(failures, fmt.Sprintf("verdict record %s of run %s (check %d) names manifest %s, but %s, no conflict of that run keeps the one it names and the journal records no rename away from %s of a manifest recorded under it: `readproof verify` would report the record broken, and `readproof probe check` never writes one",
			id, run, v.check, text.Printable(v.manifest), why, run))
	}
	return failures, nil
}

// checkIncomingRun is checkIncomingVerdicts of one run whose remote tip
// brings commits (revList from tip, not from the local tip). manifests
// memoises the manifests records name across runs (recordManifest); read,
// when not nil, holds records of commits decoded already (a clone's chain
// check, checkVerdictChainRead, decoded every one: before session 30's
// re-read a keyless clone read and decoded each record twice).
func checkIncomingRun(ctx context.Context, g gitstore.Store, run string, tip gitstore.OID, commits []gitstore.RevListCommit, keys *probe.Keys, manifests map[string]*manifest.Manifest, read map[gitstore.OID]*store.VerdictRecord) ([]string, error) {
	var failures []string
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
		links, f := verdictChainFrom(g, run, start, isNew, walked, keys, read)
		failures = append(failures, f...)
		// the entries of each manifest mounted with the key in use, read
		// once a chain (a chain a run conflict shares holds checks of
		// two manifests)
		mounted := map[string]map[int]bool{}
		for i, j := range store.JudgeVerdictChain(links, keys) {
			rec := links[i].Record
			if !isNew[gitstore.OID(rec.ID)] || judged[rec.ID] {
				continue // adopted before, or judged on a chain walked already
			}
			judged[rec.ID] = true
			// only then is the manifest the record names read: a pull
			// of intact records reads no manifest for them
			if store.VerdictWithoutKeyApplies(rec, j, keys) {
				m := recordManifest(g, rec.ManifestID, manifests)
				if m == nil {
					// readproof checks only a run it holds and shares the
					// run with the chain: a chain served before its run
					// would be adopted unjudged, and the pull that brings
					// the run judges only the records it brings (before
					// session 30's re-read it was adopted)
					failures = append(failures, fmt.Sprintf("verdict record %s of run %s (check %d) names manifest %s, which neither the store nor the remote holds, so the record cannot be judged: readproof records a check only of a run it holds and shares the run with it",
						rec.ID, run, rec.Check, text.Printable(rec.ManifestID)))
					continue
				}
				cache := mounted[m.ID]
				why := store.VerdictWithoutKeyIn(g, rec, j, m, keys, &cache)
				mounted[m.ID] = cache
				if why != "" {
					failures = append(failures, why)
					continue
				}
			}
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
	return failures, nil
}

// recordManifest is the manifest of id, the manifest a verdict record
// names, read from the objects a pull fetched (bounded as the manifest
// check reads it), memoised in memo; nil when id names no manifest that
// reads, which refuses the record (checkIncomingRun).
func recordManifest(g gitstore.Store, id string, memo map[string]*manifest.Manifest) *manifest.Manifest {
	if m, done := memo[id]; done {
		return m
	}
	memo[id] = nil
	if !identity.IsObjectID(id) {
		return nil
	}
	c, err := commitFields(g, gitstore.OID(id))
	if err != nil {
		return nil
	}
	blob, err := gitstore.FileAt(g, c.Tree, "manifest.json")
	if err != nil {
		return nil
	}
	data, err := g.BlobAtMost(blob, manifest.MaxBytes)
	if err != nil {
		return nil
	}
	m, err := manifest.Decode(data)
	if err != nil {
		return nil
	}
	m.ID = id
	memo[id] = m
	return m
}

// verdictChainFrom reads run's verdict chain from commit start along first
// parents for store.JudgeVerdictChain (oldest first; a merge copying its
// first parent's record stands as that record), marking each commit in
// walked. It reads past the incoming commits (isNew) only while a record
// read so far needs the records before it to be judged: one without a MAC
// or, with keys, under another key. A record that does not decode ends the
// chain (the chain check, checkVerdictChainRead, refuses it); an incoming
// commit that cannot be read is a failure. A record read holds is not read
// again.
func verdictChainFrom(g gitstore.Store, run string, start gitstore.OID, isNew, walked map[gitstore.OID]bool, keys *probe.Keys, read map[gitstore.OID]*store.VerdictRecord) (links []store.VerdictLink, failures []string) {
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
		rec := read[id]
		if rec == nil {
			var err error
			if rec, _, err = verdictsAt(g, run, id); err != nil {
				break
			}
		}
		if rec.MAC == "" || keys != nil && rec.MACKey != keys.RecordKeyID() {
			needOlder = true
		}
		links = append(links, store.VerdictLink{Record: rec, Parent: next})
		id = next
	}
	slices.Reverse(links)
	return links, failures
}

// pullVerdictMACs is the verdict record check of a pull from remote whose
// verdict chains' tips, rem (run id -> tip, as listed), were fetched (checkIncomingVerdicts, with
// opts' probe key when it carries one): an ErrUnverified error naming each
// record that fails, before any ref of the store moves. It returns the
// commits it decoded, for the plan's checks (decodedVerdicts).
func pullVerdictMACs(ctx context.Context, g gitstore.Store, t *gitstore.Transport, remote string, rem map[string]gitstore.OID, opts Options) (decodedVerdicts, error) {
	// the verdict chains alone: a state of each side (every run ref) cost
	// a pull with the probe key two more readings of 10^5 refs at 10^5 runs
	local, err := readRefMap(g, localPrefixes().verdicts)
	if err != nil {
		return nil, err
	}
	reads := decodedVerdicts{}
	failures, err := checkIncomingVerdicts(ctx, g, t, rem, local, opts.ProbeKeys, reads)
	if err != nil {
		return nil, fmt.Errorf("pull %s: %w", remote, err)
	}
	if len(failures) > 0 {
		return nil, hint.With(fmt.Errorf("pull %s: %w: nothing was adopted: %s", remote, ErrUnverified, summarize(failures, 3)),
			"the remote holds a verdict record edited after its check recorded it, or written without the probe key (`readproof verify` reports either broken); keep your store as it is and tell whoever runs the remote: `readproof verify` with the probe key on a copy of it names the record")
	}
	return reads, nil
}
