package adapters

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/agent"
)

// A git:// or ssh:// source whose name passes the address check and then
// resolves to a loopback address when dialled (DNS rebinding) is refused at
// connect time: the check is on the address connected, not on an earlier
// answer. The test's resolver answers a public address to the check and
// 127.0.0.1 to the dialer. (The name is not "localhost", which is dialled
// at loopback without a lookup: TestLocalhostNotLookedUp.) (An ssh
// source needs an agent and a known_hosts file before go-git dialled: an
// empty agent and an empty file stand in.)
func TestGitRemoteRebindingRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", startTestAgent(t))
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(knownHosts, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_KNOWN_HOSTS", knownHosts)

	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	for _, u := range []string{"git://rebind.example.test:" + port + "/repo", "ssh://git@rebind.example.test:" + port + "/repo"} {
		accepted.Store(0)
		src, _ := openGit(Spec{Type: "git", URL: u, Path: "README"}, Env{CacheDir: t.TempDir(), Network: NetPolicy{Timeout: 5 * time.Second}})
		gs, ok := src.(*gitSource)
		if !ok {
			t.Fatalf("%s opened as %T", u, src)
		}
		var asked atomic.Int32
		gs.n.g.lookup = func(context.Context, string) ([]netip.Addr, error) {
			if asked.Add(1) == 1 {
				return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		_, err := gs.Fetch(context.Background(), Request{URI: "readproof://t/rebind"})
		if asked.Load() < 2 {
			t.Fatalf("%s: the name was resolved %d times, want once for the check and again for the dial", u, asked.Load())
		}
		if n := accepted.Load(); n != 0 || !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %d connections reached 127.0.0.1 (want 0), fetch error %v (want a refusal)", u, n, err)
		}
	}
}

// startTestAgent serves an empty ssh agent on a socket and returns its path.
func startTestAgent(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "rpagent")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		t.Skipf("no unix socket for an ssh agent: %v", err)
	}
	t.Cleanup(func() { ln.Close(); os.RemoveAll(dir) })
	kr := agent.NewKeyring()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = agent.ServeAgent(kr, c); c.Close() }()
		}
	}()
	return sock
}

// TestGitRemoteAllowedByDefaultPort: an allow_hosts entry with a port
// admits a git:// or ssh:// URL that names no port when the entry's port is
// the one the fetch dials (9418, 22): the port checked is the port dialled,
// not the URL's empty one.
func TestGitRemoteAllowedByDefaultPort(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", startTestAgent(t))
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(knownHosts, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_KNOWN_HOSTS", knownHosts)
	for _, c := range []struct{ url, allow string }{
		{"git://localhost/repo", "localhost:9418"},
		{"ssh://git@localhost/repo", "localhost:22"},
	} {
		src, _ := openGit(Spec{Type: "git", URL: c.url, Path: "README"}, Env{CacheDir: t.TempDir(), Network: NetPolicy{Timeout: 2 * time.Second, AllowHosts: []string{c.allow}}})
		gs, ok := src.(*gitSource)
		if !ok {
			t.Fatalf("%s opened as %T", c.url, src)
		}
		_, err := gs.Fetch(context.Background(), Request{URI: "readproof://t/port"})
		if err == nil {
			t.Fatalf("%s: fetched a repository that does not exist", c.url)
		}
		if strings.Contains(err.Error(), "loopback address") {
			t.Errorf("%s with allow_hosts [%q]: refused as if not allowed: %v", c.url, c.allow, err)
		}
	}
}
