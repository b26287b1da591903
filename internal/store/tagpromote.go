package store

import (
	"errors"
	"fmt"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
)

// ProposalsPrefix + <key>/<tag>/<name>: a proposed move of a tag, one
// commit whose parent is the tag's tip when it was proposed (its base).
// Pushed by `tag propose` for review as a pull request against the tag's
// branch; never adopted as a record by itself (docs/sync.md, "Proposals").
const ProposalsPrefix = "refs/heads/readproof/proposals/"

// The actions a tag move records (TagState.Action), and the two a history
// derives for commits a git host wrote.
const (
	ActionSet     = "set"
	ActionDelete  = "delete"
	ActionRevert  = "revert"
	ActionPromote = "promote"
	ActionPropose = "propose"
	ActionResolve = "resolve"
	// ActionProposed is a proposal commit in a history: merged by a merge
	// commit, or still pending.
	ActionProposed = "proposed"
	// ActionMerged is a merge of a proposal: the host's merge commit, or
	// the proposal commit itself when the tag fast-forwarded to it.
	ActionMerged = "merged"
)

// resolveMarker starts the body line of the merge commit that settles a
// tag conflict (ResolveMessage); ActionOf names such a commit ActionResolve.
const resolveMarker = "\nresolve conflict: "

// ResolveMessage is the message of the merge commit that settles a conflict
// on tag u@tag by taking the value of one side (take: "local" or "remote"):
// the tag moved to snapshot, or deleted. Its tag.json names no action: the
// commit says it was ActionResolve (ActionOf).
func ResolveMessage(u identity.URI, tag, snapshot, take string, deleted bool) string {
	head := fmt.Sprintf("tag %s@%s -> %s\n", u, tag, snapshot)
	if deleted {
		head = fmt.Sprintf("tag %s@%s deleted\n", u, tag)
	}
	return head + resolveMarker + "take " + take + "\n"
}

// isResolve reports whether c settled a tag conflict (ResolveMessage).
func isResolve(c gitstore.Commit) bool {
	return len(c.Parents) > 1 && strings.Contains(c.Message, resolveMarker)
}

// ErrSameSnapshot is returned when a promotion or proposal would not move
// the tag.
var ErrSameSnapshot = errors.New("the tag already points at that snapshot")

// ErrNoBase is returned when a tag to propose a move for has no position
// yet: a pull request needs a branch to target.
var ErrNoBase = errors.New("the tag has no position to propose a move from")

// TagBranch is the branch (below refs/heads/) of a tag's chain: the target
// of a pull request that proposes a move of it.
func TagBranch(u identity.URI, tag string) string {
	return strings.TrimPrefix(tagRef(u, tag), "refs/heads/")
}

// ProposalBranch names the branch of a proposed move of tag to snapshot
// from base: readproof/proposals/<key>/<tag>/<snapshot12>-on-<base12>.
func ProposalBranch(u identity.URI, tag, snapshot string, base gitstore.OID) string {
	return strings.TrimPrefix(ProposalsPrefix, "refs/heads/") + u.Key() + "/" + tag + "/" + short12(snapshot) + "-on-" + short12(string(base))
}

func short12(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// PromoteTag moves tag to to the snapshot tag from points at, in one
// recorded move that names from (staging -> prod).
func (s *Store) PromoteTag(u identity.URI, from, to string) (*TagState, error) {
	if err := identity.ValidateTag(to); err != nil {
		return nil, err
	}
	if from == to {
		return nil, hint.With(fmt.Errorf("promote %s@%s to itself", u, from), "name two tags: readproof tag promote URI FROM TO")
	}
	src, err := s.Tag(u, from)
	if err != nil {
		return nil, err
	}
	if cur, err := s.Tag(u, to); err == nil && cur.Snapshot == src.Snapshot {
		return nil, hint.With(fmt.Errorf("promote %s@%s to %s: %w (%s)", u, from, to, ErrSameSnapshot, short12(src.Snapshot)), "nothing to do; see the moves with: readproof tag history "+u.String()+" "+to)
	}
	return s.moveTag(u, to, tagObservation(src), false, moveMeta{action: ActionPromote, from: from})
}

func tagObservation(t *TagState) *Observation {
	if t.Observation != nil {
		return t.Observation
	}
	return &Observation{URI: t.URI, Snapshot: t.Snapshot, ContentHash: t.ContentHash}
}

// Proposal is a proposed move of a tag: one commit on Branch whose parent
// is Base, the tag's tip when it was proposed.
type Proposal struct {
	URI    string `json:"uri"`
	Tag    string `json:"tag"`
	Branch string `json:"branch"`
	// Target is the tag's branch, the one a pull request merges into.
	Target string `json:"target"`
	Commit string `json:"commit"`
	Base   string `json:"base"`
	// State is the tag's position the proposal asks for.
	State *TagState `json:"state"`
	// Remote is the remote the proposal was read from ("" for the local
	// store's own proposals).
	Remote string `json:"remote,omitempty"`
	// Stale is set when the tag no longer points at Base: merging the
	// proposal would not be a fast-forward of what reviewers saw.
	Stale bool `json:"stale"`
}

// ProposeTag writes a proposed move of tag as a commit whose parent is the
// tag's current tip, on a branch under ProposalsPrefix, and returns it. The
// new position is fromTag's snapshot when fromTag is set, else the snapshot
// named (default: the current one). Proposing the same move from the same
// base again returns the proposal already written.
func (s *Store) ProposeTag(u identity.URI, tag, snapshot, fromTag string) (*Proposal, error) {
	if err := identity.ValidateTag(tag); err != nil {
		return nil, err
	}
	var o *Observation
	if fromTag != "" {
		src, err := s.Tag(u, fromTag)
		if err != nil {
			return nil, err
		}
		o = tagObservation(src)
	} else {
		var err error
		if o, _, err = s.findObservation(u, snapshot); err != nil {
			return nil, err
		}
	}
	base, err := s.ref(tagRef(u, tag))
	if err != nil {
		return nil, err
	}
	if base == "" {
		return nil, hint.With(fmt.Errorf("propose %s@%s: %w", u, tag, ErrNoBase), "set it directly first (readproof tag set "+u.String()+" "+tag+", then readproof push): a pull request needs the tag's branch to target")
	}
	cur, err := s.tagAt(base)
	if err != nil {
		return nil, brokenTag(u, tag, err)
	}
	if !cur.Deleted && cur.Snapshot == o.Snapshot {
		return nil, hint.With(fmt.Errorf("propose %s@%s: %w (%s)", u, tag, ErrSameSnapshot, short12(o.Snapshot)), "nothing to propose; see the moves with: readproof tag history "+u.String()+" "+tag)
	}
	branch := ProposalBranch(u, tag, o.Snapshot, base)
	ref := "refs/heads/" + branch
	if id, err := s.ref(ref); err != nil {
		return nil, err
	} else if id != "" {
		return s.ProposalAt(u, tag, branch, id)
	}
	st := TagState{URI: u.String(), Tag: tag, SetAt: s.now(), Action: ActionPropose, From: fromTag, Proposal: branch, Base: string(base),
		Snapshot: o.Snapshot, ContentHash: o.ContentHash, Observation: o}
	if !cur.Deleted {
		st.PreviousSnapshot = cur.Snapshot
	}
	msg := fmt.Sprintf("propose tag %s@%s -> %s\n\n", u, tag, o.Snapshot)
	if fromTag != "" {
		msg += "from " + fromTag + "\n"
	}
	msg += fmt.Sprintf("base %s\nbranch %s\n", base, branch)
	id, err := s.putTagCommit(st, []gitstore.OID{base}, msg)
	if err != nil {
		return nil, err
	}
	if err := s.git.Update(gitstore.RefUpdate{Name: ref, New: id}); err != nil {
		if errors.Is(err, gitstore.ErrConflict) {
			if again, rerr := s.ref(ref); rerr == nil && again != "" {
				return s.ProposalAt(u, tag, branch, again)
			}
		}
		return nil, err
	}
	st.Commit = string(id)
	return &Proposal{URI: u.String(), Tag: tag, Branch: branch, Target: TagBranch(u, tag), Commit: string(id), Base: string(base), State: &st}, nil
}

// ProposalAt reads the proposal commit id of branch: one parent (its base)
// and a tag move of u@tag that records the branch.
func (s *Store) ProposalAt(u identity.URI, tag, branch string, id gitstore.OID) (*Proposal, error) {
	c, err := s.git.Commit(id)
	if err != nil {
		return nil, fmt.Errorf("proposal %s: %w", branch, err)
	}
	if len(c.Parents) != 1 {
		return nil, fmt.Errorf("proposal %s: commit %s has %d parents, a proposal has one (its base)", branch, id, len(c.Parents))
	}
	st, err := s.tagAt(id)
	if err != nil {
		return nil, fmt.Errorf("proposal %s: %w", branch, err)
	}
	if st.URI != u.String() || st.Tag != tag || st.Action != ActionPropose || st.Proposal != branch {
		return nil, fmt.Errorf("proposal %s: commit %s is not a proposed move of %s@%s on that branch", branch, id, u, tag)
	}
	tip, err := s.ref(tagRef(u, tag))
	if err != nil {
		return nil, err
	}
	return &Proposal{URI: u.String(), Tag: tag, Branch: branch, Target: TagBranch(u, tag), Commit: string(id),
		Base: string(c.Parents[0]), State: st, Stale: tip != c.Parents[0] && tip != id}, nil
}

// LocalProposals lists the proposals of u@tag written in this store that the
// tag's chain does not contain yet (pending), newest first.
func (s *Store) LocalProposals(u identity.URI, tag string) ([]Proposal, error) {
	return s.ProposalsUnder(u, tag, ProposalsPrefix, "")
}

// ProposalsUnder lists the proposals of u@tag under prefix (ProposalsPrefix,
// or a remote's tracking copy of it), leaving out those the tag's chain
// already contains and those that do not read as proposals.
func (s *Store) ProposalsUnder(u identity.URI, tag, prefix, remote string) ([]Proposal, error) {
	p := prefix + u.Key() + "/" + tag + "/"
	refs, err := s.git.Refs(p)
	if err != nil {
		return nil, err
	}
	if len(refs) == 0 {
		return nil, nil
	}
	onChain := map[gitstore.OID]bool{}
	if tip, err := s.ref(tagRef(u, tag)); err != nil {
		return nil, err
	} else if tip != "" {
		if err := s.walkCommits(tip, func(id gitstore.OID, _ gitstore.Commit) (bool, error) {
			onChain[id] = true
			return true, nil
		}); err != nil {
			return nil, err
		}
	}
	var out []Proposal
	for _, r := range refs {
		name := strings.TrimPrefix(r.Name, p)
		if strings.Contains(name, "/") || onChain[r.OID] {
			continue
		}
		pr, err := s.ProposalAt(u, tag, strings.TrimPrefix(ProposalsPrefix, "refs/heads/")+u.Key()+"/"+tag+"/"+name, r.OID)
		if err != nil {
			continue // not a proposal readproof reads; verify names it
		}
		pr.Remote = remote
		out = append(out, *pr)
	}
	sortProposals(out)
	return out, nil
}

func sortProposals(ps []Proposal) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].State.SetAt.After(ps[j-1].State.SetAt); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// TagHistory lists every move of a tag, newest first. Each state's Action
// says what made it: the recorded action (derived for moves recorded before
// actions were), "merged" for a merge commit a git host wrote when it merged
// a proposal (its state is the proposal's, set at the merge's time) and for
// a proposal the tag fast-forwarded to, "proposed" for a proposal commit
// reached through a merge.
func (s *Store) TagHistory(u identity.URI, tag string) ([]TagState, error) {
	if err := identity.ValidateTag(tag); err != nil {
		return nil, err
	}
	tip, err := s.ref(tagRef(u, tag))
	if err != nil {
		return nil, err
	}
	if tip == "" {
		return nil, unknownTag(u, tag)
	}
	// the first-parent line: where the tag itself stood
	line := map[gitstore.OID]bool{}
	for id := tip; id != ""; {
		line[id] = true
		c, err := s.git.Commit(id)
		if err != nil {
			return nil, brokenTag(u, tag, err)
		}
		id = ""
		if len(c.Parents) > 0 {
			id = c.Parents[0]
		}
	}
	var out []TagState
	err = s.walkCommits(tip, func(id gitstore.OID, c gitstore.Commit) (bool, error) {
		// every move on the chain, a merged one too, is of u@tag: a
		// chain copied from another tag would list its moves, and
		// revert write its snapshot, as u@tag's
		t, err := s.tagOf(u, tag, id)
		if err != nil {
			return false, err
		}
		t.Action = ActionOf(t, c, line[id])
		if t.Action == ActionMerged && len(c.Parents) > 1 {
			t.SetAt = c.Committer.When.UTC()
		}
		out = append(out, *t)
		return true, nil
	})
	return out, err
}

// ActionOf says what made the tag move t recorded by commit c; onLine
// tells whether c is on the first-parent line of the tag's tip.
func ActionOf(t *TagState, c gitstore.Commit, onLine bool) string {
	switch {
	case isResolve(c):
		return ActionResolve
	case len(c.Parents) > 1:
		return ActionMerged // a merge no readproof command writes: a host's
	case t.Action == ActionPropose && onLine:
		return ActionMerged // fast-forwarded to
	case t.Action == ActionPropose:
		return ActionProposed
	case t.Action != "":
		return t.Action
	case t.Deleted:
		return ActionDelete
	}
	return ActionSet
}

// IsProposalMerge reports whether commit c on a tag's chain is a merge a
// git host wrote (not a readproof conflict resolution).
func IsProposalMerge(c gitstore.Commit) bool {
	return len(c.Parents) > 1 && !isResolve(c)
}

// DropProposal removes this store's proposal branch when it still names id
// (a proposal that could not be sent: the remote holds the same move from
// another store).
func (s *Store) DropProposal(branch string, id string) error {
	if !strings.HasPrefix("refs/heads/"+branch, ProposalsPrefix) {
		return fmt.Errorf("%s is not a proposal branch", branch)
	}
	return s.git.Update(gitstore.RefUpdate{Name: "refs/heads/" + branch, Old: gitstore.OID(id)})
}
