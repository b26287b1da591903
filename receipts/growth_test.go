package receipts

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// TestShrinks: a child that holds every path of its parent with the same
// blob (and more) shrinks nothing; a path it lacks, holds as another mode
// or with another blob is reported, in either order of the entries.
func TestShrinks(t *testing.T) {
	t.Parallel()
	trees := map[gitobj.OID][]gitobj.TreeEntry{
		"pleaf": {{Name: "rcpt_a.json", Mode: gitobj.ModeFile, OID: "ba"}, {Name: "rcpt_b.json", Mode: gitobj.ModeFile, OID: "bb"}},
		"p":     {{Name: "x", Mode: gitobj.ModeDir, OID: "pleaf"}, {Name: "y", Mode: gitobj.ModeDir, OID: "same"}},
		// grown: one receipt more, entries in reverse order
		"gleaf": {{Name: "rcpt_c.json", Mode: gitobj.ModeFile, OID: "bc"}, {Name: "rcpt_b.json", Mode: gitobj.ModeFile, OID: "bb"}, {Name: "rcpt_a.json", Mode: gitobj.ModeFile, OID: "ba"}},
		"g":     {{Name: "y", Mode: gitobj.ModeDir, OID: "same"}, {Name: "x", Mode: gitobj.ModeDir, OID: "gleaf"}},
		// shrunk: rcpt_a gone, rcpt_b another blob, y a file
		"sleaf": {{Name: "rcpt_b.json", Mode: gitobj.ModeFile, OID: "bB"}},
		"s":     {{Name: "x", Mode: gitobj.ModeDir, OID: "sleaf"}, {Name: "y", Mode: gitobj.ModeFile, OID: "same"}},
	}
	list := func(id gitobj.OID) ([]gitobj.TreeEntry, error) {
		if l, ok := trees[id]; ok {
			return l, nil
		}
		return nil, fmt.Errorf("no tree %s", id)
	}
	if got, err := Shrinks(list, "p", "g"); err != nil || len(got) != 0 {
		t.Fatalf("grown tree: %v, %v; want nothing", got, err)
	}
	got, err := Shrinks(list, "p", "s")
	if err != nil {
		t.Fatal(err)
	}
	want := []Shrunk{{Path: "x/rcpt_a.json", Gone: true, Was: "ba"}, {Path: "x/rcpt_b.json", Was: "bb", Now: "bB"}, {Path: "y", Gone: true, Was: "same"}}
	if !slices.Equal(got, want) {
		t.Fatalf("shrunk tree: %+v, want %+v", got, want)
	}
	if got, err := Shrinks(list, "p", "p"); err != nil || len(got) != 0 {
		t.Fatalf("same tree: %v, %v", got, err)
	}
}

// BenchmarkShrinksAllGone: a child that lost every path of a 20,000-entry
// parent (what a hostile remote's receipt chain can send). Each lost path
// is looked up in an index of the child's names; a scan of the child for
// each made this quadratic (400 million name comparisons here).
func BenchmarkShrinksAllGone(b *testing.B) {
	const n = 20000
	parent, child := make([]gitobj.TreeEntry, n), make([]gitobj.TreeEntry, n)
	for i := range n {
		parent[i] = gitobj.TreeEntry{Name: fmt.Sprintf("a%06d", i), Mode: gitobj.ModeFile, OID: "x"}
		child[i] = gitobj.TreeEntry{Name: fmt.Sprintf("b%06d", i), Mode: gitobj.ModeFile, OID: "x"}
	}
	list := func(id gitobj.OID) ([]gitobj.TreeEntry, error) {
		if id == "p" {
			return parent, nil
		}
		return child, nil
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := Shrinks(list, "p", "c")
		if err != nil || len(got) != n {
			b.Fatalf("%d shrunk paths, %v; want %d", len(got), err, n)
		}
	}
}

// TestAdded: an append adds one file; a merge that is the union of its
// parents adds nothing, whichever parent holds which file and whichever
// blob of an id both hold it keeps; a merge adds a file none of its
// parents holds, a blob none of them holds at that path, and an entry that
// is a directory where they hold a file. A root commit adds every file.
func TestAdded(t *testing.T) {
	t.Parallel()
	f := func(name, blob string) gitobj.TreeEntry {
		return gitobj.TreeEntry{Name: name, Mode: gitobj.ModeFile, OID: gitobj.OID(blob)}
	}
	d := func(name, tree string) gitobj.TreeEntry {
		return gitobj.TreeEntry{Name: name, Mode: gitobj.ModeDir, OID: gitobj.OID(tree)}
	}
	trees := map[gitobj.OID][]gitobj.TreeEntry{
		// side a: x/a, x/k (blob k1); side b: x/b, x/k (blob k2), y/c
		"ax": {f("a", "ba"), f("k", "k1")}, "a": {d("x", "ax")},
		"bx": {f("b", "bb"), f("k", "k2")}, "by": {f("c", "bc")}, "b": {d("x", "bx"), d("y", "by")},
		// the union, keeping b's k; an append to a
		"ux": {f("a", "ba"), f("b", "bb"), f("k", "k2")}, "u": {d("x", "ux"), d("y", "by")},
		"appx": {f("a", "ba"), f("d", "bd"), f("k", "k1")}, "app": {d("x", "appx")},
		// forged merges: x/e new, x/k a third blob, y a file where b has a directory
		"mx": {f("a", "ba"), f("b", "bb"), f("e", "be"), f("k", "k3")}, "m": {d("x", "mx"), f("y", "by")},
	}
	list := func(id gitobj.OID) ([]gitobj.TreeEntry, error) {
		if l, ok := trees[id]; ok {
			return l, nil
		}
		return nil, fmt.Errorf("no tree %s", id)
	}
	for _, c := range []struct {
		parents []gitobj.OID
		child   gitobj.OID
		want    []string
	}{
		{[]gitobj.OID{"a"}, "app", []string{"x/d"}},
		{[]gitobj.OID{"a", "b"}, "u", nil},
		{[]gitobj.OID{"b", "a"}, "u", nil},
		{[]gitobj.OID{"a", "b"}, "m", []string{"x/e", "x/k", "y"}},
		{nil, "a", []string{"x/a", "x/k"}},
		{[]gitobj.OID{"a"}, "a", nil},
	} {
		got, err := Added(list, c.parents, c.child)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Added(%v, %s) = %q, %v; want %q", c.parents, c.child, got, err, c.want)
		}
	}
}

// TestCheckAdded: an append that adds the receipt its first line names
// passes; one that adds another receipt beside it, or a merge that adds a
// receipt, names that receipt's file.
func TestCheckAdded(t *testing.T) {
	t.Parallel()
	named, other := "rcpt_"+strings.Repeat("a", 32), "rcpt_"+strings.Repeat("b", 32)
	trees := map[gitobj.OID][]gitobj.TreeEntry{
		"one": receiptLeaf(named), "two": receiptLeaf(named, other),
		"a1": {{Name: "a", Mode: gitobj.ModeDir, OID: "one"}}, "a2": {{Name: "a", Mode: gitobj.ModeDir, OID: "two"}},
		"r1": {{Name: "a", Mode: gitobj.ModeDir, OID: "a1"}}, "r2": {{Name: "a", Mode: gitobj.ModeDir, OID: "a2"}},
		"empty": {},
	}
	list := func(id gitobj.OID) ([]gitobj.TreeEntry, error) { return trees[id], nil }
	ref := SessionRefPrefix + "s"
	msg := "receipt " + named + "\n\nsession: s\ntool: t\n"
	wantPath := "a/a/" + other + ".json"
	if got, err := CheckAdded(list, ref, []gitobj.OID{"empty"}, "r1", msg); err != nil || len(got) != 0 {
		t.Fatalf("append of the receipt it names: %v, %v", got, err)
	}
	got, err := CheckAdded(list, ref, []gitobj.OID{"empty"}, "r2", msg)
	if err != nil || len(got) != 1 || got[0].Path != wantPath || !strings.Contains(got[0].Why, "beside") {
		t.Fatalf("append of two receipts: %+v, %v; want %s beside", got, err, wantPath)
	}
	got, err = CheckAdded(list, ref, []gitobj.OID{"r1", "r1"}, "r2", "merge\n")
	if err != nil || len(got) != 1 || got[0].Path != wantPath || !strings.Contains(got[0].Why, "merge") {
		t.Fatalf("merge adding a receipt: %+v, %v; want %s", got, err, wantPath)
	}
}

// TestSameOrderFind: every name of a tree is found, and no other, whatever
// the order of the names asked for and however many miss: the first miss
// is a scan, later ones read an index.
func TestSameOrderFind(t *testing.T) {
	t.Parallel()
	var entries []gitobj.TreeEntry
	for _, n := range []string{"a", "c", "d", "f"} {
		entries = append(entries, gitobj.TreeEntry{Name: n, Mode: gitobj.ModeFile, OID: gitobj.OID("b" + n)})
	}
	for _, asked := range [][]string{
		{"a", "b", "c", "d", "e", "f"},
		{"d", "a", "f", "c"},
		{"b", "f", "a", "e", "c", "x", "d"},
		{"f", "d", "c", "a"},
	} {
		s := sameOrder{entries: entries}
		for _, n := range asked {
			e, ok := s.find(n)
			want := strings.Contains("acdf", n)
			if ok != want || (ok && (e.Name != n || e.OID != gitobj.OID("b"+n))) {
				t.Errorf("asked %v: find(%q) = %+v, %v; want found %v", asked, n, e, ok, want)
			}
		}
	}
}

// TestCheckAddedUnappended: an append (one parent, or none) that does not
// add the receipt its first line names, because its tree holds it with its
// parent's bytes or does not hold it, or that names none and adds no file,
// is reported as the commit (Unappended), a file it adds instead as a
// stray; a merge that adds nothing is not, unless it names a receipt on
// its first line (readproof's merges name none).
func TestCheckAddedUnappended(t *testing.T) {
	t.Parallel()
	named, other := "rcpt_"+strings.Repeat("a", 32), "rcpt_"+strings.Repeat("b", 32)
	trees := map[gitobj.OID][]gitobj.TreeEntry{
		"one": receiptLeaf(named), "oth": receiptLeaf(other),
		"a1": {{Name: "a", Mode: gitobj.ModeDir, OID: "one"}}, "b1": {{Name: "b", Mode: gitobj.ModeDir, OID: "oth"}},
		"r1": {{Name: "a", Mode: gitobj.ModeDir, OID: "a1"}}, "rb": {{Name: "b", Mode: gitobj.ModeDir, OID: "b1"}},
		"empty": {},
	}
	// the named receipt's path holding a symlink, an executable file or a
	// directory (with the receipt inside) in place of a file of mode 100644
	for name, e := range map[gitobj.OID]gitobj.TreeEntry{
		"rlink": {Name: named + ".json", Mode: 0o120000, OID: "blob-" + gitobj.OID(named)},
		"rexec": {Name: named + ".json", Mode: 0o100755, OID: "blob-" + gitobj.OID(named)},
		"rdir":  {Name: named + ".json", Mode: gitobj.ModeDir, OID: "one"},
	} {
		trees[name+"-leaf"] = []gitobj.TreeEntry{e}
		trees[name+"-a"] = []gitobj.TreeEntry{{Name: "a", Mode: gitobj.ModeDir, OID: name + "-leaf"}}
		trees[name] = []gitobj.TreeEntry{{Name: "a", Mode: gitobj.ModeDir, OID: name + "-a"}}
	}
	list := func(id gitobj.OID) ([]gitobj.TreeEntry, error) {
		if e, ok := trees[id]; ok {
			return e, nil
		}
		return nil, fmt.Errorf("no tree %s", id)
	}
	ref := SessionRefPrefix + "s"
	msg := "receipt " + named + "\n\nsession: s\ntool: t\n"
	path := "a/a/" + named + ".json"
	for _, c := range []struct {
		what     string
		parents  []gitobj.OID
		tree     gitobj.OID
		msg      string
		want     []Stray
		contains string
	}{
		{"again", []gitobj.OID{"r1"}, "r1", msg, []Stray{{Path: path, Unappended: true}}, "with its parent's bytes, and it adds no file"},
		{"missing", []gitobj.OID{"empty"}, "empty", msg, []Stray{{Path: path, Unappended: true}}, "does not hold at " + path + ", and it adds no file"},
		{"missing root", nil, "empty", msg, []Stray{{Path: path, Unappended: true}}, "does not hold at"},
		{"instead", []gitobj.OID{"empty"}, "rb", msg, []Stray{{Path: path, Unappended: true}, {Path: "b/b/" + other + ".json"}}, "does not hold at " + path + ":"},
		{"bare", []gitobj.OID{"r1"}, "r1", "tidy up\n", []Stray{{Unappended: true}}, "names no receipt on its first line and adds no file"},
		{"index line on a session chain", []gitobj.OID{"r1"}, "r1", "index " + msg, []Stray{{Unappended: true}}, "names no receipt"},
		{"symlink", []gitobj.OID{"empty"}, "rlink", msg, []Stray{{Path: path, Unappended: true}}, "its tree holds a symlink (mode 120000) at " + path + ", where readproof writes the receipt as a file of mode 100644"},
		{"symlink over the file", []gitobj.OID{"r1"}, "rlink", msg, []Stray{{Path: path, Unappended: true}}, "a symlink (mode 120000)"},
		{"executable", []gitobj.OID{"empty"}, "rexec", msg, []Stray{{Path: path, Unappended: true}}, "its tree holds a file of mode 100755 at"},
		{"directory", []gitobj.OID{"empty"}, "rdir", msg, []Stray{{Path: path, Unappended: true}}, "its tree holds a directory at"},
		{"merge", []gitobj.OID{"r1", "r1"}, "r1", "merge receipts of sessions/s\n", nil, ""},
		{"merge naming a receipt", []gitobj.OID{"r1", "empty"}, "r1", msg, []Stray{{Path: path, Unappended: true}}, "a merge of 2 commits names receipt " + named + " on its first line"},
		{"append", []gitobj.OID{"empty"}, "r1", msg, nil, ""},
	} {
		got, err := CheckAdded(list, ref, c.parents, c.tree, c.msg)
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%s: %+v, %v; want %+v", c.what, got, err, c.want)
			continue
		}
		for i := range got {
			if got[i].Path != c.want[i].Path || got[i].Unappended != c.want[i].Unappended {
				t.Errorf("%s: stray %d is %+v, want %+v", c.what, i, got[i], c.want[i])
			}
		}
		if c.contains != "" && !strings.Contains(got[0].Why, c.contains) {
			t.Errorf("%s: %q does not say %q", c.what, got[0].Why, c.contains)
		}
		if len(got) > 1 && !strings.Contains(got[1].Why, "instead of that receipt") {
			t.Errorf("%s: %q does not say it came instead of the receipt named", c.what, got[1].Why)
		}
	}
}

// receiptLeaf is a leaf tree holding one receipt file for each id, its
// blob named after the id.
func receiptLeaf(ids ...string) []gitobj.TreeEntry {
	var out []gitobj.TreeEntry
	for _, id := range ids {
		out = append(out, gitobj.TreeEntry{Name: id + ".json", Mode: gitobj.ModeFile, OID: gitobj.OID("blob-" + id)})
	}
	return out
}
