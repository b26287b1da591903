package share

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/strictjson"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
)

func isNotFound(err error) bool { return errors.Is(err, gitstore.ErrNotFound) }

func readJSONFile(g gitstore.Store, c gitstore.Commit, path string, v any) error {
	id, err := gitstore.FileAt(g, c.Tree, path)
	if err != nil {
		return err
	}
	data, err := g.BlobAtMost(id, store.MaxBytesOf(path))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	// A member named twice, or in other case than the format spells it,
	// would be read one way here and another by jq or git show: refused
	// as bundles, receipts and verdicts are (internal/strictjson). A
	// record as readproof writes it (MarshalIndent, a newline) names each
	// member once, as spelt: when the bytes are that, the check (twice the
	// decoding's cost) is not needed.
	if enc, err := json.MarshalIndent(v, "", "  "); err == nil && len(data) == len(enc)+1 && bytes.Equal(data[:len(enc)], enc) && data[len(enc)] == '\n' {
		return nil
	}
	if err := strictjson.Check(data, strictjson.Type(reflect.TypeOf(v))); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// checkBlob reads a snapshot blob and compares it with a recorded content
// hash and size (size < 0: not recorded).
func checkBlob(g gitstore.Store, snapshot, hash string, size int64) error {
	got, err := readSnapshotFact(g, snapshot, size)
	if err != nil {
		return err
	}
	return got.match(snapshot, hash, size)
}

// blob is checkBlob, hashing each snapshot once per verification (v nil:
// every time): the commits of a chain mostly record the same snapshot (a
// document observed again unchanged), and each was hashed again, so a
// clone of 60 observations of an 8 MB document hashed 480 MB.
func (v verifiedSet) blob(g gitstore.Store, snapshot, hash string, size int64) error {
	if v == nil {
		return checkBlob(g, snapshot, hash, size)
	}
	return v.check(fmt.Sprintf("snapshot %s %d", hash, size), gitstore.OID(snapshot), func() error { return checkBlob(g, snapshot, hash, size) })
}

// checkManifest verifies a manifest commit as replay would: manifest.json
// decodes, and every entry's blob exists, hashes to its content_hash, has
// its size, and is the file the entry names in the tree.
func checkManifest(g gitstore.Store, id gitstore.OID) (*manifest.Manifest, error) {
	return checkManifestWith(g, id, nil)
}

// checkManifestWith is checkManifest with the hashes of snapshots already
// read (facts, shared by the workers of one verification; nil for none): a
// snapshot id names its bytes, so each is read and hashed once however
// many manifests deliver it, and each manifest's record is still compared
// with what the bytes hash to.
func checkManifestWith(g gitstore.Store, id gitstore.OID, facts *snapshotFacts) (*manifest.Manifest, error) {
	// A run ref may name any object: one too large for a commit is
	// refused before it is inflated (commitFields).
	c, err := commitFields(g, id) // the tree is all this needs
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", id, err)
	}
	// Each tree of the manifest is read and decoded once, however many
	// entries look a file up in it (FileAt reads the root tree per call).
	// Subtrees, which manifests recording the same documents share, are
	// read once per verification (facts).
	trees := &treeMemo{Reader: g, trees: map[gitstore.OID][]gitstore.TreeEntry{}, root: c.Tree, facts: facts}
	blob, err := gitstore.FileAt(trees, c.Tree, "manifest.json")
	if err != nil {
		return nil, fmt.Errorf("manifest %s: no manifest.json: %w", id, err)
	}
	// Its size is checked before it is inflated: a forged manifest padded
	// to gigabytes is refused without holding them.
	data, err := g.BlobAtMost(blob, manifest.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: manifest.json: %w", id, err)
	}
	m, err := manifest.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", id, err)
	}
	m.ID = string(id)
	for _, e := range m.Entries {
		if err := facts.check(g, e.Snapshot, e.ContentHash, e.Bytes); err != nil {
			return m, fmt.Errorf("manifest %s (run %s) entry %d %s: %w", id, m.RunID, e.Position, e.URI, err)
		}
		if e.File != "" {
			inTree, err := gitstore.FileAt(trees, c.Tree, e.File)
			if err != nil {
				return m, fmt.Errorf("manifest %s (run %s) entry %d %s: file %s: %w", id, m.RunID, e.Position, e.URI, e.File, err)
			}
			if inTree != gitstore.OID(e.Snapshot) {
				return m, fmt.Errorf("manifest %s (run %s) entry %d %s: tree file %s is %s, the entry records snapshot %s", id, m.RunID, e.Position, e.URI, e.File, inTree, e.Snapshot)
			}
		}
	}
	// The trees this reads are the ones the lookups above read (trees).
	p, err := store.ManifestTreeExtra(trees.Tree, c.Tree, m.Entries)
	if err != nil {
		return m, fmt.Errorf("manifest %s (run %s): %w", id, m.RunID, err)
	}
	if p != "" {
		return m, fmt.Errorf("manifest %s (run %s): tree entry %s is not part of the run: no entry records it, yet `git show` and `git diff` would show it with the run (%s); %s", id, m.RunID, text.Printable(p), store.ManifestTreeRule, handWritten(p, id))
	}
	return m, nil
}

// treeMemo is a Reader that keeps the trees it read: the same entries, in
// the same order, as a second read would return; a failed read is not kept
// (it fails again, with the same error). Not safe for concurrent use.
// Trees below root are looked up in facts first (when not nil), shared by
// every manifest of one verification: a tree id names its bytes, which the
// reader checked against the id when it first read them.
type treeMemo struct {
	gitstore.Reader
	trees map[gitstore.OID][]gitstore.TreeEntry
	root  gitstore.OID
	facts *snapshotFacts
}

func (m *treeMemo) Tree(id gitstore.OID) ([]gitstore.TreeEntry, error) {
	if t, ok := m.trees[id]; ok {
		return t, nil
	}
	if id != m.root && m.facts != nil {
		if t, ok := m.facts.tree(id); ok {
			m.trees[id] = t
			return t, nil
		}
	}
	t, err := m.Reader.Tree(id)
	if err == nil {
		m.trees[id] = t
		if id != m.root && m.facts != nil {
			m.facts.keepTree(id, t)
		}
	}
	return t, err
}

// observationAt reads observation.json of a resource chain commit.
func observationAt(g gitstore.Store, id gitstore.OID) (*store.Observation, gitstore.Commit, error) {
	c, err := g.Commit(id)
	if err != nil {
		return nil, c, fmt.Errorf("observation %s: %w", id, err)
	}
	var o store.Observation
	if err := readJSONFile(g, c, "observation.json", &o); err != nil {
		return nil, c, fmt.Errorf("observation %s: %w", id, err)
	}
	return &o, c, nil
}

// checkObservation verifies an observation (a resource chain's commit): its content file is the
// observed snapshot, which hashes to the recorded content hash.
func checkObservation(g gitstore.Store, id gitstore.OID, uri string, verified verifiedSet) error {
	o, c, err := observationAt(g, id)
	if err != nil {
		return err
	}
	if o.URI != uri {
		return fmt.Errorf("observation %s: observation of %s on the chain of %s", id, text.Printable(o.URI), uri)
	}
	// The root tree is read once, as FileAt would read it for content.
	entries, err := g.Tree(c.Tree)
	if err != nil {
		return fmt.Errorf("observation %s of %s: %w", id, o.URI, err)
	}
	if p := store.ObservationTreeExtra(entries); p != "" {
		return fmt.Errorf("observation %s of %s: tree entry %s is not part of the observation: no reader reads it, yet `git show` of the chain would show it with the observation (%s); %s", id, o.URI, text.Printable(p), store.ObservationTreeRule, handWritten(p, id))
	}
	content := contentIn(entries)
	if content == "" {
		return fmt.Errorf("observation %s of %s: %w", id, o.URI, fmt.Errorf("content: %w", gitstore.ErrNotFound))
	}
	if string(content) != o.Snapshot {
		return fmt.Errorf("observation %s of %s: content is %s, observation.json records %s", id, o.URI, content, o.Snapshot)
	}
	if err := verified.blob(g, o.Snapshot, o.ContentHash, o.Bytes); err != nil {
		return fmt.Errorf("observation %s of %s: %w", id, o.URI, err)
	}
	return nil
}

// contentIn is the blob of the file "content" in a record's root tree
// entries, as gitstore.FileAt finds it (the tree read once for the
// record's check and its content), or "" when there is none.
func contentIn(entries []gitstore.TreeEntry) gitstore.OID {
	for _, e := range entries {
		if e.Name == "content" && e.Mode == gitstore.ModeFile {
			return e.OID
		}
	}
	return ""
}

// checkObservations checks every commit new on a resource chain (reachable
// from tip, not from old: "" for none) as an observation (checkObservation;
// a merge's tree is the tree of one of its tips): `verify` checks each
// commit of the chain, so a forged observation below a good tip would be
// adopted into a store it then calls broken.
// Each is an observation of the chain's own URI, as verify requires: a ref
// that names another chain's records is refused, also when its commits are
// known (they passed as that chain's), so a commit passes once per chain.
func checkObservations(ctx context.Context, g gitstore.Store, t *gitstore.Transport, key string, tip, old gitstore.OID, verified verifiedSet) []string {
	u, err := keyURI(key)
	if err != nil {
		return []string{fmt.Sprintf("observations of %s: %v", key, err)}
	}
	uri := u.String()
	return checkChainCommits(ctx, g, t, "observations of "+key, "observation of "+uri, func(g gitstore.Store, id gitstore.OID, verified verifiedSet) error {
		return checkObservation(g, id, uri, verified)
	}, tip, old, verified)
}

// checkTagMoves is checkObservations for a tag chain: every commit new on
// it is checked as a tag move (checkTag).
// Each is a move of the chain's own URI and tag, as verify requires.
func checkTagMoves(ctx context.Context, g gitstore.Store, t *gitstore.Transport, key string, tip, old gitstore.OID, verified verifiedSet) []string {
	u, tag, err := splitTagKey(key)
	if err != nil {
		return []string{fmt.Sprintf("tag moves of %s: %v", key, err)}
	}
	uri := u.String()
	return checkChainCommits(ctx, g, t, "tag moves of "+key, "tag "+uri+"@"+tag, func(g gitstore.Store, id gitstore.OID, verified verifiedSet) error {
		return checkTagOf(g, id, uri, tag, verified)
	}, tip, old, verified)
}

// checkChainCommits checks each commit reachable from tip and not from old
// as kind (once per pull: verified).
func checkChainCommits(ctx context.Context, g gitstore.Store, t *gitstore.Transport, what, kind string, check func(gitstore.Store, gitstore.OID, verifiedSet) error, tip, old gitstore.OID, verified verifiedSet) []string {
	commits, err := revList(ctx, g, t, tip, old)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", what, err)}
	}
	var failures []string
	for _, c := range commits {
		if err := verified.check(kind, c.ID, func() error { return check(g, c.ID, verified) }); err != nil {
			failures = append(failures, err.Error())
		}
	}
	return failures
}

// tagAt reads tag.json of a tag chain commit.
func tagAt(g gitstore.Store, id gitstore.OID) (*store.TagState, gitstore.Commit, error) {
	c, err := g.Commit(id)
	if err != nil {
		return nil, c, fmt.Errorf("tag move %s: %w", id, err)
	}
	var t store.TagState
	if err := readJSONFile(g, c, "tag.json", &t); err != nil {
		return nil, c, fmt.Errorf("tag move %s: %w", id, err)
	}
	t.Commit = string(id)
	return &t, c, nil
}

// namedTagAt is tagAt for a move shown to the user: a record that names no
// action (one written by `conflicts resolve` or a pull's merge, or before
// tag.json had an action) is named as `tag history` names it from the
// move's commit.
func namedTagAt(g gitstore.Store, id gitstore.OID) (*store.TagState, gitstore.Commit, error) {
	t, c, err := tagAt(g, id)
	if err == nil && t.Action == "" {
		t.Action = store.ActionOf(t, c, true)
	}
	return t, c, err
}

// checkTag verifies a tag move (a tag chain's commit): a live tag's content file is its
// snapshot, which hashes to the recorded content hash.
func checkTag(g gitstore.Store, id gitstore.OID, verified verifiedSet) error {
	return checkTagOf(g, id, "", "", verified)
}

// checkTagOf is checkTag for a move on the chain of uri@tag ("" for any).
func checkTagOf(g gitstore.Store, id gitstore.OID, uri, tag string, verified verifiedSet) error {
	t, c, err := tagAt(g, id)
	if err != nil {
		return err
	}
	if uri != "" && (t.URI != uri || t.Tag != tag) {
		return fmt.Errorf("tag move %s: move of %s on the chain of %s@%s", id, text.Printable(t.URI+"@"+t.Tag), uri, tag)
	}
	if t.Observation != nil && t.Observation.URI != t.URI {
		// get refuses it, and verify: it would put that URI in a manifest
		return fmt.Errorf("tag move %s of %s: the observation copy is of %s", id, text.Printable(t.Reference()), text.Printable(t.Observation.URI))
	}
	// The root tree is read once, as FileAt would read it for content.
	entries, err := g.Tree(c.Tree)
	if err != nil {
		return fmt.Errorf("tag move %s of %s: %w", id, t.Reference(), err)
	}
	if p := store.TagTreeExtra(entries); p != "" {
		return fmt.Errorf("tag move %s of %s: tree entry %s is not part of the tag move: no reader reads it, yet `git show` of the tag's branch would show it with the move (%s); %s", id, t.Reference(), text.Printable(p), store.TagTreeRule, handWritten(p, id))
	}
	content := contentIn(entries)
	if t.Deleted {
		if content != "" {
			// verify reports it too: `git show` would show a deleted tag's content
			return fmt.Errorf("tag move %s of %s: a deletion carries content %s (%s); %s", id, t.Reference(), content, store.TagTreeRule, handWritten("content", id))
		}
		return nil
	}
	if content == "" {
		return fmt.Errorf("tag move %s of %s: %w", id, t.Reference(), fmt.Errorf("content: %w", gitstore.ErrNotFound))
	}
	if string(content) != t.Snapshot {
		return fmt.Errorf("tag move %s of %s: content is %s, tag.json records %s", id, t.Reference(), content, t.Snapshot)
	}
	if err := verified.blob(g, t.Snapshot, t.ContentHash, -1); err != nil {
		return fmt.Errorf("tag move %s of %s: %w", id, t.Reference(), err)
	}
	return nil
}

// checkRunNames checks that every run ref a pull or clone would write
// (runs: id and manifest, each manifest verified already) names a manifest
// recorded under its run id, or one the journal from heads records renamed
// to that id (docs/sync.md, "Renaming a run"): any other name is one
// `verify` calls broken, so a remote that names another run's manifest
// "evil" does not get it adopted. The journal's renames are read through
// renames: once, and only when a name differs.
func checkRunNames(g gitstore.Store, runs []RunRef, verified verifiedSet, renames *journalRenames) ([]string, error) {
	var failures []string
	for _, r := range runs {
		m := gitstore.OID(r.Manifest)
		if verified[verifiedKey{recordsRun + r.RunID, m}] {
			continue
		}
		man, err := checkManifest(g, m)
		if err != nil {
			failures = append(failures, err.Error())
			continue
		}
		if man.RunID == r.RunID {
			continue
		}
		leads, err := renames.leads(m, man.RunID, r.RunID)
		if err != nil {
			return nil, err
		}
		if !leads {
			failures = append(failures, fmt.Sprintf("run %s names manifest %s, which records run %s, and the journal records no rename of it to %s", r.RunID, m, man.RunID, r.RunID))
		}
	}
	return failures, nil
}

// journalRenames is the renames the journal from heads records
// (store.JournalRenames), read at the first question and kept for the
// others, however many checkRunNames calls ask.
type journalRenames struct {
	g     gitstore.Store
	heads []gitstore.OID
	read  bool
	m     map[gitstore.OID]map[string][]string
	// manifests read by away (recordManifest)
	manifests map[string]*manifest.Manifest
}

// of returns the renames the journal records of manifest m
// (store.JournalRenames), reading the journal on the first call.
func (j *journalRenames) of(m gitstore.OID) (map[string][]string, error) {
	if !j.read {
		var err error
		if j.m, err = store.JournalRenames(j.g, j.heads); err != nil {
			return nil, err
		}
		j.read = true
	}
	return j.m[m], nil
}

// leads reports whether the journal records renames of manifest m leading
// from run id from to run id to (store.RenameLeads).
func (j *journalRenames) leads(m gitstore.OID, from, to string) (bool, error) {
	edges, err := j.of(m)
	return err == nil && store.RenameLeads(edges, from, to), err
}

// away reports whether the journal records manifest m, which records run
// id from, renamed away from it (store.RenamedAway). m is read only when
// the journal records a rename of it away from from.
func (j *journalRenames) away(m gitstore.OID, from string) (bool, error) {
	edges, err := j.of(m)
	if err != nil || len(edges[from]) == 0 {
		return false, err
	}
	if j.manifests == nil {
		j.manifests = map[string]*manifest.Manifest{}
	}
	man := recordManifest(j.g, string(m), j.manifests)
	return man != nil && store.RenamedAway(edges, man.RunID, from), nil
}
