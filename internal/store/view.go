package store

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
)

// ErrNotAStore is returned by Open for a git repository that is not a
// readproof store: its config lacks the `[readproof] store` marker and its
// journal (main) does not start at a store's root commit. readproof never
// writes to such a repository (a project's own repository, for example).
var ErrNotAStore = errors.New("not a readproof store")

// ErrReadOnlyView is returned by every write to a plain `git clone` of a
// store, which Open reads through its remote-tracking refs.
var ErrReadOnlyView = errors.New("a plain git clone of a store is read-only")

// journalRootMessage starts the message of the root commit that Init
// writes on main; a copy of a store made by stock git is recognised by it.
const journalRootMessage = "initialize readproof store"

// recognise decides whether g, a git repository without the marker, is a
// copy of a readproof store made by stock git (`git clone`, `git clone
// --mirror`, `git clone --bare`), and returns the git view to read it
// through. A plain clone keeps the store's branches as remote-tracking refs,
// so it is read through them (see remoteRefs); a mirror or bare clone has
// them under refs/heads/ and is read as it is. Anything else gives
// ErrNotAStore.
func recognise(g gitstore.Store, path string) (gitstore.Store, error) {
	view, err := plainCloneView(g)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	ok, err := journalRooted(view)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if !ok {
		return nil, hint.With(fmt.Errorf("%s is a git repository but %w: readproof writes only to its own stores", path, ErrNotAStore),
			NotOursHint)
	}
	return view, nil
}

// journalRooted reports whether g holds a readproof journal: main's tip is
// a journal commit (the empty tree, and the message and parent count of one
// of the journal's forms, docs/store-format.md "Journal"), so a copy made by
// stock git is recognised in one commit read, as sync recognises a remote.
// Without main, every branch must be a readproof branch (and there must be
// at least one readproof ref).
func journalRooted(g gitstore.Store) (bool, error) {
	id, err := g.Ref(JournalRef)
	if errors.Is(err, gitstore.ErrNotFound) {
		// No journal: a repository that holds nothing but readproof's
		// records (receipt chains pushed to a bare repository, say).
		own, err := g.Refs("refs/heads/")
		if err != nil {
			return false, err
		}
		tags, err := g.Refs("refs/tags/readproof/")
		if err != nil {
			return false, err
		}
		if len(own)+len(tags) == 0 {
			return false, nil
		}
		for _, r := range own {
			if !strings.HasPrefix(r.Name, "refs/heads/readproof/") {
				return false, nil
			}
		}
		return true, nil
	}
	if err != nil {
		return false, err
	}
	c, err := g.Commit(id)
	if errors.Is(err, gitstore.ErrNotFound) || errors.Is(err, gitstore.ErrCorrupt) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return IsJournalCommit(c) && ViewShape(g, c.Tree) == nil, nil
}

// EmptyTree is git's empty tree (SHA-1 repositories), the tree of every
// journal commit of format 1 and of the journal's root.
const EmptyTree = gitstore.OID("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

// IsJournalCommit reports whether c has the shape of a journal commit: one
// of the journal's forms with its parent count (`initialize readproof
// store` 0, `record run` 1 or 2, `record check` 2, `rename run` 0 or 1,
// `merge journals` 2, `rebuild journal view` 1). Its tree is checked apart
// (ViewShape), since that needs the tree itself.
func IsJournalCommit(c gitstore.Commit) bool {
	head, _, _ := strings.Cut(c.Message, "\n")
	n := len(c.Parents)
	switch {
	case strings.HasPrefix(head, journalRootMessage):
		return n == 0
	case strings.HasPrefix(head, "record run "):
		return n == 1 || n == 2
	case strings.HasPrefix(head, journalCheckPrefix):
		return n == 2
	case strings.HasPrefix(head, journalRenamePrefix):
		return n <= 1
	case head == "merge journals":
		return n == 2
	case head == journalRebuildMessage:
		return n == 1
	}
	return false
}

// ViewShape says why tree cannot be a journal commit's tree, or nil: the
// empty tree (format 1, or no runs yet), or a view (format 2) whose root
// holds the directory documents/ and the file run.json and nothing else.
// Whether the view is the right one is ExpectedJournalTree's question.
func ViewShape(g gitstore.Reader, tree gitstore.OID) error {
	if tree == EmptyTree {
		return nil
	}
	entries, err := g.Tree(tree)
	if err != nil {
		return fmt.Errorf("its tree: %w", err)
	}
	if err := CheckViewRoot(entries); err != nil {
		return err
	}
	if _, err := readViewIndex(g, tree); err != nil {
		return fmt.Errorf("its tree is not a journal view: %w", err)
	}
	return nil
}

// CheckViewRoot is ViewShape's check of a non-empty tree's root entries
// alone (for a checker that has already read them): documents/ and
// run.json, nothing else.
func CheckViewRoot(entries []gitstore.TreeEntry) error {
	index := false
	for _, e := range entries {
		switch {
		case e.Name == ViewDocumentsDir && e.Mode == gitstore.ModeDir:
		case e.Name == ViewIndexFile && e.Mode == gitstore.ModeFile:
			index = true
		default:
			return fmt.Errorf("its tree holds %q, which a journal view does not", e.Name)
		}
	}
	if !index {
		return fmt.Errorf("its tree is not a journal view: %s is missing", ViewIndexFile)
	}
	return nil
}

// plainCloneView returns g, or for a plain (non-mirror) clone of a store,
// whose refs/heads/ does not carry the readproof branches, a read-only view
// of g that reads them and main from the remote-tracking refs of the remote
// that does (refs/remotes/<remote>/readproof/...). Run tags travel under
// refs/tags/ in both cases.
func plainCloneView(g gitstore.Store) (gitstore.Store, error) {
	remote, err := g.Refs("refs/remotes/")
	if err != nil || len(remote) == 0 {
		return g, err
	}
	own, err := g.Refs("refs/heads/readproof/")
	if err != nil {
		return nil, err
	}
	if len(own) > 0 {
		return g, nil
	}
	names := make([]string, 0, len(remote))
	for _, r := range remote {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	var candidates []string
	for _, name := range names {
		rest := strings.TrimPrefix(name, "refs/remotes/")
		remoteName, after, ok := strings.Cut(rest, "/")
		if ok && (strings.HasPrefix(after, "readproof/") || after == "main") {
			if len(candidates) == 0 || candidates[len(candidates)-1] != remoteName {
				candidates = append(candidates, remoteName)
			}
		}
	}
	// origin first: it is what `git clone` names the remote.
	sort.SliceStable(candidates, func(i, j int) bool { return candidates[i] == "origin" && candidates[j] != "origin" })
	for _, name := range candidates {
		v := remoteRefs{Store: g, prefix: "refs/remotes/" + name + "/"}
		if ok, err := journalRooted(v); err != nil {
			return nil, err
		} else if ok {
			return v, nil
		}
	}
	return g, nil
}

// remoteRefs reads refs/heads/X as <prefix>X. It is for reading only.
type remoteRefs struct {
	gitstore.Store
	prefix string
}

func (r remoteRefs) Ref(name string) (gitstore.OID, error) {
	if rest, ok := strings.CutPrefix(name, "refs/heads/"); ok {
		return r.Store.Ref(r.prefix + rest)
	}
	return r.Store.Ref(name)
}

// Refs lists as a store would hold them: the remote's branches appear under
// refs/heads/, and the clone's own branches and other remote-tracking refs
// are not listed.
func (r remoteRefs) Refs(prefix string) ([]gitstore.Ref, error) {
	if prefix == "" {
		prefix = "refs/"
	}
	if rest, ok := strings.CutPrefix(prefix, "refs/heads/"); ok {
		return r.mapped(r.prefix + rest)
	}
	all, err := r.Store.Refs(prefix)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix("refs/heads/", prefix) {
		return all, nil // refs/tags/...: read as they are
	}
	out := make([]gitstore.Ref, 0, len(all))
	for _, ref := range all {
		if !strings.HasPrefix(ref.Name, "refs/heads/") && !strings.HasPrefix(ref.Name, "refs/remotes/") {
			out = append(out, ref)
		}
	}
	heads, err := r.mapped(r.prefix)
	if err != nil {
		return nil, err
	}
	out = append(out, heads...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (r remoteRefs) mapped(prefix string) ([]gitstore.Ref, error) {
	refs, err := r.Store.Refs(prefix)
	if err != nil {
		return nil, err
	}
	out := make([]gitstore.Ref, 0, len(refs))
	for _, ref := range refs {
		rest := strings.TrimPrefix(ref.Name, r.prefix)
		if rest == "HEAD" {
			continue // the remote's symbolic HEAD, not a branch
		}
		out = append(out, gitstore.Ref{Name: "refs/heads/" + rest, OID: ref.OID})
	}
	return out, nil
}

func (r remoteRefs) Update(...gitstore.RefUpdate) error {
	return hint.With(fmt.Errorf("%s: %w: it is read through its remote-tracking refs (%s)", r.Path(), ErrReadOnlyView, strings.TrimSuffix(r.prefix, "/")),
		"make a store you can write to with `readproof clone URL DIR`, or write to the store it was cloned from")
}

// BrokenRefs lists the store's loose ref files under prefix that do not
// parse (gitstore.BrokenRefs), through the view Open chose.
func (s *Store) BrokenRefs(prefix string) ([]gitstore.BrokenRef, error) {
	g := s.git
	if v, ok := g.(remoteRefs); ok {
		g = v.Store
	}
	return gitstore.BrokenRefs(g, prefix)
}

// objects is the repository to read objects from: the one under the view
// Open chose (a remoteRefs view maps refs only), so that readers that need
// the repository itself (gitstore.ReadBlobs) get it.
func (s *Store) objects() gitstore.Reader {
	if v, ok := s.git.(remoteRefs); ok {
		return v.Store
	}
	return s.git
}
