package gitstore

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// writeTypedKeyFile writes at path an unencrypted OpenSSH private key file
// whose public key is of type typ, as ssh-keygen writes one for a security
// key (sk-ssh-ed25519@openssh.com), XMSS or DSA: what readproof reads of
// it is the type, which the file shows outside any encryption.
func writeTypedKeyFile(t *testing.T, path, typ string) { writeTypedKeyFileTB(t, path, typ) }

func writeTypedKeyFileTB(t testing.TB, path, typ string) {
	t.Helper()
	pub := ssh.Marshal(struct {
		Type, Key, App string
	}{typ, strings.Repeat("k", 32), "ssh:"})
	body := ssh.Marshal(struct {
		Cipher, KDF, KDFOptions string
		Keys                    uint32
		Pub, Priv               []byte
	}{"none", "none", "", 1, pub, []byte("not read")})
	data := pem.EncodeToMemory(&pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: append([]byte("openssh-key-v1\x00"), body...)})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// With no IdentityFile for the host, the default key files are tried in
// OpenSSH 9.2's order (ssh -G lists it): id_rsa, id_ecdsa, id_ecdsa_sk,
// id_ed25519, id_ed25519_sk, id_xmss, id_dsa. A security key's file is
// left out, said with a hint (it signs only when touched, and readproof
// asks for no touch), and so are an XMSS key (which readproof cannot
// read) and a DSA one (which ssh 9.2 does not offer either). Before,
// id_ed25519 came first, and the others were not looked at.
func TestSSHDefaultKeysInSSHOrder(t *testing.T) {
	s, home := newKeyServer(t)
	s.allow(newKey(t).PublicKey())
	dir := filepath.Join(home, ".ssh")
	for _, name := range []string{"id_rsa", "id_ecdsa", "id_ed25519"} {
		writeKeyFile(t, filepath.Join(dir, name), 0o600, "")
	}
	writeTypedKeyFile(t, filepath.Join(dir, "id_ecdsa_sk"), "sk-ecdsa-sha2-nistp256@openssh.com")
	writeTypedKeyFile(t, filepath.Join(dir, "id_ed25519_sk"), ssh.KeyAlgoSKED25519)
	writeTypedKeyFile(t, filepath.Join(dir, "id_xmss"), "ssh-xmss@openssh.com")
	writeTypedKeyFile(t, filepath.Join(dir, "id_dsa"), "ssh-dss")
	err := s.fetchSSH(t, "git@git.example.test:r.git")
	var ae *SSHAuthError
	if !errors.As(err, &ae) {
		t.Fatalf("fetch: %v, want an SSHAuthError", err)
	}
	want := []string{filepath.Join(dir, "id_rsa"), filepath.Join(dir, "id_ecdsa"), filepath.Join(dir, "id_ed25519")}
	if !equalStrings(ae.Offered, want) {
		t.Errorf("offered %q, want %q", ae.Offered, want)
	}
	skipped := strings.Join(ae.Skipped, "\n")
	for _, w := range []string{
		filepath.Join(dir, "id_ecdsa_sk") + " is a security key's (sk-ecdsa-sha2-nistp256@openssh.com), which signs only with the security key plugged in and touched",
		filepath.Join(dir, "id_ed25519_sk") + " is a security key's (sk-ssh-ed25519@openssh.com)",
		"ssh-keygen -t ed25519 -f FILE",
		filepath.Join(dir, "id_xmss") + " is an XMSS key",
		filepath.Join(dir, "id_dsa") + " is a DSA key, which ssh 9.2 offers only when PubkeyAcceptedAlgorithms enables ssh-dss",
	} {
		if !strings.Contains(skipped, w) {
			t.Errorf("not offered:\n%s\ndoes not say %q", skipped, w)
		}
	}
	if i, j := strings.Index(skipped, "id_ecdsa_sk"), strings.Index(skipped, "id_dsa"); i < 0 || j < i {
		t.Errorf("not offered:\n%s\nwant id_ecdsa_sk said before id_dsa, in ssh's order", skipped)
	}
	out, _, ok := sshG(t, "/dev/null", "git.example.test")
	if !ok {
		return
	}
	var order []string
	for _, l := range strings.Split(out, "\n") {
		if f, ok := strings.CutPrefix(l, "identityfile ~/.ssh/"); ok {
			order = append(order, f)
		}
	}
	if !equalStrings(order, defaultIdentityFiles) {
		t.Errorf("ssh -G tries %q, readproof %q", order, defaultIdentityFiles)
	}
}

// Any key file's bytes are read for a key type without a panic, and the
// type read is one the file holds.
func FuzzPrivateKeyType(f *testing.F) {
	dir := f.TempDir()
	for _, typ := range []string{ssh.KeyAlgoSKED25519, "ssh-xmss@openssh.com", ""} {
		p := filepath.Join(dir, "k")
		writeTypedKeyFileTB(f, p, typ)
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("-----BEGIN DSA PRIVATE KEY-----\nAAAA\n-----END DSA PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		typ := privateKeyType(data)
		if typ != "" && typ != "DSA" && !strings.Contains(string(data), "OPENSSH PRIVATE KEY") {
			t.Errorf("%q: type %q from a file that is no OpenSSH key", data, typ)
		}
	})
}

// skAgent is an ssh agent that lists, beside its keyring's keys, a
// security key's, as ssh-agent lists one added with ssh-add; signing with
// it fails (a real agent would wait for a touch).
type skAgent struct {
	agent.Agent
	sk ssh.PublicKey
}

func (a skAgent) List() ([]*agent.Key, error) {
	keys, err := a.Agent.List()
	return append(keys, &agent.Key{Format: a.sk.Type(), Blob: a.sk.Marshal(), Comment: "yubikey"}), err
}

// The agent's security keys are not offered, and said so with a hint:
// signing with one waits for a touch that readproof never asks for. Its
// other keys are. Before, the security key was offered, and a server
// taking it left the fetch waiting on the agent.
func TestSSHAgentSecurityKeyNotOffered(t *testing.T) {
	home := sshHome(t)
	sock := testAgent(t)
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix socket: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	keyring := agent.NewKeyring()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	sk, err := ssh.ParsePublicKey(ssh.Marshal(struct{ Type, Key, App string }{ssh.KeyAlgoSKED25519, strings.Repeat("k", 32), "ssh:"}))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _ = agent.ServeAgent(skAgent{keyring, sk}, c) }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
	k, err := readSSHConfigs(filepath.Join(home, "no-system-config")).keys(t.Context(), "git.example.test", "git.example.test", "git")
	if err != nil {
		t.Fatal(err)
	}
	defer k.close()
	if len(k.signers) != 1 || k.signers[0].PublicKey().Type() != ssh.KeyAlgoED25519 {
		var types []string
		for _, s := range k.signers {
			types = append(types, s.PublicKey().Type())
		}
		t.Errorf("offered keys of types %q, want the ed25519 one alone", types)
	}
	if skipped := strings.Join(k.skipped, "\n"); !strings.Contains(skipped, "1 key of a security key, which signs only with the security key plugged in and touched") {
		t.Errorf("not offered:\n%s\ndoes not say the agent's security key is left out", skipped)
	}
}
