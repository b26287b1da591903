package gitstore

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/readproof/readproof/internal/hint"
)

// sshKeygen runs ssh-keygen in dir, skipping the test without it.
func sshKeygen(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("no ssh-keygen")
	}
	cmd := exec.Command("ssh-keygen", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil && !slices.Contains(args, "-F") {
		t.Fatalf("ssh-keygen %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// keygenKey makes a key pair with ssh-keygen in dir, named name, and
// returns its signer.
func keygenKey(t *testing.T, dir, name, typ string) ssh.Signer {
	t.Helper()
	sshKeygen(t, dir, "-q", "-t", typ, "-N", "", "-C", name, "-f", name)
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.ParsePrivateKey(data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hostKeyServer serves upload-pack over ssh with the host keys given,
// taking any client, and returns its address and a function that opens
// a session to git.example.test on the server's port with known as the
// known_hosts file's content: nil when the host key is taken.
func hostKeyServer(t *testing.T, keys ...ssh.Signer) (port string, open func(known string) error) {
	t.Helper()
	conf := &ssh.ServerConfig{NoClientAuth: true}
	for _, k := range keys {
		conf.AddHostKey(k)
	}
	commands := make(chan string, 64)
	target := listenOnce(t, func(c net.Conn) { serveUploadPackSSH(c, conf, commands) })
	_, port, _ = net.SplitHostPort(target)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", testAgent(t))
	ep, err := transport.NewEndpoint("ssh://git@git.example.test:" + port + "/r.git")
	if err != nil {
		t.Fatal(err)
	}
	return port, func(known string) error {
		file := filepath.Join(t.TempDir(), "known_hosts")
		if err := os.WriteFile(file, []byte(known), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("SSH_KNOWN_HOSTS", file)
		s, err := (dialTransport{ctx: context.Background(), dial: dialTo(target, new([]string))}).sshSession(ep)
		if err != nil {
			return err
		}
		defer s.Close()
		if _, err := s.AdvertisedReferencesContext(context.Background()); !errors.Is(err, transport.ErrEmptyRemoteRepository) {
			t.Errorf("advertised refs: %v, want an empty repository", err)
		}
		return nil
	}
}

// A known_hosts line longer than 64 KiB (a long comment, a host field
// listing many names) is read as ssh reads it, and the host's line after
// it found. Before, the known_hosts library's line scanner stopped at
// 64 KiB and the fetch failed ("token too long").
func TestKnownHostsLongLine(t *testing.T) {
	key := newKey(t)
	port, open := hostKeyServer(t, key)
	name := knownhosts.Normalize(net.JoinHostPort("git.example.test", port))
	long := "# " + strings.Repeat("x", 70<<10) + "\n"
	many := strings.Repeat("h.example.test,", 5000) + "other.example.test " + string(ssh.MarshalAuthorizedKey(key.PublicKey()))
	for what, data := range map[string]string{"a 70 KiB comment": long, "a 75 KiB host field": many} {
		if err := open(data + knownhosts.Line([]string{name}, key.PublicKey()) + "\n"); err != nil {
			t.Errorf("%s before the host's line: %v, want the host key taken", what, err)
		}
	}
}

// A known_hosts file over the bound readproof reads is refused, naming the
// file, with a hint, before anything is read from it.
func TestKnownHostsTooLarge(t *testing.T) {
	key := newKey(t)
	_, open := hostKeyServer(t, key)
	err := open(strings.Repeat("#\n", maxKnownHostsBytes/2+1))
	if err == nil || !strings.Contains(err.Error(), os.Getenv("SSH_KNOWN_HOSTS")+": "+errKnownHostsTooLarge.Error()) || !strings.Contains(hint.Of(err), "ssh-keygen -R") {
		t.Errorf("a known_hosts file over %d bytes: %v, want it refused by name", maxKnownHostsBytes, err)
	}
}

// Hashed lines as ssh-keygen -H writes them are matched: the host's line
// taken, another host's line not, under the [host]:port name of a port
// other than 22.
func TestKnownHostsHashedBySSHKeygen(t *testing.T) {
	key := newKey(t)
	port, open := hostKeyServer(t, key)
	dir := t.TempDir()
	write := func(host string) string {
		file := filepath.Join(dir, "kh")
		if err := os.WriteFile(file, []byte(knownhosts.Line([]string{host}, key.PublicKey())+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		sshKeygen(t, dir, "-H", "-f", "kh")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), "|1|") {
			t.Fatalf("ssh-keygen -H wrote %q, want a hashed line", data)
		}
		return string(data)
	}
	if err := open(write("[git.example.test]:" + port)); err != nil {
		t.Errorf("the host hashed by ssh-keygen: %v, want its key taken", err)
	}
	var keyErr *knownhosts.KeyError
	if err := open(write("git.example.test")); !errors.As(err, &keyErr) || len(keyErr.Want) != 0 {
		t.Errorf("the host hashed without its port %s: %v, want it unknown", port, err)
	}
}

// The lines a known_hosts file lists for a name are those ssh finds
// (ssh-keygen -F, which matches as ssh does: hostfile.c): wildcards over
// the whole [host]:port name, patterns in any case, a negated pattern
// leaving its line out, hashed names. Before, a * pattern applied to
// port 22 alone and a pattern in capitals to no host.
func TestKnownHostsLinesAsSSHKeygenFinds(t *testing.T) {
	key := newKey(t).PublicKey()
	k := strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(key)), "\n")
	lines := []string{
		"* " + k,
		"GIT.Example.TEST " + k,
		"*.example.test,!bad.example.test " + k,
		"[git.example.test]:2222 " + k,
		"[*.example.test]:* " + k,
		"git.example.test:2222 " + k,
		"git.example.te? " + k,
		"!git.example.test,* " + k,
		knownhosts.HashHostname("[git.example.test]:2222") + " " + k,
		knownhosts.HashHostname("bad.example.test") + " " + k,
		"@revoked bad.* " + k,
		"@cert-authority [*]:2222 " + k,
	}
	dir := t.TempDir()
	data := strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "kh"), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	db := &knownHostsDB{}
	if err := db.add([]byte(data), "kh"); err != nil {
		t.Fatal(err)
	}
	found := regexp.MustCompile(`found: line (\d+)`)
	for _, addr := range []string{"git.example.test:22", "git.example.test:2222", "bad.example.test:22", "BAD.example.test:2222", "elsewhere.test:22"} {
		name, _, err := lookupName(addr)
		if err != nil {
			t.Fatal(err)
		}
		var want []int
		for _, m := range found.FindAllStringSubmatch(sshKeygen(t, dir, "-F", name, "-f", "kh"), -1) {
			n, _ := strconv.Atoi(m[1])
			want = append(want, n)
		}
		var got []int
		for _, l := range db.linesFor(name) {
			got = append(got, l.line)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: lines %v, want those ssh-keygen -F finds: %v", name, got, want)
		}
	}
}

// A pattern list is matched as ssh matches it (ssh-keygen -F shows it):
// one pattern over 1022 bytes, negated or not, makes the line match
// nothing; case is A to Z alone (a Kelvin sign is no k); spaces and tabs
// alone are passed over before the host field (a \v or a no-break space
// is part of it). Before, the other patterns of such a line were matched,
// a Kelvin sign matched k, and any leading space was trimmed: readproof
// took a key for a host ssh finds unknown.
func TestKnownHostsPatternsAsSSHMatchesThem(t *testing.T) {
	k := strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(newKey(t).PublicKey())), "\n")
	lines := []string{
		"git.example.test," + strings.Repeat("a", 1023) + " " + k,
		"git.example.test,!" + strings.Repeat("a", 1023) + " " + k,
		strings.Repeat("b", 1023) + ",git.example.test " + k,
		"git.example.test," + strings.Repeat("a", 1022) + " " + k,
		"\u212aey.example.test " + k,
		"KEY.Example.TEST " + k,
		"\vgit.example.test " + k,
		"\u00a0git.example.test " + k,
		" \tgit.example.test " + k + " \v",
	}
	data := strings.Join(lines, "\n") + "\n"
	db := &knownHostsDB{}
	if err := db.add([]byte(data), "kh"); err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{"git.example.test": {4, 9}, "key.example.test": {6}}
	for name, w := range want {
		var got []int
		for _, l := range db.linesFor(name) {
			got = append(got, l.line)
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s: lines %v, want %v", name, got, w)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kh"), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	found := regexp.MustCompile(`found: line (\d+)`)
	for name, w := range want {
		var ssh []int
		for _, m := range found.FindAllStringSubmatch(sshKeygen(t, dir, "-F", name, "-f", "kh"), -1) {
			n, _ := strconv.Atoi(m[1])
			ssh = append(ssh, n)
		}
		if !slices.Equal(ssh, w) {
			t.Errorf("%s: ssh-keygen -F finds lines %v, not %v: the case is wrong", name, ssh, w)
		}
	}
}

// A key a @revoked line for the host lists is refused, though another
// line lists it for the host, as ssh refuses it; one revoked for other
// hosts alone is taken, as ssh takes it (checked by connecting ssh
// itself to the same server, when ssh is there). Before, a @revoked line
// refused its key for every host.
func TestKnownHostsRevoked(t *testing.T) {
	key := newKey(t)
	port, open := hostKeyServer(t, key)
	home := os.Getenv("HOME")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeSSHConfig(t, home, "Host git.example.test\n  HostKeyAlias git.example.test\n")
	k := strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(key.PublicKey())), "\n")
	var revoked *knownhosts.RevokedError
	if err := open("git.example.test " + k + "\n@revoked * " + k + "\n"); !errors.As(err, &revoked) || revoked.Revoked.Line != 2 {
		t.Errorf("the host's key revoked: %v, want it refused, naming line 2", err)
	}
	if taken, out, ok := sshTakesHostKey(t, port, os.Getenv("SSH_KNOWN_HOSTS")); ok && taken {
		t.Errorf("ssh takes a key revoked for the host: the case is wrong\n%s", out)
	}
	if err := open("git.example.test " + k + "\n@revoked elsewhere.test " + k + "\n"); err != nil {
		t.Errorf("the host's key revoked for another host: %v, want it taken", err)
	}
	if taken, out, ok := sshTakesHostKey(t, port, os.Getenv("SSH_KNOWN_HOSTS")); ok && !taken {
		t.Errorf("ssh refuses a key revoked for another host: the case is wrong\n%s", out)
	}
}

// A @revoked line revokes what ssh reads it to revoke, checked by
// connecting ssh itself to the same server: an RSA key written with the
// type name rsa-sha2-512 (a plain line so written lists the key), and a
// key written as one of its certificates, which revokes the key and its
// certificates. Before, each such @revoked line was passed over or
// matched nothing, and readproof took the key ssh refuses.
func TestKnownHostsRevokedAsSSHReadsIt(t *testing.T) {
	dir := t.TempDir()
	keygenKey(t, dir, "ca", "ed25519")
	ca := strings.TrimSpace(sshKeygenFile(t, dir, "ca.pub"))
	rsaKey := keygenKey(t, dir, "rsa", "rsa")
	rsaCert := hostCert(t, dir, "rsa", "ca", "-h", "-n", "git.example.test")
	rsaLine := strings.Fields(string(ssh.MarshalAuthorizedKey(rsaKey.PublicKey())))
	certLine := strings.Fields(string(ssh.MarshalAuthorizedKey(rsaCert.PublicKey())))
	plain, cert := strings.Join(rsaLine, " "), strings.Join(certLine, " ")
	var revoked *knownhosts.RevokedError
	for _, c := range []struct {
		what   string
		signer ssh.Signer
		known  string
		taken  bool
	}{
		{"a plain line writing rsa-sha2-256", rsaKey, "git.example.test rsa-sha2-256 " + rsaLine[1] + "\n", true},
		{"the key revoked as rsa-sha2-512", rsaKey, "git.example.test " + plain + "\n@revoked * rsa-sha2-512 " + rsaLine[1] + "\n", false},
		{"the key revoked as its certificate", rsaKey, "git.example.test " + plain + "\n@revoked * " + cert + "\n", false},
		{"the certificate revoked as rsa-sha2-256-cert", rsaCert, "@cert-authority * " + ca + "\n@revoked * rsa-sha2-256-cert-v01@openssh.com " + certLine[1] + "\n", false},
	} {
		port, open := hostKeyServer(t, c.signer)
		home := os.Getenv("HOME")
		if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
			t.Fatal(err)
		}
		writeSSHConfig(t, home, "Host git.example.test\n  HostKeyAlias git.example.test\n")
		err := open(c.known)
		if c.taken && err != nil || !c.taken && !errors.As(err, &revoked) {
			t.Errorf("%s: %v, want the key taken: %v (else revoked)", c.what, err, c.taken)
		}
		if taken, out, ok := sshTakesHostKey(t, port, os.Getenv("SSH_KNOWN_HOSTS")); ok && taken != c.taken {
			t.Errorf("%s: ssh takes the host key: %v; the case is wrong\n%s", c.what, taken, out)
		}
	}
}

// sshKeygenFile is the content of the file name in dir.
func sshKeygenFile(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A host key refused says the key's fingerprint and the name looked up,
// and ends in a hint by the refusal's kind: no line for the host, another
// key listed, the key revoked. Before, the refusal was "knownhosts: key
// is unknown" (or "key mismatch", "key is revoked") alone, with no hint.
func TestKnownHostsRefusalSaysWhy(t *testing.T) {
	key, other := newKey(t), newKey(t)
	port, open := hostKeyServer(t, key)
	k := string(ssh.MarshalAuthorizedKey(key.PublicKey()))
	name := "[git.example.test]:" + port
	for _, c := range []struct{ known, fix string }{
		{"elsewhere.test " + k, "ssh-keygen -F '" + name + "' shows no line lists it"},
		{name + " " + string(ssh.MarshalAuthorizedKey(other.PublicKey())), "ssh-keygen -R '" + name + "'"},
		{name + " " + k + "@revoked * " + k, "a @revoked line lists the key"},
	} {
		err := open(c.known)
		if err == nil || !strings.Contains(err.Error(), "host key ssh-ed25519 "+ssh.FingerprintSHA256(key.PublicKey())+" of "+name+": knownhosts: ") || !strings.Contains(hint.Of(err), c.fix) {
			t.Errorf("%q: %v (hint %q), want the key and the name said, and a hint: %s", c.known, err, hint.Of(err), c.fix)
		}
	}
}

// A * line, and a line writing the host in capitals, list the host on any
// port, as ssh reads them; *.example.test does not list it on a port
// other than 22, whose name is [git.example.test]:PORT. Before, * applied
// to port 22 alone, and a pattern in capitals to no host.
func TestKnownHostsWildcardAnyPort(t *testing.T) {
	key := newKey(t)
	_, open := hostKeyServer(t, key)
	k := string(ssh.MarshalAuthorizedKey(key.PublicKey()))
	for _, c := range []struct {
		pat   string
		taken bool
	}{{"*", true}, {"[GIT.Example.TEST]:*", true}, {"[*]:*,!bad.example.test", true}, {"*.example.test", false}} {
		if err := open(c.pat + " " + k); (err == nil) != c.taken {
			t.Errorf("%s: %v, want the host key taken: %v", c.pat, err, c.taken)
		}
	}
}

// Any bytes read as a known_hosts file give a verdict on any host key,
// without a panic.
func FuzzKnownHostsLines(f *testing.F) {
	k := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMg5m+w6OGXrXdvNz4DNrtbCJhLXYjNl3rpxXZSaPhdd"
	for _, s := range []string{"* " + k, "@revoked * " + k, "@cert-authority *.test " + k, "|1|x|y " + k, "!a,[b]:2 " + k + " c\r\n#\n", "@x y " + k} {
		f.Add([]byte(s), "git.example.test:22")
	}
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, addr string) {
		db := &knownHostsDB{}
		if db.add(data, "kh") != nil {
			return
		}
		_ = db.check(addr, nil, key)
		_, _ = db.hostKeyAlgorithms(addr)
	})
}

// hostCert signs the public key of the key pair name in dir with the CA
// key file ca, by ssh-keygen -s with args (-h, -n, -V...), and returns a
// signer presenting the certificate.
func hostCert(t *testing.T, dir, name, ca string, args ...string) ssh.Signer {
	t.Helper()
	id := name + "-" + strconv.Itoa(len(args)) + "-" + strings.Join(args, "")
	sshKeygen(t, dir, append(append([]string{"-q", "-s", ca, "-I", id}, args...), name+".pub")...)
	data, err := os.ReadFile(filepath.Join(dir, name+"-cert.pub"))
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(data)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ssh.NewCertSigner(pub.(*ssh.Certificate), signer)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// sshTakesHostKey connects ssh itself to the server on port as
// git.example.test (its HostKeyAlias) with known as its one known_hosts
// file, and says whether ssh took the host key; ok is false without ssh.
func sshTakesHostKey(t *testing.T, port, known string) (taken bool, out string, ok bool) {
	t.Helper()
	return sshTakesHostKeyWith(t, port, known, "")
}

// sshTakesHostKeyWith is sshTakesHostKey with the lines extra added to
// the host's block of ssh's configuration, before the others (the first
// value obtained wins).
func sshTakesHostKeyWith(t *testing.T, port, known, extra string) (taken bool, out string, ok bool) {
	t.Helper()
	if _, err := exec.LookPath("ssh"); err != nil {
		return false, "", false
	}
	conf := filepath.Join(t.TempDir(), "ssh.conf")
	if err := os.WriteFile(conf, []byte("Host git.example.test\n"+extra+"  Hostname 127.0.0.1\n  Port "+port+"\n  HostKeyAlias git.example.test\n  CheckHostIP no\n  StrictHostKeyChecking yes\n  BatchMode yes\n  UpdateHostKeys no\n  ControlPath none\n  IdentitiesOnly yes\n  IdentityFile none\n  UserKnownHostsFile "+known+"\n  GlobalKnownHostsFile none\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := exec.Command("ssh", "-vvv", "-F", conf, "git@git.example.test", "true").CombinedOutput()
	out = string(b)
	return strings.Contains(out, "Authenticated to"), out, true
}

// A host certificate made by ssh-keygen -s is taken when a
// @cert-authority line for the host lists its CA and it holds for the
// host: the host name among its principals, within its validity window,
// a host certificate. A certificate that does not hold is refused,
// saying why, unless known_hosts lists its key itself (ssh retries the
// plain key), and one whose CA a @revoked line lists is refused outright.
// Each case is checked by connecting ssh itself to the same server, when
// ssh is there; the host is looked up under its HostKeyAlias, which both
// read. Before, a CA's certificate of a key of another type than the
// CA's (ecdsa signed by ed25519) was never asked for, and the fetch
// failed.
func TestKnownHostsCertAuthority(t *testing.T) {
	dir := t.TempDir()
	ca := keygenKey(t, dir, "ca", "ed25519")
	caLine := strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(ca.PublicKey())), "\n")
	edHost := keygenKey(t, dir, "ed", "ed25519")
	keygenKey(t, dir, "ec", "ecdsa")
	rsaCA := keygenKey(t, dir, "rsaca", "rsa")
	rsaCALine := strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(rsaCA.PublicKey())), "\n")
	var revoked *knownhosts.RevokedError
	for _, c := range []struct {
		what  string
		cert  ssh.Signer
		known string // %CA is the CA's key, %KEY the host's
		want  string // "" for taken, "revoked" for a *knownhosts.RevokedError
	}{
		{what: "an ed25519 host certificate", cert: hostCert(t, dir, "ed", "ca", "-h", "-n", "git.example.test"), known: "@cert-authority *.example.test %CA\n"},
		{what: "an ecdsa host certificate of an ed25519 CA", cert: hostCert(t, dir, "ec", "ca", "-h", "-n", "other.test,git.example.test"), known: "@cert-authority * %CA\n"},
		{what: "a certificate for other principals", cert: hostCert(t, dir, "ed", "ca", "-h", "-n", "other.test"), known: "@cert-authority * %CA\n", want: `principal "git.example.test" not in the set`},
		{what: "a certificate with no principals", cert: hostCert(t, dir, "ed", "ca", "-h"), known: "@cert-authority * %CA\n"},
		{what: "a certificate with no principals, expired", cert: hostCert(t, dir, "ed", "ca", "-h", "-V", "20000101:20010101"), known: "@cert-authority * %CA\n", want: "expired"},
		{what: "a certificate with no principals, its CA listed for other hosts", cert: hostCert(t, dir, "ed", "ca", "-h"), known: "@cert-authority *.other.test %CA\n", want: "key is unknown"},
		{what: "an expired certificate", cert: hostCert(t, dir, "ed", "ca", "-h", "-n", "git.example.test", "-V", "20000101:20010101"), known: "@cert-authority * %CA\n", want: "expired"},
		{what: "a certificate not yet valid", cert: hostCert(t, dir, "ed", "ca", "-h", "-n", "git.example.test", "-V", "+520w:+530w"), known: "@cert-authority * %CA\n", want: "not yet valid"},
		{what: "a user certificate", cert: hostCert(t, dir, "ed", "ca", "-n", "git.example.test"), known: "@cert-authority * %CA\n", want: "not a host certificate"},
		{what: "a CA listed for other hosts", cert: hostCert(t, dir, "ed", "ca", "-h", "-n", "git.example.test"), known: "@cert-authority *.other.test %CA\n", want: "key is unknown"},
		{what: "a CA revoked", cert: hostCert(t, dir, "ed", "ca", "-h", "-n", "git.example.test"), known: "@cert-authority * %CA\n@revoked * %CA\n", want: "revoked"},
		{what: "a certificate its RSA CA signed with rsa-sha2-512", cert: hostCert(t, dir, "ed", "rsaca", "-t", "rsa-sha2-512", "-h", "-n", "git.example.test"), known: "@cert-authority * %RSACA\n"},
		{what: "a certificate its RSA CA signed with ssh-rsa (SHA-1)", cert: hostCert(t, dir, "ed", "rsaca", "-t", "ssh-rsa", "-h", "-n", "git.example.test"), known: "@cert-authority * %RSACA\n", want: "signed it with ssh-rsa"},
		{what: "a certificate for other principals, its key listed", cert: hostCert(t, dir, "ed", "ca", "-h", "-n", "other.test"), known: "@cert-authority * %CA\n* %KEY\n"},
	} {
		port, open := hostKeyServer(t, c.cert)
		home := os.Getenv("HOME")
		if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
			t.Fatal(err)
		}
		writeSSHConfig(t, home, "Host git.example.test\n  HostKeyAlias git.example.test\n")
		known := strings.ReplaceAll(c.known, "%CA", caLine)
		known = strings.ReplaceAll(known, "%RSACA", rsaCALine)
		known = strings.ReplaceAll(known, "%KEY", strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(edHost.PublicKey())), "\n"))
		err := open(known)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want it taken", c.what, err)
		case c.want == "revoked" && !errors.As(err, &revoked):
			t.Errorf("%s: %v, want a revoked key", c.what, err)
		case c.want != "" && c.want != "revoked" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want it refused: %s", c.what, err, c.want)
		}
		if taken, out, ok := sshTakesHostKey(t, port, os.Getenv("SSH_KNOWN_HOSTS")); ok && taken != (c.want == "") {
			t.Errorf("%s: ssh takes the host key: %v; the case is wrong\n%s", c.what, taken, out)
		}
	}
}

// /dev/null and /dev/stdin (a pipe readproof was handed; under readproof
// mcp, the client's requests) named as known_hosts files are passed over,
// not read: with nothing else named, the fetch stops before dialling,
// saying no known_hosts file is read.
func TestKnownHostsNullAndStdinPassedOver(t *testing.T) {
	s, home := newKeyServer(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := w.WriteString("# a comment\n"); err != nil {
		t.Fatal(err)
	}
	w.Close() // read to its end, were it read
	fd := "/proc/self/fd/" + strconv.Itoa(int(r.Fd()))
	writeSSHConfig(t, home, "Host git.example.test\n  UserKnownHostsFile /dev/null "+fd+"\n  GlobalKnownHostsFile none\n")
	if err := s.open(t, "git@git.example.test:r.git"); err == nil || !strings.Contains(err.Error(), "no known_hosts file to check the host key") {
		t.Errorf("/dev/null and a handed pipe: %v, want no known_hosts file read", err)
	}
}

// A RevokedHostKeys file for the host, in a Host block or a Match block
// that applies, refuses the fetch before dialling, naming its line, with
// a hint; "none" names no file. Before, the line was passed over unsaid,
// and a key ssh refuses as revoked was taken.
func TestKnownHostsRevokedHostKeysFileRefused(t *testing.T) {
	s, home := newKeyServer(t)
	for _, c := range []struct {
		conf    string
		refused bool
	}{
		{"Host git.example.test\n  RevokedHostKeys ~/.ssh/revoked\n", true},
		{"Match host git.example.test\n  RevokedHostKeys ~/.ssh/revoked\n", true},
		{"Host git.example.test\n  RevokedHostKeys none\n", false},
		{"Host other.example.test\n  RevokedHostKeys ~/.ssh/revoked\n", false},
	} {
		path := writeSSHConfig(t, home, c.conf)
		err := s.open(t, "git@git.example.test:r.git")
		said := err != nil && strings.Contains(err.Error(), path+" line 2: RevokedHostKeys") && strings.Contains(hint.Of(err), "@revoked")
		if said != c.refused {
			t.Errorf("%q: %v (hint %q), want the fetch refused by the line: %v", c.conf, err, hint.Of(err), c.refused)
		}
	}
}

// A host certificate naming no principal is taken for any host, as ssh
// 9.2 takes it, only when its CA's signature holds over it as signed: one
// changed after signing (its key id, its validity window) is refused.
func TestKnownHostsCertNoPrincipalsSignatureChecked(t *testing.T) {
	dir := t.TempDir()
	ca := keygenKey(t, dir, "ca", "ed25519")
	keygenKey(t, dir, "ed", "ed25519")
	cert := hostCert(t, dir, "ed", "ca", "-h").PublicKey().(*ssh.Certificate)
	db := &knownHostsDB{}
	if err := db.add([]byte("@cert-authority * "+string(ssh.MarshalAuthorizedKey(ca.PublicKey()))), "kh"); err != nil {
		t.Fatal(err)
	}
	lines := db.linesFor("git.example.test")
	if err := db.checkCert(lines, "git.example.test", cert); err != nil {
		t.Fatalf("the certificate as signed: %v, want it taken", err)
	}
	for what, change := range map[string]func(c *ssh.Certificate){
		"its key id":  func(c *ssh.Certificate) { c.KeyId += "x" },
		"its window":  func(c *ssh.Certificate) { c.ValidAfter++ },
		"a principal": func(c *ssh.Certificate) { c.ValidPrincipals = []string{"git.example.test"} },
	} {
		changed := *cert
		change(&changed)
		if err := db.checkCert(lines, "git.example.test", &changed); err == nil || !strings.Contains(err.Error(), "signature does not verify") {
			t.Errorf("%s changed after signing: %v, want the signature refused", what, err)
		}
	}
}
