package gitstore

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// ~/.ssh/config is read from the passwd entry's home directory, as ssh
// reads it (getpwuid), not $HOME's: under sudo with HOME kept, ssh reads
// the target user's configuration, and so does readproof, where before
// it read $HOME's, another user's, and refused it as not this user's.
// ~ and %d in an IdentityFile are that directory too. Checked against ssh
// -G with HOME set elsewhere when ssh is there.
func TestSSHHomeIsPasswdEntrys(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no passwd entry")
	}
	prev := sshHomeForTest
	sshHomeForTest = nil // as the readproof binary has it
	t.Cleanup(func() { sshHomeForTest = prev })
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil || u.HomeDir == "" {
		t.Skipf("no passwd entry for this user: %v", err)
	}
	home := sshHome(t)
	config := writeSSHConfig(t, home, "Host *\n  Port 2917\n  IdentityFile ~/.ssh/elsewhere\n")
	if os.Getuid() == 0 {
		// another user's file, as under sudo with HOME kept
		if err := os.Chown(config, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if home == u.HomeDir {
		t.Fatalf("HOME is the passwd entry's home %s", home)
	}
	conf := ReadSSHConfig()
	if conf.home != u.HomeDir {
		t.Errorf("home %q, want the passwd entry's %q ($HOME is %q)", conf.home, u.HomeDir, home)
	}
	said := []string{}
	if err := conf.Check("git.example.test"); err != nil {
		said = append(said, err.Error())
	}
	for _, w := range conf.Warnings("git.example.test") {
		said = append(said, w.Error())
	}
	if strings.Contains(strings.Join(said, "\n"), home) {
		t.Errorf("$HOME's configuration read: %q", said)
	}
	if _, p := conf.Address("git.example.test", ""); p == "2917" {
		t.Errorf("port %s: $HOME's configuration followed", p)
	}
	p, err := expandIdentityPathFor("~/.ssh/k-%d", identityTokens{home: conf.home})
	if want := filepath.Join(u.HomeDir, ".ssh", "k-"+u.HomeDir); err != nil || p != want {
		t.Errorf("~/.ssh/k-%%d is %q, %v; want %q", p, err, want)
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		return
	}
	out, _ := exec.Command("ssh", "-G", "git.example.test").CombinedOutput()
	if strings.Contains(string(out), "\nport 2917\n") || strings.Contains(string(out), "elsewhere") || strings.Contains(string(out), home) {
		t.Errorf("ssh -G reads $HOME's configuration: the case is wrong\n%s", out)
	}
}
