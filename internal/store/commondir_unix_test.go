//go:build unix

package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCommonDirProblemFIFO: a commondir that is a FIFO (planted in a copied
// store) is still reported, without blocking: evidence verify and verify
// read the file to name the repository it points at, and an open of a
// FIFO waits for a writer for good.
func TestCommonDirProblemFIFO(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "commondir")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan string, 1)
	go func() { done <- CommonDirProblem(dir) }()
	select {
	case msg := <-done:
		if !strings.Contains(msg, "commondir") || !strings.Contains(msg, "another repository") {
			t.Errorf("CommonDirProblem = %q, want the file named", msg)
		}
	case <-time.After(5 * time.Second):
		// let the blocked open go: a writer opens the other end
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("CommonDirProblem has not returned after 5 s with a FIFO at commondir")
	}
}
