package store

import (
	"fmt"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/manifest"
)

// TestManifestTreeExtra: a manifest tree holding exactly manifest.json and
// the entries' files passes; any other entry is named by its path, and
// only the trees on the way to expected files are read.
func TestManifestTreeExtra(t *testing.T) {
	t.Parallel()
	f := func(name string) gitstore.TreeEntry {
		return gitstore.TreeEntry{Name: name, Mode: gitstore.ModeFile, OID: "b"}
	}
	d := func(name string, id gitstore.OID) gitstore.TreeEntry {
		return gitstore.TreeEntry{Name: name, Mode: gitstore.ModeDir, OID: id}
	}
	entries := []manifest.Entry{{File: "content/demo/a"}, {File: "content/demo/x/b"}, {File: "content/demo/a~2"}, {File: "content/other/c@v1"}}
	good := map[gitstore.OID][]gitstore.TreeEntry{
		"root":    {d("content", "content"), f("manifest.json")},
		"content": {d("demo", "demo"), d("other", "other")},
		"demo":    {f("a"), f("a~2"), d("x", "x")},
		"x":       {f("b")},
		"other":   {f("c@v1")},
	}
	with := func(tree gitstore.OID, add ...gitstore.TreeEntry) map[gitstore.OID][]gitstore.TreeEntry {
		out := map[gitstore.OID][]gitstore.TreeEntry{}
		for k, v := range good {
			out[k] = append([]gitstore.TreeEntry(nil), v...)
		}
		out[tree] = append(out[tree], add...)
		out["planted"] = []gitstore.TreeEntry{f("secret")}
		return out
	}
	manifestAsDir := with("root")
	manifestAsDir["root"] = []gitstore.TreeEntry{d("content", "content"), d("manifest.json", "planted")}
	for _, tc := range []struct {
		name  string
		trees map[gitstore.OID][]gitstore.TreeEntry
		want  string
	}{
		{"exact", good, ""},
		{"file at the root", with("root", f("NOTES.md")), "NOTES.md"},
		{"file beside an entry", with("demo", f("b")), "content/demo/b"},
		{"directory of files", with("x", d("more", "planted")), "content/demo/x/more"},
		{"empty directory", with("content", d("empty", "empty")), "content/empty"},
		{"executable at an entry's path", with("other", gitstore.TreeEntry{Name: "c@v1", Mode: 0o100755, OID: "b"}), "content/other/c@v1"},
		{"link", with("root", gitstore.TreeEntry{Name: "l", Mode: 0o120000, OID: "b"}), "l"},
		{"manifest.json a directory", manifestAsDir, "manifest.json"},
	} {
		read := map[gitstore.OID]bool{}
		got, err := ManifestTreeExtra(func(id gitstore.OID) ([]gitstore.TreeEntry, error) {
			read[id] = true
			if t, ok := tc.trees[id]; ok {
				return t, nil
			}
			return nil, fmt.Errorf("tree %s: %w", id, gitstore.ErrNotFound)
		}, "root", entries)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
		if read["planted"] || read["empty"] {
			t.Errorf("%s: read a tree no entry leads to", tc.name)
		}
	}
	// A directory whose files no entry records is itself not part of the run.
	if got, _ := ManifestTreeExtra(func(id gitstore.OID) ([]gitstore.TreeEntry, error) { return good[id], nil }, "root", entries[:3]); got != "content/other" {
		t.Errorf("entry missing from the manifest: got %q, want content/other", got)
	}
}

// TestObservationTreeExtra: content, observation.json and resource.json as
// files pass; any other entry, or one of them of another mode, is named.
func TestObservationTreeExtra(t *testing.T) {
	t.Parallel()
	f := func(name string, mode gitstore.Mode) gitstore.TreeEntry {
		return gitstore.TreeEntry{Name: name, Mode: mode, OID: "b"}
	}
	good := []gitstore.TreeEntry{f("content", gitstore.ModeFile), f("observation.json", gitstore.ModeFile), f("resource.json", gitstore.ModeFile)}
	if got := ObservationTreeExtra(good); got != "" {
		t.Errorf("exact tree: got %q", got)
	}
	for _, tc := range []struct {
		extra gitstore.TreeEntry
		want  string
	}{
		{f("NOTES.md", gitstore.ModeFile), "NOTES.md"},
		{f("more", gitstore.ModeDir), "more"},
		{f("link", 0o120000), "link"},
	} {
		if got := ObservationTreeExtra(append(append([]gitstore.TreeEntry(nil), good...), tc.extra)); got != tc.want {
			t.Errorf("%s: got %q", tc.want, got)
		}
	}
	exec := append([]gitstore.TreeEntry{f("content", 0o100755)}, good[1:]...)
	if got := ObservationTreeExtra(exec); got != "content" {
		t.Errorf("executable content: got %q", got)
	}
}

// TestTagTreeExtra: tag.json and content as files pass; any other entry,
// or one of them of another mode, is named.
func TestTagTreeExtra(t *testing.T) {
	t.Parallel()
	f := func(name string, mode gitstore.Mode) gitstore.TreeEntry {
		return gitstore.TreeEntry{Name: name, Mode: mode, OID: "b"}
	}
	for _, tc := range []struct {
		entries []gitstore.TreeEntry
		want    string
	}{
		{[]gitstore.TreeEntry{f("content", gitstore.ModeFile), f("tag.json", gitstore.ModeFile)}, ""},
		{[]gitstore.TreeEntry{f("tag.json", gitstore.ModeFile)}, ""},
		{[]gitstore.TreeEntry{f("NOTES.md", gitstore.ModeFile), f("tag.json", gitstore.ModeFile)}, "NOTES.md"},
		{[]gitstore.TreeEntry{f("content", gitstore.ModeDir), f("tag.json", gitstore.ModeFile)}, "content"},
		{[]gitstore.TreeEntry{f("tag.json", 0o120000)}, "tag.json"},
	} {
		if got := TagTreeExtra(tc.entries); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.entries, got, tc.want)
		}
	}
}

// TestVerdictTreeExtra: verdicts.json as a file passes; any other entry,
// or verdicts.json of another mode, is named.
func TestVerdictTreeExtra(t *testing.T) {
	t.Parallel()
	f := func(name string, mode gitstore.Mode) gitstore.TreeEntry {
		return gitstore.TreeEntry{Name: name, Mode: mode, OID: "b"}
	}
	for _, tc := range []struct {
		entries []gitstore.TreeEntry
		want    string
	}{
		{[]gitstore.TreeEntry{f(VerdictsFile, gitstore.ModeFile)}, ""},
		{[]gitstore.TreeEntry{f("NOTES.md", gitstore.ModeFile), f(VerdictsFile, gitstore.ModeFile)}, "NOTES.md"},
		{[]gitstore.TreeEntry{f(VerdictsFile, 0o100755)}, VerdictsFile},
	} {
		if got := VerdictTreeExtra(tc.entries); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.entries, got, tc.want)
		}
	}
}
