package gitstore

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/kevinburke/ssh_config"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// keyServer is an ssh server on 127.0.0.1 that takes one public key and
// answers git-upload-pack as for an empty repository; it records the keys
// clients offered, in order.
type keyServer struct {
	target, port string
	mu           sync.Mutex
	offered      []string // ssh.FingerprintSHA256 of each key offered
	authorized   []byte   // the one key taken, marshalled
	user         string   // the one user taken; "" for any
}

// allow makes k the key the server takes.
func (s *keyServer) allow(k ssh.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authorized = k.Marshal()
}

func (s *keyServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.offered...)
}

// newKeyServer starts a server taking no key until allowed one, and makes HOME a new
// directory whose ~/.ssh/known_hosts lists the server under
// git.example.test, with no ssh agent and no key.
func newKeyServer(t *testing.T) (*keyServer, string) {
	t.Helper()
	hostKey := newKey(t)
	s := &keyServer{}
	conf := &ssh.ServerConfig{PublicKeyCallback: func(m ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		s.mu.Lock()
		s.offered = append(s.offered, ssh.FingerprintSHA256(k))
		ok := s.authorized != nil && bytes.Equal(k.Marshal(), s.authorized) && (s.user == "" || m.User() == s.user)
		s.mu.Unlock()
		if ok {
			return &ssh.Permissions{}, nil
		}
		return nil, errors.New("test: key not authorised")
	}}
	conf.AddHostKey(hostKey)
	commands := make(chan string, 16)
	s.target = listenOnce(t, func(c net.Conn) { serveUploadPackSSH(c, conf, commands) })
	_, s.port, _ = net.SplitHostPort(s.target)

	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", "")
	t.Setenv("SSH_KNOWN_HOSTS", "")
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(net.JoinHostPort("git.example.test", s.port)), "git.example.test"}, hostKey.PublicKey())
	if err := os.WriteFile(filepath.Join(home, ".ssh", "known_hosts"), []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return s, home
}

// newKey makes an ed25519 key.
func newKey(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeKeyFile writes an OpenSSH private key file for a new key, with the
// mode given, encrypted when passphrase is not empty, and returns the key.
func writeKeyFile(t *testing.T, path string, mode os.FileMode, passphrase string) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(priv, "test")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "test", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// keyAgent serves an ssh agent holding keys (ed25519.PrivateKey,
// *ecdsa.PrivateKey...) on a unix socket and sets SSH_AUTH_SOCK to it.
func keyAgent(t *testing.T, keys ...any) {
	t.Helper()
	sock := testAgent(t) // an empty agent: replaced below by one with keys
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix socket: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	keyring := agent.NewKeyring()
	for _, k := range keys {
		if err := keyring.Add(agent.AddedKey{PrivateKey: k}); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _ = agent.ServeAgent(keyring, c) }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
}

// fetchSSH reads the server's refs over url (which names
// git.example.test; the dial goes to the server whatever it names).
func (s *keyServer) fetchSSH(t *testing.T, url string) error {
	t.Helper()
	m, err := OpenMirror(t.TempDir(), url, MirrorOptions{Dial: dialTo(s.target, new([]string))})
	if err != nil {
		t.Fatal(err)
	}
	err = m.Fetch(context.Background())
	if errors.Is(err, ErrRepoNotFound) || err == nil {
		return nil
	}
	return err
}

// open reads the server's refs through an ssh session: nil when the
// server took a key and ran upload-pack.
func (s *keyServer) open(t *testing.T, url string) error {
	t.Helper()
	ep, err := newEndpoint(url)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := (dialTransport{ctx: context.Background(), dial: dialTo(s.target, new([]string))}).sshSession(ep)
	if err != nil {
		return err
	}
	defer sess.Close()
	if _, err := sess.AdvertisedReferencesContext(context.Background()); !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		t.Errorf("advertised refs: %v, want an empty repository", err)
	}
	return nil
}

func fp(k ssh.Signer) string { return ssh.FingerprintSHA256(k.PublicKey()) }

// With no ssh agent, a fetch offers the default key files, as ssh does:
// ~/.ssh/id_rsa, id_ecdsa, id_ed25519 (OpenSSH 9.2's order:
// TestSSHDefaultKeysInSSHOrder), those that exist; over an ssh:// URL and
// a scp-like one.
func TestSSHKeyFileWithoutAgent(t *testing.T) {
	s, home := newKeyServer(t)
	other := writeKeyFile(t, filepath.Join(home, ".ssh", "id_rsa"), 0o600, "")
	key := writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "")
	s.allow(key.PublicKey())
	for _, url := range []string{"ssh://git@git.example.test:" + s.port + "/r.git", "git@git.example.test:r.git"} {
		if err := s.open(t, url); err != nil {
			t.Errorf("%s with ~/.ssh/id_ed25519 the server's key, no agent: %v", url, err)
		}
	}
	if got, want := s.seen(), []string{fp(other), fp(key)}; len(got) < 2 || !equalStrings(got[:2], want) {
		t.Errorf("keys offered %q, want id_rsa's then id_ed25519's %q", got, want)
	}
}

// ~/.ssh/config's IdentityFile for the host is the key offered (~, %r and
// %h expanded), and then the default key files are not.
func TestSSHIdentityFileFromConfig(t *testing.T) {
	s, home := newKeyServer(t)
	def := writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "")
	if err := os.Mkdir(filepath.Join(home, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	key := writeKeyFile(t, filepath.Join(home, "keys", "deploy-git@git.example.test"), 0o600, "")
	s.allow(key.PublicKey())
	conf := "Host other.example.test\n  IdentityFile ~/.ssh/id_ed25519\n\nHost git.example.test\n  IdentityFile \"~/keys/deploy-%r@%h\"\n"
	if err := os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.open(t, "ssh://git@git.example.test:"+s.port+"/r.git"); err != nil {
		t.Fatalf("IdentityFile the server's key: %v", err)
	}
	for _, k := range s.seen() {
		if k == fp(def) {
			t.Errorf("~/.ssh/id_ed25519 offered although ~/.ssh/config names an IdentityFile for the host")
		}
	}
	// A token ssh 9.2 does not expand (ssh -v: "unknown key %j") is
	// refused before dialling, naming it and the file.
	conf = "Host git.example.test\n  IdentityFile ~/keys/deploy-%j\n"
	if err := os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	n := len(s.seen())
	err := s.open(t, "ssh://git@git.example.test:"+s.port+"/r.git")
	if err == nil || !strings.Contains(err.Error(), "%j") || !strings.Contains(err.Error(), filepath.Join(home, ".ssh", "config")) || len(s.seen()) != n {
		t.Errorf("IdentityFile with %%j: %v, want a refusal naming %%j and ~/.ssh/config before any key is offered", err)
	}
}

// A key file others can read is refused as OpenSSH refuses it: not
// offered, and the error names it and the chmod that fixes it.
func TestSSHKeyFileReadableByOthersRefused(t *testing.T) {
	s, home := newKeyServer(t)
	path := filepath.Join(home, ".ssh", "id_ed25519")
	key := writeKeyFile(t, path, 0o640, "")
	s.allow(key.PublicKey())
	err := s.fetchSSH(t, "ssh://git@git.example.test:"+s.port+"/r.git")
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), path+" is readable by others (mode 0640)") || !strings.Contains(err.Error(), "chmod 600 "+path) {
		t.Errorf("group-readable key: %v, want ErrAuth naming the key and chmod 600", err)
	}
	if seen := s.seen(); len(seen) != 0 {
		t.Errorf("a group-readable key was offered: %q", seen)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.open(t, "ssh://git@git.example.test:"+s.port+"/r.git"); err != nil {
		t.Errorf("the same key, mode 0600: %v", err)
	}
}

// A key with a passphrase is not prompted for: it is skipped, and the
// error says to load it into ssh-agent. Loaded there, it is offered.
func TestSSHEncryptedKeySkipped(t *testing.T) {
	s, home := newKeyServer(t)
	path := filepath.Join(home, ".ssh", "id_ed25519")
	key := writeKeyFile(t, path, 0o600, "correct horse")
	s.allow(key.PublicKey())
	err := s.fetchSSH(t, "ssh://git@git.example.test:"+s.port+"/r.git")
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), path+" is encrypted: load it into ssh-agent (ssh-add "+path+")") {
		t.Errorf("encrypted key: %v, want ErrAuth saying to load it into ssh-agent", err)
	}
	if err != nil && strings.Contains(err.Error(), "correct horse") {
		t.Errorf("the error shows the passphrase: %v", err)
	}
	block, _ := pem.Decode(mustRead(t, path))
	raw, err := ssh.ParseRawPrivateKeyWithPassphrase(pem.EncodeToMemory(block), []byte("correct horse"))
	if err != nil {
		t.Fatal(err)
	}
	keyAgent(t, *raw.(*ed25519.PrivateKey))
	if err := s.open(t, "ssh://git@git.example.test:"+s.port+"/r.git"); err != nil {
		t.Errorf("the encrypted key loaded into the agent: %v", err)
	}
}

// A server that takes none of the keys: the error names the user, the
// host and what was offered (the agent, the key files), is ErrAuth, and
// shows no key material.
func TestSSHWrongKeyErrorListsWhatWasTried(t *testing.T) {
	s, home := newKeyServer(t)
	s.allow(newKey(t).PublicKey())
	path := filepath.Join(home, ".ssh", "id_ecdsa")
	file := writeKeyFile(t, path, 0o600, "")
	_, agentKey, _ := ed25519.GenerateKey(rand.Reader)
	keyAgent(t, agentKey)
	err := s.fetchSSH(t, "ssh://deploy@git.example.test:"+s.port+"/r.git")
	var ae *SSHAuthError
	if !errors.Is(err, ErrAuth) || !errors.As(err, &ae) {
		t.Fatalf("wrong keys: %v, want ErrAuth and an SSHAuthError", err)
	}
	msg := err.Error()
	for _, want := range []string{`user "deploy"`, "git.example.test:" + s.port, path, "the ssh agent at SSH_AUTH_SOCK=" + os.Getenv("SSH_AUTH_SOCK") + ": 1 key"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %q", msg, want)
		}
	}
	if len(ae.Offered) != 2 || !strings.HasPrefix(ae.Offered[0], "the ssh agent") || ae.Offered[1] != path {
		t.Errorf("offered %q, want the agent then %s", ae.Offered, path)
	}
	if got := s.seen(); len(got) != 2 || got[0] != ssh.FingerprintSHA256(mustSigner(t, agentKey).PublicKey()) || got[1] != fp(file) {
		t.Errorf("the server saw %q, want the agent's key then the file's", got)
	}
	if strings.Contains(msg, "PRIVATE KEY") || strings.Contains(msg, string(mustRead(t, path))[40:80]) {
		t.Errorf("the error shows key material: %v", msg)
	}
}

// A key path from ~/.ssh/config holding a control byte (here an escape
// sequence that would clear the screen) is shown escaped in the refusal,
// offered or not, never written to the terminal as it is.
func TestSSHAuthErrorEscapesConfigPaths(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no control bytes in Windows file names")
	}
	s, home := newKeyServer(t)
	s.allow(newKey(t).PublicKey())
	offered := filepath.Join(home, ".ssh", "k\x1b[2J")
	writeKeyFile(t, offered, 0o600, "")
	writeSSHConfig(t, home, "Host git.example.test\n  IdentityFile ~/.ssh/k\x1b[2J\n  IdentityFile ~/.ssh/gone\x07\n")
	err := s.fetchSSH(t, "ssh://deploy@git.example.test:"+s.port+"/r.git")
	var ae *SSHAuthError
	if !errors.As(err, &ae) || len(ae.Offered) != 1 || ae.Offered[0] != offered {
		t.Fatalf("fetch: %v, want a refusal of the key at %q", err, offered)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\x1b\x07") || !strings.Contains(msg, `k\x1b[2J`) || !strings.Contains(msg, `gone\a`) {
		t.Errorf("error %q: want the paths with their control bytes escaped", msg)
	}
	// a file or host named in a configuration error, as a warning or not
	for _, e := range []*SSHConfigError{{File: "/h/\x1b[2J/config", Err: errors.New("not read")},
		{File: "/h/config", Host: "h\x1b[2J", Key: "User", Value: "u", Err: errors.New("no")}} {
		if msg := e.Error(); strings.ContainsRune(msg, 0x1b) || !strings.Contains(msg, `\x1b[2J`) {
			t.Errorf("SSHConfigError %q: want its control bytes escaped", msg)
		}
	}
}

// IdentitiesOnly yes: only the IdentityFile keys, not the agent's others.
func TestSSHIdentitiesOnly(t *testing.T) {
	s, home := newKeyServer(t)
	_, agentKey, _ := ed25519.GenerateKey(rand.Reader)
	keyAgent(t, agentKey)
	s.allow(mustSigner(t, agentKey).PublicKey())
	path := filepath.Join(home, ".ssh", "deploy")
	file := writeKeyFile(t, path, 0o600, "")
	conf := "Host git.example.test\n  IdentitiesOnly yes\n  IdentityFile ~/.ssh/deploy\n"
	if err := os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	err := s.fetchSSH(t, "ssh://git@git.example.test:"+s.port+"/r.git")
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "IdentitiesOnly") {
		t.Errorf("IdentitiesOnly with the server's key in the agent alone: %v, want ErrAuth saying the agent's key was left out", err)
	}
	if got := s.seen(); len(got) != 1 || got[0] != fp(file) {
		t.Errorf("the server saw %q, want only %s's key", got, path)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustSigner(t *testing.T, k ed25519.PrivateKey) ssh.Signer {
	t.Helper()
	s, err := ssh.NewSignerFromKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// expandIdentityPath: the tokens it knows are expanded, and a path whose
// % are escaped as %% comes back as it was; it never panics.
func FuzzExpandIdentityPath(f *testing.F) {
	for _, s := range []string{"~/.ssh/id_%r@%h", "%d/.ssh/%u", "/k/%%p", "~", "~other/k", "/k/${HOME}", "/k/%p", "/k/%", "/k/%n-%k", "/k/%C", "/k/%i.%l.%L", "/k/%j"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := expandIdentityPath(p, "/home/u%d", "me", "h.example", "git")
		if err == nil && (p == "~" || strings.HasPrefix(p, "~/")) && !strings.HasPrefix(got, "/home/u%d") {
			t.Errorf("%q -> %q: ~ is not the home directory", p, got)
		}
		if strings.HasPrefix(p, "~") || strings.Contains(p, "${") {
			return
		}
		back, err := expandIdentityPath(strings.ReplaceAll(p, "%", "%%"), "/h", "me", "h.example", "git")
		if err != nil || back != p {
			t.Errorf("%q escaped -> %q, %v; want it back", p, back, err)
		}
	})
}

// No agent and no key file: the error says nothing was found, and where
// it was looked for.
func TestSSHNoKeyAnywhere(t *testing.T) {
	s, home := newKeyServer(t)
	s.allow(newKey(t).PublicKey())
	err := s.fetchSSH(t, "git@git.example.test:r.git")
	var ae *SSHAuthError
	if !errors.As(err, &ae) || len(ae.Offered) != 0 {
		t.Fatalf("no key: %v, want an SSHAuthError offering nothing", err)
	}
	for _, want := range []string{"none was found to offer", "SSH_AUTH_SOCK is not set", filepath.Join(home, ".ssh", "id_rsa") + ", id_ecdsa, id_ecdsa_sk, id_ed25519, id_ed25519_sk, id_xmss or id_dsa"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\ndoes not say %q", err, want)
		}
	}
}

// A deploy key per repository: a Host alias whose Hostname and Port are
// the server's, with its own IdentityFile and IdentitiesOnly yes, all in
// $HOME/.ssh/config (the file the keys and known_hosts come from). The
// alias leads to the Hostname, the IdentityFile is looked up under the
// alias, %h is the Hostname, and the agent's keys are not offered.
func TestSSHDeployKeyByHostAlias(t *testing.T) {
	s, home := newKeyServer(t)
	_, agentKey, _ := ed25519.GenerateKey(rand.Reader)
	keyAgent(t, agentKey)
	key := writeKeyFile(t, filepath.Join(home, ".ssh", "docs-git.example.test"), 0o600, "")
	s.allow(key.PublicKey())
	conf := "Host docs-deploy\n  Hostname git.example.test\n  Port " + s.port + "\n  IdentitiesOnly yes\n  IdentityFile ~/.ssh/docs-%h\n"
	if err := os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{"git@docs-deploy:docs.git", "ssh://git@docs-deploy/docs.git"} {
		var asked []string
		ep, err := newEndpoint(url)
		if err != nil {
			t.Fatal(err)
		}
		sess, err := (dialTransport{ctx: context.Background(), dial: dialTo(s.target, &asked)}).sshSession(ep)
		if err != nil {
			t.Errorf("%s: %v", url, err)
			continue
		}
		sess.Close()
		if want := "git.example.test:" + s.port; len(asked) != 1 || asked[0] != want {
			t.Errorf("%s: dialled %q, want the alias's Hostname and Port %s", url, asked, want)
		}
		if h, p := ReadSSHConfig().Address("docs-deploy", ""); h != "git.example.test" || p != s.port {
			t.Errorf("Address(docs-deploy) = %s %s, want the Hostname and Port the fetch dials", h, p)
		}
	}
	for _, k := range s.seen() {
		if k != fp(key) {
			t.Errorf("the server saw %s, not the alias's IdentityFile key", k)
		}
	}
}

// Any ~/.ssh/config is read, or noted as unreadable, without a panic; the
// IdentityFile lines of a host block are found in order.
func FuzzSSHConfigIdentityLines(f *testing.F) {
	for _, s := range []string{
		"Host git.example.test\n  IdentityFile ~/.ssh/a\n  IdentityFile \"~/.ssh/b c\"\n  IdentitiesOnly yes\n",
		"Host *\n  IdentityFile=%d/.ssh/%r@%h\n",
		"Match host git.example.test\n  IdentityFile ~/.ssh/m\n",
		"Host !git.example.test *.example.test\n  IdentityFile x\n",
		"Include nowhere/*\n",
		"Host git.example.test\n  ProxyCommand none\n  ProxyJump=bastion\n",
		"IgnoreUnknown use*,!usedns\nHost *\n  UseKeyring yes\n  Hostnam x\n",
		"Host git.example.test\n  IdentityFile \"a b\" c\n  IdentitiesOnly maybe\n",
		"Match all\n  IgnoreUnknown x\nHost *\n  x y\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := readSSHConfig(path)
		if err != nil || c == nil {
			return
		}
		// the ProxyJump and ProxyCommand look-up, which goes by the
		// file's lines, answers for any file that reads
		_ = (&SSHConfig{files: sshConfigs{{path: path, conf: c}}}).Check("git.example.test")
		files, _, err := identityLines(c, "git.example.test")
		if err != nil {
			return
		}
		for _, v := range files {
			_, _ = expandIdentityPath(unquote(v), "/home/u", "u", "git.example.test", "git")
		}
	})
}

// The IdentityFile lines of every block matching the host, in order, and
// the first IdentitiesOnly.
func TestSSHConfigIdentityLines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config")
	conf := "Host git.example.test\n  IdentitiesOnly yes\n  IdentityFile ~/.ssh/a\n\nHost other\n  IdentityFile ~/.ssh/o\n\nHost *.example.test\n  IdentitiesOnly no\n  IdentityFile \"~/.ssh/b c\"\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := readSSHConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	files, only, err := identityLines(c, "git.example.test")
	if err != nil || !equalStrings(files, []string{"~/.ssh/a", `"~/.ssh/b c"`}) || only != "yes" {
		t.Errorf("identity lines %q, IdentitiesOnly %q, %v", files, only, err)
	}
	// A Match block, which the parser refuses, does not cost the rest
	// of the file: its lines apply to no host, the Host blocks' do.
	if err := os.WriteFile(path, []byte("Match host git.example.test\n  IdentityFile ~/.ssh/m\nHost git.example.test\n  IdentityFile ~/.ssh/h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := readSSHConfig(path); err != nil {
		t.Errorf("a file with a Match block not read: %v", err)
	} else if files, _, err := identityLines(c, "git.example.test"); err != nil || !equalStrings(files, []string{"~/.ssh/h"}) {
		t.Errorf("with a Match block: identity lines %q, %v; want the Host block's alone", files, err)
	}
}

// The host and remote user come from the source's URL: one that is not a
// file name (a user "../secret") is refused where IdentityFile puts it in
// a path, before any key is read, rather than leading out of the
// directory the path names to another key.
func TestSSHIdentityFileTokenStaysInItsDirectory(t *testing.T) {
	s, home := newKeyServer(t)
	for _, d := range []string{"keys", "other"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	outside := writeKeyFile(t, filepath.Join(home, "other", "key"), 0o600, "")
	s.allow(outside.PublicKey())
	conf := "Host git.example.test\n  IdentityFile ~/keys/%r\n"
	if err := os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	err := s.open(t, "ssh://..%2Fother%2Fkey@git.example.test:"+s.port+"/r.git")
	var ce *SSHConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `"../other/key"`) || len(s.seen()) != 0 {
		t.Errorf("IdentityFile ~/keys/%%r with the user ../other/key: %v, offered %q; want a refusal naming the user before any key is offered", err, s.seen())
	}
	for _, c := range []struct{ host, user string }{{"git.example.test", ".."}, {"git.example.test", `a\b`}, {"..", "git"}, {"a/b", "git"}} {
		if got, err := expandIdentityPath("~/keys/%h/%r", "/home/u", "u", c.host, c.user); err == nil {
			t.Errorf("host %q, user %q: ~/keys/%%h/%%r = %q, want a refusal", c.host, c.user, got)
		}
	}
	if got, err := expandIdentityPath("~/keys/%h/%r", "/home/u", "u", "git.example.test", "git"); err != nil || got != "/home/u/keys/git.example.test/git" {
		t.Errorf("~/keys/%%h/%%r = %q, %v", got, err)
	}
	if got, err := expandIdentityPath("~/keys/id", "/home/u", "u", "..", "../x"); err != nil || got != "/home/u/keys/id" {
		t.Errorf("~/keys/id with a host and user it does not name = %q, %v", got, err)
	}
}

// The chmod and ssh-add in the note on a key not offered name its file as
// a shell reads it: under a home directory with a space in its name.
func TestSSHKeyNotesQuoteThePath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no file modes to refuse")
	}
	home := filepath.Join(t.TempDir(), "a b")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", "")
	loose := filepath.Join(home, ".ssh", "id_ed25519")
	writeKeyFile(t, loose, 0o644, "")
	locked := filepath.Join(home, ".ssh", "id_ecdsa")
	writeKeyFile(t, locked, 0o600, "passphrase")
	k, err := loadSSHKeys(t.Context(), "git.example.test", "git.example.test", "git")
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(k.skipped, "\n")
	for _, want := range []string{"chmod 600 '" + loose + "'", "ssh-add '" + locked + "'"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q, want %q", notes, want)
		}
	}
}

// identityLines are the IdentityFile values a configuration gives for the
// host alias, in order, and its IdentitiesOnly value ("" for none).
func identityLines(c *ssh_config.Config, alias string) (files []string, only string, err error) {
	files, only = (&sshConfigFile{conf: c}).identities(alias)
	return files, only, nil
}

// readSSHConfig parses the ssh configuration at path, its Match blocks
// made blocks that match no host; nil for none.
func readSSHConfig(path string) (*ssh_config.Config, error) {
	f, err := readSSHConfigFile(path, "")
	if f == nil || err != nil {
		return nil, err
	}
	return f.conf, nil
}
