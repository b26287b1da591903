package gitstore

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
		{"Host git.example.test\n  IgnoreUnknown UseKeyring AddKeysToKeyring\n", "one comma-separated list"},
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

// sshLoads is the key file paths ssh -v loads for host under the
// configuration conf (its ProxyCommand true: ssh reads the keys after
// the connection is made, and none is); refused when ssh says it cannot
// expand one. ok is false without ssh.
func sshLoads(t *testing.T, conf, host string) (paths []string, refused, ok bool) {
	t.Helper()
	if _, err := exec.LookPath("ssh"); err != nil {
		return nil, false, false
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, "ssh", "-v", "-F", conf, "-o", "BatchMode=yes", host, "true").CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(l, "debug1: identity file "); ok && !strings.Contains(p, "-cert type ") {
			p, _, _ = strings.Cut(p, " type ")
			paths = append(paths, p)
		}
	}
	return paths, strings.Contains(string(out), "percent_dollar_expand: failed"), true
}

// An IdentityFile's %-tokens are those ssh 9.2 expands, with the values
// it gives them (ssh -v shows the paths it loads): %n, %k, %p, %i, %l,
// %L and %C too. Before, readproof refused all but %d %u %h %r and %%,
// so that IdentityFile ~/.ssh/%n, which ssh reads, refused the source.
// A token ssh does not know (%j) is refused by both.
func TestSSHIdentityFileTokensAsSSH(t *testing.T) {
	me, err := user.Current()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "config")
	for _, c := range []struct{ lines, value string }{
		{"", "/keys/%d/%u/%h/%r/%n/%k/%p/%i/%l/%L/%C/%%"},
		{"  HostKeyAlias keys.example.test\n", "/keys/%k-%n"},
		{"", `"/keys/a b/%n@%h:%p"`},
		{"", "/keys/%j"},
	} {
		text := "Host git.example.test\n  Hostname Real.Example.Test\n  Port 2222\n  User bob\n  ProxyCommand true\n" + c.lines + "  IdentityFile " + c.value + "\n"
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := readSSHConfigFile(conf, me.HomeDir)
		if err != nil {
			t.Fatal(err)
		}
		got, err := (&SSHConfig{files: sshConfigs{*f}}).identityPath(c.value, "git.example.test", "real.example.test", "2222", "bob", me.HomeDir)
		if c.value == "/keys/%j" {
			if err == nil || !strings.Contains(err.Error(), `unknown key %j`) {
				t.Errorf("%s: %q, %v; want it refused", c.value, got, err)
			}
		} else if err != nil || strings.Contains(got, "%") && !strings.HasSuffix(got, "/%") {
			t.Errorf("%s: %q, %v", c.value, got, err)
		}
		paths, refused, ok := sshLoads(t, conf, "git.example.test")
		if !ok {
			continue
		}
		if refused != (err != nil) || !refused && (len(paths) != 1 || paths[0] != got) {
			t.Errorf("%s: readproof %q (%v), ssh loads %q (refused: %v)", c.value, got, err, paths, refused)
		}
	}
}

// A fetch offers the key an IdentityFile with %n and %p names: the host
// as the URL names it and the port dialled.
func TestSSHIdentityFileAliasAndPort(t *testing.T) {
	s, home := newKeyServer(t)
	if err := os.Mkdir(filepath.Join(home, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	key := writeKeyFile(t, filepath.Join(home, "keys", "git.example.test-"+s.port), 0o600, "")
	s.allow(key.PublicKey())
	writeSSHConfig(t, home, "Host git.example.test\n  IdentityFile ~/keys/%n-%p\n")
	if err := s.open(t, "ssh://git@git.example.test:"+s.port+"/r.git"); err != nil {
		t.Errorf("IdentityFile ~/keys/%%n-%%p: %v, want ~/keys/git.example.test-%s offered", err, s.port)
	}
}

// IdentityFile2, an older name OpenSSH 9.2 still reads as IdentityFile
// (ssh -G prints it as identityfile), names a key offered. Before, its
// line was read past.
func TestSSHIdentityFile2(t *testing.T) {
	s, home := newKeyServer(t)
	key := writeKeyFile(t, filepath.Join(home, ".ssh", "old"), 0o600, "")
	s.allow(key.PublicKey())
	config := writeSSHConfig(t, home, "Host git.example.test\n  identityfile2 ~/.ssh/old\n")
	if err := s.open(t, "ssh://git@git.example.test:"+s.port+"/r.git"); err != nil {
		t.Errorf("IdentityFile2 ~/.ssh/old: %v, want its key offered", err)
	}
	if out, refused, ok := sshG(t, config, "git.example.test"); ok && (refused || !strings.Contains(out, "\nidentityfile ~/.ssh/old\n")) {
		t.Errorf("ssh -G reads IdentityFile2 otherwise:\n%s", out)
	}
}

// A Match block, which readproof does not apply, that sets IdentityFile2
// is said as one setting IdentityFile, as ssh reads it. Before, it was
// not said.
func TestSSHMatchIdentityFile2Said(t *testing.T) {
	_, home := newKeyServer(t)
	writeSSHConfig(t, home, "Match host git.example.test\n  IdentityFile2 ~/.ssh/m\n")
	w := readSSHConfigs(filepath.Join(home, "no-system-config")).Warnings("git.example.test")
	if len(w) != 1 || !strings.Contains(w[0].Error(), "this one's IdentityFile is not used") {
		t.Errorf("warnings %v, want the Match block's IdentityFile said", w)
	}
}

// An IdentityFile readproof cannot expand is refused naming the file that
// holds it and its line: an included file's, with the Include line that
// reads it. Before, the refusal named the file read first (the one with
// the Include) and no line.
func TestSSHIdentityRefusalNamesItsLine(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := filepath.Join(home, ".ssh")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	inc := filepath.Join(dir, "inc.conf")
	if err := os.WriteFile(inc, []byte("# keys\n\nIdentityFile ~/.ssh/${KEY}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		conf, file string
		line       int
		want       string
	}{
		{"Host *\n  User git\n  IdentityFile ~/.ssh/${KEY}\n", filepath.Join(dir, "config"), 3, "${NAME}"},
		{"Host *\n  Include inc.conf\n", inc, 3, "read through the Include on " + filepath.Join(dir, "config") + " line 2"},
	} {
		writeSSHConfig(t, home, c.conf)
		_, err := readSSHConfigs(filepath.Join(home, "no-system-config")).keys(t.Context(), "git.example.test", "git.example.test", "git")
		var ce *SSHConfigError
		if !errors.As(err, &ce) || ce.File != c.file || ce.Line != c.line || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "write the path out") {
			t.Errorf("%q: %v, want a refusal naming %s line %d saying %q", c.conf, err, c.file, c.line, c.want)
		}
	}
}
