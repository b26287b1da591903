package gitstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFetchObjectsRefusedWholePackRemoved: a pack that arrives whole
// between two measures of the fetch bound (from a path, 96 KiB of random
// bytes under a limit of 32 KiB) is refused, and nothing of it is left in
// the store's objects/, nor the fetch's own directory. Before, such a pack
// stayed in objects/pack, unreachable, until gc pruned it. A fetch under
// the default limit then moves its pack into the store, index last, and
// the objects read there. The pack arrives whole whatever the timing: the
// git the transport runs (wholePackGit) receives it in a directory beside
// the one the bound watches and moves it there once done.
func TestFetchObjectsRefusedWholePackRemoved(t *testing.T) {
	t.Parallel()
	real, err := findGit()
	if err != nil {
		t.Skip("git is not installed")
	}
	whole := filepath.Join(t.TempDir(), "git")
	script := `#!/bin/sh
case "$*" in
*" fetch "*--stdin*)
	stage="$GIT_OBJECT_DIRECTORY.whole"
	mkdir -p "$stage/pack" || exit 1
	GIT_OBJECT_DIRECTORY="$stage" '` + real + `' "$@" || exit
	exec mv "$stage"/pack/pack-* "$GIT_OBJECT_DIRECTORY/pack/" ;;
esac
exec '` + real + `' "$@"
`
	if err := os.WriteFile(whole, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	up := manyBlobs(t, 1, 96<<10)
	tip := OID(strings.TrimSpace(mirrorGit(t, up, "rev-parse", "main")))
	s := NewTestStore(t)
	files := func() []string {
		var out []string
		filepath.WalkDir(s.Path(), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.Contains(p, string(filepath.Separator)+"objects"+string(filepath.Separator)) || strings.Contains(d.Name(), "pack")) {
				out = append(out, p)
			}
			return nil
		})
		return out
	}
	before := files()
	tr, err := NewTransport(s.Path(), TransportOptions{MaxFetchBytes: 32 << 10})
	if err != nil {
		t.Fatal(err)
	}
	tr.git = whole
	if err := tr.FetchObjects(context.Background(), up, []OID{tip}); !errors.Is(err, ErrFetchTooLarge) || !strings.Contains(err.Error(), "bytes arrived from") {
		t.Fatalf("fetch of 96 KiB, arriving whole, under a limit of 32 KiB: got %v, want ErrFetchTooLarge measured once git was done", err)
	}
	if after := files(); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("a refused fetch left files in the store:\nbefore %v\nafter  %v", before, after)
	}
	tr, err = NewTransport(s.Path(), TransportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.FetchObjects(context.Background(), up, []OID{tip}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Has(tip); err != nil || !ok {
		t.Errorf("the fetched tip is not in the store: %v %v", ok, err)
	}
	mirrorGit(t, s.Path(), "fsck", "--no-progress", "--connectivity-only", string(tip))
}
