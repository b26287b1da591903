package fspath

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestResolveDanglingLink: a link whose target does not exist is judged by
// where it points, like a link whose target exists; a missing rest after it
// is appended; a loop of dangling links is an error, not a hang.
func TestResolveDanglingLink(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	for _, d := range []string{in, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(out, "present"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := func(name, target string) string {
		p := filepath.Join(in, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ path, want string }{
		{link("present", "../out/present"), filepath.Join(out, "present")},
		{link("absent", "../out/absent"), filepath.Join(out, "absent")},
		{link("absabs", filepath.Join(out, "absent")), filepath.Join(out, "absent")},
		{filepath.Join(link("dirlink", "../out/nodir"), "file"), filepath.Join(out, "nodir", "file")},
		{link("chain", "absent"), filepath.Join(out, "absent")},
	} {
		got, err := Resolve(tc.path)
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%s) = %q, %v; want %q", tc.path, got, err, tc.want)
		}
		if Within(in, got) {
			t.Errorf("Resolve(%s) = %q lies inside %s", tc.path, got, in)
		}
	}
	if got, err := Resolve(filepath.Join(in, "missing", "file")); err != nil || got != filepath.Join(in, "missing", "file") {
		t.Errorf("Resolve of a missing path without links = %q, %v", got, err)
	}
	link("loop1", "loop2")
	link("loop2", "loop1")
	if got, err := Resolve(filepath.Join(in, "loop1")); err == nil {
		t.Errorf("Resolve of a link loop = %q, want an error", got)
	}
}

func TestWithinAndResolve(t *testing.T) {
	for _, c := range []struct {
		dir, p string
		want   bool
	}{
		{"/a", "/a", true}, {"/a", "/a/b", true}, {"/a", "/ab", false},
		{"/a/b", "/a", false}, {"/a", "/b/../a/c", true}, {"/a", "/..a", false},
	} {
		if got := Within(filepath.Clean(c.dir), filepath.Clean(c.p)); got != c.want {
			t.Errorf("Within(%q, %q) = %v", c.dir, c.p, got)
		}
	}
	root := t.TempDir()
	real, _ := filepath.EvalSymlinks(root)
	os.Symlink(filepath.Join(real, "target"), filepath.Join(root, "link"))
	os.Mkdir(filepath.Join(root, "target"), 0o700)
	got, err := Resolve(filepath.Join(root, "link", "missing", "k"))
	if want := filepath.Join(real, "target", "missing", "k"); err != nil || got != want {
		t.Errorf("Resolve = %q, %v; want %q", got, err, want)
	}
}

// EvalSymlinks answers as filepath.EvalSymlinks for a path the kernel
// resolves, and fails with ELOOP at once for a loop, in Resolve too.
func TestEvalSymlinksLoop(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"link": "file", "loop1": "loop2", "loop2": "loop1", "dangling": "absent"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Skip("no symlinks:", err)
		}
	}
	for _, p := range []string{"file", "link", "dangling", "absent", "link/x"} {
		p = filepath.Join(dir, p)
		got, err := EvalSymlinks(p)
		want, werr := filepath.EvalSymlinks(p)
		if got != want || (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Errorf("EvalSymlinks(%s) = %q, %v; filepath.EvalSymlinks gives %q, %v", p, got, err, want, werr)
		}
	}
	for _, p := range []string{"loop1", "loop1/x", "loop2/x/y"} {
		p = filepath.Join(dir, p)
		if got, err := EvalSymlinks(p); !errors.Is(err, syscall.ELOOP) {
			t.Errorf("EvalSymlinks(%s) = %q, %v; want ELOOP", p, got, err)
		}
		if got, err := Resolve(p); !errors.Is(err, syscall.ELOOP) {
			t.Errorf("Resolve(%s) = %q, %v; want ELOOP", p, got, err)
		}
	}
}
