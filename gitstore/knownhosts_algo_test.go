package gitstore

import (
	"crypto/rand"
	"crypto/rsa"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/hint"
	"golang.org/x/crypto/ssh"
)

// rsaHostKey is an RSA host key whose server signs only with the
// algorithms named (ssh-rsa alone: an old server's SHA-1 signatures).
func rsaHostKey(t *testing.T, algos ...string) (ssh.Signer, ssh.PublicKey) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(k)
	if err != nil {
		t.Fatal(err)
	}
	as, err := ssh.NewSignerWithAlgorithms(s.(ssh.AlgorithmSigner), algos)
	if err != nil {
		t.Fatal(err)
	}
	return as, s.PublicKey()
}

// A server whose RSA host key signs only with ssh-rsa (SHA-1) is refused,
// as ssh refuses it since OpenSSH 8.8 ("no matching host key type found"),
// with a hint; the same key signing with rsa-sha2-256 is taken. Before
// session 30 readproof asked for ssh-rsa too and took the SHA-1 signature
// (revsshkh's re-read, checked with ssh 9.2 against the same server).
func TestKnownHostsRefusesSHA1RSASignatures(t *testing.T) {
	for _, c := range []struct {
		algo string
		ok   bool
	}{{ssh.KeyAlgoRSA, false}, {ssh.KeyAlgoRSASHA256, true}} {
		signer, pub := rsaHostKey(t, c.algo)
		port, open := hostKeyServer(t, signer)
		err := open("[git.example.test]:" + port + " " + string(ssh.MarshalAuthorizedKey(pub)))
		if c.ok {
			if err != nil {
				t.Errorf("%s: %v, want the host key taken", c.algo, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "offers no host key") || !strings.Contains(hint.Of(err), "ssh-rsa") {
			t.Errorf("%s: %v (hint %q), want the server refused with a hint naming ssh-rsa", c.algo, err, hint.Of(err))
		}
	}
}

// A server whose host key is of another type than the one known_hosts
// lists for it fails the handshake with x/crypto's "no common algorithm
// for host key": the error names the host and the hint says the key may
// have changed, as ssh's REMOTE HOST IDENTIFICATION HAS CHANGED does.
// Before, the error was x/crypto's alone, with no hint.
func TestKnownHostsOtherKeyTypeSaysWhy(t *testing.T) {
	key := newKey(t) // ed25519
	_, rsaPub := rsaHostKey(t, ssh.KeyAlgoRSASHA256)
	port, open := hostKeyServer(t, key)
	err := open("[git.example.test]:" + port + " " + string(ssh.MarshalAuthorizedKey(rsaPub)))
	if err == nil || !strings.Contains(err.Error(), "git.example.test") || !strings.Contains(hint.Of(err), "may have changed") {
		t.Errorf("%v (hint %q), want the host named and a hint that its key may have changed", err, hint.Of(err))
	}
}
