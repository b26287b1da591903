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

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/testproc"
)

// TestCloneOnFullDiskEveryStep: a clone whose disk fills at any of its
// writes, the last ones included (origin's config, the refs), says that
// writing the new store failed, to free space and clone again, and keeps
// nothing. The refs' write said "nothing was recorded by the failed write
// ..., then retry", the hint of a write to a store that is kept. On a
// 1 MiB tmpfs (root only), with the free space stepped down a page at a
// time from what the clone needs.
func TestCloneOnFullDiskEveryStep(t *testing.T) {
	mnt := testproc.SmallTmpfs(t, "1m")
	docs := map[string]string{}
	for i := range 3 {
		b := make([]byte, 20<<10)
		rand.Read(b)
		docs[fmt.Sprintf("d%d", i)] = base64.StdEncoding.EncodeToString(b)
	}
	a := newProject(t, docs)
	a.run(t, "r1", "d0", "d1", "d2")
	free := func() int64 {
		var st syscall.Statfs_t
		if err := syscall.Statfs(mnt, &st); err != nil {
			t.Fatal(err)
		}
		return int64(st.Bavail) * int64(st.Bsize)
	}
	dst := filepath.Join(mnt, "c")
	before := free()
	if _, err := Clone(context.Background(), a.path(), dst, Options{}); err != nil {
		t.Fatal(err)
	}
	need := before - free()
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for k := int64(1); k <= 12 && k*4096 < need; k++ {
		filler := filepath.Join(mnt, "filler")
		if err := os.WriteFile(filler, make([]byte, free()-(need-k*4096)), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Clone(context.Background(), a.path(), dst, Options{})
		os.Remove(filler)
		if err == nil {
			os.RemoveAll(dst)
			continue
		}
		if !gitstore.OutOfSpace(err) {
			t.Errorf("%d KiB short: %v; want a full disk", k*4, err)
			continue
		}
		failed++
		if h := hint.Of(err); !strings.Contains(h, "writing the new store failed") || !strings.Contains(h, "free space") || !strings.HasSuffix(h, "then clone again; nothing of the clone was kept") {
			t.Errorf("%d KiB short: %v\nhint %q, want the clone's: writing the new store failed, free space, clone again", k*4, err, h)
		}
		for _, p := range []string{dst, gitstore.StagingDir(dst)} {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("%d KiB short: the failed clone left %s", k*4, p)
			}
		}
	}
	if failed == 0 {
		t.Fatalf("no clone ran out of space with up to 48 KiB less than the %d bytes one needs: the test proves nothing", need)
	}
}
