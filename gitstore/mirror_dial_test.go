package gitstore

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// listenOnce accepts connections on 127.0.0.1 and hands each to serve.
func listenOnce(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); serve(c) }()
		}
	}()
	return ln.Addr().String()
}

// dialTo is a dial function that connects to target whatever address it is
// asked for, and records what it was asked.
func dialTo(target string, asked *[]string) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		*asked = append(*asked, addr)
		return (&net.Dialer{}).DialContext(ctx, network, target)
	}
}

// A git:// fetch dials through MirrorOptions.Dial, by the URL's name, and
// the request names the host as the URL does, wherever the name led (git
// daemon's virtual hosting reads it).
func TestDaemonSessionDialsAndNamesHost(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	target := listenOnce(t, func(c net.Conn) {
		var n [4]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			got <- err.Error()
			return
		}
		size, _ := strconv.ParseUint(string(n[:]), 16, 16)
		line := make([]byte, max(int(size)-4, 0))
		_, _ = io.ReadFull(c, line)
		got <- string(line)
		_, _ = c.Write([]byte("0000"))
	})
	for _, tc := range []struct{ url, addr, line string }{
		{"git://git.example.test/r.git", "git.example.test:9418", "git-upload-pack /r.git\x00host=git.example.test\x00"},
		{"git://git.example.test:7000/r.git", "git.example.test:7000", "git-upload-pack /r.git\x00host=git.example.test:7000\x00"},
		{"git://[2001:db8::1]/r.git", "[2001:db8::1]:9418", "git-upload-pack /r.git\x00host=[2001:db8::1]\x00"},
	} {
		var asked []string
		m, err := OpenMirror(t.TempDir(), tc.url, MirrorOptions{Dial: dialTo(target, &asked)})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Fetch(context.Background()); err != nil {
			t.Errorf("%s: %v", tc.url, err)
		}
		if len(asked) != 1 || asked[0] != tc.addr {
			t.Errorf("%s: dialled %q, want %q", tc.url, asked, tc.addr)
		}
		if line := <-got; line != tc.line {
			t.Errorf("%s: request %q, want %q", tc.url, line, tc.line)
		}
	}
	// A refusal of the dial function's is the fetch's error, unwrapped as
	// it was made.
	refusal := errors.New("test: refused")
	m, _ := OpenMirror(t.TempDir(), "git://git.example.test/r.git", MirrorOptions{Dial: func(context.Context, string, string) (net.Conn, error) { return nil, refusal }})
	if err := m.Fetch(context.Background()); !errors.Is(err, refusal) {
		t.Errorf("refused dial: %v", err)
	}
}

// An ssh fetch checks the server's host key under the host name of the
// URL, not under the address the name was dialled at: known_hosts entries
// are by name. The path reaches the server shell-quoted.
func TestSSHSessionHostKeyByName(t *testing.T) {
	t.Parallel()
	hostKey := newKey(t)
	srvConf := &ssh.ServerConfig{NoClientAuth: true}
	srvConf.AddHostKey(hostKey)
	commands := make(chan string, 4)
	target := listenOnce(t, func(c net.Conn) { serveUploadPackSSH(c, srvConf, commands) })
	_, port, _ := net.SplitHostPort(target)

	dir := t.TempDir()
	line := func(host string) string {
		return knownhosts.Line([]string{knownhosts.Normalize(net.JoinHostPort(host, port))}, hostKey.PublicKey())
	}
	byName := filepath.Join(dir, "by-name")
	byIP := filepath.Join(dir, "by-ip")
	if err := os.WriteFile(byName, []byte(line("git.example.test")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(byIP, []byte(line("127.0.0.1")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ep, err := transport.NewEndpoint("ssh://git@git.example.test:" + port + "/srv/it's.git")
	if err != nil {
		t.Fatal(err)
	}
	open := func(knownHosts string) (transport.UploadPackSession, []string, error) {
		cb, err := knownhosts.New(knownHosts)
		if err != nil {
			t.Fatal(err)
		}
		var asked []string
		tr := dialTransport{ctx: context.Background(), dial: dialTo(target, &asked)}
		s, err := tr.sshSessionWith(ep, &ssh.ClientConfig{User: ep.User, HostKeyCallback: cb, Timeout: 5 * time.Second})
		return s, asked, err
	}

	s, asked, err := open(byName)
	if err != nil {
		t.Fatalf("host key listed under the name: %v", err)
	}
	if want := "git.example.test:" + port; len(asked) != 1 || asked[0] != want {
		t.Errorf("dialled %q, want %q", asked, want)
	}
	if _, err := s.AdvertisedReferencesContext(context.Background()); !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		t.Errorf("advertised refs: %v, want an empty repository", err)
	}
	s.Close()
	if cmd, want := <-commands, `git-upload-pack '/srv/it'\''s.git'`; cmd != want {
		t.Errorf("command %q, want %q", cmd, want)
	}

	// The same key listed only under the address dialled is not the
	// host's key.
	_, _, err = open(byIP)
	var keyErr *knownhosts.KeyError
	if !errors.As(err, &keyErr) || len(keyErr.Want) != 0 {
		t.Errorf("host key listed only under 127.0.0.1: %v, want an unknown key", err)
	}
}

// serveUploadPackSSH is an ssh server whose one command answers as
// upload-pack does for an empty repository (a flush-pkt), and sends the
// command it was asked to run to commands.
func serveUploadPackSSH(c net.Conn, conf *ssh.ServerConfig, commands chan<- string) {
	_, chans, reqs, err := ssh.NewServerConn(c, conf)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			defer ch.Close()
			for r := range creqs {
				if r.Type != "exec" {
					_ = r.Reply(false, nil)
					continue
				}
				var p struct{ Command string }
				_ = ssh.Unmarshal(r.Payload, &p)
				_ = r.Reply(true, nil)
				commands <- p.Command
				_, _ = ch.Write([]byte("0000"))
				// upload-pack reads until the client's flush-pkt
				_, _ = bufio.NewReader(ch).Peek(4)
				_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{0}))
				return
			}
		}()
	}
}

// An ssh server that completes the handshake and then never answers (the
// session channel, the command) holds the session no longer than the
// fetch's context.
func TestSSHSessionStalledServerEndsWithContext(t *testing.T) {
	t.Parallel()
	hostKey := newKey(t)
	srvConf := &ssh.ServerConfig{NoClientAuth: true}
	srvConf.AddHostKey(hostKey)
	release := make(chan struct{})
	defer close(release)
	target := listenOnce(t, func(c net.Conn) {
		if _, _, _, err := ssh.NewServerConn(c, srvConf); err == nil {
			<-release // neither accepts nor refuses the session channel
		}
	})
	ep, err := transport.NewEndpoint("ssh://git@git.example.test/r.git")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var asked []string
	tr := dialTransport{ctx: ctx, dial: dialTo(target, &asked)}
	done := make(chan error, 1)
	go func() {
		s, err := tr.sshSessionWith(ep, &ssh.ClientConfig{User: "git", HostKeyCallback: ssh.FixedHostKey(hostKey.PublicKey())})
		if s != nil {
			s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("stalled server: %v, want the context's deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("session still opening 10s after its context ended")
	}
}

// sshSessionWith is sshSession with the client configuration given.
func (t dialTransport) sshSessionWith(ep *transport.Endpoint, cfg *ssh.ClientConfig) (transport.UploadPackSession, error) {
	return t.sshSessionAt(ep, t.sshConfig().sshAddr(ep), cfg)
}
