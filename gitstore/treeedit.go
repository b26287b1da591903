package gitstore

import (
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// TreeEditor changes a tree incrementally: it reads only the trees along
// the paths it is asked about, and Write writes only the trees whose
// content changed (the changed paths' directories up to the root), so the
// cost of an edit grows with the paths edited, not with the tree's size.
// Files are only added or replaced, never removed. A TreeEditor is not safe
// for concurrent use.
type TreeEditor struct {
	s    Reader
	put  func([]TreeEntry) (OID, error)
	root *editNode
}

type editNode struct {
	id      OID // the stored tree this node started from ("" for a new one)
	entries map[string]*editEntry
	loaded  bool
	dirty   bool
}

type editEntry struct {
	mode Mode
	oid  OID
	sub  *editNode // for directories, once visited
}

// NewTreeEditor starts editing root ("" or the empty tree for an empty
// tree) of s.
func NewTreeEditor(s Store, root OID) *TreeEditor {
	return &TreeEditor{s: s, put: s.PutTree, root: &editNode{id: root}}
}

// NewTreeHasher is a TreeEditor that writes nothing: Write returns the id
// the edited tree would have (a checker compares it with a stored tree).
func NewTreeHasher(r Reader, root OID) *TreeEditor {
	return &TreeEditor{s: r, put: HashTree, root: &editNode{id: root}}
}

// HashTree returns the id PutTree would give entries, writing nothing.
func HashTree(entries []TreeEntry) (OID, error) {
	data, err := encodeTree(entries)
	if err != nil {
		return "", err
	}
	return OID(objectHash(plumbing.TreeObject, data).String()), nil
}

func (t *TreeEditor) load(n *editNode) error {
	if n.loaded {
		return nil
	}
	n.entries = map[string]*editEntry{}
	n.loaded = true
	if n.id == "" {
		return nil
	}
	list, err := t.s.Tree(n.id)
	if err != nil {
		return fmt.Errorf("edit tree %s: %w", n.id, err)
	}
	for _, e := range list {
		n.entries[e.Name] = &editEntry{mode: e.Mode, oid: e.OID}
	}
	return nil
}

// dir returns the node of the directory named by path, or nil when some
// part of path is absent or a file.
func (t *TreeEditor) dir(path []string) (*editNode, error) {
	n := t.root
	for _, name := range path {
		if err := t.load(n); err != nil {
			return nil, err
		}
		e := n.entries[name]
		if e == nil || e.mode != ModeDir {
			return nil, nil
		}
		if e.sub == nil {
			e.sub = &editNode{id: e.oid}
		}
		n = e.sub
	}
	return n, t.load(n)
}

// Lookup returns the mode and id of the entry at path, or mode 0 when there
// is none.
func (t *TreeEditor) Lookup(path ...string) (Mode, OID, error) {
	if len(path) == 0 {
		return ModeDir, t.root.id, nil
	}
	n, err := t.dir(path[:len(path)-1])
	if err != nil || n == nil {
		return 0, "", err
	}
	e := n.entries[path[len(path)-1]]
	if e == nil {
		return 0, "", nil
	}
	return e.mode, e.oid, nil
}

// Set makes path name the blob id, creating directories as needed. A path
// whose directory part crosses a file, or whose last name is a directory,
// is refused: the caller picks another name.
func (t *TreeEditor) Set(id OID, path ...string) error {
	if len(path) == 0 {
		return fmt.Errorf("edit tree: empty path")
	}
	if err := CheckTreeName(path[len(path)-1]); err != nil {
		return fmt.Errorf("edit tree: %w", err)
	}
	if _, err := parseOID(id); err != nil {
		return fmt.Errorf("edit tree: %s: %w", path[len(path)-1], err)
	}
	n := t.root
	var trail []*editNode
	for _, name := range path[:len(path)-1] {
		if err := CheckTreeName(name); err != nil {
			return fmt.Errorf("edit tree: %w", err)
		}
		if err := t.load(n); err != nil {
			return err
		}
		trail = append(trail, n)
		e := n.entries[name]
		switch {
		case e == nil:
			e = &editEntry{mode: ModeDir, sub: &editNode{loaded: true, entries: map[string]*editEntry{}}}
			n.entries[name] = e
		case e.mode != ModeDir:
			return fmt.Errorf("edit tree: %q is a file, not a directory", name)
		case e.sub == nil:
			e.sub = &editNode{id: e.oid}
		}
		n = e.sub
	}
	if err := t.load(n); err != nil {
		return err
	}
	last := path[len(path)-1]
	if e := n.entries[last]; e != nil {
		if e.mode == ModeDir {
			return fmt.Errorf("edit tree: %q is a directory, not a file", last)
		}
		if e.oid == id {
			return nil
		}
	}
	n.entries[last] = &editEntry{mode: ModeFile, oid: id}
	n.dirty = true
	for _, p := range trail {
		p.dirty = true
	}
	return nil
}

// Write stores every changed tree, deepest first, and returns the root's
// id. A tree with no entries is git's empty tree.
func (t *TreeEditor) Write() (OID, error) {
	return t.write(t.root)
}

func (t *TreeEditor) write(n *editNode) (OID, error) {
	if !n.dirty {
		if n.id == "" {
			return t.put(nil)
		}
		return n.id, nil
	}
	names := make([]string, 0, len(n.entries))
	for name := range n.entries {
		names = append(names, name)
	}
	sort.Strings(names)
	list := make([]TreeEntry, 0, len(names))
	for _, name := range names {
		e := n.entries[name]
		if e.mode == ModeDir && e.sub != nil && e.sub.dirty {
			id, err := t.write(e.sub)
			if err != nil {
				return "", err
			}
			e.oid = id
		}
		list = append(list, TreeEntry{Name: name, Mode: e.mode, OID: e.oid})
	}
	id, err := t.put(list)
	if err != nil {
		return "", err
	}
	n.id, n.dirty = id, false
	return id, nil
}

// HashObject returns the id of an object of kind ("blob", "tree",
// "commit") with content data, writing nothing.
func HashObject(kind string, data []byte) OID {
	t, err := plumbing.ParseObjectType(kind)
	if err != nil {
		t = plumbing.BlobObject
	}
	return OID(objectHash(t, data).String())
}
