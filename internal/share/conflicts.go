package share

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
)

// ConflictReport lists what pulls left in conflict.
type ConflictReport struct {
	Runs []RunConflict `json:"runs"`
	Tags []TagConflict `json:"tags"`
}

// Empty reports whether nothing is in conflict.
func (r *ConflictReport) Empty() bool { return len(r.Runs) == 0 && len(r.Tags) == 0 }

// Conflicts lists the run ids with more than one manifest and the tags that
// moved on both sides, with both positions.
func Conflicts(s *store.Store) (*ConflictReport, error) {
	g := s.Git()
	local, err := readState(g, localPrefixes())
	if err != nil {
		return nil, err
	}
	named := local.named()
	rep := &ConflictReport{Runs: []RunConflict{}, Tags: []TagConflict{}}
	for _, id := range sortedKeys(local.conflicts) {
		l, _ := local.runs.get(id)
		rc := RunConflict{RunID: id, Local: string(l), Others: []string{}}
		for _, m := range sortedOIDs(local.conflicts[id]) {
			if !named[m] {
				rc.Others = append(rc.Others, string(m))
			}
		}
		if len(rc.Others) > 0 {
			rep.Runs = append(rep.Runs, rc)
		}
	}
	tc, err := readTagConflicts(g)
	if err != nil {
		return nil, err
	}
	for _, key := range sortedKeys(tc) {
		u, tag, err := splitTagKey(key)
		if err != nil {
			continue
		}
		c := TagConflict{URI: u.String(), Tag: tag}
		if l := local.tags[key]; l != "" {
			if c.Local, _, err = namedTagAt(g, l); err != nil {
				return nil, err
			}
		}
		if c.Remote, _, err = namedTagAt(g, tc[key]); err != nil {
			return nil, err
		}
		rep.Tags = append(rep.Tags, c)
	}
	return rep, nil
}

// ConflictTagHistory lists the moves of the remote side of a tag conflict,
// newest first (the local side is `tag history`).
func ConflictTagHistory(s *store.Store, u identity.URI, tag string) ([]store.TagState, error) {
	g := s.Git()
	u.Tag = ""
	c, err := g.Ref(ConflictTagsPrefix + tagKey(u, tag))
	if isNotFound(err) {
		return nil, noTagConflict(u, tag)
	}
	if err != nil {
		return nil, err
	}
	var out []store.TagState
	seen := map[gitstore.OID]bool{c: true}
	queue := []gitstore.OID{c}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		t, cm, err := namedTagAt(g, id)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
		for _, p := range cm.Parents {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].SetAt.After(out[j].SetAt) })
	return out, nil
}

func noTagConflict(u identity.URI, tag string) error {
	return hint.With(fmt.Errorf("%s@%s: %w", u, tag, ErrNoConflict), "list conflicts with: readproof conflicts list")
}

// Take values for ResolveTag.
const (
	TakeLocal  = "local"
	TakeRemote = "remote"
)

// ResolveTag settles a tag conflict: it records a new move of the tag whose
// parents are both positions (so every move of either side stays in the
// tag's history and both stores fast-forward to it) and whose value is the
// local or the remote one, then drops the kept remote value. It returns the
// move, its Action store.ActionResolve.
func ResolveTag(s *store.Store, u identity.URI, tag, take string, now time.Time) (*store.TagState, error) {
	if take != TakeLocal && take != TakeRemote {
		return nil, fmt.Errorf("resolve %s@%s: take %q: say local or remote", u, tag, take)
	}
	if err := identity.ValidateTag(tag); err != nil {
		return nil, err
	}
	u.Tag = ""
	g := s.Git()
	key := tagKey(u, tag)
	c, err := g.Ref(ConflictTagsPrefix + key)
	if isNotFound(err) {
		return nil, noTagConflict(u, tag)
	}
	if err != nil {
		return nil, err
	}
	l, err := g.Ref(store.TagsPrefix + key)
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	remote, _, err := tagAt(g, c)
	if err != nil {
		return nil, err
	}
	chosen := remote
	var local *store.TagState
	if l != "" {
		if local, _, err = tagAt(g, l); err != nil {
			return nil, err
		}
		if take == TakeLocal {
			chosen = local
		}
	}
	st := store.TagState{URI: u.String(), Tag: tag, SetAt: now.UTC(), Deleted: chosen.Deleted}
	if local != nil && !local.Deleted {
		st.PreviousSnapshot = local.Snapshot
	}
	entries := []gitstore.TreeEntry{}
	if !chosen.Deleted {
		st.Snapshot, st.ContentHash, st.Observation = chosen.Snapshot, chosen.ContentHash, chosen.Observation
		entries = append(entries, gitstore.TreeEntry{Name: "content", Mode: gitstore.ModeFile, OID: gitstore.OID(chosen.Snapshot)})
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, err
	}
	blob, err := g.PutBlob(append(data, '\n'))
	if err != nil {
		return nil, err
	}
	entries = append(entries, gitstore.TreeEntry{Name: "tag.json", Mode: gitstore.ModeFile, OID: blob})
	tree, err := g.PutTree(entries)
	if err != nil {
		return nil, err
	}
	parents := []gitstore.OID{c}
	if l != "" {
		parents = []gitstore.OID{l, c}
	}
	sig := signature(now)
	id, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: parents, Author: sig, Committer: sig,
		Message: store.ResolveMessage(u, tag, st.Snapshot, take, st.Deleted)})
	if err != nil {
		return nil, err
	}
	err = g.Update(
		gitstore.RefUpdate{Name: store.TagsPrefix + key, Old: l, New: id},
		gitstore.RefUpdate{Name: ConflictTagsPrefix + key, Old: c},
	)
	if err != nil {
		return nil, hint.With(fmt.Errorf("resolve %s@%s: %w", u, tag, err), "the tag moved meanwhile; look again with `readproof conflicts list` and resolve again")
	}
	// the move as a history names it from its commit (tag.json, written
	// above, names no action: ResolveMessage)
	st.Commit, st.Action = string(id), store.ActionResolve
	return &st, nil
}

// Rename is the outcome of RenameRun.
type Rename struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Manifest string `json:"manifest"`
	// Promoted is the conflicting manifest that took the old name, if any.
	Promoted string `json:"promoted,omitempty"`
}

// RenameRun gives a committed manifest the run id newID. The manifest
// commit is untouched (its manifest.json keeps the id it was recorded
// under); only refs move, in one transaction.
//
// With manifestID empty (or naming the local run oldID), the local run
// oldID is renamed; when exactly one conflicting manifest waits under
// oldID, it takes the name oldID. With manifestID naming a conflicting
// manifest of oldID, that manifest gets the name newID and the local run
// keeps oldID. A journal commit "rename run OLD to NEW" (message body
// "manifest <id>") records the rename at time now.
func RenameRun(s *store.Store, oldID, newID, manifestID string, now time.Time) (*Rename, error) {
	out, ups, err := planRename(s, oldID, newID, manifestID, now)
	if err != nil {
		return nil, err
	}
	if err := s.Git().Update(ups...); err != nil {
		return nil, hint.With(fmt.Errorf("rename run %s to %s: %w", oldID, newID, err), "another process changed the store meanwhile; run the rename again")
	}
	return out, nil
}

// planRename is RenameRun up to its one ref transaction: it checks the
// rename, writes the journal commit that records it and returns the ref
// updates in the order they are published (renameUpdates); for a promoting
// rename killed before its last update, the one update left
// (promotionLeft).
func planRename(s *store.Store, oldID, newID, manifestID string, now time.Time) (*Rename, []gitstore.RefUpdate, error) {
	for _, id := range []string{oldID, newID} {
		if err := identity.ValidateRunID(id); err != nil {
			return nil, nil, hint.With(err, "run ids are letters, digits, '.', '_' and '-', starting with a letter or digit")
		}
	}
	if oldID == newID {
		return nil, nil, fmt.Errorf("rename run %s: the new id is the old one: choose another id", oldID)
	}
	g := s.Git()
	l, err := g.Ref(store.RunsPrefix + oldID)
	if err != nil && !isNotFound(err) {
		return nil, nil, err
	}
	refs, err := g.Refs(store.ConflictRunsPrefix + oldID + "/")
	if err != nil {
		return nil, nil, err
	}
	var others []gitstore.OID
	for _, r := range refs {
		run, mid, ok := splitConflict(strings.TrimPrefix(r.Name, store.ConflictRunsPrefix))
		if ok && run == oldID && gitstore.OID(mid) == r.OID && r.OID != l {
			others = append(others, r.OID)
		}
	}
	n, err := g.Ref(store.RunsPrefix + newID)
	if err != nil && !isNotFound(err) {
		return nil, nil, err
	}
	if done, ups, err := promotionLeft(g, oldID, newID, manifestID, l, n, refs); err != nil || done != nil {
		return done, ups, err
	}
	src, fromConflict := l, false
	switch {
	case manifestID == "" || gitstore.OID(manifestID) == l:
		if l == "" {
			if len(others) > 0 {
				return nil, nil, hint.With(fmt.Errorf("rename run %s: no local run of that id, only conflicting manifests", oldID), "name one with --manifest ID (see readproof conflicts list)")
			}
			return nil, nil, hint.With(fmt.Errorf("rename run %s: %w", oldID, store.ErrUnknownRun), "list runs with: readproof run list")
		}
	default:
		found := false
		for _, m := range others {
			if string(m) == manifestID {
				found = true
			}
		}
		if !found {
			return nil, nil, hint.With(fmt.Errorf("rename run %s: manifest %s: %w", oldID, manifestID, ErrNoConflict), "give the run's own manifest or one listed by: readproof conflicts list")
		}
		src, fromConflict = gitstore.OID(manifestID), true
	}
	if n != "" && n != src {
		return nil, nil, hint.With(fmt.Errorf("rename run %s to %s: %w (manifest %s)", oldID, newID, ErrRunExists, n), "choose another new id")
	}
	out := &Rename{From: oldID, To: newID, Manifest: string(src)}
	// The journal records the rename, so an auditor (and verify) can tell a
	// renamed run from a manifest copied under another name.
	tip, err := g.Ref(store.JournalRef)
	if err != nil && !isNotFound(err) {
		return nil, nil, err
	}
	var parents []gitstore.OID
	if tip != "" {
		parents = []gitstore.OID{tip}
	}
	tree, err := store.JournalTree(g, parents, "")
	if err != nil {
		return nil, nil, err
	}
	sig := signature(now)
	j, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: parents, Author: sig, Committer: sig,
		Message: store.JournalRenameMessage(oldID, newID, src)})
	if err != nil {
		return nil, nil, err
	}
	if !fromConflict && len(others) == 1 {
		out.Promoted = string(others[0])
	}
	return out, renameUpdates(oldID, newID, src, l, n, fromConflict, others, tip, j), nil
}

// promotionLeft recognises a promoting rename of oldID to newID killed
// before its last ref update (renameUpdates, step 3): the run ref newID
// names n, the run ref oldID names the promoted manifest l, the conflict ref
// oldID/l (among refs, the conflict refs under oldID) names l too, and the
// journal records the rename of oldID to newID with manifest n. The rename
// again (manifestID empty, or n: the local run renamed) then only deletes
// that conflict ref, writes no second record, and returns what the whole
// rename returned. In any other state done is nil and planRename goes on
// as for a new rename (which refuses a newID that names another manifest).
func promotionLeft(g gitstore.Store, oldID, newID, manifestID string, l, n gitstore.OID, refs []gitstore.Ref) (done *Rename, ups []gitstore.RefUpdate, err error) {
	if l == "" || n == "" || l == n || (manifestID != "" && gitstore.OID(manifestID) != n) {
		return nil, nil, nil
	}
	left := store.ConflictRunRef(oldID, l)
	found := false
	for _, r := range refs {
		if r.Name == left && r.OID == l {
			found = true
		}
	}
	if !found {
		return nil, nil, nil
	}
	tip, err := g.Ref(store.JournalRef)
	if err != nil && !isNotFound(err) {
		return nil, nil, err
	}
	ok, err := store.JournalRecordsRename(g, tip, oldID, newID, n)
	if err != nil || !ok {
		return nil, nil, err
	}
	return &Rename{From: oldID, To: newID, Manifest: string(n), Promoted: string(l)},
		[]gitstore.RefUpdate{{Name: left, Old: l}}, nil
}

// renameUpdates lists the ref updates of a rename of manifest src from run
// oldID to newID, in the order they are published (gitstore renames refs in
// the order given, and a process killed among them leaves a prefix done):
//
//  1. the journal moves to j, the commit that records the rename: verify
//     accepts a run ref naming a manifest that records another run id only
//     through that record, so the record comes before the ref it makes valid
//     (killed here, the rename is recorded and not done: the old name still
//     names the manifest, which verify accepts, and the rename run again
//     completes it);
//  2. the new run ref (unless it already names src);
//  3. then what the new name replaces: the old run ref moves to the one
//     conflicting manifest waiting under oldID (before that manifest's
//     conflict ref goes, so it always has a name; killed in between, the
//     run refs are final and that conflict ref is left, which the rename
//     run again deletes: promotionLeft) or is deleted, or, for a
//     conflicting manifest, its conflict ref is deleted.
//
// l is the old run ref's value, n the new one's ("" when absent) and tip the
// journal's.
func renameUpdates(oldID, newID string, src, l, n gitstore.OID, fromConflict bool, others []gitstore.OID, tip, j gitstore.OID) []gitstore.RefUpdate {
	ups := []gitstore.RefUpdate{{Name: store.JournalRef, Old: tip, New: j}}
	if n == "" {
		ups = append(ups, gitstore.RefUpdate{Name: store.RunsPrefix + newID, New: src})
	}
	switch {
	case fromConflict:
		ups = append(ups, gitstore.RefUpdate{Name: store.ConflictRunRef(oldID, src), Old: src})
	case len(others) == 1:
		ups = append(ups,
			gitstore.RefUpdate{Name: store.RunsPrefix + oldID, Old: l, New: others[0]},
			gitstore.RefUpdate{Name: store.ConflictRunRef(oldID, others[0]), Old: others[0]})
	default:
		ups = append(ups, gitstore.RefUpdate{Name: store.RunsPrefix + oldID, Old: l})
	}
	return ups
}
