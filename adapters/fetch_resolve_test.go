package adapters

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// oldFetchCheck is the roots check Fetch made before it resolved each path
// once: checkRoots (fspath.Resolve, then the lexical check with the roots
// resolved), then EvalSymlinks of the path and contain (the roots resolved
// again). It returns the refusal or lookup error, or the root and relative
// path Fetch opens.
func oldFetchCheck(s *fsSource, uri string) (root, rel string, err error) {
	if err := s.checkRoots(uri, s.spec.Path); err != nil {
		return "", "", err
	}
	final, err := filepath.EvalSymlinks(s.abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return "", "", fail(uri, ErrNotFound, err, "no file at %s (%s); check path in readproof.toml", s.spec.Path, s.abs)
		}
		return "", "", fail(uri, nil, err, "cannot resolve %s: %v", s.spec.Path, err)
	}
	root, rel, ok := s.contain(final)
	if !ok {
		return "", "", refuse(uri, RuleRoots, "%s resolves to %s, outside the allowed roots (%s); %s", s.spec.Path, final, strings.Join(s.roots, ", "), hintRoots)
	}
	return root, rel, nil
}

// TestFetchResolvesOnce: Fetch, which resolves an existing path and the
// roots once for both of its checks, refuses, fails and reads exactly as
// the two separate checks did, for paths inside and outside the roots,
// through links in and out, missing, dangling and looping.
func TestFetchResolvesOnce(t *testing.T) {
	base := t.TempDir()
	outside := t.TempDir()
	mk := func(dir, name, body string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk(base, "docs/a.md", "inside\n")
	mk(outside, "x.md", "outside\n")
	links := map[string]string{
		"in-link.md":     filepath.Join(base, "docs/a.md"),
		"out-link.md":    filepath.Join(outside, "x.md"),
		"out-dir":        outside,
		"dangling.md":    filepath.Join(base, "nothing.md"),
		"dangling-out":   filepath.Join(outside, "nothing.md"),
		"loop-a":         filepath.Join(base, "loop-b"),
		"loop-b":         filepath.Join(base, "loop-a"),
		"rooted/docs":    filepath.Join(base, "docs"),
		"file-as-dir.md": filepath.Join(base, "docs/a.md"),
	}
	for name, target := range links {
		p := filepath.Join(base, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Skip("no symlinks:", err)
		}
	}
	rootLink := filepath.Join(t.TempDir(), "root-link")
	if err := os.Symlink(base, rootLink); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		"docs/a.md", "in-link.md", "rooted/docs/a.md", "out-link.md", "out-dir/x.md", "dangling.md",
		"dangling-out", "loop-a", "docs/missing.md", "missing/dir/x.md", "../x.md",
		filepath.Join(outside, "x.md"), "file-as-dir.md/x", "docs", "docs/a.md/",
	}
	envs := []Env{
		{BaseDir: base},
		{BaseDir: base, Roots: []string{rootLink}},
		{BaseDir: base, Roots: []string{"docs", filepath.Join(base, "missing-root")}},
	}
	for ei, env := range envs {
		for _, p := range paths {
			src, err := openFilesystem(Spec{Type: "filesystem", Path: p}, env)
			if err != nil {
				t.Fatal(err)
			}
			s, ok := src.(*fsSource)
			if !ok {
				continue // refused at open
			}
			uri := "readproof://demo/" + fmt.Sprint(ei)
			_, _, want := oldFetchCheck(s, uri)
			r, got := s.Fetch(context.Background(), Request{URI: uri})
			if want != nil {
				if got == nil || got.Error() != want.Error() || errors.Is(got, ErrRefused) != errors.Is(want, ErrRefused) || errors.Is(got, ErrNotFound) != errors.Is(want, ErrNotFound) {
					t.Errorf("env %d, %s: Fetch = %v, the two checks gave %v", ei, p, got, want)
				}
				continue
			}
			// past the checks the old path went on to open and read
			if got != nil && (errors.Is(got, ErrRefused) && strings.Contains(got.Error(), "allowed roots")) {
				t.Errorf("env %d, %s: Fetch refused by the roots (%v); the two checks passed", ei, p, got)
			}
			if got == nil && string(r.Content) != "inside\n" {
				t.Errorf("env %d, %s: read %q", ei, p, r.Content)
			}
		}
	}
}
