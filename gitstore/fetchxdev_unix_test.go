//go:build unix

package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFetchObjectsObjectsOnOtherFileSystem: a store whose objects/ is a
// link to a directory on another file system (objects kept on a larger
// disk) takes a fetch: its packs, which no rename moves there from the
// fetch's own directory inside the store, are copied in. Before, every
// pull into such a store failed ("invalid cross-device link"), with a
// hint to free space on the disk.
func TestFetchObjectsObjectsOnOtherFileSystem(t *testing.T) {
	t.Parallel()
	dev := func(path string) uint64 {
		var st syscall.Stat_t
		if err := syscall.Stat(path, &st); err != nil {
			return 0
		}
		return uint64(st.Dev)
	}
	base := t.TempDir()
	var other string
	for _, d := range []string{os.TempDir(), "/dev/shm", "/tmp", "/var/tmp"} {
		if dev(d) != 0 && dev(d) != dev(base) {
			dir, err := os.MkdirTemp(d, "readproof-xdev-")
			if err != nil {
				continue
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			other = dir
			break
		}
	}
	if other == "" {
		t.Skip("no writable directory on a file system other than " + base)
	}
	up := manyBlobs(t, 3, 0)
	tip := OID(strings.TrimSpace(mirrorGit(t, up, "rev-parse", "main")))
	s, err := Init(filepath.Join(base, "store"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	objects := filepath.Join(base, "store", "objects")
	// objects/ moved to the other file system, file by file
	err = filepath.WalkDir(objects, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(objects, p)
		to := filepath.Join(other, "objects", rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err == nil {
			err = os.WriteFile(to, data, 0o444)
		}
		return err
	})
	if err == nil {
		err = os.RemoveAll(objects)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "objects"), objects); err != nil {
		t.Fatal(err)
	}
	tr, err := NewTransport(filepath.Join(base, "store"), TransportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.FetchObjects(context.Background(), up, []OID{tip}); err != nil {
		t.Fatalf("fetch into a store whose objects/ is on another file system: %v", err)
	}
	mirrorGit(t, filepath.Join(base, "store"), "update-ref", "refs/heads/main", string(tip))
	mirrorGit(t, filepath.Join(base, "store"), "fsck", "--strict", "--no-progress")
	if left, _ := filepath.Glob(filepath.Join(other, "objects", "pack", "tmp_*")); len(left) > 0 {
		t.Errorf("temporary files left in objects/pack: %v", left)
	}
}
