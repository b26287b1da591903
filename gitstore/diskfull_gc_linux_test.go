//go:build linux

package gitstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testproc"
)

// TestFailedGCRemovesItsPartialPack (session 17): a git gc that runs out of
// space leaves the pack it was writing (objects/pack/tmp_pack_XXXXXX), as
// large as the space that was free, so the disk stayed full: the next
// writer failed with ENOSPC, and the sweep that removes such files runs
// only after a write that succeeds. readproof gc now removes what its git
// gc left. On a 1 MiB tmpfs (root only; not parallel, as above).
func TestFailedGCRemovesItsPartialPack(t *testing.T) {
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	dir := testproc.SmallTmpfs(t, "1m")
	s, err := Init(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	// 300 KiB of incompressible, reachable loose objects: git gc packs them.
	var entries []TreeEntry
	for i := range 10 {
		b := make([]byte, 30<<10)
		rand.Read(b)
		id, err := s.PutBlob(b)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, TreeEntry{Name: fmt.Sprintf("f%d", i), Mode: ModeFile, OID: id})
	}
	tree, err := s.PutTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(RefUpdate{Name: "refs/heads/main", New: mkTreeCommit(t, s, tree)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Leave 100 KiB free: less than the new pack needs.
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	fill := int64(st.Bavail)*int64(st.Bsize) - 100<<10
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, fill), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = GC(context.Background(), filepath.Join(dir, "store"), GCOptions{Grace: time.Hour})
	if err == nil {
		t.Fatal("gc with 100 KiB free succeeded; the test needs it to run out of space")
	}
	if left := tmpFiles(t, filepath.Join(dir, "store")); len(left) > 0 {
		t.Fatalf("gc failed (%v) and left its temporary files: %v", err, left)
	}
	Fsck(t, filepath.Join(dir, "store"))
}
