//go:build unix

package gitstore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO or a device (/dev/zero) a UserKnownHostsFile line names is
// passed over, not read: the fetch neither waits on the FIFO's open nor
// reads the device without end, and the host key is checked against the
// other files the line names. Before this test, readableKnownHosts's
// regular-file check (its doc's "a FIFO does not hold the fetch") held
// with nothing to show it.
func TestSSHKnownHostsFIFOPassedOver(t *testing.T) {
	s, home := newKeyServer(t) // home's known_hosts lists the server
	s.allow(writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "").PublicKey())
	fifo := filepath.Join(home, ".ssh", "a-fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	writeSSHConfig(t, home, "Host git.example.test\n  UserKnownHostsFile "+fifo+" /dev/zero ~/.ssh/known_hosts\n  GlobalKnownHostsFile none\n")
	done := make(chan error, 1)
	go func() { done <- s.open(t, "git@git.example.test:r.git") }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a FIFO and /dev/zero before the file listing the host: %v, want the host key taken", err)
		}
	case <-time.After(time.Minute): // a hang guard, not a measure
		if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			defer f.Close()
		}
		t.Fatal("the fetch is waiting on a FIFO named as a known_hosts file")
	}
}
