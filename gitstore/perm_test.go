//go:build unix

package gitstore

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
)

// TestNewStoreModes (issue 13.11): under umask 022 a new store is private
// (directories 0700, nothing for group or others) after objects, a pack and
// refs are written; ShareGroup gives the group access (directories 2770,
// files group-readable) and others nothing. git fsck reads both.
func TestNewStoreModes(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	for _, c := range []struct {
		sharing Sharing
		check   func(path string, mode fs.FileMode) string
	}{
		{SharePrivate, func(path string, m fs.FileMode) string {
			if m.Perm()&0o077 != 0 {
				return "grants group or others access"
			}
			if m.IsDir() && m.Perm() != 0o700 {
				return "directory is not 0700"
			}
			return ""
		}},
		{ShareGroup, func(path string, m fs.FileMode) string {
			switch {
			case m.Perm()&0o007 != 0:
				return "grants others access"
			case m.IsDir() && (m.Perm()&0o070 != 0o070 || m&fs.ModeSetgid == 0):
				return "directory is not group rwx with setgid"
			case !m.IsDir() && m.Perm()&0o040 == 0:
				return "file is not group-readable"
			}
			return ""
		}},
	} {
		t.Run(string(c.sharing), func(t *testing.T) {
			s, err := InitWithOptions(filepath.Join(t.TempDir(), "store"), Options{Sharing: c.sharing})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var last OID
			for i := 0; i < packThreshold+10; i++ { // one pack
				if last, err = s.PutBlob([]byte(fmt.Sprintf("packed %d\n", i))); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			commit := mkCommit(t, s, "loose objects, written at Update's sync")
			mustUpdate(t, s, RefUpdate{Name: "refs/heads/readproof/a/b", New: commit}, RefUpdate{Name: "refs/tags/readproof/blobs/last", New: last})
			n := 0
			filepath.WalkDir(s.Path(), func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					t.Fatal(err)
				}
				fi, err := d.Info()
				if err != nil {
					t.Fatal(err)
				}
				if msg := c.check(p, fi.Mode()); msg != "" {
					t.Errorf("%s: mode %v: %s", p, fi.Mode(), msg)
				}
				n++
				return nil
			})
			if n < 15 {
				t.Fatalf("walked %d paths: the store is missing files", n)
			}
			Fsck(t, s.Path())
		})
	}
}
