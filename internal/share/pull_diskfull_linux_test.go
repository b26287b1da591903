//go:build linux

package share

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/testproc"
)

// TestPullOnFullDisk (session 17): a pull into a store whose disk fills
// while git fetch writes the pack. Before, git's "fatal: write error: No
// space left on device" got the hint to check the remote's URL, and git's
// partial pack (objects/pack/tmp_pack_XXXXXX, as large as the space that was
// free) stayed, leaving the disk full. On a 1 MiB tmpfs (root only).
func TestPullOnFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	docs := map[string]string{}
	for i := range 10 {
		b := make([]byte, 30<<10)
		rand.Read(b)
		docs[fmt.Sprintf("d%d", i)] = base64.StdEncoding.EncodeToString(b)
	}
	a := newProject(t, docs)
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	a.run(t, "r1", names...)

	mnt := testproc.SmallTmpfs(t, "1m")
	empty := newProject(t, map[string]string{"d0": "x"})
	empty.s.Close()
	if err := testproc.CopyTree(empty.dir, filepath.Join(mnt, "b")); err != nil {
		t.Fatal(err)
	}
	b := &project{dir: filepath.Join(mnt, "b"), now: a.now}
	b.open(t)
	if err := AddRemote(context.Background(), b.s, "origin", a.path()); err != nil {
		t.Fatal(err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "filler"), make([]byte, int64(st.Bavail)*int64(st.Bsize)-100<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Pull(context.Background(), b.s, "origin", Options{})
	if err == nil {
		t.Fatal("pull of 300 KiB with 100 KiB free succeeded; the test needs it to run out of space")
	}
	if h := hint.Of(err); !strings.Contains(h, "writing into the store failed") {
		t.Errorf("pull on a full disk: %v\nhint %q, want it to say writing into the store failed", err, h)
	}
	left, _ := filepath.Glob(filepath.Join(b.path(), "objects", "pack", "tmp_*"))
	if len(left) > 0 {
		t.Errorf("pull failed and left git's temporary files: %v", left)
	}
}
