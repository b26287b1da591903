package gitstore

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// An ssh fetch of a host written in capitals (Git.Example.TEST, in any
// form of address, or as a Hostname) looks the host key up under the host
// in lower case, as OpenSSH does (ssh -G Git.Example.TEST gives hostname
// git.example.test, and ssh and ssh-keyscan write known_hosts so): a
// known_hosts listing git.example.test knows it. Before, the lookup was
// of the name as written, and the host read as unknown.
func TestSSHSessionLooksUpHostKeyInLowerCase(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostKey, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	srvConf := &ssh.ServerConfig{NoClientAuth: true}
	srvConf.AddHostKey(hostKey)
	commands := make(chan string, 16)
	target := listenOnce(t, func(c net.Conn) { serveUploadPackSSH(c, srvConf, commands) })
	_, port, _ := net.SplitHostPort(target)

	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", testAgent(t))
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := "Host capital-alias\n  Hostname Git.Example.TEST\n  Port " + port + "\n"
	if err := os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	known := filepath.Join(t.TempDir(), "known_hosts")
	for _, tc := range []struct{ listed, want string }{
		{knownhosts.Normalize(net.JoinHostPort("git.example.test", port)), "plain"},
		{knownhosts.HashHostname(knownhosts.Normalize(net.JoinHostPort("git.example.test", port))), "hashed"},
	} {
		if err := os.WriteFile(known, []byte(knownhosts.Line([]string{tc.listed}, hostKey.PublicKey())+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("SSH_KNOWN_HOSTS", known)
		for _, url := range []string{
			"ssh://git@Git.Example.TEST:" + port + "/r.git",
			"[git@Git.Example.TEST:" + port + "]:r.git",
			"git@[Git.Example.TEST:" + port + "]:r.git",
			"git@capital-alias:r.git",
		} {
			ep, err := newEndpoint(url)
			if err != nil {
				t.Fatalf("%s: %v", url, err)
			}
			var asked []string
			s, err := (dialTransport{ctx: context.Background(), dial: dialTo(target, &asked)}).sshSession(ep)
			if err != nil {
				t.Errorf("%s, known_hosts listing git.example.test (%s): %v, want the host known", url, tc.want, err)
				continue
			}
			if _, err := s.AdvertisedReferencesContext(context.Background()); !errors.Is(err, transport.ErrEmptyRemoteRepository) {
				t.Errorf("%s: advertised refs: %v, want an empty repository", url, err)
			}
			s.Close()
			<-commands
			if want := net.JoinHostPort("git.example.test", port); len(asked) != 1 || asked[0] != want {
				t.Errorf("%s: dialled %q, want %q", url, asked, want)
			}
		}
	}
}
