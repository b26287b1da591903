package share

import (
	"context"
	"fmt"
	"maps"
	"slices"
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

// Push sends the local runs, resource chains, tag chains, receipt chains,
// verdict chains and journal to remote. It never forces: when the remote
// moved since the last pull it fails with ErrRejected (hint: pull first)
// and changes nothing. Open runs and conflict refs are not pushed.
func push(ctx context.Context, s *store.Store, remote string, opts Options) (*PushResult, error) {
	g := s.Git()
	t, rem, err := connect(ctx, g, remote, opts, "push")
	if err != nil {
		return nil, err
	}
	p := &pusher{ctx: ctx, g: g, t: t, rem: rem,
		res: &PushResult{Remote: remote, Runs: []RunRef{}, Conflicts: []RunRef{}, Skipped: []string{}, Warnings: []string{}}}
	if p.local, err = readState(g, localPrefixes()); err != nil {
		return nil, err
	}
	if p.tagConflicts, err = readTagConflicts(g); err != nil {
		return nil, err
	}
	immutable := p.runSpecs()
	if err := p.checkRemoteNames(); err != nil {
		return nil, fmt.Errorf("push %s: %w", remote, err)
	}
	moving, err := p.movingSpecs()
	if err != nil {
		return nil, err
	}
	if len(p.behind) > 0 {
		return nil, pullFirst(remote, fmt.Errorf("push %s: %w: the remote moved since your last pull: %s", remote, ErrRejected, summarize(p.behind, 3)))
	}
	res := p.res
	if len(immutable)+len(moving) == 0 {
		res.UpToDate = len(res.Skipped) == 0 && len(res.Conflicts) == 0
		res.Warnings = append(res.Warnings, warnHead(ctx, t, remote, rem.main != "", rem.head, false)...)
		return res, nil
	}
	var withJournal []string
	if len(immutable)+len(moving) > maxRefspecsPerPush {
		// pushed in batches: a renamed run goes with the journal that
		// records its rename (a guarded remote takes it only then)
		if immutable, withJournal, err = p.renamedRuns(immutable); err != nil {
			return nil, err
		}
	}
	if err := send(ctx, t, rem, remote, immutable, withJournal, moving, opts); err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, warnHead(ctx, t, remote, p.local.main != "" || rem.main != "", rem.head, p.creates)...)
	return res, nil
}

// pusher plans one push: the refspecs to send and the refs the remote moved
// past (behind).
type pusher struct {
	ctx          context.Context
	g            gitstore.Store
	t            *gitstore.Transport
	local, rem   *state
	tagConflicts map[string]gitstore.OID
	res          *PushResult
	behind       []string
	// creates: a refspec names a ref the remote's listing lacked (the push
	// creates it, since an atomic push that succeeds sets every ref it
	// names); only such a push can give an unborn HEAD its branch
	// (warnHead). git's porcelain output would say so only without
	// --quiet: a quiet push prints ref statuses on failure alone.
	creates bool
}

// runSpecs returns the refspecs of the run refs the remote lacks: a glob
// when every local run is new to the remote or already there (git matches
// explicit refspecs pairwise, which costs seconds for thousands of refs). A
// run whose id names another manifest on the remote stays local: conflict
// refs are never shared (docs/sync.md), and the journal carries the
// manifest itself.
func (p *pusher) runSpecs() []string {
	var newRuns []string
	differs := false
	at := 0
	for i := range p.local.runs.refs {
		id, l := p.local.runs.at(i)
		r, _ := p.rem.runs.seek(&at, id)
		switch {
		case l == r:
		case r == "":
			p.creates = true
			newRuns = append(newRuns, string(l)+":"+store.RunsPrefix+id)
			p.res.Runs = append(p.res.Runs, RunRef{RunID: id, Manifest: string(l)})
		default:
			differs = true
			p.res.Conflicts = append(p.res.Conflicts, RunRef{RunID: id, Manifest: string(l)})
		}
	}
	if !differs && len(newRuns) > 16 {
		return []string{store.RunsPrefix + "*:" + store.RunsPrefix + "*"}
	}
	return newRuns
}

// checkRemoteNames refuses, before anything is sent, a remote whose run
// ref of a local run id names a manifest this store holds and names under
// another id, when that manifest records another run and no journal
// records a rename of it to the remote's name: a run tag force-moved onto
// another run's manifest, which pull, clone and verify refuse. A manifest
// this store lacks is judged by the pull that fetches it.
func (p *pusher) checkRemoteNames() error {
	if len(p.res.Conflicts) == 0 {
		return nil
	}
	named := p.local.named()
	var names []RunRef
	for _, c := range p.res.Conflicts {
		if m, _ := p.rem.runs.get(c.RunID); named[m] && !p.local.conflicts[c.RunID][m] {
			names = append(names, RunRef{RunID: c.RunID, Manifest: string(m)})
		}
	}
	if len(names) == 0 {
		return nil
	}
	heads := []gitstore.OID{p.local.main}
	if m := p.rem.main; m != "" {
		if ok, err := p.g.Has(m); err == nil && ok {
			heads = append(heads, m)
		}
	}
	failures, err := checkRunNames(p.g, names, verifiedSet{}, &journalRenames{g: p.g, heads: heads})
	if err != nil || len(failures) == 0 {
		return err
	}
	return hint.With(fmt.Errorf("%w: nothing was sent: %s", ErrUnverified, summarize(failures, 3)),
		"a run ref on the remote was moved (a forced push or a rewritten history); readproof never forces a push: have the remote's owner put it back, and check the remote with `readproof --store REMOTE verify` on it or on a `git clone --mirror` of it")
}

// renamedRuns splits the run refspecs of a push (immutable, runSpecs) into
// the plain ones and those of runs the local journal records renamed to
// their id (conflicts rename: the manifest records another run id), which
// a guarded remote takes only with the journal that records the rename
// (CheckIncoming). The glob runSpecs may give is written out when it holds
// such a run.
func (p *pusher) renamedRuns(immutable []string) (plain, renamed []string, err error) {
	renames, err := store.JournalRenames(p.g, []gitstore.OID{p.local.main})
	if err != nil || len(renames) == 0 {
		return immutable, nil, err
	}
	for _, r := range p.res.Runs {
		spec := r.Manifest + ":" + store.RunsPrefix + r.RunID
		to := false
		for _, ids := range renames[gitstore.OID(r.Manifest)] {
			to = to || slices.Contains(ids, r.RunID)
		}
		if to {
			renamed = append(renamed, spec)
		} else {
			plain = append(plain, spec)
		}
	}
	if len(renamed) == 0 {
		return immutable, nil, nil
	}
	return plain, renamed, nil
}

// movingSpecs returns the refspecs of the chains and the journal that moved
// forward locally. Moving refs go only forward: this is checked locally
// first, so a stale store gets "pull first" before anything is sent.
func (p *pusher) movingSpecs() ([]string, error) {
	resources, err := p.chainSpecs(store.ResourcesPrefix, p.local.resources, p.rem.resources)
	if err != nil {
		return nil, err
	}
	tags, skipped, err := p.tagSpecs()
	if err != nil {
		return nil, err
	}
	// Receipt and verdict chains move forward like resource chains.
	chains, err := p.chainSpecs(receipts.RefPrefix, p.local.receipts, p.rem.receipts)
	if err != nil {
		return nil, err
	}
	// The verdict chain of a run left out as a conflict stays too: the
	// records this store added name its own manifest, not the one the
	// remote's run of that id names, and pull, clone and verify refuse
	// them (before session 31's re-read it was sent, and since session 31
	// every pull and clone from the remote was then refused).
	localVerdicts := p.local.verdicts
	for _, c := range p.res.Conflicts {
		if l, ok := p.local.verdicts[c.RunID]; ok && l != p.rem.verdicts[c.RunID] {
			if len(localVerdicts) == len(p.local.verdicts) { // not copied yet
				localVerdicts = maps.Clone(p.local.verdicts)
			}
			delete(localVerdicts, c.RunID)
			p.res.Warnings = append(p.res.Warnings, fmt.Sprintf("%s%s not pushed: it holds checks of this store's run %s, whose id names another manifest on the remote", store.VerdictsPrefix, c.RunID, c.RunID))
		}
	}
	verdicts, err := p.chainSpecs(store.VerdictsPrefix, localVerdicts, p.rem.verdicts)
	if err != nil {
		return nil, err
	}
	chains = append(chains, verdicts...)
	// Every local chain ref is equal to the remote's or ahead of it (checked
	// above), so a glob pushes exactly the ones that moved.
	p.res.Refs = len(p.res.Runs) + len(resources) + len(tags) + len(chains)
	if len(resources) > 16 {
		resources = []string{store.ResourcesPrefix + "*:" + store.ResourcesPrefix + "*"}
	}
	if len(tags) > 16 && !skipped {
		tags = []string{store.TagsPrefix + "*:" + store.TagsPrefix + "*"}
	}
	moving := append(append(resources, tags...), chains...)
	if l, r := p.local.main, p.rem.main; l != "" && l != r {
		if err := p.localTip(store.JournalRef, l); err != nil {
			return nil, err
		}
		ok, err := p.forward(l, r, true)
		if err != nil {
			return nil, err
		}
		switch {
		case !ok:
			p.behind = append(p.behind, store.JournalRef)
		case len(p.res.Conflicts) > 0:
			// The journal records the runs left out; sent before they are
			// renamed, it would record on the remote a run whose id names
			// another manifest there.
			p.res.Warnings = append(p.res.Warnings, fmt.Sprintf("%s not pushed until the run id conflicts are settled (readproof conflicts rename)", store.JournalRef))
		default:
			moving = append(moving, string(l)+":"+store.JournalRef)
			p.res.Refs++
			p.creates = p.creates || r == ""
		}
	}
	return moving, nil
}

// localTip checks that this store holds l, the commit its ref name names:
// a ref whose object is missing (a damaged store) is neither ahead of the
// remote nor behind it, and git would fail on it (merge-base: "Not a valid
// commit name") or call it behind.
func (p *pusher) localTip(name string, l gitstore.OID) error {
	ok, err := p.g.Has(l)
	if err != nil || ok {
		return err
	}
	return hint.With(fmt.Errorf("push %s: %s names object %s, which this store does not hold: %w", p.res.Remote, name, l, gitstore.ErrNotFound),
		"this store is damaged, not the remote: `readproof verify` names what is missing; restore it from a backup or a copy that holds it (readproof pull from one), then push again; nothing was changed on the remote")
}

// forward reports whether local tip l contains remote tip r.
func (p *pusher) forward(l, r gitstore.OID, journal bool) (bool, error) {
	if r == "" {
		return true, nil
	}
	ok, err := p.g.Has(r)
	if err != nil || !ok {
		return false, err
	}
	if journal { // long history: stock git answers faster, unless r is a few commits back
		if nearAncestor(p.g, r, l, nearAncestorBudget) {
			return true, nil
		}
		return p.t.IsAncestor(p.ctx, r, l)
	}
	rel, err := relate(p.ctx, p.g, p.t, r, l)
	return rel == behind, err
}

// nearAncestorBudget is how many commits nearAncestor reads before it
// leaves the question to git: a push of a few runs finds the remote's
// journal tip within a few record commits (each with its manifest).
const nearAncestorBudget = 64

// nearAncestor reports whether a is reachable from b within budget commits
// read (a == b counts), walking b's parents breadth first. false means "not
// found so soon" (git merge-base answers then), never "not an ancestor"; a
// commit that cannot be read ends the walk the same way.
func nearAncestor(g gitstore.Store, a, b gitstore.OID, budget int) bool {
	found, _ := walkHistory(g, b, budget, func(id gitstore.OID) bool { return id == a })
	return found
}

// walkHistory reads tip's history breadth first, at most budget commits,
// calling stop for each commit before it is read (tip first) until stop
// returns true (found). complete reports that the whole history was read
// without stop saying so; a commit that cannot be read ends the walk with
// both false.
func walkHistory(g gitstore.Store, tip gitstore.OID, budget int, stop func(gitstore.OID) bool) (found, complete bool) {
	queue := []gitstore.OID{tip}
	seen := map[gitstore.OID]bool{tip: true}
	for n := 0; n < budget; n++ {
		if len(queue) == 0 {
			return false, true
		}
		id := queue[0]
		queue = queue[1:]
		if stop(id) {
			return true, false
		}
		c, err := commitFields(g, id)
		if err != nil {
			return false, false
		}
		for _, p := range c.Parents {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return false, len(queue) == 0
}

// chainSpecs returns the refspecs of the chains under prefix that moved
// forward locally, and notes those the remote moved past ours.
func (p *pusher) chainSpecs(prefix string, localRefs, remoteRefs map[string]gitstore.OID) ([]string, error) {
	var specs []string
	for _, key := range sortedKeys(localRefs) {
		l, r := localRefs[key], remoteRefs[key]
		if l == r {
			continue
		}
		if err := p.localTip(prefix+key, l); err != nil {
			return nil, err
		}
		ok, err := p.forward(l, r, false)
		if err != nil {
			return nil, err
		}
		if !ok {
			p.behind = append(p.behind, prefix+key)
			continue
		}
		p.creates = p.creates || r == ""
		specs = append(specs, string(l)+":"+prefix+key)
	}
	return specs, nil
}

// tagSpecs is chainSpecs for tags, leaving out (skipped) a tag in conflict
// locally.
func (p *pusher) tagSpecs() (specs []string, skipped bool, err error) {
	for _, key := range sortedKeys(p.local.tags) {
		l, r := p.local.tags[key], p.rem.tags[key]
		if l == r {
			continue
		}
		if err := p.localTip(store.TagsPrefix+key, l); err != nil {
			return nil, false, err
		}
		ok, err := p.forward(l, r, false)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			if p.tagConflicts[key] != "" {
				u, tag, _ := splitTagKey(key)
				p.res.Skipped = append(p.res.Skipped, u.String()+"@"+tag)
				skipped = true
				continue
			}
			p.behind = append(p.behind, store.TagsPrefix+key)
			continue
		}
		p.creates = p.creates || r == ""
		specs = append(specs, string(l)+":"+store.TagsPrefix+key)
	}
	return specs, skipped, nil
}

// send pushes everything in one atomic push to each push URL; a push too
// large for one command line goes in batches, immutable run refs first and
// the journal last, each batch atomic and every ref always naming complete
// objects.
func send(ctx context.Context, t *gitstore.Transport, rem *state, remote string, immutable, withJournal, moving []string, opts Options) error {
	batches := pushBatches(immutable, withJournal, moving, maxRefspecsPerPush)
	// Push to the URL rather than the remote's name: git would otherwise
	// rewrite a tracking ref per pushed ref, which costs more than the push.
	// connect asked for them already
	urls, err := rem.pushURLs, rem.pushErr
	if urls == nil && err == nil {
		urls, err = t.PushURLs(ctx, remote)
		// connect warned about the url it read from the config; a
		// pushurl is named here first
		configured, _ := t.RemoteInRepoConfigURL(remote)
		for _, u := range urls {
			if u != configured {
				warnURLPassword(opts, remote, "pushes to", u)
			}
		}
	}
	if err != nil {
		return err
	}
	for _, u := range urls {
		for _, b := range batches {
			if err := pushBatch(ctx, t, remote, u, b, opts); err != nil {
				return err
			}
		}
	}
	return nil
}

func pullFirst(remote string, err error) error {
	return hint.With(err, "pull first: readproof pull "+remote+" (then push again); nothing was changed on the remote")
}

// pushBatches is send's batches of at most n refspecs: one when all fit,
// else the immutable run refs first, then the moving ones, the journal's
// (moving's last, when it moved) last, in one batch with withJournal (the
// renamed runs: renamedRuns).
func pushBatches(immutable, withJournal, moving []string, n int) [][]string {
	all := append(append(append([]string{}, immutable...), withJournal...), moving...)
	if len(all) <= n {
		return [][]string{all}
	}
	last := len(moving)
	if last > 0 && strings.HasSuffix(moving[last-1], ":"+store.JournalRef) {
		last--
	}
	batches := append(chunk(immutable, n), chunk(moving[:last], n)...)
	return append(batches, chunk(append(append([]string{}, withJournal...), moving[last:]...), n)...)
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
	// the run refs: adjacent in a sorted listing (git's is), so taken as
	// they are, neither copied nor put in a map
	st.runs = newRefList(store.RunsPrefix, groupRefs(refs, []string{store.RunsPrefix})[0])
	for _, r := range refs {
		switch name := r.Name; {
		case strings.HasPrefix(name, store.RunsPrefix): // in st.runs
		case strings.HasPrefix(name, store.ConflictRunsPrefix):
			run, mid, ok := splitConflict(strings.TrimPrefix(name, store.ConflictRunsPrefix))
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
		case strings.HasPrefix(name, store.ProposalsPrefix):
			st.proposals = append(st.proposals, proposalRef{ref: name, id: r.OID})
		}
	}
	return st
}
