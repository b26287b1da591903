//go:build unix

package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/hint"
)

// TestRootWritingAnotherUsersStoreWarns (session 17): root writing into a
// private store another user owns (sudo readproof run, a container running
// as root on a mounted store) made files only root may read (packed-refs,
// refs, objects: 0600 and 0400), and the owner's next command failed on
// them ("read packed-refs: open …: permission denied") with nothing having
// said why. A write by root into such a store now warns, naming the owner
// and how to give the files back.
func TestRootWritingAnotherUsersStoreWarns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
	var warned []error
	g, err := OpenWithOptions(dir, Options{Warn: func(err error) { warned = append(warned, err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	mustUpdate(t, g, RefUpdate{Name: "refs/heads/main", New: mkCommit(t, g, "one")})
	mustUpdate(t, g, RefUpdate{Name: "refs/heads/other", New: mkCommit(t, g, "two")})
	if len(warned) != 1 {
		t.Fatalf("root wrote twice into a store uid 65534 owns: %d warnings %v, want one", len(warned), warned)
	}
	if msg, h := warned[0].Error(), hint.Of(warned[0]); !strings.Contains(msg, "uid 65534") || !strings.Contains(h, "chown -R 65534:65534") {
		t.Errorf("warning %q, hint %q: want the owner named and the chown that gives the files back", msg, h)
	}

	// the owner's own store: no warning
	mine := filepath.Join(t.TempDir(), "mine")
	m, err := InitWithOptions(mine, Options{Warn: func(err error) { t.Errorf("warning in root's own store: %v", err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	mustUpdate(t, m, RefUpdate{Name: "refs/heads/main", New: mkCommit(t, m, "one")})
}
