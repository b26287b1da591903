package share

import (
	"context"
	"fmt"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/receipts"
)

// PushResult says what a push sent.
type PushResult struct {
	Remote   string `json:"remote"`
	UpToDate bool   `json:"up_to_date"`
	// Runs are the run refs created on the remote.
	Runs []RunRef `json:"runs"`
	// Conflicts are local runs not sent because the remote's run of the
	// same id names another manifest: rename them (`readproof conflicts
	// rename`) to share them under another id.
	Conflicts []RunRef `json:"conflicts"`
	// Refs is the number of refs created or fast-forwarded.
	Refs int `json:"refs"`
	// Skipped lists tags left out because they are in conflict locally
	// (resolve them with `readproof conflicts resolve`).
	Skipped []string `json:"skipped"`
	// Warnings are notices for the user (the remote's HEAD is not main).
	Warnings []string `json:"warnings"`
}

// maxRefspecsPerPush keeps git's command line well under the system limit;
// a push of more refs runs as several atomic pushes, immutable run refs
// first and the journal last.
const maxRefspecsPerPush = 4000

// Push sends the local runs, conflicts, resource chains, tag chains,
// receipt chains, verdict chains and journal to remote. It never forces: when the remote moved since the last
// pull it fails with ErrRejected (hint: pull first) and changes nothing.
// Open runs are not pushed.
func Push(ctx context.Context, s *store.Store, remote string, opts Options) (*PushResult, error) {
	g := s.Git()
	t, rem, err := connect(ctx, g, remote, opts, "push")
	if err != nil {
		return nil, err
	}
	local, err := readState(g, localPrefixes())
	if err != nil {
		return nil, err
	}
	tagConflicts, err := readTagConflicts(g)
	if err != nil {
		return nil, err
	}
	res := &PushResult{Remote: remote, Runs: []RunRef{}, Conflicts: []RunRef{}, Skipped: []string{}, Warnings: []string{}}

	// Run refs: a glob refspec when every local run is new to the remote or
	// already there (git matches explicit refspecs pairwise, which costs
	// seconds for thousands of refs). A run whose id names another manifest
	// on the remote stays local: conflict refs are never shared
	// (docs/sync.md), and the journal carries the manifest itself.
	var immutable, moving []string
	var newRuns []string
	differs := false
	for _, id := range sortedKeys(local.runs) {
		l, r := local.runs[id], rem.runs[id]
		switch {
		case l == r:
		case r == "":
			newRuns = append(newRuns, string(l)+":"+store.RunsPrefix+id)
			res.Runs = append(res.Runs, RunRef{RunID: id, Manifest: string(l)})
		default:
			differs = true
			res.Conflicts = append(res.Conflicts, RunRef{RunID: id, Manifest: string(l)})
		}
	}
	if len(newRuns) > 0 {
		if !differs && len(newRuns) > 16 {
			immutable = append(immutable, store.RunsPrefix+"*:"+store.RunsPrefix+"*")
		} else {
			immutable = newRuns
		}
	}

	// Moving refs go only forward; check that locally first, so a stale
	// store gets "pull first" before anything is sent.
	var behindRefs []string
	forward := func(l, r gitstore.OID, journal bool) (bool, error) {
		if r == "" {
			return true, nil
		}
		ok, err := g.Has(r)
		if err != nil || !ok {
			return false, err
		}
		if journal { // long history: stock git answers faster
			return t.IsAncestor(ctx, r, l)
		}
		rel, err := relate(ctx, g, t, r, l)
		return rel == behind, err
	}
	// forwardRefs returns the refspecs of the chains under prefix that moved
	// forward locally, and notes those the remote moved past ours.
	forwardRefs := func(prefix string, localRefs, remoteRefs map[string]gitstore.OID) ([]string, error) {
		var specs []string
		for _, key := range sortedKeys(localRefs) {
			l, r := localRefs[key], remoteRefs[key]
			if l == r {
				continue
			}
			ok, err := forward(l, r, false)
			if err != nil {
				return nil, err
			}
			if !ok {
				behindRefs = append(behindRefs, prefix+key)
				continue
			}
			specs = append(specs, string(l)+":"+prefix+key)
		}
		return specs, nil
	}
	resources, err := forwardRefs(store.ResourcesPrefix, local.resources, rem.resources)
	if err != nil {
		return nil, err
	}
	var tags []string
	skipped := false
	for _, key := range sortedKeys(local.tags) {
		l, r := local.tags[key], rem.tags[key]
		if l == r {
			continue
		}
		ok, err := forward(l, r, false)
		if err != nil {
			return nil, err
		}
		if !ok {
			if tagConflicts[key] != "" {
				u, tag, _ := splitTagKey(key)
				res.Skipped = append(res.Skipped, u.String()+"@"+tag)
				skipped = true
				continue
			}
			behindRefs = append(behindRefs, store.TagsPrefix+key)
			continue
		}
		tags = append(tags, string(l)+":"+store.TagsPrefix+key)
	}
	// Receipt and verdict chains move forward like resource chains.
	chains, err := forwardRefs(receipts.RefPrefix, local.receipts, rem.receipts)
	if err != nil {
		return nil, err
	}
	verdicts, err := forwardRefs(store.VerdictsPrefix, local.verdicts, rem.verdicts)
	if err != nil {
		return nil, err
	}
	chains = append(chains, verdicts...)
	// Every local chain ref is equal to the remote's or ahead of it (checked
	// above), so a glob pushes exactly the ones that moved.
	res.Refs = len(res.Runs) + len(resources) + len(tags) + len(chains)
	if len(resources) > 16 {
		resources = []string{store.ResourcesPrefix + "*:" + store.ResourcesPrefix + "*"}
	}
	if len(tags) > 16 && !skipped {
		tags = []string{store.TagsPrefix + "*:" + store.TagsPrefix + "*"}
	}
	moving = append(moving, resources...)
	moving = append(moving, tags...)
	moving = append(moving, chains...)
	if l, r := local.main, rem.main; l != "" && l != r {
		ok, err := forward(l, r, true)
		if err != nil {
			return nil, err
		}
		if !ok {
			behindRefs = append(behindRefs, store.JournalRef)
		} else {
			moving = append(moving, string(l)+":"+store.JournalRef)
			res.Refs++
		}
	}
	if len(behindRefs) > 0 {
		return nil, pullFirst(remote, fmt.Errorf("push %s: %w: the remote moved since your last pull: %s", remote, ErrRejected, summarize(behindRefs, 3)))
	}
	if len(immutable)+len(moving) == 0 {
		res.UpToDate = len(res.Skipped) == 0 && len(res.Conflicts) == 0
		res.Warnings = warnHead(ctx, t, remote, rem.main != "")
		return res, nil
	}

	// Send everything in one atomic push; a push too large for one command
	// line goes in batches, immutable run refs first and the journal last,
	// each batch atomic and every ref always naming complete objects.
	batches := [][]string{append(immutable, moving...)}
	if len(batches[0]) > maxRefspecsPerPush {
		batches = append(chunk(immutable, maxRefspecsPerPush), chunk(moving, maxRefspecsPerPush)...)
	}
	// Push to the URL rather than the remote's name: git would otherwise
	// rewrite a tracking ref per pushed ref, which costs more than the push.
	urls, err := t.PushURLs(ctx, remote)
	if err != nil {
		return nil, err
	}
	for _, u := range urls {
		for _, b := range batches {
			if err := pushBatch(ctx, t, remote, u, b, opts); err != nil {
				return nil, err
			}
		}
	}
	res.Warnings = warnHead(ctx, t, remote, local.main != "" || rem.main != "")
	return res, nil
}

func pullFirst(remote string, err error) error {
	return hint.With(err, "pull first: readproof pull "+remote+" (then push again); nothing was changed on the remote")
}

func chunk(list []string, n int) [][]string {
	var out [][]string
	for len(list) > n {
		out = append(out, list[:n])
		list = list[n:]
	}
	if len(list) > 0 {
		out = append(out, list)
	}
	return out
}

// stateFromRefs sorts a remote's advertised refs into a state.
func stateFromRefs(refs []gitstore.Ref) *state {
	st := newState()
	for _, r := range refs {
		switch name := r.Name; {
		case strings.HasPrefix(name, store.RunsPrefix):
			st.runs[strings.TrimPrefix(name, store.RunsPrefix)] = r.OID
		case strings.HasPrefix(name, ConflictRunsPrefix):
			run, mid, ok := splitConflict(strings.TrimPrefix(name, ConflictRunsPrefix))
			if !ok || gitstore.OID(mid) != r.OID {
				continue
			}
			if st.conflicts[run] == nil {
				st.conflicts[run] = map[gitstore.OID]bool{}
			}
			st.conflicts[run][r.OID] = true
		case strings.HasPrefix(name, store.ResourcesPrefix):
			st.resources[strings.TrimPrefix(name, store.ResourcesPrefix)] = r.OID
		case strings.HasPrefix(name, store.TagsPrefix):
			st.tags[strings.TrimPrefix(name, store.TagsPrefix)] = r.OID
		case strings.HasPrefix(name, receipts.RefPrefix):
			st.receipts[strings.TrimPrefix(name, receipts.RefPrefix)] = r.OID
		case strings.HasPrefix(name, store.VerdictsPrefix):
			st.verdicts[strings.TrimPrefix(name, store.VerdictsPrefix)] = r.OID
		case name == store.JournalRef:
			st.main = r.OID
		}
	}
	return st
}
