//go:build unix

package adapters_test

import (
	"net"
	"path/filepath"
	"strings"
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

// TestFilesystemRefusesSocket: a Unix socket is refused as not a regular
// file, as a FIFO is; open(2) of one fails (ENXIO), which was reported as
// "cannot open sock: openat sock: no such device or address", with no
// hint.
func TestFilesystemRefusesSocket(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Skipf("listen on a Unix socket: %v", err)
	}
	defer l.Close()
	_, err = fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "sock"}, adapters.Env{BaseDir: dir})
	wantRefused(t, err, adapters.RuleRegular)
	if err != nil && !strings.Contains(err.Error(), "sock is a socket, not a regular file; point path at a file") {
		t.Errorf("error %q does not say what sock is", err)
	}
}
