package share

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
)

// ProposeResult says what `tag propose` wrote and where it sent it.
type ProposeResult struct {
	store.Proposal
	Remote string `json:"remote"`
	// Pushed is false when the remote already had the proposal branch at
	// this commit.
	Pushed bool `json:"pushed"`
}

// ProposalRefusal is a merge of a proposal on a remote tag branch that a
// pull did not adopt: the proposal's base was not the tag's position when
// it was merged (the tag moved meanwhile), or the merge is not the merge of
// a proposal. The local value stays; the remote tip is kept as a tag
// conflict (`readproof conflicts resolve URI TAG --take remote` adopts it
// deliberately).
type ProposalRefusal struct {
	URI      string `json:"uri"`
	Tag      string `json:"tag"`
	Proposal string `json:"proposal"`
	Merge    string `json:"merge"`
	Base     string `json:"base"`
	// TagTip is the tag's position the merge was made onto (its first
	// parent).
	TagTip string `json:"tag_tip"`
	Reason string `json:"reason"`
}

// proposalTracking is where a pull keeps a remote's proposal branches.
func proposalTracking(remote string) string { return RemotesPrefix + remote + "/proposals/" }

// Propose writes a proposed move of u@tag (to fromTag's snapshot, or the
// snapshot named, default the current one) as a commit whose parent is the
// tag's tip, and pushes it to remote on its proposal branch. The remote is
// proved a readproof store first, and must hold the tag at the local tip
// (the pull request's target), else nothing is written.
func Propose(ctx context.Context, s *store.Store, u identity.URI, tag, snapshot, fromTag, remote string, opts Options) (*ProposeResult, error) {
	if err := identity.ValidateTag(tag); err != nil {
		return nil, err
	}
	g := s.Git()
	t, rem, err := connect(ctx, g, remote, opts, "propose")
	if err != nil {
		return nil, err
	}
	key := tagKey(u, tag)
	local, err := g.Ref(store.TagsPrefix + key)
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	r := rem.tags[key]
	switch {
	case local == "":
		// ProposeTag names the missing tag
	case r == "":
		return nil, hint.With(fmt.Errorf("propose %s@%s: %w on %s", u, tag, store.ErrNoBase, remote),
			"push the tag first (readproof push "+remote+"): a pull request needs the tag's branch on the remote to target")
	case r != local:
		rel := diverged
		if ok, herr := g.Has(r); herr == nil && ok {
			if rel, err = relate(ctx, g, t, local, r); err != nil {
				return nil, err
			}
		}
		if rel == ahead {
			return nil, hint.With(fmt.Errorf("propose %s@%s: %w: the tag moved here since the last push to %s", u, tag, ErrRejected, remote),
				"push first (readproof push "+remote+"), so the proposal's base is the tag's position reviewers see")
		}
		return nil, pullFirst(remote, fmt.Errorf("propose %s@%s: %w: the tag moved on %s since your last pull", u, tag, ErrRejected, remote))
	}
	p, err := s.ProposeTag(u, tag, snapshot, fromTag)
	if err != nil {
		return nil, err
	}
	res := &ProposeResult{Proposal: *p, Remote: remote}
	ref := "refs/heads/" + p.Branch
	for _, have := range rem.proposals {
		switch {
		case have.ref != ref:
		case string(have.id) == p.Commit:
			return res, nil
		default:
			// the same move from the same base, proposed by another store:
			// ours is not needed
			if err := s.DropProposal(p.Branch, p.Commit); err != nil {
				return nil, err
			}
			return nil, hint.With(fmt.Errorf("propose %s@%s: %w: %s already holds this move on %s (commit %s, proposed elsewhere)", u, tag, ErrRejected, remote, p.Branch, short(have.id)),
				"open the pull request from that branch: it proposes the same snapshot on the same base")
		}
	}
	if err := send(ctx, t, rem, remote, nil, nil, []string{p.Commit + ":" + ref}, opts); err != nil {
		return nil, err
	}
	res.Pushed = true
	return res, nil
}

// Proposals lists the pending proposals of u@tag: this store's own and
// those last fetched from each remote, newest first. Each says whether its
// base is still the tag's position (Stale when not).
func Proposals(s *store.Store, u identity.URI, tag string) ([]store.Proposal, error) {
	out, err := s.LocalProposals(u, tag)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, p := range out {
		seen[p.Commit] = true
	}
	t, err := Options{}.transport(s.Git())
	if err != nil {
		return nil, err
	}
	remotes, err := t.Remotes(context.Background())
	if err != nil {
		return nil, err
	}
	for _, rc := range remotes {
		r := rc.Name
		ps, err := s.ProposalsUnder(u, tag, proposalTracking(r), r)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if !seen[p.Commit] {
				seen[p.Commit] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// proposalMerges checks the commits new on a remote tag chain (commits, from
// rev-list) before a pull fast-forwards the local tag to them: every merge
// a git host wrote must merge a proposal of this tag whose base is the
// merge's first parent, with the proposal's tree. A proposal whose base
// moved meanwhile is refused, never applied silently.
func proposalMerges(g gitstore.Store, u identity.URI, tag string, commits []gitstore.RevListCommit) ([]ProposalRefusal, error) {
	var out []ProposalRefusal
	read := make(map[gitstore.OID]gitstore.Commit, len(commits))
	for _, rc := range commits {
		c, err := g.Commit(rc.ID)
		if err != nil {
			return nil, fmt.Errorf("tag move %s: %w", rc.ID, err)
		}
		read[rc.ID] = c
	}
	settled := settledByResolution(read)
	for _, rc := range commits {
		c := read[rc.ID]
		if settled[rc.ID] {
			continue // adopted deliberately by `conflicts resolve` since
		}
		if !store.IsProposalMerge(c) {
			// a proposal taken as it is (fast-forward), or squashed or
			// rebased by the host onto the tag: its parent must be the
			// base it was proposed on
			if len(c.Parents) != 1 {
				continue
			}
			st, _, err := tagAt(g, rc.ID)
			if err != nil || st.Action != store.ActionPropose || st.Base == "" || gitstore.OID(st.Base) == c.Parents[0] {
				continue // a direct move, or one checkTag/verify judge
			}
			out = append(out, ProposalRefusal{URI: u.String(), Tag: tag, Proposal: st.Proposal, Merge: string(rc.ID), Base: st.Base,
				TagTip: string(c.Parents[0]), Reason: fmt.Sprintf("proposal %s was based on the tag's move %s, but was applied onto %s (squashed or rebased after the tag moved)",
					st.Proposal, short(gitstore.OID(st.Base)), short(c.Parents[0]))})
			continue
		}
		ref := ProposalRefusal{URI: u.String(), Tag: tag, Merge: string(rc.ID), TagTip: string(c.Parents[0])}
		refuse := func(format string, args ...any) {
			ref.Reason = fmt.Sprintf(format, args...)
			out = append(out, ref)
		}
		if len(c.Parents) != 2 {
			refuse("a merge of %d branches, not of one proposal", len(c.Parents))
			continue
		}
		head := c.Parents[1]
		st, pc, err := tagAt(g, head)
		if err != nil {
			refuse("the merged commit %s is not a tag move: %v", short(head), err)
			continue
		}
		ref.Proposal = st.Proposal
		if st.Action != store.ActionPropose || len(pc.Parents) != 1 || st.URI != u.String() || st.Tag != tag {
			refuse("the merged commit %s is not a proposed move of %s@%s", short(head), u, tag)
			continue
		}
		ref.Base = string(pc.Parents[0])
		if pc.Parents[0] != c.Parents[0] {
			refuse("proposal %s was based on the tag's move %s, but the tag had moved to %s when it was merged", st.Proposal, short(pc.Parents[0]), short(c.Parents[0]))
			continue
		}
		if c.Tree != pc.Tree {
			refuse("the merge of proposal %s does not hold the proposal's tree (edited while merging)", st.Proposal)
			continue
		}
	}
	return out, nil
}

func short(id gitstore.OID) string {
	if len(id) > 12 {
		return string(id[:12])
	}
	return string(id)
}

// checkIncomingProposal is the guard's rule for a proposal branch: created
// once, one commit whose parent is a move of the tag and whose tag.json is
// a proposed move of that tag on that branch, with content that verifies.
func checkIncomingProposal(g gitstore.Store, in Incoming) error {
	u, tag, _, err := splitProposalRef(in.Ref)
	if err != nil {
		return err
	}
	if in.Old != "" {
		return errors.New("a proposal branch is written once: propose again for another move")
	}
	st, c, err := tagAt(g, in.New)
	if err != nil {
		return err
	}
	if len(c.Parents) != 1 || st.Action != store.ActionPropose || st.URI != u.String() || st.Tag != tag ||
		"refs/heads/"+st.Proposal != in.Ref {
		return fmt.Errorf("commit %s is not a proposed move of %s@%s on this branch", short(in.New), u, tag)
	}
	return checkTag(g, in.New, nil)
}

// proposalRef is one proposal branch a remote lists.
type proposalRef struct {
	ref string
	id  gitstore.OID
}

// checkIncomingTagMerges is the guard's rule for merges pushed onto a tag
// branch: the same as a pull's (proposalMerges).
func checkIncomingTagMerges(ctx context.Context, g gitstore.Store, t *gitstore.Transport, in Incoming) []string {
	u, tag, err := splitTagKey(strings.TrimPrefix(in.Ref, store.TagsPrefix))
	if err != nil {
		return []string{err.Error()}
	}
	commits, err := revList(ctx, g, t, in.New, in.Old)
	if err != nil {
		return []string{err.Error()}
	}
	refusals, err := proposalMerges(g, u, tag, commits)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, r := range refusals {
		out = append(out, "merge "+short(gitstore.OID(r.Merge))+": "+r.Reason)
	}
	return out
}

// planProposalMerges is the pull's check before fast-forwarding the tag
// key from l to r: it returns the refusals (none when every merge on the
// way is a proposal merged onto its own base).
func (p *planner) planProposalMerges(u identity.URI, tag string, l, r gitstore.OID) ([]ProposalRefusal, error) {
	if l == "" {
		return nil, nil // no local value to keep: taken as the remote holds it, as clone does
	}
	commits, err := revList(p.ctx, p.g, p.t, r, l)
	if err != nil {
		return nil, err
	}
	return proposalMerges(p.g, u, tag, commits)
}

// proposalsFetched reports whether the tracking refs already hold every
// proposal branch the remote lists, so a pull with nothing else to adopt
// can skip the fetch.
func proposalsFetched(g gitstore.Store, remote string, rem *state) bool {
	have, err := g.Refs(proposalTracking(remote))
	if err != nil {
		return false
	}
	if len(have) != len(rem.proposals) {
		return false
	}
	m := make(map[string]gitstore.OID, len(have))
	for _, r := range have {
		m[strings.TrimPrefix(r.Name, proposalTracking(remote))] = r.OID
	}
	for _, p := range rem.proposals {
		if m[strings.TrimPrefix(p.ref, store.ProposalsPrefix)] != p.id {
			return false
		}
	}
	return true
}

// splitProposalRef splits refs/heads/readproof/proposals/<key>/<tag>/<name>
// into the tag's URI, the tag and the proposal's name (one ref component,
// as ProposalBranch makes it).
func splitProposalRef(ref string) (identity.URI, string, string, error) {
	rest, ok := strings.CutPrefix(ref, store.ProposalsPrefix)
	i := strings.LastIndexByte(rest, '/')
	if !ok || i <= 0 || i == len(rest)-1 {
		return identity.URI{}, "", "", errors.New("not a proposal branch name (" + store.ProposalsPrefix + "<key>/<tag>/<name>)")
	}
	u, tag, err := splitTagKey(rest[:i])
	if err != nil {
		return u, "", "", err
	}
	name := rest[i+1:]
	if err := identity.ValidateTag(name); err != nil {
		return u, "", "", fmt.Errorf("proposal name %q: %w", name, err)
	}
	return u, tag, name, nil
}

// staleProposals lists this store's pending proposals of the tags a pull
// moved ("uri@tag") whose base the tag has left.
func staleProposals(s *store.Store, moved []string) []store.Proposal {
	out := []store.Proposal{}
	for _, ref := range moved {
		u, err := identity.ParseURI(ref)
		if err != nil || u.Tag == "" {
			continue
		}
		tag := u.Tag
		u.Tag = ""
		ps, err := s.LocalProposals(u, tag)
		if err != nil {
			continue
		}
		for _, p := range ps {
			if p.Stale {
				out = append(out, p)
			}
		}
	}
	return out
}

// settledByResolution returns the commits (among read, the new commits of a
// chain) that a `conflicts resolve` commit among them reaches: a merge
// refused once and then taken deliberately on some store is not refused
// again where the resolution arrives with it.
func settledByResolution(read map[gitstore.OID]gitstore.Commit) map[gitstore.OID]bool {
	settled := map[gitstore.OID]bool{}
	var queue []gitstore.OID
	for _, c := range read {
		if len(c.Parents) > 1 && !store.IsProposalMerge(c) {
			queue = append(queue, c.Parents...)
		}
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		c, ok := read[id]
		if !ok || settled[id] {
			continue
		}
		settled[id] = true
		queue = append(queue, c.Parents...)
	}
	return settled
}
