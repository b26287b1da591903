package gitstore

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The port an ssh fetch dials is OpenSSH's: the URL's when it gives one
// (22 included), else the Port ~/.ssh/config gives for the host, with a
// Hostname or without, else 22. An scp-like URL gives none. The address
// the fetch dials is the one Address gives for the check before it.
func TestSSHPortAsOpenSSH(t *testing.T) {
	s, home := newKeyServer(t)
	key := writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "")
	s.allow(key.PublicKey())
	p := s.port
	for _, c := range []struct {
		name, conf, url, host, urlPort, want string
	}{
		{"Port without Hostname, scp-like URL", "Host git.example.test\n  Port " + p + "\n", "git@git.example.test:r.git", "git.example.test", "", "git.example.test:" + p},
		{"Port without Hostname, ssh URL", "Host git.example.test\n  Port " + p + "\n", "ssh://git@git.example.test/r.git", "git.example.test", "", "git.example.test:" + p},
		{"Port with Hostname", "Host docs\n  Hostname git.example.test\n  Port " + p + "\n", "git@docs:r.git", "docs", "", "git.example.test:" + p},
		{"the URL's port wins", "Host git.example.test\n  Port 1\n", "ssh://git@git.example.test:" + p + "/r.git", "git.example.test", p, "git.example.test:" + p},
		{"the URL's port wins over a Hostname block's", "Host docs\n  Hostname git.example.test\n  Port 1\n", "ssh://git@docs:" + p + "/r.git", "docs", p, "git.example.test:" + p},
		{"the URL's port 22 wins", "Host git.example.test\n  Port " + p + "\n", "ssh://git@git.example.test:22/r.git", "git.example.test", "22", "git.example.test:22"},
		{"no Port, no port", "Host git.example.test\n  User git\n", "git@git.example.test:r.git", "git.example.test", "", "git.example.test:22"},
		{"an scp-like path that starts with digits is no port", "Host git.example.test\n  Port " + p + "\n", "git@git.example.test:2222:r.git", "git.example.test", "", "git.example.test:" + p},
	} {
		t.Run(c.name, func(t *testing.T) {
			writeSSHConfig(t, home, c.conf)
			if h, port := ReadSSHConfig().Address(c.host, c.urlPort); net.JoinHostPort(h, port) != c.want {
				t.Errorf("Address(%s, %q) = %s %s, want %s", c.host, c.urlPort, h, port, c.want)
			}
			asked, err := fetchDialled(t, c.url, s.target)
			if err != nil && !errors.Is(err, ErrRepoNotFound) {
				t.Errorf("fetch: %v", err)
			}
			if len(asked) != 1 || asked[0] != c.want {
				t.Errorf("dialled %q, want %s", asked, c.want)
			}
		})
	}
}

// An scp-like URL is read as git reads it: no port, and the path all that
// follows the colon after the host, digits and colons included.
func TestNewEndpointSCPLikeHasNoPort(t *testing.T) {
	for _, c := range []struct {
		url, user, host, path string
		port                  int
	}{
		{"git@example.test:r.git", "git", "example.test", "r.git", 0},
		{"example.test:2222:r.git", "", "example.test", "2222:r.git", 0},
		{"git@example.test:2222/r.git", "git", "example.test", "2222/r.git", 0},
		{"example.test:docs/a://b.git", "", "example.test", "docs/a://b.git", 0},
		{"ssh://git@example.test/r.git", "git", "example.test", "/r.git", 0},
		{"ssh://git@example.test:22/r.git", "git", "example.test", "/r.git", 22},
	} {
		ep, err := newEndpoint(c.url)
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		if ep.User != c.user || ep.Host != c.host || ep.Path != c.path || ep.Port != c.port {
			t.Errorf("%s: user %q host %q path %q port %d, want %q %q %q %d", c.url, ep.User, ep.Host, ep.Path, ep.Port, c.user, c.host, c.path, c.port)
		}
	}
}

// A ProxyJump or ProxyCommand for the host refuses the fetch before it
// dials, naming the file, the line and the keyword (a ProxyCommand's value
// is not repeated: it may carry a token); "none" is direct, and of the
// two the first given decides, as in OpenSSH.
func TestSSHProxyRefused(t *testing.T) {
	s, home := newKeyServer(t)
	key := writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "")
	s.allow(key.PublicKey())
	p := s.port
	for _, c := range []struct {
		name, conf, key string
		line            int
	}{
		{"ProxyJump", "# bastion\nHost git.example.test\n  Port " + p + "\n  ProxyJump bastion.example.test\n", "ProxyJump", 4},
		{"ProxyCommand", "Host *.example.test\n  ProxyCommand ssh -W %h:%p bastion --token s3cret\nHost git.example.test\n  Port " + p + "\n", "ProxyCommand", 2},
		{"ProxyJump=", "Host git.example.test\n  Port " + p + "\n  proxyjump=bastion\n", "ProxyJump", 3},
		{"ProxyJump none", "Host git.example.test\n  Port " + p + "\n  ProxyJump none\nHost *\n  ProxyJump bastion\n", "", 0},
		{"ProxyCommand none", "Host git.example.test\n  Port " + p + "\n  ProxyCommand none\n", "", 0},
		{"ProxyCommand none first", "Host git.example.test\n  Port " + p + "\n  ProxyCommand none\n  ProxyJump bastion\n", "", 0},
		{"another host's", "Host other.example.test\n  ProxyJump bastion\nHost git.example.test\n  Port " + p + "\n", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeSSHConfig(t, home, c.conf)
			asked, err := fetchDialled(t, "git@git.example.test:r.git", s.target)
			if c.key == "" {
				if err != nil && !errors.Is(err, ErrRepoNotFound) {
					t.Errorf("fetch: %v", err)
				}
				if len(asked) != 1 {
					t.Errorf("dialled %q, want the host directly", asked)
				}
				if err := ReadSSHConfig().Check("git.example.test"); err != nil {
					t.Errorf("Direct: %v", err)
				}
				return
			}
			var ce *SSHConfigError
			if !errors.As(err, &ce) || ce.Key != c.key || ce.Line != c.line || ce.File != path {
				t.Fatalf("fetch: %v, want an SSHConfigError for %s at %s line %d", err, c.key, path, c.line)
			}
			if len(asked) != 0 {
				t.Errorf("dialled %q before refusing", asked)
			}
			msg := err.Error()
			for _, want := range []string{path + " line", c.key, "for host git.example.test", "connects to the host directly", "remove the setting for this host", "Host alias without it", "mirror the repository"} {
				if !strings.Contains(msg, want) {
					t.Errorf("%s\ndoes not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "s3cret") {
				t.Errorf("%s\nrepeats the ProxyCommand", msg)
			}
			if d := ReadSSHConfig().Check("git.example.test"); d == nil || d.Error() != ce.Error() {
				t.Errorf("Direct = %v, want the fetch's refusal", d)
			}
		})
	}
}

// TestSSHProxyRefusedHostInCapitals (session 25, merging revB into
// sshport; session 26, revC): a URL writing the host in capitals gets
// the ProxyJump of the Host block written so, as ssh does (ssh -G GIT.UP
// gives Host GIT.UP's proxyjump); before, the host was matched in lower
// case, and such a block was never read: the fetch connected around the
// bastion ssh goes through. A block in lower case is not the host's, as
// for ssh.
func TestSSHProxyRefusedHostInCapitals(t *testing.T) {
	s, home := newKeyServer(t)
	key := writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "")
	s.allow(key.PublicKey())
	path := writeSSHConfig(t, home, "Host Git.Example.TEST\n  Port "+s.port+"\n  ProxyJump bastion.example.test\nHost git.up\n  ProxyJump bastion.example.test\n")
	asked, err := fetchDialled(t, "git@Git.Example.TEST:r.git", s.target)
	var ce *SSHConfigError
	if !errors.As(err, &ce) || ce.Key != "ProxyJump" || ce.File != path || ce.Line != 3 {
		t.Fatalf("fetch: %v, want an SSHConfigError for ProxyJump at %s line 3", err, path)
	}
	if len(asked) != 0 {
		t.Errorf("dialled %q before refusing", asked)
	}
	if d := ReadSSHConfig().Check("Git.Example.TEST"); d == nil {
		t.Error("Check of the host in capitals: no refusal")
	}
	if d := ReadSSHConfig().Check("GIT.UP"); d != nil {
		t.Errorf("Check of GIT.UP, whose Host block ssh does not apply (Host git.up): %v, want none", d)
	}
}

// A ProxyJump in a file an Include line reads names that file and its
// line, and the Include line that reads it (session 26; before, only the
// Include line).
func TestSSHProxyInIncludedFile(t *testing.T) {
	_, home := newKeyServer(t)
	inc := filepath.Join(home, ".ssh", "bastion.conf")
	if err := os.WriteFile(inc, []byte("# the bastion\n\nHost git.example.test\n  ProxyJump bastion\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeSSHConfig(t, home, "Host *\n  Include "+inc+"\n")
	err := ReadSSHConfig().Check("git.example.test")
	var ce *SSHConfigError
	if !errors.As(err, &ce) || ce.Key != "ProxyJump" || ce.Line != 4 || ce.File != inc || !strings.Contains(err.Error(), "read through the Include on "+path+" line 2") {
		t.Fatalf("Direct: %v, want the ProxyJump refused at %s line 4, read through %s line 2", err, inc, path)
	}
}

// A Port that is not a port number is refused, naming the file and line,
// as ssh refuses it, before any connection: readproof would dial 22.
func TestSSHBadPortRefused(t *testing.T) {
	s, home := newKeyServer(t)
	for _, v := range []string{"twenty-two", "0", "70000"} {
		path := writeSSHConfig(t, home, "Host git.example.test\n  User git\n  Port "+v+"\n")
		asked, err := fetchDialled(t, "git@git.example.test:r.git", s.target)
		var ce *SSHConfigError
		if !errors.As(err, &ce) || ce.Key != "Port" || ce.Line != 3 || ce.File != path || !strings.Contains(err.Error(), "not a port number") {
			t.Errorf("Port %s: %v, want an SSHConfigError for Port at %s line 3", v, err, path)
		}
		if len(asked) != 0 {
			t.Errorf("Port %s: dialled %q", v, asked)
		}
	}
}

// fetchDialled fetches url into a new mirror whose connections all go to
// target, and gives the addresses it was asked to dial.
func fetchDialled(t *testing.T, url, target string) ([]string, error) {
	t.Helper()
	var asked []string
	m, err := OpenMirror(t.TempDir(), url, MirrorOptions{Dial: dialTo(target, &asked)})
	if err != nil {
		t.Fatal(err)
	}
	err = m.Fetch(context.Background()) // before asked is read: Fetch appends to it
	return asked, err
}
