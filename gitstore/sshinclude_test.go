package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An included file larger than the bound on ~/.ssh/config is unread past
// the bound, and refuses every ssh fetch (Check), naming it and the
// Include line: ssh reads it whole, and its lines (a ProxyJump) would be
// gone around. The rest of the file is read, and the file is said.
func TestSSHConfigIncludedHugeRefused(t *testing.T) {
	_, home := newKeyServer(t)
	huge := filepath.Join(home, ".ssh", "huge")
	data := append([]byte("Host git.example.test\n  User huge\n"), bytes.Repeat([]byte("# padding\n"), maxSSHConfigBytes/10+1)...)
	if err := os.WriteFile(huge, data, 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeSSHConfig(t, home, "Include huge\nHost git.example.test\n  User deploy\n")
	c := ReadSSHConfig()
	if u, _, err := c.remoteUser("", "git.example.test"); err != nil || u != "deploy" {
		t.Errorf("user %q, %v; want deploy, the huge file's User unread", u, err)
	}
	ws := c.Warnings("git.example.test")
	if len(ws) != 1 || !strings.Contains(ws[0].Error(), path+" line 1: the file "+huge+" this Include line names was not read (larger than 1 MiB)") {
		t.Errorf("warnings %v, want the huge file refused", ws)
	}
	if err := c.Check("git.example.test"); err == nil || !strings.Contains(err.Error(), path+" line 1: the file "+huge+" this Include line names is larger than 1 MiB") {
		t.Errorf("Check: %v, want every ssh fetch refused, naming the file", err)
	}
}

// An Include inside an included file reads, as OpenSSH reads it, from
// $HOME/.ssh: not from the passwd entry's home (where the parser looked),
// nor from the directory of the file it is in.
func TestSSHConfigNestedIncludeFromHome(t *testing.T) {
	_, home := newKeyServer(t)
	if err := os.Mkdir(filepath.Join(home, ".ssh", "conf.d"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, conf := range map[string]string{
		"conf.d/first":  "Include second\n",
		"second":        "Host deep\n  User nested\n",
		"conf.d/second": "Host deep\n  User wrong-directory\n",
	} {
		if err := os.WriteFile(filepath.Join(home, ".ssh", name), []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeSSHConfig(t, home, "Include conf.d/first\n")
	if u, _, err := ReadSSHConfig().remoteUser("", "deep"); err != nil || u != "nested" {
		t.Errorf("user for deep: %q, %v; want nested, from ~/.ssh/second", u, err)
	}
}

// Include lines nest 16 deep, as in OpenSSH; a file deeper refuses every
// ssh fetch, as ssh refuses the configuration ("Too many recursive
// configuration includes"), and is said. A file that includes itself
// ends there too, or at the bound on the files read.
func TestSSHConfigIncludeDepthLimit(t *testing.T) {
	_, home := newKeyServer(t)
	for i := 1; i <= maxSSHIncludeDepth+1; i++ {
		conf := fmt.Sprintf("Include d%d\nHost level%d\n  User at%d\n", i+1, i, i)
		if err := os.WriteFile(filepath.Join(home, ".ssh", fmt.Sprintf("d%d", i)), []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeSSHConfig(t, home, "Include d1\n")
	c := ReadSSHConfig()
	last := fmt.Sprintf("level%d", maxSSHIncludeDepth)
	if u, _, err := c.remoteUser("", last); err != nil || u != "at16" {
		t.Errorf("user for %s: %q, %v; want at16, 16 Include lines deep", last, u, err)
	}
	if u, _, _ := c.remoteUser("", "level17"); u == "at17" {
		t.Errorf("user for level17: %q, read 17 Include lines deep", u)
	}
	ws := c.Warnings("level1")
	from, deep := filepath.Join(home, ".ssh", "d16"), filepath.Join(home, ".ssh", "d17")
	if len(ws) != 1 || !strings.Contains(ws[0].Error(), from+" line 1: the file "+deep+" this Include line names was not read (more than 16 Include lines deep") {
		t.Errorf("warnings %v, want d17 refused, named", ws)
	}
	if err := c.Check("level1"); err == nil || !strings.Contains(err.Error(), from+" line 1: the file "+deep+" this Include line names is more than 16 Include lines deep") {
		t.Errorf("Check: %v, want every ssh fetch refused, naming d17", err)
	}

	// a file including itself twice: read a bounded number of times
	if err := os.WriteFile(filepath.Join(home, ".ssh", "loop"), []byte("Include loop loop\nHost loop\n  User looped\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeSSHConfig(t, home, "Include loop\n")
	c = ReadSSHConfig()
	if u, _, err := c.remoteUser("", "loop"); err != nil || u != "looped" {
		t.Errorf("user for loop: %q, %v; want looped", u, err)
	}
	ws = c.Warnings("loop")
	if len(ws) != 2 || !strings.Contains(ws[0].Error(), "Include lines deep") || !strings.Contains(ws[1].Error(), fmt.Sprintf("more than %d files included", maxSSHIncludedFiles)) {
		t.Errorf("warnings for the loop %v, want the depth and the number of files said, once each", ws)
	}
	if err := c.Check("loop"); err == nil || !strings.Contains(err.Error(), "more than 16 Include lines deep") {
		t.Errorf("Check for the loop: %v, want every ssh fetch refused", err)
	}
}

// A keyword's first value wins across Include lines, as in OpenSSH: an
// included file's Host blocks apply where the Include line stands, in the
// order of their lines, and the lines after it in the enclosing block
// apply after them; an Include in a block that does not match reads
// nothing.
func TestSSHConfigIncludeFirstValueWins(t *testing.T) {
	_, home := newKeyServer(t)
	files := map[string]string{
		"users":     "Host other\n  Hostname other.example.test\nHost git.example.test\n  User included\n",
		"proxies":   "Host git.example.test\n  ProxyCommand none\n  ProxyJump bastion\n",
		"elsewhere": "User elsewhere\n",
	}
	for name, conf := range files {
		if err := os.WriteFile(filepath.Join(home, ".ssh", name), []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeSSHConfig(t, home, "Host nothing.example.test\n  Include elsewhere\nHost git.example.test\n  Include users\n  Hostname h.example.test\n  User main\n  Include proxies\n  ProxyJump later\n")
	c := ReadSSHConfig()
	if u, _, err := c.remoteUser("", "git.example.test"); err != nil || u != "included" {
		t.Errorf("user %q, %v; want the included Host block's, given first", u, err)
	}
	if h, _ := c.Address("git.example.test", ""); h != "h.example.test" {
		t.Errorf("Address = %s, want the enclosing block's Hostname, after the Include", h)
	}
	// ProxyCommand none comes first in the included file: direct
	if err := c.Check("git.example.test"); err != nil {
		t.Errorf("Check: %v, want the included file's first setting (ProxyCommand none) to win", err)
	}
	var ce *SSHConfigError
	writeSSHConfig(t, home, "Host git.example.test\n  Include proxies\n")
	files["proxies"] = "Host git.example.test\n  ProxyJump bastion\n  ProxyCommand none\n"
	if err := os.WriteFile(filepath.Join(home, ".ssh", "proxies"), []byte(files["proxies"]), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ReadSSHConfig().Check("git.example.test"); !errors.As(err, &ce) || ce.Key != "ProxyJump" || ce.Value != "bastion" {
		t.Errorf("Check: %v, want the included file's first setting (ProxyJump bastion) refused", err)
	}
}
