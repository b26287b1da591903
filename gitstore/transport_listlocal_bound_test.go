//go:build unix

package gitstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestListLocalRefFileBounded: a ref file of a path remote that is a
// symbolic link to /dev/zero, a FIFO (with no writer), or a sparse file of
// a gigabyte is neither read to its end nor waited on: listing the remote
// (LsRemoteHead, RemoteHead, the store's own Ref) returns at once with an
// error naming the file. Stock `git ls-remote` reads /dev/zero until
// memory runs out, so the listing is refused rather than left to git.
func TestListLocalRefFileBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	ctx := context.Background()
	tr, dir, r := bareRemote(t, "--quiet", "--bare", "--initial-branch=main")
	a := mkCommit(t, r, "a")
	mustUpdate(t, r, RefUpdate{Name: "refs/heads/main", New: a})
	if _, err := tr.AddRemoteURL(ctx, "o", dir, nil); err != nil {
		t.Fatal(err)
	}
	plant := map[string]func(p string) error{
		"/dev/zero link": func(p string) error { return os.Symlink("/dev/zero", p) },
		"FIFO":           func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"huge file": func(p string) error {
			if err := os.WriteFile(p, []byte(string(a)+"\n"), 0o644); err != nil {
				return err
			}
			return os.Truncate(p, 1<<30) // sparse: costs no disk
		},
	}
	for what, mk := range plant {
		p := filepath.Join(dir, "refs", "heads", "bad")
		if err := mk(p); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, _, err := tr.LsRemoteHead(ctx, "o")
		t.Logf("%s: %v", what, err)
		if err == nil || !strings.Contains(err.Error(), p) || !errors.Is(err, ErrUnreadableRepoFile) {
			t.Errorf("%s: LsRemoteHead: want ErrUnreadableRepoFile naming %s, got %v", what, p, err)
		}
		if _, err := tr.RemoteHead(ctx, "o"); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: RemoteHead: want an error naming %s, got %v", what, p, err)
		}
		if _, err := r.Ref("refs/heads/bad"); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: Ref: want an error naming %s, got %v", what, p, err)
		}
		// A bound test: each listing ended because of the bound (its
		// error names the file); a gigabyte read or a FIFO waited on is
		// seconds or forever, and the wall bound is wide, for loaded
		// machines.
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s: took %v", what, d)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	// HEAD itself a link to /dev/zero
	head := filepath.Join(dir, "HEAD")
	if err := os.Remove(head); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", head); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tr.LsRemoteHead(ctx, "o"); err == nil || !strings.Contains(err.Error(), head) {
		t.Errorf("HEAD a /dev/zero link: want an error naming %s, got %v", head, err)
	}
}
