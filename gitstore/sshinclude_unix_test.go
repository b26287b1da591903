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

// A FIFO an Include line names is not opened and waited on (the parser
// opened it itself, and every ssh fetch hung there): it is not read, as
// not a regular file, is said, and refuses every ssh fetch (ssh would read
// what it gives); the rest is read, the files after it in the same
// pattern included.
func TestSSHConfigIncludedFIFORefused(t *testing.T) {
	_, home := newKeyServer(t)
	dir := filepath.Join(home, ".ssh", "conf.d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "a-fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b-work"), []byte("Host work-git\n  User w\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeSSHConfig(t, home, "Include conf.d/*\nHost git.example.test\n  User deploy\n")
	done := make(chan *SSHConfig, 1)
	go func() { done <- ReadSSHConfig() }()
	var c *SSHConfig
	select {
	case c = <-done:
	case <-time.After(time.Minute): // a hang guard, not a measure
		if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			defer f.Close()
		}
		t.Fatal("ReadSSHConfig is waiting on an included FIFO's open")
	}
	for alias, want := range map[string]string{"git.example.test": "deploy", "work-git": "w"} {
		if u, _, err := c.remoteUser("", alias); err != nil || u != want {
			t.Errorf("user for %s: %q, %v; want %q", alias, u, err, want)
		}
	}
	ws := c.Warnings("git.example.test")
	if len(ws) != 1 || !strings.Contains(ws[0].Error(), path+" line 1: the file "+fifo+" this Include line names was not read (not a regular file)") {
		t.Errorf("warnings %v, want the FIFO named, not read", ws)
	}
	if err := c.Check("git.example.test"); err == nil || !strings.Contains(err.Error(), path+" line 1: the file "+fifo+" this Include line names was not read (not a regular file)") {
		t.Errorf("Check: %v, want every ssh fetch refused, naming the FIFO", err)
	}
}
