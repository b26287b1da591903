//go:build unix

package share

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
)

// TestCloneLocalUnreadableConfig: a store on a path whose config is a FIFO
// (or a link to /dev/zero) is refused at once, and the refusal says what a
// config must be and that git would block on it. Before, it said "a ref
// file must be a regular file of at most 4096 bytes" of the config, and its
// hint sent the user to `git ls-remote PATH`, which blocks on that FIFO.
func TestCloneLocalUnreadableConfig(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	for what, plant := range map[string]func(p string) error{
		"FIFO":           func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"/dev/zero link": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		dir, _, _ := localSource(t, "pack")
		cfg := filepath.Join(dir, "config")
		if err := os.Remove(cfg); err != nil {
			t.Fatal(err)
		}
		if err := plant(cfg); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(t.TempDir(), "clone")
		start := time.Now()
		_, err := Clone(context.Background(), dir, dst, Options{})
		// A bound test: the clone ended because of the refusal
		// (ErrUnreadableRepoFile, below), not by reading the file; the
		// wall bound is wide, for loaded machines.
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s: the clone took %v", what, d)
		}
		if err == nil || !errors.Is(err, gitstore.ErrUnreadableRepoFile) {
			t.Fatalf("%s: clone = %v; want ErrUnreadableRepoFile", what, err)
		}
		if msg := err.Error(); !strings.Contains(msg, cfg) || !strings.Contains(msg, "config must be a regular file") {
			t.Errorf("%s: the refusal does not name the config and what it must be: %v", what, err)
		}
		if h := hint.Of(err); strings.Contains(h, "git can reach it: git ls-remote") || !strings.Contains(h, "block") {
			t.Errorf("%s: hint %q: it must not send the user to git ls-remote, which blocks on the file", what, h)
		}
		nothingBeside(t, dst)
	}
}
