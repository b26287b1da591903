package evidence

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func pkcs8PEM(t testing.TB, k Key) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k.PrivateKey())
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func TestCreateAndLoadKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config", "readproof", "evidence_ed25519")
	k, err := CreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode %v, %v", info.Mode(), err)
	}
	priv, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(priv), "-----BEGIN OPENSSH PRIVATE KEY-----\n") {
		t.Fatalf("private key is not OpenSSH PEM:\n%.40s", priv)
	}
	pub, _ := os.ReadFile(path + ".pub")
	if string(pub) != k.AuthorizedKey()+"\n" || !strings.HasPrefix(string(pub), "ssh-ed25519 AAAA") {
		t.Fatalf("public key file %q", pub)
	}
	pk, _, _, _, err := ssh.ParseAuthorizedKey(pub)
	if err != nil || ssh.FingerprintSHA256(pk) != k.Fingerprint() {
		t.Fatalf(".pub does not parse to the key: %v", err)
	}
	loaded, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Public.Equal(k.Public) || !loaded.PrivateKey().Equal(k.PrivateKey()) || loaded.Path != path {
		t.Fatal("loaded key differs")
	}
	// Refuses to overwrite either file.
	if _, err := CreateKey(path); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("overwrite: %v", err)
	}
	os.Remove(path)
	if _, err := CreateKey(path); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("overwrite of .pub: %v", err)
	}
	// The key never prints its private half.
	for _, s := range []string{k.String(), k.GoString()} {
		if !strings.Contains(s, k.Fingerprint()) || strings.Contains(s, string(k.PrivateKey())) {
			t.Fatalf("String/GoString %q", s)
		}
	}
}

func TestKeyLocation(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	project := filepath.Join(root, "project")
	store := filepath.Join(project, ".readproof")
	os.MkdirAll(store, 0o755)
	elsewhere := filepath.Join(root, "home")
	os.MkdirAll(elsewhere, 0o755)
	// A symlink from outside into the project.
	link := filepath.Join(elsewhere, "sneaky")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		filepath.Join(store, "key"),
		filepath.Join(project, "keys", "new", "key"),
		filepath.Join(link, "key"),
		project,
	} {
		if _, err := CreateKey(p, store, project); !errors.Is(err, ErrKeyLocation) {
			t.Errorf("CreateKey(%s) = %v, want ErrKeyLocation", p, err)
		}
	}
	// The forbidden directory given through a symlink is resolved too.
	if _, err := CreateKey(filepath.Join(project, "k2"), link); !errors.Is(err, ErrKeyLocation) {
		t.Errorf("forbidden dir via symlink: %v", err)
	}
	// A sibling whose name shares a prefix is fine.
	ok := filepath.Join(root, "project-keys", "key")
	if _, err := CreateKey(ok, store, project); err != nil {
		t.Fatalf("CreateKey(%s): %v", ok, err)
	}
	// LoadKey refuses a key inside, even an existing good one.
	inside := filepath.Join(project, "k")
	os.WriteFile(inside, pkcs8PEM(t, testKey(t, 1)), 0o600)
	if _, err := LoadKey(inside, project); !errors.Is(err, ErrKeyLocation) {
		t.Fatalf("LoadKey inside project: %v", err)
	}
	if _, err := LoadKey(inside); err != nil {
		t.Fatalf("LoadKey PKCS#8: %v", err)
	}
}

func TestLoadKeyRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "k")
	os.WriteFile(p, pkcs8PEM(t, testKey(t, 1)), 0o640)
	if _, err := LoadKey(p); !errors.Is(err, ErrKeyPermissions) {
		t.Fatalf("group-readable: %v", err)
	}
	os.Chmod(p, 0o604)
	if _, err := LoadKey(p); !errors.Is(err, ErrKeyPermissions) {
		t.Fatalf("world-readable: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "junk"), []byte("not a key"), 0o600)
	if _, err := LoadKey(filepath.Join(dir, "junk")); !errors.Is(err, ErrUnsupportedKey) {
		t.Fatalf("junk: %v", err)
	}
	// Encrypted and non-ed25519 keys, written with x/crypto.
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "c", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	enc := filepath.Join(dir, "enc")
	os.WriteFile(enc, pem.EncodeToMemory(block), 0o600)
	_, err = LoadKey(enc)
	if !errors.Is(err, ErrEncryptedKey) || !strings.Contains(err.Error(), "passphrase") {
		t.Fatalf("encrypted: %v", err)
	}
	if _, err := LoadKey(filepath.Join(dir, "absent")); err == nil {
		t.Fatal("missing file loaded")
	}
	if _, err := LoadKey(dir); err == nil {
		t.Fatal("directory loaded")
	}
}

// TestKeysWithSSHKeygen checks interchange with OpenSSH: a key ssh-keygen
// made loads here, ours loads in ssh-keygen, fingerprints agree.
func TestKeysWithSSHKeygen(t *testing.T) {
	t.Parallel()
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("ssh-keygen not installed")
	}
	dir := t.TempDir()
	theirs := filepath.Join(dir, "id_ed25519")
	if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", theirs).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	k, err := LoadKey(theirs)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(keygen, "-l", "-f", theirs+".pub").Output()
	if err != nil || !strings.Contains(string(out), " "+k.Fingerprint()+" ") {
		t.Fatalf("fingerprint %s not in ssh-keygen -l output %q (%v)", k.Fingerprint(), out, err)
	}

	ours := filepath.Join(dir, "ours")
	k2, err := CreateKey(ours)
	if err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(keygen, "-y", "-f", ours).Output()
	if err != nil || !strings.HasPrefix(k2.AuthorizedKey(), strings.TrimSpace(string(out))) {
		t.Fatalf("ssh-keygen -y on our key: %q (%v), want %q", out, err, k2.AuthorizedKey())
	}

	enc := filepath.Join(dir, "enc")
	// -a 1: one KDF round (the default 16 costs ssh-keygen a fifth of a
	// second of CPU); the key is encrypted all the same
	exec.Command(keygen, "-q", "-t", "ed25519", "-a", "1", "-N", "secret", "-f", enc).Run()
	if _, err := LoadKey(enc); !errors.Is(err, ErrEncryptedKey) {
		t.Fatalf("encrypted ssh-keygen key: %v", err)
	}
	rsa := filepath.Join(dir, "rsa")
	// 1024 bits, OpenSSH's minimum: any RSA key is refused, and a larger
	// one only costs ssh-keygen longer prime searches
	exec.Command(keygen, "-q", "-t", "rsa", "-b", "1024", "-N", "", "-f", rsa).Run()
	if _, err := LoadKey(rsa); !errors.Is(err, ErrUnsupportedKey) {
		t.Fatalf("rsa key: %v", err)
	}
}

func TestPublicKeyForms(t *testing.T) {
	t.Parallel()
	k := testKey(t, 1)
	pemKey := k.PublicPEM()
	if !strings.HasPrefix(string(pemKey), "-----BEGIN PUBLIC KEY-----\n") {
		t.Fatalf("PEM %q", pemKey)
	}
	line := k.AllowedSignersLine("alice@example.com")
	if !strings.HasPrefix(line, "alice@example.com ssh-ed25519 AAAA") {
		t.Fatalf("allowed_signers line %q", line)
	}
	signers, err := ParseAllowedSigners([]byte(line + "\n"))
	if err != nil || len(signers) != 1 || signers[0].Principals != "alice@example.com" {
		t.Fatalf("line does not parse back: %v %+v", err, signers)
	}
	if l := k.AllowedSignersLine(`Eve "the auditor"`); !strings.HasPrefix(l, `"Eve the auditor" ssh-ed25519`) {
		t.Fatalf("quoted principal %q", l)
	} else if s, err := ParseAllowedSigners([]byte(l)); err != nil || s[0].Principals != "Eve the auditor" {
		t.Fatalf("quoted principal does not parse back: %v", err)
	}
	for name, data := range map[string]string{
		"pem":             string(pemKey),
		"authorized_keys": k.AuthorizedKey() + "\n",
		"allowed_signers": "# trusted\n" + line + "\n",
		"options":         `alice@example.com namespaces="git" ` + k.AuthorizedKey(),
	} {
		keys, err := ParsePublicKeys([]byte(data))
		if err != nil || len(keys) != 1 || !keys[0].Equal(k.Public) {
			t.Errorf("%s: %v %v", name, keys, err)
		}
	}
	for name, data := range map[string]string{
		"empty":   "",
		"garbage": "hello world",
		"private": string(pkcs8PEM(t, k)),
	} {
		if _, err := ParsePublicKeys([]byte(data)); !errors.Is(err, ErrUnsupportedKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if p, err := DefaultKeyPath(); err == nil && !strings.HasSuffix(p, filepath.Join("readproof", "evidence_ed25519")) {
		t.Fatalf("default path %s", p)
	}
}

// TestKeyPrincipal (issue 12.9): the principal given when the key is created
// is recorded beside it and names the allowed_signers line; an explicit
// principal still wins; a key without one says "readproof".
func TestKeyPrincipal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "k")
	created, err := CreateKeyFor(path, "auditor@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if created.Principal != "auditor@example.com" {
		t.Errorf("created key principal %q", created.Principal)
	}
	k, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := k.AllowedSignersLine(""); !strings.HasPrefix(got, "auditor@example.com ssh-ed25519 ") {
		t.Errorf("AllowedSignersLine(\"\") = %q, want the recorded principal", got)
	}
	if got := k.AllowedSignersLine("ops@example.com"); !strings.HasPrefix(got, "ops@example.com ") {
		t.Errorf("explicit principal: %q", got)
	}
	plain, err := CreateKey(filepath.Join(dir, "plain"))
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.AllowedSignersLine(""); !strings.HasPrefix(got, "readproof ssh-ed25519 ") {
		t.Errorf("no principal recorded: %q", got)
	}
	for _, bad := range []string{"a\nb", `"quoted"`, " padded", strings.Repeat("x", 300)} {
		p := filepath.Join(dir, "bad")
		if _, err := CreateKeyFor(p, bad); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("principal %q: %v, want ErrInvalidInput", bad, err)
		}
		if _, err := os.Stat(p); err == nil {
			t.Errorf("principal %q refused but the key was written", bad)
		}
	}
	// A tampered principal file is refused, not printed.
	os.WriteFile(PrincipalPath(path), []byte("evil\x1b[31m\n"), 0o644)
	if _, err := LoadKey(path); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("control character in the principal file: %v", err)
	}
}
