package preflight

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// bare makes the directories of a bare repository that matter here.
func bare(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"objects", "refs/heads"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// files lists every file under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWrite(t *testing.T) {
	fast := Options{LockTimeout: 100 * time.Millisecond, StaleLockAge: time.Hour}
	refs := []string{"refs/heads/main", "refs/heads/readproof/receipts/sessions/s1"}

	t.Run("free", func(t *testing.T) {
		dir := bare(t)
		if err := Write(dir, refs, fast); err != nil {
			t.Fatal(err)
		}
		if left := files(t, dir); len(left) != 0 {
			t.Fatalf("left behind: %v", left)
		}
	})
	for _, held := range []string{"refs/heads/main.lock", "packed-refs.lock"} {
		t.Run("held "+held, func(t *testing.T) {
			dir := bare(t)
			if err := os.WriteFile(filepath.Join(dir, held), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err := Write(dir, refs, fast)
			if !errors.Is(err, ErrLocked) {
				t.Fatalf("got %v, want ErrLocked", err)
			}
			if d := time.Since(start); d < fast.LockTimeout {
				t.Fatalf("gave up after %s, before the lock timeout", d)
			}
			if _, err := os.Stat(filepath.Join(dir, held)); err != nil {
				t.Fatalf("the other process's lock was touched: %v", err)
			}
		})
	}
	t.Run("stale lock", func(t *testing.T) {
		dir := bare(t)
		lock := filepath.Join(dir, "refs/heads/main.lock")
		if err := os.WriteFile(lock, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Minute)
		if err := os.Chtimes(lock, old, old); err != nil {
			t.Fatal(err)
		}
		if err := Write(dir, refs, Options{LockTimeout: 100 * time.Millisecond, StaleLockAge: time.Second}); err != nil {
			t.Fatalf("a stale lock is broken by the writer, so the check passes: %v", err)
		}
	})
	t.Run("released in time", func(t *testing.T) {
		dir := bare(t)
		lock := filepath.Join(dir, "refs/heads/main.lock")
		if err := os.WriteFile(lock, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		go func() { time.Sleep(30 * time.Millisecond); os.Remove(lock) }()
		if err := Write(dir, refs, Options{LockTimeout: 2 * time.Second, StaleLockAge: time.Hour}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("no objects directory", func(t *testing.T) {
		dir := t.TempDir()
		if err := Write(dir, refs, fast); !errors.Is(err, ErrNotWritable) {
			t.Fatalf("got %v, want ErrNotWritable", err)
		}
	})
}

// TestWriteRefDirPruned: a ref directory found when the check starts can
// be removed before the lock is made in it, by a concurrent readproof or
// git that packs refs and prunes the directories it left empty; the
// check looks for the directory again instead of calling the store
// unwritable (two `readproof exec` into one session failed so, now and
// then). A goroutine makes and removes the directory while checks run.
func TestWriteRefDirPruned(t *testing.T) {
	t.Parallel()
	gitDir := bare(t)
	dir := filepath.Join(gitDir, "refs", "heads", "readproof", "receipts", "index")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.MkdirAll(dir, 0o755)
			os.Remove(dir)
		}
	}()
	defer func() { close(stop); <-done }()
	for i := 0; i < 2000; i++ {
		if err := Write(gitDir, []string{"refs/heads/readproof/receipts/index/s"}, Options{}); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
	}
}
