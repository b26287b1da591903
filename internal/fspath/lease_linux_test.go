package fspath

import (
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenRegularUnderLease: a regular file another holder has a write
// lease on (what Samba's oplocks and the kernel NFS server's delegations
// take) makes an O_NONBLOCK open fail with EWOULDBLOCK; OpenRegular opens
// it again, waiting for the lease, which the holder gives up when told
// (SIGIO), and reads it. Before, the policy file was refused with
// "resource temporarily unavailable". No deadline: the holder gives the
// lease up as soon as its break is asked for.
func TestOpenRegularUnderLease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "readproof.toml")
	if err := os.WriteFile(path, []byte("version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := make(chan os.Signal, 1)
	signal.Notify(broken, syscall.SIGIO)
	defer signal.Stop(broken)
	h, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	fd := h.Fd()
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETLEASE, syscall.F_WRLCK); e != 0 {
		t.Skip("no write lease here:", e)
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		<-broken
		syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETLEASE, syscall.F_UNLCK)
	}()
	f, fi, err := OpenRegular(path)
	if err != nil {
		t.Fatalf("OpenRegular of a file under a lease: %v", err)
	}
	defer f.Close()
	<-released
	data, err := io.ReadAll(f)
	if err != nil || string(data) != "version = 1\n" || !fi.Mode().IsRegular() || f.Name() != path {
		t.Fatalf("read %q, %v (%v, %s)", data, err, fi.Mode(), f.Name())
	}
}
