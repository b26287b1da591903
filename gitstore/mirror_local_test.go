package gitstore

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
)

// TestInitMirrorMatchesGoGit: the mirror made without go-git's root
// package has the files go-git's PlainInit(dir, true) made, with the same
// bytes, so a mirror made by an older readproof and one made now are alike.
func TestInitMirrorMatchesGoGit(t *testing.T) {
	t.Parallel()
	ours, theirs := filepath.Join(t.TempDir(), "m"), filepath.Join(t.TempDir(), "m")
	if err := initMirror(ours); err != nil {
		t.Fatal(err)
	}
	if _, err := gogit.PlainInit(theirs, true); err != nil {
		t.Fatal(err)
	}
	list := func(root string) map[string]string {
		out := map[string]string{}
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, p)
			if d.IsDir() {
				out[rel+"/"] = ""
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[rel] = string(b)
			return nil
		})
		return out
	}
	a, b := list(ours), list(theirs)
	for k, v := range b {
		if a[k] != v {
			t.Errorf("%s: ours %q, go-git's %q", k, a[k], v)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			t.Errorf("%s: only in ours", k)
		}
	}
	if err := checkMirror(ours); err != nil {
		t.Errorf("checkMirror on a new mirror: %v", err)
	}
	if _, err := gogit.PlainOpen(ours); err != nil {
		t.Errorf("go-git cannot open our mirror: %v", err)
	}
	if err := initMirror(ours); err == nil {
		t.Error("initMirror over an existing repository succeeded")
	}
	for _, dir := range []string{filepath.Join(t.TempDir(), "missing"), t.TempDir()} {
		if err := checkMirror(dir); err != errNoMirror {
			t.Errorf("checkMirror(%s) = %v, want errNoMirror", dir, err)
		}
		if _, err := gogit.PlainOpen(dir); err != gogit.ErrRepositoryNotExists {
			t.Errorf("go-git's PlainOpen(%s) = %v", dir, err)
		}
	}
}

// TestMirrorTransports: http and https get the client go-git's
// transport/client gave them (the caller's client when there is one), file
// stock git's upload-pack, git and ssh the mirror's own dialling
// transport, and a scheme go-git did not know is still refused with its
// message.
func TestMirrorTransports(t *testing.T) {
	t.Parallel()
	m := &Mirror{}
	ctx := context.Background()
	for _, u := range []string{"https://example.com/r.git", "http://example.com/r.git"} {
		ep, err := transport.NewEndpoint(u)
		if err != nil {
			t.Fatal(err)
		}
		want, err := client.NewClient(ep)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := m.transport(ctx, ep); err != nil || got != want {
			t.Errorf("%s: %T %v, want go-git's %T", u, got, err, want)
		}
	}
	for _, u := range []string{"ssh://git@example.com/r.git", "git@example.com:r.git", "git://example.com/r.git"} {
		ep, err := transport.NewEndpoint(u)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := m.transport(ctx, ep); err != nil {
			t.Errorf("%s: %v", u, err)
		} else if _, ok := got.(dialTransport); !ok {
			t.Errorf("%s: %T, want the dialling transport", u, got)
		}
	}
	for _, u := range []string{"/srv/r.git", "file:///srv/r.git", "r.git"} {
		ep, err := transport.NewEndpoint(u)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := m.transport(ctx, ep); err != nil || got != (localTransport{}) {
			t.Errorf("%s: %T %v, want the local transport", u, got, err)
		}
	}
	guarded := &Mirror{opts: MirrorOptions{HTTPClient: &http.Client{}}}
	ep, _ := transport.NewEndpoint("https://example.com/r.git")
	if got, _ := guarded.transport(ctx, ep); got == transport.Transport(nil) || got == any(client.Protocols["https"]) {
		t.Errorf("https with a client of the caller's: %T", got)
	}
	ep = &transport.Endpoint{Protocol: "ftp", Host: "example.com", Path: "/r.git"}
	_, err := m.transport(ctx, ep)
	_, want := client.NewClient(ep)
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("ftp: %v, go-git said %v", err, want)
	}
}

// TestUploadPackFirstLine: the line of upload-pack's stderr that explains
// a failure is the one go-git's listener picked: the first that is not a
// "remote:" banner (^remote:( =*){0,1}$), "" when stderr is empty.
func TestUploadPackFirstLine(t *testing.T) {
	t.Parallel()
	banner := regexp.MustCompile("^remote:( =*){0,1}$")
	pick := func(s string) string { // go-git's scanner loop
		if s == "" {
			return ""
		}
		for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			l = strings.TrimSuffix(l, "\r")
			if !banner.MatchString(l) {
				return l
			}
		}
		return ""
	}
	for _, s := range []string{
		"", "\n", "fatal: '/x' does not appear to be a git repository\n", "remote:\nremote: ===\nfatal: no\n",
		"remote: = =\nx", "remote:  \ny\n", "remote: =a\n", "remote:x\n", "\nfatal: late\n", "a\r\nb\n",
	} {
		var f firstBytes
		f.Write([]byte(s))
		if got, want := f.firstLine(), pick(s); got != want {
			t.Errorf("%q: %q, go-git's %q", s, got, want)
		}
		for _, l := range strings.Split(s, "\n") {
			if isRemoteBanner(l) != banner.MatchString(l) {
				t.Errorf("banner %q: %v", l, isRemoteBanner(l))
			}
		}
	}
	var f firstBytes
	f.Write([]byte(strings.Repeat("x", 5000)))
	if n := len(f.firstLine()); n != 4096 {
		t.Errorf("kept %d bytes of stderr, want 4096", n)
	}
}

// TestMirrorLocalPathLikeAnOption: a local repository named like an option
// of upload-pack, given as a relative path, is fetched.
func TestMirrorLocalPathLikeAnOption(t *testing.T) {
	up := upstream(t)
	dir := t.TempDir()
	if err := os.Rename(up, filepath.Join(dir, "-strict")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	m, err := OpenMirror(t.TempDir(), "-strict", MirrorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fetch(context.Background()); err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if content, _, _, err := m.ResolveFile("main", "doc.md", 100); err != nil || string(content) != "v1\n" {
		t.Fatalf("ResolveFile: %q, %v", content, err)
	}
}

// TestCheckMirrorFormatMatchesGoGit: a mirror whose config names a format
// version or extensions go-git's PlainOpen refused is refused with the
// same text (and then made again by Fetch).
func TestCheckMirrorFormatMatchesGoGit(t *testing.T) {
	t.Parallel()
	refused := 0
	defer func() {
		if refused < 4 {
			t.Errorf("go-git refused %d of the configs: the cases no longer test a refusal", refused)
		}
	}()
	for _, extra := range []string{
		"", "\trepositoryformatversion = 0\n", "\trepositoryformatversion = 1\n", "\trepositoryformatversion = 2\n",
		"\trepositoryformatversion = 0\n[extensions]\n\tnoop = true\n",
		"\trepositoryformatversion = 0\n[extensions]\n\tpartialClone = origin\n",
		"\trepositoryformatversion = 0\n[extensions]\n\tworktreeConfig = true\n\tnoop-v1 = x\n",
		"\trepositoryformatversion = 1\n[extensions]\n\tnoop-v1 = true\n\tNoop = true\n",
		"\trepositoryformatversion = 1\n[extensions]\n\tobjectFormat = sha256\n",
		"[extensions]\n\tpreciousObjects = true\n",
		"\trepositoryformatversion = 1\n[extensions]\n",
	} {
		dir := filepath.Join(t.TempDir(), "m")
		if err := initMirror(dir); err != nil {
			t.Fatal(err)
		}
		cfg := "[core]\n\tbare = true\n" + extra
		if err := os.WriteFile(filepath.Join(dir, "config"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		ours := checkMirror(dir)
		_, theirs := gogit.PlainOpen(dir)
		if theirs != nil {
			refused++
		}
		if fmt.Sprint(ours) != fmt.Sprint(theirs) {
			t.Errorf("config %q: %v, go-git's PlainOpen: %v", cfg, ours, theirs)
		}
	}
}
