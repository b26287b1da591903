package gitstore

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/readproof/readproof/internal/hint"
)

// The HostKeyAlgorithms and CASignatureAlgorithms the configuration
// gives for the host are those asked for and taken, as ssh 9.2 takes
// them (+, -, ^, patterns; an explicit list asked for in its order), each
// case checked by connecting ssh itself to the same server: an RSA server
// signing with ssh-rsa alone is taken when the user allows ssh-rsa, a key
// type the user takes away (or puts after another the server holds) is
// not asked for, so that the other key, not listed, is refused, and a
// certificate signed with ssh-rsa is taken when the user allows it.
// Before, both settings were ignored.
func TestKnownHostsAlgorithmsAsSSH(t *testing.T) {
	dir := t.TempDir()
	ed := keygenKey(t, dir, "ed", "ed25519")
	ec := keygenKey(t, dir, "ec", "ecdsa")
	rsaKey := keygenKey(t, dir, "rsa", "rsa")
	sha1Only, err := ssh.NewSignerWithAlgorithms(rsaKey.(ssh.AlgorithmSigner), []string{ssh.KeyAlgoRSA})
	if err != nil {
		t.Fatal(err)
	}
	rsaCA := keygenKey(t, dir, "rsaca", "rsa")
	line := func(host string, k ssh.Signer) string {
		return host + " " + string(ssh.MarshalAuthorizedKey(k.PublicKey()))
	}
	sha1Cert := hostCert(t, dir, "ed", "rsaca", "-t", "ssh-rsa", "-h", "-n", "git.example.test")
	caLine := line("@cert-authority *", rsaCA)
	for _, c := range []struct {
		what  string
		keys  []ssh.Signer
		known string
		conf  string // the host's lines
		taken bool
	}{
		{"ssh-rsa (SHA-1) allowed", []ssh.Signer{sha1Only}, line("git.example.test", rsaKey), "HostKeyAlgorithms +ssh-rsa", true},
		{"ssh-rsa (SHA-1) not allowed", []ssh.Signer{sha1Only}, line("git.example.test", rsaKey), "HostKeyAlgorithms +ssh-ed25519", false},
		{"the listed type taken away", []ssh.Signer{ed, ec}, line("git.example.test", ed), "HostKeyAlgorithms -ssh-ed25519", false},
		{"the listed type taken away by a pattern", []ssh.Signer{ed, ec}, line("git.example.test", ed), "HostKeyAlgorithms -ssh-ed*,", false},
		{"an explicit list, the listed type second", []ssh.Signer{ed, ec}, line("git.example.test", ed), "HostKeyAlgorithms ecdsa-sha2-nistp256,ssh-ed25519", false},
		{"the listed type after a ^list", []ssh.Signer{ed, ec}, line("git.example.test", ed), "HostKeyAlgorithms ^ecdsa-sha2-nistp256", false},
		{"a +list, known_hosts' order first", []ssh.Signer{ed, ec}, line("git.example.test", ed), "HostKeyAlgorithms +ecdsa-sha2-nistp256", true},
		{"a pattern", []ssh.Signer{ed, ec}, line("git.example.test", ed), "HostKeyAlgorithms ssh-ed*", true},
		{"an unknown algorithm", []ssh.Signer{ed}, line("git.example.test", ed), "HostKeyAlgorithms ssh-ed25519,foo", false},
		{"an algorithm x/crypto does not speak, alone", []ssh.Signer{ed}, line("git.example.test", ed), "HostKeyAlgorithms sk-ssh-ed25519@openssh.com", false},
		{"a negated algorithm", []ssh.Signer{ed}, line("git.example.test", ed), "HostKeyAlgorithms ssh-ed25519,!ssh-rsa", false},
		{"a certificate signed with ssh-rsa, allowed", []ssh.Signer{sha1Cert}, caLine, "CASignatureAlgorithms +ssh-rsa", true},
		{"a certificate signed with ssh-rsa, by default", []ssh.Signer{sha1Cert}, caLine, "CASignatureAlgorithms -ssh-ed25519", false},
		{"a certificate's CA algorithm taken away", []ssh.Signer{hostCert(t, dir, "ec", "rsaca", "-t", "rsa-sha2-512", "-h", "-n", "git.example.test")}, caLine, "CASignatureAlgorithms -rsa-sha2-512", false},
		{"a certificate's CA algorithm kept", []ssh.Signer{hostCert(t, dir, "ec", "rsaca", "-t", "rsa-sha2-512", "-h", "-n", "git.example.test")}, caLine, "CASignatureAlgorithms -rsa-sha2-256", true},
	} {
		port, open := hostKeyServer(t, c.keys...)
		home := os.Getenv("HOME")
		if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
			t.Fatal(err)
		}
		writeSSHConfig(t, home, "Host git.example.test\n  HostKeyAlias git.example.test\n  "+c.conf+"\n")
		err := open(c.known)
		if c.taken != (err == nil) {
			t.Errorf("%s: %v, want it taken: %v", c.what, err, c.taken)
		}
		if taken, out, ok := sshTakesHostKeyWith(t, port, os.Getenv("SSH_KNOWN_HOSTS"), "  "+c.conf+"\n"); ok && taken != c.taken {
			t.Errorf("%s: ssh takes the host key: %v; the case is wrong\n%s", c.what, taken, out)
		}
	}
}

// The lists are assembled as ssh -G shows them (OpenSSH 9.2).
func TestAssembleAlgorithmsAsSSH(t *testing.T) {
	for _, c := range []struct{ value, want string }{
		{"+ssh-rsa", strings.Join(defaultHostKeyAlgorithms, ",") + ",ssh-rsa"},
		{"-*-cert-*", "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-256"},
		{"^ssh-rsa,ssh-ed25519", "ssh-rsa,ssh-ed25519," + strings.Join(slices.DeleteFunc(slices.Clone(defaultHostKeyAlgorithms), func(a string) bool { return a == "ssh-ed25519" }), ",")},
		{"ssh-ed*,ecdsa*", "ssh-ed25519,ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256,ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384,ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521,ecdsa-sha2-nistp521-cert-v01@openssh.com"},
		{"-foo", strings.Join(defaultHostKeyAlgorithms, ",")},
		{"ssh-ed25519,,ecdsa-sha2-nistp256", "ssh-ed25519,ecdsa-sha2-nistp256"},
		{"ssh-ed25519,ssh-ed25519", "ssh-ed25519"},
		{"foo", ""}, {"+foo*", ""}, {"SSH-ED25519", ""}, {"+", ""}, {"-*", ""}, {"ssh-ed25519,!ssh-rsa", ""},
	} {
		list, _, err := assembleAlgorithms(c.value, defaultHostKeyAlgorithms, sshHostKeyAlgorithms)
		if got := strings.Join(list, ","); got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("HostKeyAlgorithms %s: %q, %v; want %q", c.value, got, err, c.want)
		}
	}
	if _, _, err := assembleAlgorithms("ssh-ed25519-cert-v01@openssh.com", caSignatureAlgorithms, sshCASignatureAlgorithms); err == nil {
		t.Error("CASignatureAlgorithms of a certificate's algorithm: taken, want it refused as by ssh")
	}
	list, _, err := assembleAlgorithms("-rsa*", caSignatureAlgorithms, sshCASignatureAlgorithms)
	if got := strings.Join(list, ","); err != nil || got != "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com" {
		t.Errorf("CASignatureAlgorithms -rsa*: %q, %v", got, err)
	}
}

// FuzzAssembleAlgorithms: a value is assembled or refused, never panics;
// what is assembled is algorithms ssh knows, each once, at least one.
func FuzzAssembleAlgorithms(f *testing.F) {
	for _, s := range []string{"+ssh-rsa", "-*-cert-*", "^ssh-rsa,ssh-ed25519", "ssh-ed*,ecdsa*", "-foo", ",,", "!x", "+", "?sh-rsa"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		list, _, err := assembleAlgorithms(v, defaultHostKeyAlgorithms, sshHostKeyAlgorithms)
		if err != nil {
			return
		}
		if len(list) == 0 {
			t.Fatalf("%q: nothing, no error", v)
		}
		for i, a := range list {
			if !slices.Contains(sshHostKeyAlgorithms, a) || slices.Contains(list[:i], a) {
				t.Fatalf("%q: %q", v, list)
			}
		}
	})
}

// A HostKeyAlgorithms naming none of the host key algorithms readproof
// speaks (ssh speaks them: sk- keys) refuses the fetch before dialling,
// naming the configuration's file and line, with a hint. Before, the
// message named neither the file nor the line.
func TestHostKeyAlgorithmsNoneSpokenNamesTheLine(t *testing.T) {
	s, home := newKeyServer(t)
	for _, conf := range []string{"HostKeyAlgorithms sk-ssh-ed25519@openssh.com", "HostKeyAlgorithms sk-*"} {
		path := writeSSHConfig(t, home, "Host git.example.test\n  "+conf+"\n")
		err := s.open(t, "git@git.example.test:r.git")
		if err == nil || !strings.Contains(err.Error(), path+" line 2: HostKeyAlgorithms") || !strings.Contains(err.Error(), "none of the host key algorithms readproof speaks") || hint.Of(err) == "" {
			t.Errorf("%s: %v (hint %q), want the line named", conf, err, hint.Of(err))
		}
	}
}
