package receipts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// Shrunk is a path of a receipt chain commit's parent tree that the
// commit does not hold as its parent does: Gone when the commit lacks it
// (or holds it as another mode), else the commit holds blob Now where the
// parent holds Was.
type Shrunk struct {
	Path     string
	Gone     bool
	Was, Now gitobj.OID
}

// Shrinks compares the tree of a receipt chain commit (child) with the
// tree of one of its parents: chains only grow (an append adds one
// receipt to its parent's tree, a merge is the union of its parents'
// trees), so every path of parent is in child. It returns the paths that
// are not, with the same blob, descending only where the two trees differ
// (an append: the three trees it rewrote and its parent's three). A merge
// keeps one side's blob of an id both sides hold with other bytes, so
// there a changed blob is not by itself a fault. list reads a tree.
func Shrinks(list func(gitobj.OID) ([]gitobj.TreeEntry, error), parent, child gitobj.OID) ([]Shrunk, error) {
	var out []Shrunk
	var walk func(pt, ct gitobj.OID, dirs []string) error
	walk = func(pt, ct gitobj.OID, dirs []string) error {
		if pt == ct {
			return nil
		}
		pe, err := list(pt)
		if err != nil {
			return err
		}
		ce, err := list(ct)
		if err != nil {
			return err
		}
		// Both lists are in git's order (sameOrder: a tree whose paths
		// are gone, scanned again for each, was quadratic).
		have := sameOrder{entries: ce}
		for _, e := range pe {
			path := strings.Join(append(dirs, e.Name), "/")
			n, ok := have.find(e.Name)
			switch {
			case !ok || n.Mode != e.Mode:
				out = append(out, Shrunk{Path: path, Gone: true, Was: e.OID})
			case e.OID == n.OID:
			case e.Mode == gitobj.ModeDir:
				if err := walk(e.OID, n.OID, append(dirs, e.Name)); err != nil {
					return err
				}
			default:
				out = append(out, Shrunk{Path: path, Was: e.OID, Now: n.OID})
			}
		}
		return nil
	}
	return out, walk(parent, child, nil)
}

// Added compares the tree of a receipt chain commit (child) with the trees
// of its parents (none for a root commit) and returns the paths of child's
// files that no parent holds at the same path with the same blob and mode.
// It descends only where child's subtree is none of its parents': an
// append reads the three trees it rewrote, a merge the directories both
// sides added to. Below the receipt layout's two directory levels an
// entry is reported as a path without being read. list reads a tree.
func Added(list func(gitobj.OID) ([]gitobj.TreeEntry, error), parents []gitobj.OID, child gitobj.OID) ([]string, error) {
	var out []string
	var walk func(ct gitobj.OID, pts []gitobj.OID, dirs []string) error
	walk = func(ct gitobj.OID, pts []gitobj.OID, dirs []string) error {
		if slices.Contains(pts, ct) {
			return nil
		}
		ce, err := list(ct)
		if err != nil {
			return err
		}
		have := make([]sameOrder, len(pts))
		for i, pt := range pts {
			if have[i].entries, err = list(pt); err != nil {
				return err
			}
		}
		for _, e := range ce {
			var sub []gitobj.OID
			held := false
			for i := range have {
				p, ok := have[i].find(e.Name)
				if !ok || p.Mode != e.Mode {
					continue
				}
				if p.OID == e.OID {
					held = true
					break
				}
				sub = append(sub, p.OID)
			}
			switch {
			case held:
			case e.Mode == gitobj.ModeDir && len(dirs) < 2:
				if err := walk(e.OID, sub, append(dirs, e.Name)); err != nil {
					return err
				}
			default:
				out = append(out, strings.Join(append(dirs, e.Name), "/"))
			}
		}
		return nil
	}
	return out, walk(child, parents, nil)
}

// sameOrder finds names in a tree's entries, asked for in the order of
// another tree's (git's order, which both have): mostly the entry after
// the last one found; the first miss scans the entries (an append's tree
// has one name its parent's lacks, and a scan is cheaper than an index);
// any later one is looked up in an index of the names, built then.
type sameOrder struct {
	entries []gitobj.TreeEntry
	next    int
	missed  bool
	names   map[string]int
}

func (s *sameOrder) find(name string) (gitobj.TreeEntry, bool) {
	if s.next < len(s.entries) && s.entries[s.next].Name == name {
		s.next++
		return s.entries[s.next-1], true
	}
	if !s.missed {
		s.missed = true
		for i, e := range s.entries {
			if e.Name == name {
				s.next = i + 1
				return e, true
			}
		}
		return gitobj.TreeEntry{}, false
	}
	if s.names == nil {
		s.names = make(map[string]int, len(s.entries))
		for i, e := range s.entries {
			s.names[e.Name] = i
		}
	}
	i, ok := s.names[name]
	if !ok {
		return gitobj.TreeEntry{}, false
	}
	s.next = i + 1
	return s.entries[i], true
}

// Stray is a file a receipt chain commit adds that did not reach the chain
// by its own append commit: Path is the file, Why says how it came. When
// Unappended is set, the stray is the commit itself: an append (one
// parent, or none) that does not add the receipt its first line names,
// whose path Path is ("" when the line names none); Why says what the
// commit's tree holds there.
type Stray struct {
	Path, Why  string
	Unappended bool
}

// CheckAdded checks how the receipts a commit of chain ref (a session or
// index chain ref) adds reached the chain (docs/receipts.md, "Storage"):
// each by its own append commit, whose binding line CheckAppendBinding
// checks. An append (one parent, or none) adds the receipt its first line
// names, at its path, and nothing else; a merge adds nothing: each file of
// its tree is a file of one of its parents. parents are the trees of the
// commit's parents, tree its own, msg its message. It returns the files
// that came otherwise, and an append that does not add the receipt it
// names as a file of mode 100644 (or adds nothing and names none), or a
// merge that names one, as a Stray with Unappended set: readers take the
// commit naming a receipt as its append commit, whose binding line is the
// receipt's, so a commit naming one it does not add would rebind it. list
// reads a tree.
func CheckAdded(list func(gitobj.OID) ([]gitobj.TreeEntry, error), ref string, parents []gitobj.OID, tree gitobj.OID, msg string) ([]Stray, error) {
	added, err := Added(list, parents, tree)
	if err != nil {
		return nil, err
	}
	var out []Stray
	id, ok, pathOf := appendLine(ref, msg)
	if len(parents) > 1 {
		if ok && ValidID(id) {
			out = append(out, Stray{Path: strings.Join(pathOf(id), "/"), Unappended: true, Why: fmt.Sprintf("a merge of %d commits names receipt %s on its first line: readproof's merges name no receipt, and readers take the commit naming a receipt for its append commit, whose binding line is the receipt's; this one would rebind it", len(parents), id)})
		}
		for _, p := range added {
			out = append(out, Stray{Path: p, Why: fmt.Sprintf("a merge of %d commits adds it, and none of them holds it: a merge only joins the receipts its parents hold, each appended by its own commit, whose binding line is checked; this file came in without one", len(parents))})
		}
		return out, nil
	}
	named := ""
	if ok && ValidID(id) {
		named = strings.Join(pathOf(id), "/")
	}
	// what the tree holds at the named path, read once
	var at gitobj.TreeEntry
	held := false
	if named != "" {
		listAt := func(id gitobj.OID, _ string) ([]gitobj.TreeEntry, error) { return list(id) }
		if at, held, err = entryAt(listAt, tree, pathOf(id)); err != nil {
			return nil, err
		}
	}
	namedAdded := named != "" && slices.Contains(added, named)
	// what the tree holds at the named path when it is no receipt file
	// (readproof writes one of mode 100644 there): that adds no receipt
	notFile := ""
	if namedAdded && at.Mode != gitobj.ModeFile {
		namedAdded, notFile = false, modeName(at.Mode)
	}
	switch {
	case named == "" && len(added) == 0:
		return []Stray{{Unappended: true, Why: "a commit with one parent (or none) names no receipt on its first line and adds no file: readproof writes such a commit only to append the receipt its first line names"}}, nil
	case named != "" && !namedAdded:
		why := fmt.Sprintf("the commit's first line names receipt %s, which its tree does not hold at %s", id, named)
		switch {
		case notFile != "":
			why = fmt.Sprintf("the commit's first line names receipt %s, and its tree holds %s at %s, where readproof writes the receipt as a file of mode 100644", id, notFile, named)
		case held:
			why = fmt.Sprintf("the commit's first line names receipt %s, which its tree holds at %s with its parent's bytes", id, named)
		}
		if len(added) == 0 {
			why += ", and it adds no file"
		}
		why += ": readproof appends a receipt by a commit that adds it, and readers take the commit naming a receipt for its append commit, whose binding line is the receipt's; this one would rebind it"
		out = append(out, Stray{Path: named, Why: why, Unappended: true})
	}
	for _, p := range added {
		switch {
		case p == named:
		case named == "":
			out = append(out, Stray{Path: p, Why: "an append commit that names no receipt adds it"})
		case !namedAdded:
			out = append(out, Stray{Path: p, Why: fmt.Sprintf("the commit naming receipt %s on its first line adds it instead of that receipt: readproof appends one receipt a commit, named on its first line, and checks that commit's binding line; this file came in without one", id)})
		default:
			out = append(out, Stray{Path: p, Why: fmt.Sprintf("the commit appending receipt %s adds it beside that receipt: readproof appends one receipt a commit, named on its first line, and checks that commit's binding line; this file came in without one", id)})
		}
	}
	return out, nil
}

// entryAt returns the entry tree holds at path, ok false when it holds
// none; list reads a tree, given the place it stands at ("" the root,
// "/d1" the directory d1 of it, ...).
func entryAt(list func(id gitobj.OID, place string) ([]gitobj.TreeEntry, error), tree gitobj.OID, path []string) (gitobj.TreeEntry, bool, error) {
	cur := gitobj.TreeEntry{Mode: gitobj.ModeDir, OID: tree}
	place := ""
	for _, name := range path {
		if cur.Mode != gitobj.ModeDir {
			return gitobj.TreeEntry{}, false, nil
		}
		entries, err := list(cur.OID, place)
		if err != nil {
			return gitobj.TreeEntry{}, false, err
		}
		j := slices.IndexFunc(entries, func(e gitobj.TreeEntry) bool { return e.Name == name })
		if j < 0 {
			return gitobj.TreeEntry{}, false, nil
		}
		cur = entries[j]
		place += "/" + name
	}
	return cur, true, nil
}

// modeName says what a tree entry of mode m is, for a report.
func modeName(m gitobj.Mode) string {
	switch m {
	case gitobj.ModeDir:
		return "a directory"
	case 0o120000:
		return "a symlink (mode 120000)"
	case 0o160000:
		return "a submodule commit (mode 160000)"
	}
	return fmt.Sprintf("a file of mode %o", uint32(m))
}
