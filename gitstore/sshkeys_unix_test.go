//go:build unix

package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO where a key file or ~/.ssh/config is looked for is noted as not
// a regular file, not opened and waited on: the fetch would hang on the
// open, which no context ends.
func TestSSHKeyFileFIFONotWaitedOn(t *testing.T) {
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", "")
	fifos := []string{filepath.Join(home, ".ssh", "id_ed25519"), filepath.Join(home, ".ssh", "config")}
	for _, p := range fifos {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skipf("no FIFO: %v", err)
		}
	}
	type result struct {
		k   *sshKeys
		err error
	}
	done := make(chan result, 1)
	go func() {
		k, err := loadSSHKeys(t.Context(), "git.example.test", "git.example.test", "git")
		done <- result{k, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		k := r.k
		notes := strings.Join(k.skipped, "\n")
		for _, want := range []string{fifos[0] + " is not a regular file", fifos[1] + " was not read"} {
			if !strings.Contains(notes, want) {
				t.Errorf("notes %q, want %q", notes, want)
			}
		}
	case <-time.After(time.Minute): // a hang guard, not a measure
		// let the blocked opens return
		for _, p := range fifos {
			if f, err := os.OpenFile(p, os.O_RDWR, 0); err == nil {
				defer f.Close()
			}
		}
		t.Fatal("loadSSHKeys is waiting on a FIFO's open")
	}
}
