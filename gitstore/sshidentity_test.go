package gitstore

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An IdentityFile's path is read as ssh reads it: its quotes, single or
// double, and backslash escapes taken off, a # word ending it; ssh -G
// prints the same path. Before, only a pair of double quotes around the
// whole value was taken off, so that a path written with an escaped
// space or in single quotes named no file and its key was not offered.
func TestSSHIdentityFileQuotedAsSSH(t *testing.T) {
	s, home := newKeyServer(t)
	if err := os.Mkdir(filepath.Join(home, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	key := writeKeyFile(t, filepath.Join(home, "keys", `my "deploy" key`), 0o600, "")
	s.allow(key.PublicKey())
	for _, v := range []string{
		`~/keys/my\ \"deploy\"\ key`,
		`'~/keys/my "deploy" key'`,
		`"~/keys/my \"deploy\" key" # the deploy key`,
		`~/keys/my' "deploy" 'key`,
	} {
		t.Run(v, func(t *testing.T) {
			config := writeSSHConfig(t, home, "Host git.example.test\n  IdentitiesOnly yes\n  IdentityFile "+v+"\n")
			if err := s.open(t, "ssh://git@git.example.test:"+s.port+"/r.git"); err != nil {
				t.Errorf("IdentityFile %s: %v, want the key in %s offered", v, err, filepath.Join(home, "keys", `my "deploy" key`))
			}
			if out, refused, ok := sshG(t, config, "git.example.test"); ok && (refused || !strings.Contains(out, "\nidentityfile ~/keys/my \"deploy\" key\n")) {
				t.Errorf("ssh -G reads another path:\n%s", out)
			}
		})
	}
}

// IdentityFile none, in any case and quoted or not, names no key file,
// and the default ones are not offered either, as ssh loads no key for it
// (ssh -v shows none). Before, readproof looked for a file named none.
func TestSSHIdentityFileNone(t *testing.T) {
	s, home := newKeyServer(t)
	def := writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "")
	s.allow(def.PublicKey())
	for _, v := range []string{"none", `"NONE"`} {
		writeSSHConfig(t, home, "Host git.example.test\n  IdentityFile "+v+"\n")
		err := s.fetchSSH(t, "ssh://git@git.example.test:"+s.port+"/r.git")
		var ae *SSHAuthError
		if !errors.As(err, &ae) || len(ae.Offered) != 0 || strings.Contains(err.Error(), "none does not exist") {
			t.Errorf("IdentityFile %s: %v, want no key offered and no file named none looked for", v, err)
		}
	}
}

// IdentitiesOnly takes yes, no, true and false in any case, and its value
// is unquoted, as ssh reads it (ssh -G prints identitiesonly yes for each
// of these). Before, only yes in some case was taken for yes.
func TestSSHIdentitiesOnlyAsSSHReadsIt(t *testing.T) {
	s, home := newKeyServer(t)
	_, agentKey, _ := ed25519.GenerateKey(rand.Reader)
	keyAgent(t, agentKey)
	s.allow(mustSigner(t, agentKey).PublicKey())
	writeKeyFile(t, filepath.Join(home, ".ssh", "deploy"), 0o600, "")
	for _, v := range []string{"TRUE", `"yes"`, "True"} {
		config := writeSSHConfig(t, home, "Host git.example.test\n  IdentitiesOnly "+v+"\n  IdentityFile ~/.ssh/deploy\n")
		err := s.fetchSSH(t, "ssh://git@git.example.test:"+s.port+"/r.git")
		if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "IdentitiesOnly") {
			t.Errorf("IdentitiesOnly %s with the server's key in the agent alone: %v, want the agent's key left out", v, err)
		}
		if out, refused, ok := sshG(t, config, "git.example.test"); ok && (refused || !strings.Contains(out, "\nidentitiesonly yes\n")) {
			t.Errorf("ssh -G reads IdentitiesOnly %s otherwise:\n%s", v, out)
		}
	}
}

// An IdentityFile or IgnoreUnknown of two words, or an IdentitiesOnly of
// two words or other than yes or no, refuses the configuration in any
// block, as ssh refuses it, naming the file and line with the fix. Before,
// the second word was dropped or the line read as no.
func TestSSHIdentityLinesSSHRefuses(t *testing.T) {
	s, home := newKeyServer(t)
	for _, c := range []struct{ conf, want string }{
		{"Host git.example.test\n  IdentityFile ~/.ssh/a ~/.ssh/b\n", "IdentityFile takes one word and is given 2"},
		{"Host other.example.test\n  IdentityFile ~/.ssh/my key\n", "in double quotes if it holds a space"},
		{"Host git.example.test\n  IdentitiesOnly yes please\n", "IdentitiesOnly takes one word"},
		{"Host other.example.test\n  IdentitiesOnly on\n", `IdentitiesOnly "on" is neither yes nor no`},
		{"Host git.example.test\n  IdentitiesOnly \"\"\n", `IdentitiesOnly "" is neither yes nor no`},
		{"Host git.example.test\n  IgnoreUnknown UseKeychain AddKeysToKeychain\n", "one comma-separated list"},
	} {
		config := writeSSHConfig(t, home, c.conf)
		asked, err := fetchDialled(t, "git@git.example.test:r.git", s.target)
		var ce *SSHConfigError
		if !errors.As(err, &ce) || ce.File != config || ce.Line != 2 || !strings.Contains(err.Error(), c.want) || len(asked) != 0 {
			t.Errorf("%q: %v (dialled %q), want a refusal of %s line 2 saying %q before dialling", c.conf, err, asked, config, c.want)
		}
		if out, refused, ok := sshG(t, config, "git.example.test"); ok && !refused {
			t.Errorf("%q: ssh -G takes it:\n%s", c.conf, out)
		}
	}
}
