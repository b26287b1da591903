package gitstore

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/readproof/readproof/internal/hint"
)

// With CheckHostIP yes, a host key taken for the host name is refused
// when a line for the address dialled lists another key and none lists
// it, as ssh 9.2 refuses it under strict checking; the address's lines
// are those of the first user file and the system's, as ssh reads them.
// Nothing is refused for a loopback address (ssh turns the check off),
// an address no line names, one whose line lists the key, or one a
// @revoked line alone lists it under, nor with CheckHostIP no, the
// default. Before, CheckHostIP was ignored.
func TestKnownHostsCheckHostIP(t *testing.T) {
	_, home := newKeyServer(t)
	t.Setenv("SSH_KNOWN_HOSTS", "")
	key, other := newKey(t).PublicKey(), newKey(t).PublicKey()
	line := func(host string, k ssh.PublicKey) string { return host + " " + string(ssh.MarshalAuthorizedKey(k)) }
	write := func(name, data string) string {
		p := filepath.Join(home, ".ssh", name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	far := &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 22}
	for _, c := range []struct {
		what    string
		conf    string // CheckHostIP's line
		first   string // the first user file's lines after the host's, the second's
		second  string
		remote  *net.TCPAddr
		refused bool
	}{
		{"another key for the address", "yes", line("192.0.2.7", other), "", far, true},
		{"another key for the address and port", "yes", line("[192.0.2.7]:2222", other), "", &net.TCPAddr{IP: far.IP, Port: 2222}, true},
		{"another key for the address, CheckHostIP no", "no", line("192.0.2.7", other), "", far, false},
		{"another key for the address, CheckHostIP not given", "", line("192.0.2.7", other), "", far, false},
		{"another key for a loopback address", "yes", line("127.0.0.1", other), "", &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 22}, false},
		{"the key for the address", "yes", line("192.0.2.7", key), "", far, false},
		{"another key and the key for the address", "yes", line("192.0.2.7", other) + line("192.0.2.7", key), "", far, false},
		{"no line for the address", "yes", "", "", far, false},
		{"another key for the address, the key revoked there", "yes", line("192.0.2.7", other) + line("@revoked 192.0.2.7", key), "", far, false},
		{"another key for the address in the second user file", "yes", "", line("192.0.2.7", other), far, false},
	} {
		conf := "Host git.example.test\n  UserKnownHostsFile ~/.ssh/kh1 ~/.ssh/kh2\n  GlobalKnownHostsFile none\n"
		if c.conf != "" {
			conf += "  CheckHostIP " + c.conf + "\n"
		}
		writeSSHConfig(t, home, conf)
		write("kh1", line("git.example.test", key)+c.first)
		write("kh2", "# second\n"+c.second)
		db, err := ReadSSHConfig().hostKeys(context.Background(), "git.example.test", "git.example.test", "22", "git")
		if err != nil {
			t.Fatal(err)
		}
		err = db.(*knownHostsDB).check("git.example.test:22", c.remote, key)
		if c.refused != (err != nil) {
			t.Errorf("%s: %v, want it refused: %v", c.what, err, c.refused)
		}
		if c.refused && (err == nil || !strings.Contains(err.Error(), "differs from the key") || !strings.Contains(hint.Of(err), "CheckHostIP no")) {
			t.Errorf("%s: %v (hint %q), want the address's line named, with a hint", c.what, err, hint.Of(err))
		}
	}
}

// At a loopback address ssh itself does not check the address's lines
// with CheckHostIP yes, and neither does readproof: the key is taken
// though a line for the address lists another, checked by connecting ssh
// to the same server. A CheckHostIP that is neither yes nor no refuses
// the fetch, naming the line, as ssh refuses it.
func TestKnownHostsCheckHostIPLoopbackAsSSH(t *testing.T) {
	key := newKey(t)
	port, open := hostKeyServer(t, key)
	home := os.Getenv("HOME")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	known := "git.example.test " + string(ssh.MarshalAuthorizedKey(key.PublicKey())) +
		"127.0.0.1,[127.0.0.1]:" + port + " " + string(ssh.MarshalAuthorizedKey(newKey(t).PublicKey()))
	writeSSHConfig(t, home, "Host git.example.test\n  HostKeyAlias git.example.test\n  CheckHostIP yes\n")
	if err := open(known); err != nil {
		t.Errorf("CheckHostIP yes at a loopback address: %v, want the key taken", err)
	}
	if taken, out, ok := sshTakesHostKeyWith(t, port, os.Getenv("SSH_KNOWN_HOSTS"), "  CheckHostIP yes\n"); ok && !taken {
		t.Errorf("ssh refuses the key; the case is wrong\n%s", out)
	}
	path := writeSSHConfig(t, home, "Host git.example.test\n  CheckHostIP maybe\n")
	if err := open(known); err == nil || !strings.Contains(err.Error(), path+" line 2: CheckHostIP") {
		t.Errorf("CheckHostIP maybe: %v, want the line named", err)
	}
}

// With CheckHostIP yes, a host dialled by its address (its Hostname an
// address, the key looked up under a HostKeyAlias) is not checked again
// under that address, as ssh turns the check off then: a line for the
// address listing another key does not refuse the key the alias's line
// lists. (Untested before session 31's review: the rule could go unseen.)
func TestKnownHostsCheckHostIPDialledByAddress(t *testing.T) {
	_, home := newKeyServer(t)
	t.Setenv("SSH_KNOWN_HOSTS", "")
	key, other := newKey(t).PublicKey(), newKey(t).PublicKey()
	writeSSHConfig(t, home, "Host git.example.test\n  UserKnownHostsFile ~/.ssh/kh1\n  GlobalKnownHostsFile none\n  CheckHostIP yes\n")
	known := "git.example.test " + string(ssh.MarshalAuthorizedKey(key)) + "192.0.2.7 " + string(ssh.MarshalAuthorizedKey(other))
	if err := os.WriteFile(filepath.Join(home, ".ssh", "kh1"), []byte(known), 0o600); err != nil {
		t.Fatal(err)
	}
	far := &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 22}
	for _, c := range []struct {
		hostname string
		refused  bool
	}{{"192.0.2.7", false}, {"git.example.test", true}} {
		db, err := ReadSSHConfig().hostKeys(context.Background(), "git.example.test", c.hostname, "22", "git")
		if err != nil {
			t.Fatal(err)
		}
		err = db.(*knownHostsDB).check("git.example.test:22", far, key)
		if c.refused != (err != nil) {
			t.Errorf("Hostname %s, dialled at %s: %v, want it refused: %v", c.hostname, far, err, c.refused)
		}
	}
}
