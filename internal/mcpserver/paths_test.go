package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testPaths are a server's paths as newServerPaths orders them, without
// reading the file system (the test's home is not /home/alice).
var testPaths = serverPaths{
	{"/home/alice/proj/readproof.toml", "<policy>"},
	{"/home/alice/proj/.readproof", "<store>"},
	{"/home/alice", "~"},
}

// testLocal are the first directories of the paths of the tests' machine
// (onThisMachine reads the real one's).
func testLocal(top string) bool {
	switch top {
	case "/home", "/srv", "/etc", "/var", "/opt", "/tmp", `C:\Users`, `\\fs01\home$`:
		return true
	}
	return false
}

// winPaths are a server's paths on Windows.
var winPaths = serverPaths{
	{`C:\Users\alice\proj\.readproof`, "<store>"},
	{`C:\Users\alice`, "~"},
}

// TestHideOnlyThisMachinesPaths (session 28): what hide shortens is a path
// of this machine: a word that starts with / but whose first directory the
// machine does not have stays (before, "404 for /api/v1/docs" read "404
// for docs"); a file URL of this host is hidden as its path is (before, it
// was kept whole); a Windows path is hidden as a Unix one is (before, kept
// whole).
func TestHideOnlyThisMachinesPaths(t *testing.T) {
	for _, c := range []struct {
		ps      serverPaths
		in, out string
	}{
		{testPaths, "GET https://docs.example/api/v1/docs: 404 for /api/v1/docs", "GET https://docs.example/api/v1/docs: 404 for /api/v1/docs"},
		{testPaths, "the route /v2/items (POST) is gone", "the route /v2/items (POST) is gone"},
		{testPaths, "open /srv/data/docs/a.md and /api/x", "open a.md and /api/x"},
		{testPaths, "file:///home/alice/proj/.readproof/refs/x.lock exists", "<store>/refs/x.lock exists"},
		{testPaths, "clone file:///home/alice/repos/docs.git: no such ref", "clone ~/repos/docs.git: no such ref"},
		{testPaths, "clone file://localhost/srv/repos/My%20Docs.git failed", "clone My Docs.git failed"},
		{testPaths, "file:///srv/a%1b.md", `a\x1b.md`},
		{testPaths, "FILE:///srv/repos/x.git", "x.git"},
		{testPaths, "file://git.example/srv/x.git and file:///api/x", "file://git.example/srv/x.git and file:///api/x"},
		{testPaths, `open C:\Users\bob\docs\a.md: Access is denied.`, `open a.md: Access is denied.`},
		{testPaths, `key=C:/Users/bob/k.key, then D:\data\x.md`, `key=k.key, then D:\data\x.md`},
		{testPaths, `read \\fs01\home$\bob\x.md: denied`, `read x.md: denied`},
		{testPaths, `read \\nas\pub\x.md`, `read \\nas\pub\x.md`},
		{winPaths, `lock C:\Users\alice\proj\.readproof\refs\x.lock: exists`, `lock <store>\refs\x.lock: exists`},
		{winPaths, `probe key C:\Users\alice\AppData\probe.key: not 32 bytes`, `probe key ~\AppData\probe.key: not 32 bytes`},
		{winPaths, `file:///C:/Users/alice/proj/.readproof/x`, `<store>\x`},
	} {
		if got := c.ps.hideOn(c.in, testLocal); got != c.out {
			t.Errorf("hide(%q)\n got %q\nwant %q", c.in, got, c.out)
		}
	}
	// the machine's own: its temporary directory's first directory is
	// there, a made-up one is not
	tmp := filepath.Join(os.TempDir(), "x", "a.md")
	if got := testPaths.hide("open " + tmp); got != "open a.md" {
		t.Errorf("hide(open %s) = %q, want \"open a.md\"", tmp, got)
	}
	if got := testPaths.hide("404 for /readproof-no-such-dir/v1/docs"); got != "404 for /readproof-no-such-dir/v1/docs" {
		t.Errorf("a path this machine does not have: %q", got)
	}
}

// TestHidePaths: the store's directory is <store>, the policy file
// <policy>, the home ~, and any other absolute path its base name, in the
// places a message puts a path; what is not a path stays.
func TestHidePaths(t *testing.T) {
	for in, want := range map[string]string{
		"open /home/alice/proj/.readproof/refs/heads/x.lock: file exists":                "open <store>/refs/heads/x.lock: file exists",
		"policy file /home/alice/proj/readproof.toml: line 3: bad key":                   "policy file <policy>: line 3: bad key",
		"probe key /home/alice/.config/readproof/probe.key: not 32 bytes":                "probe key ~/.config/readproof/probe.key: not 32 bytes",
		"read /srv/data/docs/refunds.md: permission denied":                              "read refunds.md: permission denied",
		"remove it now: `rm /home/alice/proj/.readproof/x.lock` (an operator's command)": "remove it now: `rm <store>/x.lock` (an operator's command)",
		`stat "/etc/readproof/keys/signing.pem"`:                                         `stat "signing.pem"`,
		"the key file (/var/lib/rp/k.key).":                                              "the key file (k.key).",
		"in /opt/x.":                                                                     "in x.",
		"key=/opt/y/z.pem, next":                                                         "key=z.pem, next",
		"/home/alice/proj/.readproof2/x is not the store":                                "~/proj/.readproof2/x is not the store",
		"/home/alicex/y":                                  "y",
		"readproof://demo/policies/refunds@prod":          "readproof://demo/policies/refunds@prod",
		"https://example.com/a/b and file:///c/d":         "https://example.com/a/b and file:///c/d",
		"relative policies/refunds.md and and/or, a / b":  "relative policies/refunds.md and and/or, a / b",
		"the root / and /. and /..":                       "the root / and /. and /..",
		"the home /home/alice.":                           "the home ~.",
		"the store /home/alice/proj/.readproof...":        "the store <store>...",
		"not the home: /home/alice.old/x":                 "not the home: x",
		"no path at all":                                  "no path at all",
		"<store>/objects/ab and ~/x, hidden twice":        "<store>/objects/ab and ~/x, hidden twice",
		"two: /home/alice/proj/.readproof;/tmp/t1/a.lock": "two: <store>;a.lock",
	} {
		if got := testPaths.hideOn(in, testLocal); got != want {
			t.Errorf("hide(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

// FuzzHidePaths: whatever the text, the store's, the policy's and the
// home's absolute paths do not survive as whole paths, and hiding twice
// changes nothing more.
func FuzzHidePaths(f *testing.F) {
	for _, s := range []string{"open /home/alice/proj/.readproof/x.lock: exists", "(/home/alice)", "a /b/c.", "\"/x\" '/y'", "~/z <store>/q",
		"file:///srv/a%1b.md", `C:\Users\a\b.md`, `\\fs01\home$\x`, "file://localhost/home/alice/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := testPaths.hideOn(s, testLocal)
		if again := testPaths.hideOn(got, testLocal); again != got {
			t.Fatalf("hide is not stable: %q -> %q -> %q", s, got, again)
		}
		for _, p := range testPaths {
			if i := strings.Index(got, p.path); i >= 0 && replacePath(got, p.path, p.name) != got {
				t.Fatalf("hide(%q) = %q keeps %s", s, got, p.path)
			}
		}
	})
}

// TestHideLooksUpFewDirectories (session 28, re-read): a text that names
// 100,000 paths costs at most maxLooks stats, one a first directory, and
// every path past them is hidden; a first directory named again is not
// looked up again. Before, each path cost a stat: a hostile text of
// 100,000 " /aN" words cost 100,000 (most of a second).
func TestHideLooksUpFewDirectories(t *testing.T) {
	var b strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&b, " /a%d/x%d", i, i)
	}
	looked := map[string]int{}
	count := func(top string) bool { looked[top]++; return false }
	got := testPaths.hideOn(b.String(), count)
	if len(looked) > maxLooks {
		t.Errorf("%d first directories looked up, want at most %d", len(looked), maxLooks)
	}
	if !strings.HasPrefix(got, " /a0/x0 /a1/x1") || !strings.HasSuffix(got, " x99998 x99999") {
		t.Errorf("the first paths are not the machine's, the last not looked up (hidden): got %q…%q", got[:20], got[len(got)-20:])
	}
	clear(looked)
	testPaths.hideOn(strings.Repeat(" /srv/x", 100_000), count)
	if looked["/srv"] != 1 {
		t.Errorf("/srv looked up %d times, want once", looked["/srv"])
	}
}

// TestHideDirectoryWrittenWithSlash (session 28, re-read): a path of this
// machine that ends in a separator or a "." (a git source's url as a
// policy may write it, /srv/repos/docs.git/, which resources_list,
// provenance and errors name) is hidden as its last name. Before, its base
// name was "", and it was kept whole.
func TestHideDirectoryWrittenWithSlash(t *testing.T) {
	for in, want := range map[string]string{
		"clone /srv/repos/docs.git/: not a repository":    "clone docs.git: not a repository",
		"git · require_fresh — /srv/repos/docs.git/:a.md": "git · require_fresh — docs.git:a.md",
		"url file:///srv/repos/docs.git/ (a mirror)":      "url docs.git (a mirror)",
		"read /srv/docs/./ and /srv/docs//":               "read docs and docs",
		"read /srv/docs/./.":                              "read docs.",
		"under /tmp/x/../":                                "under x",
		`open C:\Users\bob\repos\`:                        `open repos`,
		"the root / and /. and /..":                       "the root / and /. and /..",
	} {
		if got := testPaths.hideOn(in, testLocal); got != want {
			t.Errorf("hide(%q)\n got %q\nwant %q", in, got, want)
		}
	}
	dir := filepath.Join(os.TempDir(), "repos", "docs.git") + "/"
	if got := testPaths.hide("clone " + dir + ": not a repository"); got != "clone docs.git: not a repository" {
		t.Errorf("hide(clone %s) = %q", dir, got)
	}
}

// TestHideLeadingSlashes (session 28, re-read): a path of this machine
// written with two leading slashes (//srv/docs/a.md, which the machine reads
// as /srv/docs/a.md, as a policy may declare it) is hidden as /srv/docs/a.md
// is; a protocol-relative URL's //host/path stays unless the machine has
// /host. Before, a word starting "//" was never a path, and kept whole.
func TestHideLeadingSlashes(t *testing.T) {
	for in, want := range map[string]string{
		"read //srv/docs/a.md: denied":     "read a.md: denied",
		"read ///srv/docs/a.md":            "read a.md",
		"load (//cdn.example/app.js) here": "load (//cdn.example/app.js) here",
		"see //home/alice/proj/.readproof": "see .readproof",
	} {
		if got := testPaths.hideOn(in, testLocal); got != want {
			t.Errorf("hide(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

// TestHideClimbingPaths (session 28, re-read): a relative path that climbs
// out of the directory it is read from (a policy's ../alice-notes/notes.md,
// which an error about its source names) is its last name, as
// resources_list shows it; a relative path below stays. Before, it was
// kept whole.
func TestHideClimbingPaths(t *testing.T) {
	for in, want := range map[string]string{
		"readproof://demo/notes: no file at ../alice-notes/notes.md (notes.md); check path": "readproof://demo/notes: no file at notes.md (notes.md); check path",
		"../bob/x.md is outside the allowed roots (proj, alice-notes)":                      "x.md is outside the allowed roots (proj, alice-notes)",
		"at ../../home/bob/x.md.":                   "at x.md.",
		"at policies/x.md and ./x.md and a/../b.md": "at policies/x.md and ./x.md and a/../b.md",
		"the parent ../ and ..":                     "the parent ../ and ..",
	} {
		if got := testPaths.hideOn(in, testLocal); got != want {
			t.Errorf("hide(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
