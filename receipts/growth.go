package receipts

import (
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
		// Both lists are in git's order, so a match is mostly the entry
		// after the last one matched; any other is looked up in an index
		// of the child's names, built on the first miss (a tree whose
		// paths are gone, scanned again for each, was quadratic).
		j := 0
		var names map[string]int
		for _, e := range pe {
			path := strings.Join(append(dirs, e.Name), "/")
			var n gitobj.TreeEntry
			ok := false
			if j < len(ce) && ce[j].Name == e.Name {
				n, ok, j = ce[j], true, j+1
			} else {
				if names == nil {
					names = make(map[string]int, len(ce))
					for i, c := range ce {
						names[c.Name] = i
					}
				}
				if i, found := names[e.Name]; found {
					n, ok, j = ce[i], true, i+1
				}
			}
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
