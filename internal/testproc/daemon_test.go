package testproc

import (
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStartGitDaemonPortTaken: a daemon whose port another one holds is
// reported as not started (a dial would have reached the first one), and
// the first is reported ready only once it listens.
func TestStartGitDaemonPortTaken(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	daemon := func() *exec.Cmd {
		cmd := exec.Command("git", "daemon", "--verbose", "--reuseaddr", "--base-path="+base, "--export-all",
			"--listen=127.0.0.1", "--port="+port, base)
		OwnGroup(cmd)
		return cmd
	}
	first := daemon()
	done, err := StartGitDaemon(first, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		KillGroup(first)
		<-done
	}()
	c, err := net.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatalf("ready, but nothing listens: %v", err)
	}
	c.Close()
	if _, err := StartGitDaemon(daemon(), 10*time.Second); err == nil || !strings.Contains(err.Error(), "bind") {
		t.Fatalf("second daemon on a taken port: err %v, want one that says it could not bind", err)
	}
	noVerbose := exec.Command("git", "daemon", "--port="+port)
	if _, err := StartGitDaemon(noVerbose, time.Second); err == nil {
		t.Fatal("a daemon without --verbose was started")
	}
}
