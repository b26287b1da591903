package mcpserver

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestHideKnownPrefixesWithSpaces (session 28's follow-up): a path below a
// directory the server knows whose own path holds a space (the store, the
// policy file, the home, the policy's directory and its roots, from which
// sources read) is hidden whole: the store's, policy's and home's as
// their names, one below the policy's directory or a root as its base
// name, as any other path of the machine. Before, hiding stopped at the
// first space: /srv/Team Share/proj/policies/a.md read
// "Team Share/proj/policies/a.md".
func TestHideKnownPrefixesWithSpaces(t *testing.T) {
	ps := serverPaths{
		{"/srv/Team Share/proj/readproof.toml", "<policy>"},
		{"/srv/Team Share/proj/.readproof", "<store>"},
		{"/data/Shared Docs/team", ""},
		{"/srv/Team Share/proj", ""},
		{"/home/Ann Lee", "~"},
	}
	for in, want := range map[string]string{
		"no file at /srv/Team Share/proj/policies/a.md (a.md)":              "no file at a.md (a.md)",
		"lock /srv/Team Share/proj/.readproof/refs/x.lock: held":            "lock <store>/refs/x.lock: held",
		"parse /srv/Team Share/proj/readproof.toml: line 3":                 "parse <policy>: line 3",
		"probe key /home/Ann Lee/.config/readproof/probe.key: not a key":    "probe key ~/.config/readproof/probe.key: not a key",
		"read /data/Shared Docs/team/notes/b.md.":                           "read b.md.",
		"open\t/data/Shared Docs/team/b.md, then /srv/Team Share/proj/c.md": "open\tb.md, then c.md",
		"below (/srv/Team Share/proj)":                                      "below (proj)",
		// a longer name is not the root's (and /data is not a first
		// directory of the tests' machine)
		"/data/Shared Docs/teamwork/b.md": "/data/Shared Docs/teamwork/b.md",
	} {
		if got := ps.hideOn(in, testLocal); got != want {
			t.Errorf("hide(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

// TestServerPathsKnowPolicyRoots: newServerPaths takes the policy's
// directory and its declared roots as roots.
func TestServerPathsKnowPolicyRoots(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Team Share")
	root := filepath.Join(t.TempDir(), "Shared Docs")
	for _, d := range []string{dir, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	policyFile := filepath.Join(dir, "readproof.toml")
	if err := os.WriteFile(policyFile, []byte("version = 1\n\n[sources]\nroots = [\""+root+"\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ps := newServerPaths(filepath.Join(dir, ".readproof"), policyFile)
	for _, want := range []string{dir, root} {
		if !slices.Contains(ps, namedPath{want, ""}) {
			t.Errorf("server paths %q: %s is not a root", ps, want)
		}
	}
	if got := ps.hide("no file at " + filepath.Join(root, "a", "b.md")); got != "no file at b.md" {
		t.Errorf("a path below a root with a space reads %q", got)
	}
}

// FuzzHideSpacedRoots: whatever the text, no known directory whose path
// holds a space survives as a whole path, and hiding twice changes
// nothing more.
func FuzzHideSpacedRoots(f *testing.F) {
	ps := serverPaths{
		{"/srv/Team Share/proj/.readproof", "<store>"},
		{"/data/Shared Docs/team", ""},
		{"/srv/Team Share/proj", ""},
		{"/home/Ann Lee", "~"},
	}
	for _, s := range []string{"no file at /srv/Team Share/proj/a.md (a.md)", "/data/Shared Docs/team.", "x/srv/Team Share/proj/y",
		"/srv/Team Share/proj/srv/Team Share/proj/x", "(/home/Ann Lee/.config) /srv/Team Share/projX"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := ps.hideOn(s, testLocal)
		if again := ps.hideOn(got, testLocal); again != got {
			t.Fatalf("hide is not stable: %q -> %q -> %q", s, got, again)
		}
		for _, p := range ps {
			if p.name == "" && hideBelow(got, p.path) != got {
				t.Fatalf("hide(%q) = %q keeps %s", s, got, p.path)
			}
		}
	})
}
