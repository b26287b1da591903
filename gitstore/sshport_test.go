package gitstore

import (
	"context"
	"errors"
	"net"
	"path/filepath"
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
			var asked []string
			m, err := OpenMirror(t.TempDir(), c.url, MirrorOptions{Dial: dialTo(s.target, &asked)})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Fetch(context.Background()); err != nil && !errors.Is(err, ErrRepoNotFound) {
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
