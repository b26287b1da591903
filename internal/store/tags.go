package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
)

// TagState is one position of a tag, stored as tag.json in each commit of
// the tag's chain. A deletion is a state with Deleted set.
type TagState struct {
	URI              string    `json:"uri"`
	Tag              string    `json:"tag"`
	Snapshot         string    `json:"snapshot,omitempty"`
	ContentHash      string    `json:"content_hash,omitempty"`
	PreviousSnapshot string    `json:"previous_snapshot,omitempty"`
	Deleted          bool      `json:"deleted,omitempty"`
	SetAt            time.Time `json:"set_at"`
	// Caller names who moved the tag through an authenticated front end
	// (an MCP token's name); omitted otherwise.
	Caller      string       `json:"caller,omitempty"`
	Observation *Observation `json:"observation,omitempty"`
	// Action says what made the move: "set", "delete", "revert", "promote"
	// or "propose" (moves recorded before the field existed have none:
	// ActionOf derives it). In a history, merges of proposals made by a git
	// host show as "merged" and proposal commits as "proposed".
	Action string `json:"action,omitempty"`
	// From is the tag whose snapshot a promotion or a proposal took.
	From string `json:"from,omitempty"`
	// Proposal is the branch (below refs/heads/) a proposed move was
	// written on, for review as a pull request.
	Proposal string `json:"proposal,omitempty"`
	// Base is the tag's tip a proposed move was written on (its parent);
	// a squash or rebase merge of the proposal must keep it as parent.
	Base string `json:"base,omitempty"`
	// Commit is the tag chain commit holding this state (not stored).
	Commit string `json:"-"`
}

// Reference returns uri@tag.
func (t TagState) Reference() string { return t.URI + "@" + t.Tag }

func (s *Store) tagAt(commit gitstore.OID) (*TagState, error) {
	c, err := s.git.Commit(commit)
	if err != nil {
		return nil, fmt.Errorf("tag commit %s: %w", commit, err)
	}
	data, err := s.readFile(c, "tag.json")
	if err != nil {
		return nil, fmt.Errorf("tag commit %s: %w", commit, err)
	}
	var t TagState
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("tag commit %s: %w", commit, err)
	}
	t.Commit = string(commit)
	return &t, nil
}

// brokenTag names the tag whose record does not decode (a commit of another
// kind planted under its ref, an edited tag.json) and points at verify.
func brokenTag(u identity.URI, tag string, err error) error {
	return hint.With(fmt.Errorf("tag %s@%s: %w", u, tag, err),
		"the tag's record is damaged: `readproof verify` names every broken record; restore the tag from a clone (readproof pull) or a backup")
}

// nearTag is err, an error of tag of u, with the hint naming the live tag
// of u nearest to tag when err is ErrUnknownTag and one is near.
func (s *Store) nearTag(u identity.URI, tag string, err error) error {
	if !errors.Is(err, ErrUnknownTag) {
		return err
	}
	tags, lerr := s.Tags(u)
	if lerr != nil {
		return err
	}
	names := make([]string, len(tags))
	for i, t := range tags {
		names[i] = t.Tag
	}
	best := text.Nearest(tag, names)
	if best == "" {
		return err
	}
	return hint.With(err, "did you mean "+u.String()+"@"+best+"? (list the tags with: readproof tag list "+u.String()+")")
}

func unknownTag(u identity.URI, tag string) error {
	return hint.With(fmt.Errorf("%s@%s: %w", u, tag, ErrUnknownTag), "list the tags with: readproof tag list "+u.String())
}

// Tag returns the current state of a tag, or ErrUnknownTag when it does not
// exist or was deleted.
func (s *Store) Tag(u identity.URI, tag string) (*TagState, error) {
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
	t, err := s.tagOf(u, tag, tip)
	if err != nil {
		return nil, err
	}
	if t.Deleted {
		return nil, unknownTag(u, tag)
	}
	return t, nil
}

// tagOf reads the move at commit, the tip of u's tag ref, and refuses a
// record that is not of that tag: a move of another resource's tag (a ref
// copied or pulled into the wrong place) would deliver that resource's
// snapshot as u@tag, under its URI, into a manifest. verify reports the
// same record as broken.
func (s *Store) tagOf(u identity.URI, tag string, commit gitstore.OID) (*TagState, error) {
	t, err := s.tagAt(commit)
	if err != nil {
		return nil, brokenTag(u, tag, err)
	}
	if err := moveOf(u, tag, t, commit); err != nil {
		return nil, err
	}
	return t, nil
}

// moveOf refuses t, the record of commit on the chain of u@tag, when it is
// a move of another tag or records another resource's observation.
func moveOf(u identity.URI, tag string, t *TagState, commit gitstore.OID) error {
	want := u.String()
	if t.URI != want || t.Tag != tag {
		return brokenTag(u, tag, fmt.Errorf("tag commit %s records a move of %s@%s", commit, text.Printable(t.URI), text.Printable(t.Tag)))
	}
	if t.Observation != nil && t.Observation.URI != want {
		return brokenTag(u, tag, fmt.Errorf("tag commit %s records an observation of %s", commit, text.Printable(t.Observation.URI)))
	}
	return nil
}

func (s *Store) resolveTag(u identity.URI) (*Delivery, error) {
	t, err := s.Tag(u, u.Tag)
	if err != nil {
		return nil, s.nearTag(u, u.Tag, err)
	}
	o := t.Observation
	if o == nil {
		o = &Observation{URI: t.URI, Snapshot: t.Snapshot, ContentHash: t.ContentHash}
	}
	return deliveryOf(s, o, manifest.DecisionUseTag, u.Tag)
}

// SetTag points tag at a snapshot of u: the current one when snapshot is
// empty, else a recorded snapshot named by (a prefix of) its id or content
// hash. The move is appended to the tag's history; when the tag already
// holds that observation nothing is written and its last move is returned.
func (s *Store) SetTag(u identity.URI, tag, snapshot string) (*TagState, error) {
	if err := identity.ValidateTag(tag); err != nil {
		return nil, err
	}
	o, _, err := s.findObservation(u, snapshot)
	if err != nil {
		return nil, err
	}
	return s.moveTag(u, tag, o, false, moveMeta{action: ActionSet})
}

// DeleteTag removes a tag. The snapshot stays, manifests that mounted it
// still replay, and the deletion is recorded in the tag's history.
func (s *Store) DeleteTag(u identity.URI, tag string) (*TagState, error) {
	if _, err := s.Tag(u, tag); err != nil {
		if gone := s.deletedTag(u, tag, err); gone != nil {
			return nil, gone
		}
		return nil, s.nearTag(u, tag, err)
	}
	return s.moveTag(u, tag, nil, true, moveMeta{action: ActionDelete})
}

// deletedTag is the error for deleting u@tag again, when err says it is
// unknown and its last move deleted it: when it was deleted (and by whom)
// and where its moves are, so a retried delete (an agent host after a
// timeout) reads as done, not as a tag that never existed. It still wraps
// ErrUnknownTag. nil when the tag was never set.
func (s *Store) deletedTag(u identity.URI, tag string, err error) error {
	if !errors.Is(err, ErrUnknownTag) {
		return nil
	}
	tip, rerr := s.ref(tagRef(u, tag))
	if rerr != nil || tip == "" {
		return nil
	}
	t, terr := s.tagOf(u, tag, tip)
	if terr != nil || !t.Deleted {
		return nil
	}
	by := ""
	if t.Caller != "" {
		by = " by " + text.Printable(t.Caller)
	}
	return hint.With(fmt.Errorf("%s@%s: %w: already deleted at %s%s", u, tag, ErrUnknownTag, t.SetAt.UTC().Format(time.RFC3339), by),
		"see its moves with: readproof tag history "+u.String()+" "+tag+"; bring it back with: readproof tag revert "+u.String()+" "+tag)
}

// RevertTag moves a tag back to where it pointed before its latest move (a
// deleted tag comes back), recording the revert as a new move.
func (s *Store) RevertTag(u identity.URI, tag string) (*TagState, error) {
	hist, err := s.TagHistory(u, tag)
	if err != nil {
		return nil, err
	}
	if len(hist) < 2 {
		return nil, hint.With(fmt.Errorf("%s@%s has no earlier position to go back to", u, tag), "see its moves with: readproof tag history "+u.String()+" "+tag)
	}
	prev := hist[1]
	if prev.Deleted {
		return s.moveTag(u, tag, nil, true, moveMeta{action: ActionRevert})
	}
	o := prev.Observation
	if o == nil {
		o = &Observation{URI: prev.URI, Snapshot: prev.Snapshot, ContentHash: prev.ContentHash}
	}
	return s.moveTag(u, tag, o, false, moveMeta{action: ActionRevert})
}

// tagCaseCollision refuses tag when u has a tag whose name differs from it
// only in letter case: a tag's ref ends in its name, and the two refs are
// one file on the case-insensitive file systems of macOS and Windows (as
// two URIs differing only in case are, which readproof.toml refuses):
// there, moving one would move the other's ref with a move that get then
// refuses as damaged.
func (s *Store) tagCaseCollision(u identity.URI, tag string) error {
	prefix := TagsPrefix + u.Key() + "/"
	refs, err := s.git.Refs(prefix)
	if err != nil {
		return err
	}
	for _, r := range refs {
		if name := strings.TrimPrefix(r.Name, prefix); name != tag && !strings.Contains(name, "/") && strings.EqualFold(name, tag) {
			return hint.With(fmt.Errorf("tag %s@%s: %w: differs only in letter case from %s@%s: their refs would be one file on the case-insensitive file systems of macOS and Windows", u, tag, identity.ErrInvalid, u, name),
				"use the tag "+name+", or a name that differs in more than case")
		}
	}
	return nil
}

// moveMeta is what a move records about where it came from.
type moveMeta struct {
	action, from string
}

func (s *Store) moveTag(u identity.URI, tag string, o *Observation, deleted bool, meta moveMeta) (*TagState, error) {
	ref := tagRef(u, tag)
	if !deleted { // a store that has such a pair can still remove one
		if err := s.tagCaseCollision(u, tag); err != nil {
			return nil, err
		}
	}
	var out *TagState
	err := retry("tag "+tag, func() error {
		tip, err := s.ref(ref)
		if err != nil {
			return err
		}
		st := TagState{URI: u.String(), Tag: tag, SetAt: s.now(), Deleted: deleted, Action: meta.action, From: meta.from, Caller: s.opts.Caller}
		if tip != "" {
			prev, err := s.tagAt(tip)
			if err != nil {
				return brokenTag(u, tag, err)
			}
			if !prev.Deleted {
				st.PreviousSnapshot = prev.Snapshot
			}
			// A set to the observation the tag already holds moves
			// nothing: a retried call (an agent host after a timeout,
			// two clients at once) gets the move that is there, and
			// the history no move from a snapshot to itself, which
			// `tag revert` would then "undo" in place.
			if meta.action == ActionSet && !prev.Deleted && o != nil && sameObservation(prev.Observation, o) {
				out = prev
				return nil
			}
		}
		if o != nil {
			st.Snapshot, st.ContentHash, st.Observation = o.Snapshot, o.ContentHash, o
		}
		var parents []gitstore.OID
		if tip != "" {
			parents = []gitstore.OID{tip}
		}
		msg := fmt.Sprintf("tag %s@%s -> %s\n", u, tag, st.Snapshot)
		if deleted {
			msg = fmt.Sprintf("tag %s@%s deleted\n", u, tag)
		}
		if meta.from != "" {
			msg += fmt.Sprintf("\n%s from %s\n", meta.action, meta.from)
		}
		id, err := s.putTagCommit(st, parents, msg)
		if err != nil {
			return err
		}
		if err := s.git.Update(gitstore.RefUpdate{Name: ref, Old: tip, New: id}); err != nil {
			return err
		}
		st.Commit = string(id)
		out = &st
		return nil
	})
	return out, err
}

// sameObservation reports whether a and b are the same observation: the
// same snapshot read at the same time at the same source revision.
func sameObservation(a, b *Observation) bool {
	return a != nil && b != nil && a.URI == b.URI && a.Snapshot == b.Snapshot && a.SourceRevision == b.SourceRevision && a.ObservedAt.Equal(b.ObservedAt)
}

// putTagCommit writes one tag move: tag.json and, unless the move deletes
// the tag, the snapshot as content.
func (s *Store) putTagCommit(st TagState, parents []gitstore.OID, msg string) (gitstore.OID, error) {
	files := map[string]gitstore.OID{}
	if !st.Deleted {
		files["content"] = gitstore.OID(st.Snapshot)
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return "", err
	}
	blob, err := s.git.PutBlob(append(data, '\n'))
	if err != nil {
		return "", err
	}
	files["tag.json"] = blob
	tree, err := s.putTree(files)
	if err != nil {
		return "", err
	}
	sig := s.signature(st.SetAt)
	return s.git.PutCommit(gitstore.Commit{Tree: tree, Parents: parents, Author: sig, Committer: sig, Message: msg})
}

// ListTags is Tags for a caller that names u (`tag list`,
// readproof_tag_list): a URI with no tags that is neither recorded nor
// declared (a typo) is History's error, not a resource without tags.
func (s *Store) ListTags(u identity.URI) ([]TagState, error) {
	tags, err := s.Tags(u)
	if err != nil || len(tags) > 0 {
		return tags, err
	}
	if _, err := s.History(u); err != nil {
		return nil, err
	}
	return tags, nil
}

// Tags lists the live tags of u, sorted by name.
func (s *Store) Tags(u identity.URI) ([]TagState, error) {
	prefix := TagsPrefix + u.Key() + "/"
	refs, err := s.git.Refs(prefix)
	if err != nil {
		return nil, err
	}
	var out []TagState
	for _, r := range refs {
		name := strings.TrimPrefix(r.Name, prefix)
		if strings.Contains(name, "/") {
			continue
		}
		t, err := s.tagOf(u, name, r.OID)
		if err != nil {
			return nil, err
		}
		if !t.Deleted {
			out = append(out, *t)
		}
	}
	return out, nil
}
