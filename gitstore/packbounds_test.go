package gitstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// manyBlobs makes a repository whose one commit holds n small distinct
// files and, if noise > 0, one more of noise random (incompressible)
// bytes, written with git fast-import.
func manyBlobs(t *testing.T, n, noise int) string {
	t.Helper()
	git, err := findGit()
	if err != nil {
		t.Skip("git is not installed")
	}
	dir := filepath.Join(t.TempDir(), "up")
	mirrorGit(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	var in strings.Builder
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("file %d\n", i)
		fmt.Fprintf(&in, "blob\nmark :%d\ndata %d\n%s\n", i+1, len(body), body)
	}
	if noise > 0 {
		b := make([]byte, noise)
		rand.Read(b)
		fmt.Fprintf(&in, "blob\nmark :%d\ndata %d\n%s\n", n+1, len(b), b)
	}
	in.WriteString("commit refs/heads/main\ncommitter T <t@example.test> 1700000000 +0000\ndata 2\nc\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&in, "M 100644 :%d f/%d.md\n", i+1, i)
	}
	if noise > 0 {
		fmt.Fprintf(&in, "M 100644 :%d noise.bin\n", n+1)
	}
	in.WriteString("\n")
	cmd := exec.Command(git, "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "HOME="+dir)
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	return dir
}

// fetchAllocs fetches a new mirror of up under opts and returns the bytes
// allocated meanwhile and the error.
func fetchAllocs(t *testing.T, up string, opts MirrorOptions) (*Mirror, uint64, error) {
	t.Helper()
	m, err := OpenMirror(t.TempDir(), up, opts)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err = m.Fetch(context.Background())
	runtime.ReadMemStats(&after)
	return m, after.TotalAlloc - before.TotalAlloc, err
}

// noPack checks that a refused fetch left no pack and no spooled file.
func noPack(t *testing.T, m *Mirror) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(m.Dir(), "objects", "pack", "*"))
	spooled, _ := filepath.Glob(filepath.Join(m.Dir(), receivedPrefix+"*"))
	for _, p := range append(left, spooled...) {
		if !strings.HasSuffix(p, ".keep") {
			t.Errorf("a refused fetch left %s", p)
		}
	}
}

// A remote whose pack holds more objects than the bound is refused from
// the pack's header, before any object is read: a few tiny objects each
// cost go-git's index about 470 bytes, so millions of them, sent fast,
// cost gigabytes before the timeout (n blobs, two trees and a commit
// here). The same repository fetches under a
// bound that admits it.
func TestMirrorRefusesPackOverObjectCount(t *testing.T) {
	const n = 20000
	up := manyBlobs(t, n, 0)
	m, alloc, err := fetchAllocs(t, up, MirrorOptions{MaxPackObjects: 1000})
	if !errors.Is(err, ErrRepoTooLarge) {
		t.Fatalf("Fetch = %v, want ErrRepoTooLarge", err)
	}
	want := fmt.Sprintf("holds %d objects, over the limit of 1000", n+3)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	noPack(t, m)
	m2, full, err := fetchAllocs(t, up, MirrorOptions{MaxPackObjects: n + 3})
	if err != nil {
		t.Fatalf("Fetch under a bound that admits the pack: %v", err)
	}
	if got, _, _, err := m2.ResolveFile("", "f/7.md", 100); err != nil || string(got) != "file 7\n" {
		t.Fatalf("ResolveFile = %q, %v", got, err)
	}
	// The refused fetch stopped before the objects: it allocated a small
	// part of what fetching them did.
	t.Logf("refused fetch: %d bytes allocated; admitted fetch: %d", alloc, full)
	if alloc > full/4 {
		t.Errorf("the refused fetch allocated %d bytes, the whole fetch %d: the objects were read", alloc, full)
	}
}

// A remote whose pack is larger than the byte bound is refused as soon as
// the byte after the bound arrives: the pack is not spooled whole to disk,
// nor read into memory.
func TestMirrorRefusesPackOverBytes(t *testing.T) {
	up := manyBlobs(t, 3, 8<<20)
	m, alloc, err := fetchAllocs(t, up, MirrorOptions{MaxPackBytes: 1 << 20})
	if !errors.Is(err, ErrRepoTooLarge) {
		t.Fatalf("Fetch = %v, want ErrRepoTooLarge", err)
	}
	if want := "over the 1048576-byte limit"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	noPack(t, m)
	t.Logf("refused fetch: %d bytes allocated", alloc)
	if alloc > 4<<20 {
		t.Errorf("the refused fetch allocated %d bytes of an 8 MiB pack: it was read past the bound", alloc)
	}
	if _, _, err := fetchAllocs(t, up, MirrorOptions{MaxPackBytes: 9 << 20}); err != nil {
		t.Fatalf("Fetch under a bound that admits the pack: %v", err)
	}
}

// The pack bounds derive from the object bound when none is set, and a
// huge object bound does not overflow them.
func TestMirrorPackBoundsDefaults(t *testing.T) {
	for _, c := range []struct {
		opts MirrorOptions
		want packBounds
	}{
		{MirrorOptions{}, packBounds{100 << 20, 1000 << 20, 512000}},
		{MirrorOptions{MaxObjectBytes: 1 << 30}, packBounds{1 << 30, 10 << 30, 5 << 20}},
		{MirrorOptions{MaxObjectBytes: 1 << 61}, packBounds{1 << 61, math.MaxInt64, math.MaxInt64 / 2048}},
		{MirrorOptions{MaxPackBytes: 4096}, packBounds{100 << 20, 4096, 2}},
		{MirrorOptions{MaxPackBytes: 100, MaxPackObjects: 7}, packBounds{100 << 20, 100, 7}},
		{MirrorOptions{MaxPackBytes: 100}, packBounds{100 << 20, 100, 1}},
	} {
		if got := mirrorPackBounds(c.opts); got != c.want {
			t.Errorf("mirrorPackBounds(%+v) = %+v, want %+v", c.opts, got, c.want)
		}
	}
}
