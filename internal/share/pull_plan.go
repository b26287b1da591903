package share

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/receipts"
)

// planner holds one planning pass of a pull: both sides' refs, what the
// pass adopts, and the checks still to pass before anything is adopted.
type planner struct {
	ctx      context.Context
	g        gitstore.Store
	t        *gitstore.Transport
	opts     Options
	verified verifiedSet
	// reads holds the verdict commits decoded (by pullVerdictMACs, then
	// the chain check), verdictNew the commits new on each run's chain,
	// whose records must name the run's manifest (verdictManifests)
	reads      decodedVerdicts
	verdictNew map[string][]gitstore.OID

	local, rem   *state
	tagConflicts map[string]gitstore.OID
	res          *PullResult
	ups          []gitstore.RefUpdate

	newRuns      map[string]gitstore.OID // run refs this pull adds (with the local ones: the run refs after it)
	named        func(gitstore.OID) bool // whether a run ref after this pull names a manifest (a set made on first use)
	newConflicts map[string][]string     // run id -> manifests kept as conflicts here
	// otherNames are remote run refs whose manifest a run ref here names
	// under another id, while this store's run of that id names another
	// manifest: no conflict is kept (the manifest is named), but the name
	// must hold as a conflict's would (checkRunNames): a remote run tag
	// force-moved onto another run's manifest is refused, as clone and
	// verify refuse it.
	otherNames []RunRef

	manifests map[gitstore.OID]bool   // to verify entry by entry
	adopted   map[gitstore.OID]string // manifest -> run id, newly named here
	failures  []string                // chain checks that failed
	merges    []func() (gitstore.RefUpdate, error)

	// The journal.
	onJournal    map[gitstore.OID]bool
	journalMerge bool
	newMain      gitstore.OID
}

// plan computes the ref updates that integrate remote's tracking refs into
// the local ones, after verifying everything it would adopt. Each step
// adds its ref updates and checks; merge commits and journal records are
// written only once every check passed.
//
// local is the local side when the caller has read it (nil: read here);
// rem the remote's side when the caller knows what the tracking refs hold
// (nil: read here). reads holds the verdict commits decoded already (nil:
// none).
func plan(ctx context.Context, g gitstore.Store, t *gitstore.Transport, remote string, opts Options, verified verifiedSet, reads decodedVerdicts, local *localRefs, rem *state) (*PullResult, []gitstore.RefUpdate, error) {
	if reads == nil {
		reads = decodedVerdicts{}
	}
	p := &planner{ctx: ctx, g: g, t: t, opts: opts, verified: verified, reads: reads, verdictNew: map[string][]gitstore.OID{},
		res: newPullResult(remote, false), manifests: map[gitstore.OID]bool{}, adopted: map[gitstore.OID]string{}, onJournal: map[gitstore.OID]bool{}}
	var err error
	if local == nil {
		if local, err = readLocal(g); err != nil {
			return nil, nil, err
		}
	}
	p.local, p.tagConflicts, p.rem = local.st, local.tagConflicts, rem
	if p.rem == nil {
		if p.rem, err = readState(g, trackingPrefixes(remote)); err != nil {
			return nil, nil, err
		}
	}
	p.newMain = p.local.main
	// Every tip is a commit before any walk reads it as one.
	if failures := tipFailures(g, p.rem, p.local, verified); len(failures) > 0 {
		return nil, nil, unverified(failures)
	}
	p.runs()
	steps := []func() error{
		func() error { return p.chain(resourceChains) },
		p.tags,
		func() error { return p.chain(receiptChains) },
		func() error { return p.chain(verdictChains) },
		p.journal,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, nil, err
		}
	}
	// every new verdict record names its run's manifest, as the run and
	// its conflicts stand once the journal's are known, or one either
	// journal records renamed away from the run (before session 31 a pull
	// adopted a record naming another, which verify reports broken)
	renames := &journalRenames{g: g, heads: []gitstore.OID{p.local.main, p.rem.main}}
	for _, run := range sortedKeys(p.verdictNew) {
		named, _ := p.finalRun(run)
		kept := func(m gitstore.OID) bool {
			return p.local.conflicts[run][m] || slices.Contains(p.newConflicts[run], string(m))
		}
		f, err := verdictManifests(run, p.verdictNew[run], p.reads, named, kept, renames)
		if err != nil {
			return nil, nil, err
		}
		p.failures = append(p.failures, f...)
	}
	p.reportConflicts()
	// Verify before anything is adopted.
	if err := verifyAll(g, p.manifests, verified, opts); err != nil {
		return nil, nil, err
	}
	runNames := append([]RunRef(nil), p.res.NewRuns...)
	for _, c := range p.res.RunConflicts { // kept as another manifest of that run
		for _, m := range c.Others {
			runNames = append(runNames, RunRef{RunID: c.RunID, Manifest: m})
		}
	}
	runNames = append(runNames, p.otherNames...)
	names, err := checkRunNames(g, runNames, verified, renames)
	if err != nil {
		return nil, nil, err
	}
	p.failures = append(p.failures, names...)
	if len(p.failures) > 0 {
		return nil, nil, unverified(p.failures)
	}
	p.res.Verified = len(p.manifests)
	for _, m := range p.merges {
		up, err := m()
		if err != nil {
			return nil, nil, err
		}
		p.ups = append(p.ups, up)
	}
	if err := p.recordJournal(); err != nil {
		return nil, nil, err
	}
	return p.res, p.ups, nil
}

// runs adopts every run id absent locally, keeps another manifest under a
// run id in use as a local conflict, and drops settled conflicts. Both
// sides' run refs are sorted by id: one pass over both (a join), no map of
// either.
func (p *planner) runs() {
	local, rem := p.local, p.rem
	p.newRuns = map[string]gitstore.OID{}
	var differ []int // the remote runs whose id names another manifest here
	at := 0
	for i := range rem.runs.refs {
		id, r := rem.runs.at(i)
		if identity.ValidateRunID(id) != nil {
			continue // not a run id readproof writes; ignored
		}
		l, ok := local.runs.seek(&at, id)
		switch {
		case !ok:
			p.ups = append(p.ups, gitstore.RefUpdate{Name: store.RunsPrefix + id, New: r})
			p.newRuns[id] = r
			p.manifests[r] = true
			p.adopted[r] = id
			p.res.NewRuns = append(p.res.NewRuns, RunRef{RunID: id, Manifest: string(r)})
		case l != r:
			differ = append(differ, i)
		}
	}
	p.named = lazyNamed(local, p.newRuns)
	// The same run id naming another manifest: keep it as a conflict.
	p.newConflicts = map[string][]string{}
	for _, i := range differ {
		id, m := rem.runs.at(i)
		if p.named(m) && !local.conflicts[id][m] {
			p.otherNames = append(p.otherNames, RunRef{RunID: id, Manifest: string(m)})
		}
		p.addConflict(id, m)
	}
	// A conflict whose manifest now has a run name of its own is settled.
	for _, id := range sortedKeys(local.conflicts) {
		for _, m := range sortedOIDs(local.conflicts[id]) {
			if p.named(m) {
				p.ups = append(p.ups, gitstore.RefUpdate{Name: store.ConflictRunRef(id, m), Old: m})
			}
		}
	}
}

// finalRun returns the manifest the run ref of id names after this pull.
func (p *planner) finalRun(id string) (gitstore.OID, bool) {
	if m, ok := p.newRuns[id]; ok {
		return m, true
	}
	return p.local.runs.get(id)
}

// addConflict keeps manifest m under run id as a local conflict ref, unless
// a run ref names m or it is kept already.
func (p *planner) addConflict(id string, m gitstore.OID) {
	if f, _ := p.finalRun(id); f == m || p.named(m) || p.local.conflicts[id][m] {
		return
	}
	for _, o := range p.newConflicts[id] {
		if o == string(m) {
			return
		}
	}
	p.ups = append(p.ups, gitstore.RefUpdate{Name: store.ConflictRunRef(id, m), New: m})
	p.manifests[m] = true
	if _, ok := p.adopted[m]; !ok {
		p.adopted[m] = id
	}
	p.newConflicts[id] = append(p.newConflicts[id], string(m))
}

// reportConflicts lists the conflicts this pull kept.
func (p *planner) reportConflicts() {
	for _, id := range sortedKeys(p.newConflicts) {
		others := p.newConflicts[id]
		sort.Strings(others)
		l, _ := p.local.runs.get(id)
		p.res.RunConflicts = append(p.res.RunConflicts, RunConflict{RunID: id, Local: string(l), Others: others})
	}
}

// chainKind describes a kind of chain that is adopted when absent,
// fast-forwarded when the remote contains the local tip, left alone when
// the local tip contains the remote one, and merged when both moved.
type chainKind struct {
	prefix string
	side   func(*state) map[string]gitstore.OID
	// label names a chain in the result; ok is false for a ref name
	// readproof does not write, which is ignored.
	label func(key string) (string, bool)
	// check verifies what taking the remote tip brings (old: the local tip).
	check func(p *planner, key string, tip, old gitstore.OID) []string
	// merge writes the merge of both tips.
	merge         func(p *planner, key, label string, local, remote gitstore.OID) (gitstore.OID, error)
	taken, merged func(*PullResult) *[]string
}

var resourceChains = chainKind{
	prefix: store.ResourcesPrefix,
	side:   func(s *state) map[string]gitstore.OID { return s.resources },
	label: func(key string) (string, bool) {
		u, err := keyURI(key)
		return u.String(), err == nil
	},
	check: func(p *planner, key string, tip, old gitstore.OID) []string {
		return checkObservations(p.ctx, p.g, p.t, key, tip, old, p.verified)
	},
	merge: func(p *planner, _, uri string, l, r gitstore.OID) (gitstore.OID, error) {
		return mergeResource(p.g, uri, l, r)
	},
	taken:  func(r *PullResult) *[]string { return &r.Resources },
	merged: func(r *PullResult) *[]string { return &r.Merged },
}

var receiptChains = chainKind{
	prefix: receipts.RefPrefix,
	side:   func(s *state) map[string]gitstore.OID { return s.receipts },
	label: func(key string) (string, bool) {
		_, _, ok := receiptChain(key)
		return key, ok
	},
	check: func(p *planner, key string, tip, old gitstore.OID) []string {
		return append(checkReceiptTree(p.g, key, tip, old), checkReceiptCommits(p.ctx, p.g, p.t, key, tip, old)...)
	},
	merge: func(p *planner, key, _ string, l, r gitstore.OID) (gitstore.OID, error) {
		var conflicts []string
		id, err := mergeReceipts(p.g, key, l, r, &conflicts)
		for _, c := range conflicts {
			p.res.ReceiptConflicts = append(p.res.ReceiptConflicts, ReceiptConflict{Chain: key, Receipt: c})
		}
		return id, err
	},
	taken:  func(r *PullResult) *[]string { return &r.Receipts },
	merged: func(r *PullResult) *[]string { return &r.ReceiptsMerged },
}

var verdictChains = chainKind{
	prefix: store.VerdictsPrefix,
	side:   func(s *state) map[string]gitstore.OID { return s.verdicts },
	label:  func(run string) (string, bool) { return run, identity.ValidateRunID(run) == nil },
	check: func(p *planner, run string, tip, old gitstore.OID) []string {
		failures, commits := checkVerdictChainRead(p.ctx, p.g, p.t, run, tip, old, nil, p.reads)
		for _, c := range commits {
			p.verdictNew[run] = append(p.verdictNew[run], c.ID)
		}
		return failures
	},
	merge: func(p *planner, run, _ string, l, r gitstore.OID) (gitstore.OID, error) {
		return mergeVerdicts(p.g, run, l, r)
	},
	taken:  func(r *PullResult) *[]string { return &r.Verdicts },
	merged: func(r *PullResult) *[]string { return &r.VerdictsMerged },
}

// chain plans every chain of one kind.
func (p *planner) chain(k chainKind) error {
	local, rem := k.side(p.local), k.side(p.rem)
	for _, key := range sortedKeys(rem) {
		r, l := rem[key], local[key]
		if l == r {
			continue
		}
		label, ok := k.label(key)
		if !ok {
			continue // not a chain readproof writes; ignored
		}
		rel := behind
		if l != "" {
			var err error
			if rel, err = relate(p.ctx, p.g, p.t, l, r); err != nil {
				return err
			}
		}
		switch rel {
		case behind:
			p.failures = append(p.failures, k.check(p, key, r, l)...)
			p.ups = append(p.ups, gitstore.RefUpdate{Name: k.prefix + key, Old: l, New: r})
			*k.taken(p.res) = append(*k.taken(p.res), label)
		case diverged:
			p.failures = append(p.failures, k.check(p, key, r, l)...)
			key, label := key, label
			p.merges = append(p.merges, func() (gitstore.RefUpdate, error) {
				id, err := k.merge(p, key, label, l, r)
				return gitstore.RefUpdate{Name: k.prefix + key, Old: l, New: id}, err
			})
			*k.merged(p.res) = append(*k.merged(p.res), label)
		}
	}
	return nil
}

// tags plans the tag chains: fast-forward when one side moved; a conflict
// when both did (the remote tip is kept under refs/readproof-conflicts/),
// and a kept remote value the new tip contains is dropped.
func (p *planner) tags() error {
	for _, key := range sortedKeys(p.rem.tags) {
		r, l, c := p.rem.tags[key], p.local.tags[key], p.tagConflicts[key]
		u, tag, err := splitTagKey(key)
		if err != nil {
			continue // not a tag ref readproof writes; ignored
		}
		settled := func(tip gitstore.OID) error { // drop a kept remote value the tip now contains
			if c == "" {
				return nil
			}
			rel, err := relate(p.ctx, p.g, p.t, c, tip)
			if err != nil {
				return err
			}
			if rel == same || rel == behind {
				p.ups = append(p.ups, gitstore.RefUpdate{Name: ConflictTagsPrefix + key, Old: c})
			}
			return nil
		}
		take := func() {
			p.failures = append(p.failures, checkTagMoves(p.ctx, p.g, p.t, key, r, l, p.verified)...)
		}
		rel := same
		if l == "" {
			rel = behind
		} else if l != r {
			if rel, err = relate(p.ctx, p.g, p.t, l, r); err != nil {
				return err
			}
		}
		switch rel {
		case same, ahead:
			if err := settled(l); err != nil {
				return err
			}
		case behind:
			refused, err := p.planProposalMerges(u, tag, l, r)
			if err != nil {
				return err
			}
			if len(refused) > 0 {
				// a proposal whose base moved: reported, never applied
				if c != r {
					take()
					p.ups = append(p.ups, gitstore.RefUpdate{Name: ConflictTagsPrefix + key, Old: c, New: r})
					p.res.ProposalsRefused = append(p.res.ProposalsRefused, refused...)
				}
				continue
			}
			p.ups = append(p.ups, gitstore.RefUpdate{Name: store.TagsPrefix + key, Old: l, New: r})
			take()
			p.res.Tags = append(p.res.Tags, u.String()+"@"+tag)
			if err := settled(r); err != nil {
				return err
			}
		case diverged:
			take()
			if c != r {
				p.ups = append(p.ups, gitstore.RefUpdate{Name: ConflictTagsPrefix + key, Old: c, New: r})
				tc := TagConflict{URI: u.String(), Tag: tag}
				if tc.Local, _, err = namedTagAt(p.g, l); err != nil {
					return err
				}
				if tc.Remote, _, err = namedTagAt(p.g, r); err != nil {
					return fmt.Errorf("%w: nothing was adopted: %w", ErrUnverified, err)
				}
				p.res.TagConflicts = append(p.res.TagConflicts, tc)
			}
		}
	}
	return nil
}

// journal plans main: adopt, fast-forward or merge, after checking every
// commit new on the remote journal.
func (p *planner) journal() error {
	r := p.rem.main
	if r == "" || r == p.local.main {
		return nil
	}
	commits, err := revList(p.ctx, p.g, p.t, r, p.local.main)
	if err != nil {
		return err
	}
	for _, c := range commits {
		p.onJournal[c.ID] = true
	}
	failures, records := checkJournal(p.g, r, commits, p.manifests, p.verified, p.reads)
	failures = append(failures, journalOrphans(records, p.finalRun, p.named)...)
	if len(failures) > 0 {
		return unverified(failures)
	}
	// The other side of a same-id conflict arrives with the journal.
	for _, c := range journalConflicts(records, p.finalRun, p.named, p.local.conflicts) {
		p.addConflict(c.RunID, gitstore.OID(c.Manifest))
	}
	if p.local.main == "" {
		p.newMain, p.res.Journal = r, "adopted"
		return nil
	}
	rel, err := relate(p.ctx, p.g, p.t, p.local.main, r)
	if err != nil {
		return err
	}
	switch rel {
	case behind:
		p.newMain, p.res.Journal = r, "fast-forward"
	case diverged:
		p.journalMerge, p.res.Journal = true, "merged"
		// a store whose journal is its root alone (a new teammate's
		// `readproof init`) has nothing of its own to mix or send
		if lc, err := commitFields(p.g, p.local.main); err == nil && len(lc.Parents) > 0 {
			p.res.JournalUnrelated = unrelatedHistory(p.g, commits)
		}
	}
	return nil
}

// unrelatedHistory reports whether commits, every commit new on the remote
// journal (reachable from its tip, not from the local one), hold all of its
// history but a journal root: the local journal reaches none of the
// remote's commits except, at most, the root `readproof init` wrote, which
// two stores made in the same second share (its time is its one varying
// field) and which records nothing.
func unrelatedHistory(g gitstore.Store, commits []gitstore.RevListCommit) bool {
	in := make(map[gitstore.OID]bool, len(commits))
	for _, c := range commits {
		in[c.ID] = true
	}
	for _, c := range commits {
		for _, parent := range c.Parents {
			if in[parent] {
				continue
			}
			pc, err := commitFields(g, parent)
			if err != nil || len(pc.Parents) != 0 || !strings.HasPrefix(pc.Message, "initialize readproof store") {
				return false
			}
		}
	}
	return len(commits) > 0
}

// recordJournal writes the journal merge and records on the journal every
// adopted manifest main does not reach.
func (p *planner) recordJournal() error {
	var err error
	if p.journalMerge {
		if p.newMain, err = mergeJournal(p.g, p.local.main, p.rem.main); err != nil {
			return err
		}
	}
	var candidates []gitstore.OID
	for m := range p.adopted {
		if !p.onJournal[m] {
			candidates = append(candidates, m)
		}
	}
	var stray []gitstore.OID
	if p.local.main == "" {
		stray = candidates
	} else {
		reached, err := reachedFrom(p.ctx, p.g, p.t, p.local.main, candidates)
		if err != nil {
			return err
		}
		for _, m := range candidates {
			if !reached[m] {
				stray = append(stray, m)
			}
		}
	}
	sort.Slice(stray, func(i, j int) bool {
		return p.adopted[stray[i]]+string(stray[i]) < p.adopted[stray[j]]+string(stray[j])
	})
	for _, m := range stray {
		if p.newMain, err = recordOnJournal(p.g, p.newMain, p.adopted[m], m, p.opts.now()); err != nil {
			return err
		}
		p.res.Recorded = append(p.res.Recorded, RunRef{RunID: p.adopted[m], Manifest: string(m)})
	}
	if p.newMain != p.local.main {
		p.ups = append(p.ups, gitstore.RefUpdate{Name: store.JournalRef, Old: p.local.main, New: p.newMain})
	}
	return nil
}

// reachBudget is how many commits reachedFrom reads per question before it
// leaves the rest to git: a git process costs about what reading a hundred
// or two commits in process does.
const reachBudget = 128

// reachedFrom reports which of ids tip reaches (an id equal to tip counts),
// what `git merge-base --is-ancestor ID TIP` answers for each: one walk of
// tip's history in process, breadth first, of at most reachBudget commits
// per id; when the walk ends before the history does, the ids it has not
// met are asked of git, one process each, as all of them were.
func reachedFrom(ctx context.Context, g gitstore.Store, t *gitstore.Transport, tip gitstore.OID, ids []gitstore.OID) (map[gitstore.OID]bool, error) {
	reached := make(map[gitstore.OID]bool, len(ids))
	if len(ids) == 0 {
		return reached, nil
	}
	want := make(map[gitstore.OID]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	left := len(want)
	_, complete := walkHistory(g, tip, reachBudget*len(ids), func(id gitstore.OID) bool {
		if want[id] {
			reached[id] = true
			left--
		}
		return left == 0
	})
	if complete || left == 0 {
		return reached, nil
	}
	for _, id := range ids {
		if reached[id] {
			continue
		}
		ok, err := t.IsAncestor(ctx, id, tip)
		if err != nil {
			return nil, err
		}
		reached[id] = ok
	}
	return reached, nil
}
