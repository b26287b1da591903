package adapters

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A git:// or ssh server that accepts the connection and then says nothing
// holds a fetch no longer than [network] timeout. (go-git's ssh transport
// made the ssh handshake with no deadline: readproof waited for ever.)
func TestGitRemoteSilentServerTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	defer ln.Close()
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	accepted := make(chan net.Conn)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", startTestAgent(t))
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(knownHosts, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_KNOWN_HOSTS", knownHosts)
	addr := ln.Addr().String()
	const timeout = 100 * time.Millisecond
	policy := NetPolicy{Timeout: timeout, AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	for _, u := range []string{"git://" + addr + "/repo", "ssh://git@" + addr + "/repo"} {
		src, _ := openGit(Spec{Type: "git", URL: u, Path: "README"}, Env{CacheDir: t.TempDir(), Network: policy})
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := src.Fetch(context.Background(), Request{URI: "readproof://t/silent"})
			done <- err
		}()
		var err error
	wait:
		for {
			select {
			case c := <-accepted:
				held = append(held, c)
			case err = <-done:
				break wait
			case <-time.After(time.Minute):
				t.Fatalf("%s: fetch still waiting after a minute on a server that says nothing ([network] timeout %s)", u, timeout)
			}
		}
		// A timeout test: the fetch ended because of [network] timeout
		// (the error says so); the wall bound, 300 times the timeout, is
		// for loaded machines (the server says nothing until the test ends).
		if d := time.Since(start); err == nil || !strings.Contains(err.Error(), "took longer than "+timeout.String()) || d > 30*time.Second {
			t.Errorf("%s: %v after %s, want the [network] timeout of %s to end it", u, err, d, timeout)
		}
	}
}
