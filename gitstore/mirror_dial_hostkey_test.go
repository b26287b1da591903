package gitstore

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// testAgent serves an empty ssh agent on a unix socket and returns its
// path (SSH_AUTH_SOCK).
func testAgent(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix socket: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	keyring := agent.NewKeyring()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _ = agent.ServeAgent(keyring, c) }()
		}
	}()
	return sock
}

// An ssh fetch as a user has it (keys from the agent, the host key from
// known_hosts) reaches a server that holds more host keys than known_hosts
// lists for it: the client asks for the algorithms listed (as OpenSSH
// does), so a server with an ecdsa and an ed25519 key, listed by its
// ed25519 key alone, is not refused as a changed key. A key listed in
// hashed form is found; a listed key the server does not hold is still a
// mismatch, and a host listed nowhere is unknown.
func TestSSHSessionHostKeyAlgorithmFromKnownHosts(t *testing.T) {
	_, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edKey, err := ssh.NewSignerFromKey(edPriv)
	if err != nil {
		t.Fatal(err)
	}
	ecPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ssh.NewSignerFromKey(ecPriv)
	if err != nil {
		t.Fatal(err)
	}
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	otherKey, _ := ssh.NewSignerFromKey(otherPriv)

	srvConf := &ssh.ServerConfig{NoClientAuth: true}
	srvConf.AddHostKey(ecKey)
	srvConf.AddHostKey(edKey)
	commands := make(chan string, 8)
	target := listenOnce(t, func(c net.Conn) { serveUploadPackSSH(c, srvConf, commands) })
	_, port, _ := net.SplitHostPort(target)
	name := knownhosts.Normalize(net.JoinHostPort("git.example.test", port))

	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", testAgent(t))
	ep, err := transport.NewEndpoint("ssh://git@git.example.test:" + port + "/r.git")
	if err != nil {
		t.Fatal(err)
	}
	open := func(knownHosts string) error {
		file := filepath.Join(t.TempDir(), "known_hosts")
		if err := os.WriteFile(file, []byte(knownHosts), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("SSH_KNOWN_HOSTS", file)
		var asked []string
		tr := dialTransport{ctx: context.Background(), dial: dialTo(target, &asked)}
		s, err := tr.sshSession(ep)
		if err != nil {
			return err
		}
		defer s.Close()
		_, err = s.AdvertisedReferencesContext(context.Background())
		if !errors.Is(err, transport.ErrEmptyRemoteRepository) {
			t.Errorf("advertised refs: %v, want an empty repository", err)
		}
		<-commands
		return nil
	}
	for _, tc := range []struct{ what, line string }{
		{"its ed25519 key", knownhosts.Line([]string{name}, edKey.PublicKey())},
		{"its ecdsa key", knownhosts.Line([]string{name}, ecKey.PublicKey())},
		{"its ed25519 key, hashed", knownhosts.Line([]string{knownhosts.HashHostname(name)}, edKey.PublicKey())},
	} {
		if err := open(tc.line + "\n"); err != nil {
			t.Errorf("known_hosts lists %s: %v", tc.what, err)
		}
	}
	var keyErr *knownhosts.KeyError
	err = open(knownhosts.Line([]string{name}, otherKey.PublicKey()) + "\n")
	if !errors.As(err, &keyErr) || len(keyErr.Want) == 0 {
		t.Errorf("known_hosts lists another key of the host: %v, want a key mismatch", err)
	}
	err = open(knownhosts.Line([]string{"elsewhere.example.test"}, edKey.PublicKey()) + "\n")
	if !errors.As(err, &keyErr) || len(keyErr.Want) != 0 {
		t.Errorf("known_hosts does not list the host: %v, want an unknown host", err)
	}
	t.Setenv("SSH_KNOWN_HOSTS", filepath.Join(home, "absent"))
	var asked []string
	if _, err := (dialTransport{ctx: context.Background(), dial: dialTo(target, &asked)}).sshSession(ep); err == nil || !strings.Contains(err.Error(), "known_hosts") || len(asked) != 0 {
		t.Errorf("no known_hosts file: %v (dialled %q), want a refusal before dialling", err, asked)
	}
}

// An ssh fetch that has no key the server takes (no agent at all, or an
// agent without the key) is the remote wanting credentials readproof does
// not have (ErrAuth, which the git source explains as such), not an
// unknown failure whose hint is to delete the mirror cache.
func TestSSHFetchWithoutCredentialsIsErrAuth(t *testing.T) {
	hostKey := newKey(t)
	srvConf := &ssh.ServerConfig{PublicKeyCallback: func(ssh.ConnMetadata, ssh.PublicKey) (*ssh.Permissions, error) {
		return nil, errors.New("test: no key is authorised")
	}}
	srvConf.AddHostKey(hostKey)
	target := listenOnce(t, func(c net.Conn) { serveUploadPackSSH(c, srvConf, nil) })
	_, port, _ := net.SplitHostPort(target)
	known := filepath.Join(t.TempDir(), "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(net.JoinHostPort("git.example.test", port))}, hostKey.PublicKey())
	if err := os.WriteFile(known, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_KNOWN_HOSTS", known)
	for _, agentSock := range []string{"", testAgent(t)} {
		t.Setenv("SSH_AUTH_SOCK", agentSock)
		var asked []string
		m, err := OpenMirror(t.TempDir(), "ssh://git@git.example.test:"+port+"/r.git", MirrorOptions{Dial: dialTo(target, &asked)})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Fetch(context.Background()); !errors.Is(err, ErrAuth) {
			t.Errorf("SSH_AUTH_SOCK=%q: %v, want ErrAuth", agentSock, err)
		}
	}
}

// A repository path that starts with "-" (scp-like "host:-path") would
// reach the server's upload-pack as an option: refused before dialling,
// as git refuses it ("strange pathname").
func TestSSHSessionRefusesOptionPath(t *testing.T) {
	t.Parallel()
	ep, err := transport.NewEndpoint("git@git.example.test:--advertise-refs")
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	tr := dialTransport{ctx: context.Background(), dial: func(context.Context, string, string) (net.Conn, error) {
		asked = append(asked, "dialled")
		return nil, errors.New("test: not dialled")
	}}
	_, err = tr.sshSessionWith(ep, &ssh.ClientConfig{User: "git", HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	if err == nil || len(asked) != 0 || !strings.Contains(err.Error(), "--advertise-refs") {
		t.Errorf("path %q: %v (dial %v), want a refusal naming the path before dialling", ep.Path, err, asked)
	}
}
