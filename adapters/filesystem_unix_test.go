//go:build unix

package adapters_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/readproof/readproof/adapters"
)

func TestFilesystemRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	// A FIFO must be refused without blocking on the open.
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "pipe"}, adapters.Env{BaseDir: dir})
		done <- err
	}()
	select {
	case err := <-done:
		wantRefused(t, err, adapters.RuleRegular)
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}

}
