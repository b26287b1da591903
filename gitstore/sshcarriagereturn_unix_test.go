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

// An Include line with a carriage return before its keyword, or between
// the keyword and the file, is an Include to ssh (a carriage return is
// a space to it, as to the parser): its files are read by readproof's
// reader, with its bounds, as every Include. Before, readproof took the
// line for another keyword, and the parser read the files itself,
// unbounded and from the passwd entry's home: a FIFO it names was
// waited on for ever (the ssh fetch, or `readproof mcp`, hung), and a
// file it could not read (a Match block in it) was passed over in
// silence. Each case is checked against `ssh -G` when ssh is there.
func TestSSHConfigIncludeAfterCarriageReturn(t *testing.T) {
	home := sshHome(t)
	dir := filepath.Join(home, ".ssh")
	if err := os.WriteFile(filepath.Join(dir, "other"), []byte("Host git.example.test\n  Hostname inc.example\nMatch host nothing.example\n  User m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "a-fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	for _, line := range []string{"\rInclude other", " \r Include other", "Include\rother", "include\r=\rother", "\r=Include other", "\r\"Include\" other"} {
		path := writeSSHConfig(t, home, line+"\nHost git.example.test\n  User deploy\n")
		c := readWithin(t, fifo)
		if host, _ := c.Address("git.example.test", ""); host != "inc.example" {
			t.Errorf("%q: host %q, want inc.example, the included file's Hostname; warnings %v", line, host, c.Warnings("git.example.test"))
		}
		// the absolute path, as ssh -G expands ~/.ssh/ to the passwd
		// entry's home, not the test's
		abs := strings.Replace(line, "other", filepath.Join(dir, "other"), 1)
		if err := os.WriteFile(path, []byte(abs+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, refused, ok := sshG(t, path, "git.example.test"); ok && (refused || !strings.Contains(out, "\nhostname inc.example\n")) {
			t.Errorf("%q: ssh -G does not read the Include: the case is wrong\n%s", line, out)
		}
	}
	// the FIFO's path in full: the parser read a relative one from the
	// passwd entry's home, not from $HOME as ssh and readproof read it
	path := writeSSHConfig(t, home, "\rInclude "+fifo+"\nHost git.example.test\n  User deploy\n")
	c := readWithin(t, fifo)
	want := path + " line 1: the file " + fifo + " this Include line names was not read (not a regular file)"
	if err := c.Check("git.example.test"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("\\rInclude a FIFO: Check %v, want every ssh fetch refused, naming the FIFO", err)
	}
}

// readWithin is ReadSSHConfig, failing the test if it waits on fifo's
// open (a hang guard, not a measure).
func readWithin(t *testing.T, fifo string) *SSHConfig {
	t.Helper()
	done := make(chan *SSHConfig, 1)
	go func() { done <- ReadSSHConfig() }()
	select {
	case c := <-done:
		return c
	case <-time.After(time.Minute):
		if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			defer f.Close()
		}
		t.Fatal("ReadSSHConfig is waiting on a FIFO an Include line names")
		return nil
	}
}
