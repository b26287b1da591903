//go:build unix

package adapters

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
)

// TestFetchBelowRootSameAsFullChecks: a document opened through its root
// with only the path below the root checked (openBelowRoot) reads, refuses
// and fails exactly as the full checks (every link resolved, the roots
// resolved, containment of the result) do: same bytes, content type,
// revision and provenance, same error text and kinds, for plain files and
// through links in the root, in the path, at the end, out of the root into
// another root or outside every root, missing, dangling, looping, not a
// regular file, too large.
func TestFetchBelowRootSameAsFullChecks(t *testing.T) {
	base := t.TempDir()
	other := t.TempDir()   // a second root
	outside := t.TempDir() // no root
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
	mk(base, "docs/b.txt", "text inside\n")
	mk(base, "big.md", string(make([]byte, 4096)))
	mk(other, "o.md", "other root\n")
	mk(outside, "x.md", "outside\n")
	if err := os.Link(filepath.Join(base, "docs/a.md"), filepath.Join(base, "hard.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(base, "sub/deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(base, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"in-link.md":         filepath.Join(base, "docs/a.md"), // absolute, inside
		"rel-link.md":        "docs/a.md",                      // relative, inside
		"ext-link.md":        "docs/b.txt",                     // the name's type differs from the target's
		"out-link.md":        filepath.Join(outside, "x.md"),
		"other-link.md":      filepath.Join(other, "o.md"),
		"out-dir":            outside,
		"other-dir":          other,
		"docs-rel":           "docs",
		"docs-abs":           filepath.Join(base, "docs"),
		"sub/deeper/up":      "../../docs",
		"sub/deeper/escape":  "../../../" + filepath.Base(outside),
		"dangling.md":        filepath.Join(base, "nothing.md"),
		"loop-a":             filepath.Join(base, "loop-b"),
		"loop-b":             filepath.Join(base, "loop-a"),
		"file-as-dir.md":     filepath.Join(base, "docs/a.md"),
		"docs-link-to-fifo":  "fifo.md",
		"sub/deeper/to-base": "../..",
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
		"docs/a.md", "docs/b.txt", "hard.md", "big.md", "fifo.md", "docs", "docs/", "docs/a.md/",
		"in-link.md", "rel-link.md", "ext-link.md", "out-link.md", "other-link.md",
		"out-dir/x.md", "other-dir/o.md", "docs-rel/a.md", "docs-abs/a.md", "docs-rel/b.txt",
		"sub/deeper/up/a.md", "sub/deeper/escape/x.md", "sub/deeper/to-base/docs/a.md",
		"dangling.md", "loop-a", "docs/missing.md", "missing/dir/x.md", "../x.md",
		filepath.Join(outside, "x.md"), filepath.Join(other, "o.md"), filepath.Join(rootLink, "docs/a.md"),
		"file-as-dir.md/x", "docs-link-to-fifo", "sub/deeper/../../docs/a.md",
	}
	envs := []Env{
		{BaseDir: base},
		{BaseDir: base, MaxBytes: 100},
		{BaseDir: base, Roots: []string{rootLink}},
		{BaseDir: base, Roots: []string{"docs", filepath.Join(base, "missing-root")}},
		{BaseDir: base, Roots: []string{base, other}},
		{BaseDir: base, Roots: []string{"sub", "docs", other}},
		{BaseDir: rootLink},
	}
	fast := 0
	for ei, env := range envs {
		for _, p := range paths {
			t.Run(fmt.Sprintf("env%d/%s", ei, p), func(t *testing.T) {
				src, err := openFilesystem(Spec{Type: "filesystem", Path: p}, env)
				if err != nil {
					t.Fatal(err)
				}
				s, ok := src.(*fsSource)
				if !ok {
					t.Skip("refused at open")
				}
				if f, _, ok := s.openBelowRoot(); ok {
					f.Close()
					fast++
				}
				slow := *s
				slow.slowOnly = true
				uri := "readproof://demo/" + fmt.Sprint(ei)
				want, werr := slow.Fetch(context.Background(), Request{URI: uri})
				got, gerr := s.Fetch(context.Background(), Request{URI: uri})
				if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
					t.Fatalf("error %v, the full checks give %v", gerr, werr)
				}
				for _, kind := range []error{ErrRefused, ErrNotFound, ErrTooLarge} {
					if errors.Is(gerr, kind) != errors.Is(werr, kind) {
						t.Errorf("errors.Is(%v, %v) differs from the full checks' %v", gerr, kind, werr)
					}
				}
				var ge, we *Error
				if errors.As(gerr, &ge) != errors.As(werr, &we) || (ge != nil && ge.Rule != we.Rule) {
					t.Errorf("error %#v, the full checks give %#v", ge, we)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("read %+v, the full checks read %+v", got, want)
				}
			})
		}
	}
	if fast == 0 {
		t.Error("no document was opened below its root: the case this test compares never ran")
	}
}

// TestFetchBelowRootTakenForPlainFiles: a plain document under a root is
// opened without the full checks, and a link at the end of the path never
// is (its name is not the file's).
func TestFetchBelowRootTakenForPlainFiles(t *testing.T) {
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "docs/a.md"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("docs/a.md", filepath.Join(base, "link.txt")); err != nil {
		t.Skip("no symlinks:", err)
	}
	open := func(p string) bool {
		src, err := openFilesystem(Spec{Type: "filesystem", Path: p}, Env{BaseDir: base})
		if err != nil {
			t.Fatal(err)
		}
		f, _, ok := src.(*fsSource).openBelowRoot()
		if ok {
			f.Close()
		}
		return ok
	}
	if !open("docs/a.md") {
		t.Error("docs/a.md: not opened below its root")
	}
	if open("link.txt") {
		t.Error("link.txt: a link at the end of the path was opened below the root")
	}
	if open("../a.md") {
		t.Error("../a.md: a path outside the root was opened below it")
	}
}
