package gitstore

import (
	"crypto/rand"
	"crypto/rsa"
	"os"
	"path/filepath"
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

// An RSA host key, or an RSA host certificate, is taken whichever SHA-2
// signature algorithms its server offers (rsa-sha2-256 only, rsa-sha2-512
// only, both), and refused when it offers ssh-rsa (SHA-1) only, as ssh 9.2
// with its default settings takes and refuses them; each case is checked
// by connecting ssh itself to the same server, when ssh is there.
func TestKnownHostsRSAAlgorithmsAsSSH(t *testing.T) {
	dir := t.TempDir()
	ca := keygenKey(t, dir, "ca", "ed25519")
	caLine := strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(ca.PublicKey())), "\n")
	rsaKey := keygenKey(t, dir, "rsa", "rsa")
	rsaLine := "git.example.test " + string(ssh.MarshalAuthorizedKey(rsaKey.PublicKey()))
	cert := hostCert(t, dir, "rsa", "ca", "-h", "-n", "git.example.test")
	certLine := "@cert-authority * " + caLine + "\n"
	for _, c := range []struct {
		what   string
		signer ssh.Signer
		algos  []string
		known  string
		taken  bool
	}{
		{"a key signing with rsa-sha2-256 only", rsaKey, []string{ssh.KeyAlgoRSASHA256}, rsaLine, true},
		{"a key signing with rsa-sha2-512 only", rsaKey, []string{ssh.KeyAlgoRSASHA512}, rsaLine, true},
		{"a key signing with both", rsaKey, []string{ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSASHA512}, rsaLine, true},
		{"a key signing with ssh-rsa only", rsaKey, []string{ssh.KeyAlgoRSA}, rsaLine, false},
		{"a certificate signing with any", cert, nil, certLine, true},
		{"a certificate signing with rsa-sha2-256 only", cert, []string{ssh.KeyAlgoRSASHA256}, certLine, true},
		{"a certificate signing with rsa-sha2-512 only", cert, []string{ssh.KeyAlgoRSASHA512}, certLine, true},
		{"a certificate signing with ssh-rsa only", cert, []string{ssh.KeyAlgoRSA}, certLine, false},
	} {
		signer := c.signer
		if c.algos != nil {
			var err error
			if signer, err = ssh.NewSignerWithAlgorithms(rsaKey.(ssh.AlgorithmSigner), c.algos); err != nil {
				t.Fatal(err)
			}
			if c.signer == cert { // the certificate over the key so restricted
				if signer, err = ssh.NewCertSigner(cert.PublicKey().(*ssh.Certificate), signer); err != nil {
					t.Fatal(err)
				}
			}
		}
		port, open := hostKeyServer(t, signer)
		home := os.Getenv("HOME")
		if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
			t.Fatal(err)
		}
		writeSSHConfig(t, home, "Host git.example.test\n  HostKeyAlias git.example.test\n")
		err := open(c.known)
		if c.taken && err != nil || !c.taken && err == nil {
			t.Errorf("%s: %v, want it taken: %v", c.what, err, c.taken)
		}
		if taken, out, ok := sshTakesHostKey(t, port, os.Getenv("SSH_KNOWN_HOSTS")); ok && taken != c.taken {
			t.Errorf("%s: ssh takes the host key: %v; the case is wrong\n%s", c.what, taken, out)
		}
	}
}
