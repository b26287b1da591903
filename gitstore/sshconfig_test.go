package gitstore

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/readproof/readproof/internal/hint"
)

func writeSSHConfig(t *testing.T, home, conf string) string {
	t.Helper()
	path := filepath.Join(home, ".ssh", "config")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The login is OpenSSH's: the URL's user, else the User ~/.ssh/config
// gives for the host, else the local user; %r in IdentityFile is that
// login. The server takes only user git.
func TestSSHUserFromConfig(t *testing.T) {
	s, home := newKeyServer(t)
	s.user = "git"
	key := writeKeyFile(t, filepath.Join(home, ".ssh", "deploy-git"), 0o600, "")
	s.allow(key.PublicKey())
	path := writeSSHConfig(t, home, "Host git.example.test\n  User git\n  IdentityFile ~/.ssh/deploy-%r\n")
	if err := s.open(t, "ssh://git.example.test:"+s.port+"/r.git"); err != nil {
		t.Errorf("URL without a user, User git in ~/.ssh/config: %v", err)
	}
	// the URL's user wins over User: %r is it, so the key file is
	// another (that does not exist), and the server refuses the user
	err := s.fetchSSH(t, "ssh://deploy@git.example.test:"+s.port+"/r.git")
	var ae *SSHAuthError
	if !errors.As(err, &ae) || ae.User != "deploy" || ae.UserFrom != "" || !strings.Contains(err.Error(), filepath.Join(home, ".ssh", "deploy-deploy")+" does not exist") {
		t.Errorf("URL user deploy with User git in ~/.ssh/config: %v, want the server's refusal of user deploy", err)
	}
	if localUserName() == "git" {
		t.Skip("the local user is git, whom the server takes")
	}
	// User for another host does not apply: the local user is the login,
	// and the error says so
	writeSSHConfig(t, home, "Host other.example.test\n  User git\nHost *\n  IdentityFile ~/.ssh/deploy-git\n")
	err = s.fetchSSH(t, "ssh://git.example.test:"+s.port+"/r.git")
	if !errors.As(err, &ae) || ae.User != localUserName() || !strings.Contains(err.Error(), "(the local user)") {
		t.Errorf("no User for the host: %v, want a refusal of the local user %q, said to be the local user", err, localUserName())
	}
	// a refusal that says where the user came from
	writeSSHConfig(t, home, "Host git.example.test\n  User nobody-here\n  IdentityFile ~/.ssh/deploy-git\n")
	err = s.fetchSSH(t, "ssh://git.example.test:"+s.port+"/r.git")
	if !errors.As(err, &ae) || ae.User != "nobody-here" || !strings.Contains(err.Error(), `user "nobody-here" (User in `+path+")") {
		t.Errorf("User nobody-here: %v, want a refusal naming the user and the file it came from", err)
	}
	// a token in User is not guessed at: refused before dialling
	writeSSHConfig(t, home, "Host git.example.test\n  User %u-ci\n")
	n := len(s.seen())
	err = s.open(t, "ssh://git.example.test:"+s.port+"/r.git")
	var ce *SSHConfigError
	if !errors.As(err, &ce) || ce.Key != "User" || !strings.Contains(err.Error(), path+`: User "%u-ci" for host git.example.test`) || len(s.seen()) != n {
		t.Errorf("User %%u-ci: %v, want a refusal naming the file and the line's value before any key is offered", err)
	}
}

// A Match block is not applied, and does not cost the rest of the file
// (the parser refuses the whole file on one): the Host block's
// IdentityFile and User are followed. Warnings names each Match block
// that could apply to the host and sets a keyword readproof reads, by
// file and line; one ruled out by its host list, or setting nothing
// readproof reads, is not named.
func TestSSHMatchBlockNotAppliedAndSaid(t *testing.T) {
	s, home := newKeyServer(t)
	s.user = "git"
	key := writeKeyFile(t, filepath.Join(home, ".ssh", "deploy"), 0o600, "")
	matchKey := writeKeyFile(t, filepath.Join(home, ".ssh", "matched"), 0o600, "")
	s.allow(key.PublicKey())
	path := writeSSHConfig(t, home, strings.Join([]string{
		"Match host *.example.test exec \"test -d /\"", // 1: could apply
		"  IdentityFile ~/.ssh/matched",
		"  User nobody",
		"match originalhost other.example.org,!x", // 4: ruled out
		"  User nobody",
		"Match=all # a comment", // 6: sets nothing readproof reads
		"  ForwardAgent no",
		"Match !host git.example.test", // 8: ruled out (ssh -G -F FILE git.example.test: port 22)
		"  Port 1",
		"Host git.example.test",
		"  User git",
		"  IdentityFile ~/.ssh/deploy",
		"",
	}, "\n"))
	if err := s.open(t, "ssh://git.example.test:"+s.port+"/r.git"); err != nil {
		t.Errorf("a file with Match blocks: %v, want its Host block followed", err)
	}
	for _, k := range s.seen() {
		if k == fp(matchKey) {
			t.Errorf("the Match block's IdentityFile was offered")
		}
	}
	var lines []int
	for _, w := range ReadSSHConfig().Warnings("git.example.test") {
		var ce *SSHConfigError
		if !errors.As(w, &ce) || ce.File != path || ce.Key != "Match" {
			t.Errorf("warning %v, want an SSHConfigError of %s", w, path)
			continue
		}
		lines = append(lines, ce.Line)
	}
	if len(lines) != 1 || lines[0] != 1 {
		t.Errorf("warnings on lines %v, want 1", lines)
	}
	ws := ReadSSHConfig().Warnings("git.example.test")
	if len(ws) > 0 {
		msg := ws[0].Error()
		for _, want := range []string{path + " line 1: Match", `"host *.example.test exec (command not shown)"`, "for host git.example.test", "User, IdentityFile are not used"} {
			if !strings.Contains(msg, want) {
				t.Errorf("warning %q does not say %q", msg, want)
			}
		}
	}
	if ws := ReadSSHConfig().Warnings("other.example.net"); len(ws) != 1 {
		t.Errorf("warnings for other.example.net: %v, want the one of line 8 alone", ws)
	}
}

// An unreadable ~/.ssh/config is said before the fetch, not only when a
// server refuses every key.
func TestSSHConfigUnreadableSaid(t *testing.T) {
	_, home := newKeyServer(t)
	path := filepath.Join(home, ".ssh", "config")
	if err := os.Mkdir(path, 0o700); err != nil { // not a file
		t.Fatal(err)
	}
	ws := ReadSSHConfig().Warnings("git.example.test")
	if len(ws) != 1 || !strings.Contains(ws[0].Error(), path+": not read (") {
		t.Errorf("warnings %v, want %s not read", ws, path)
	}
}

// The ssh configuration is read once for a fetch: the one given in
// MirrorOptions (read to check the address) is the one the fetch follows,
// whatever the file says by then.
func TestSSHConfigReadOnce(t *testing.T) {
	s, home := newKeyServer(t)
	key := writeKeyFile(t, filepath.Join(home, ".ssh", "deploy"), 0o600, "")
	s.allow(key.PublicKey())
	writeSSHConfig(t, home, "Host docs-deploy\n  Hostname git.example.test\n  Port "+s.port+"\n  IdentityFile ~/.ssh/deploy\n")
	conf := ReadSSHConfig()
	if h, p := conf.Address("docs-deploy", ""); h != "git.example.test" || p != s.port {
		t.Fatalf("Address(docs-deploy) = %s %s", h, p)
	}
	writeSSHConfig(t, home, "Host docs-deploy\n  Hostname elsewhere.example.test\n  IdentityFile ~/.ssh/none\n")
	var asked []string
	m, err := OpenMirror(t.TempDir(), "git@docs-deploy:docs.git", MirrorOptions{Dial: dialTo(s.target, &asked), SSHConfig: conf})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fetch(context.Background()); err != nil && !errors.Is(err, ErrRepoNotFound) {
		t.Errorf("fetch with the configuration read before: %v", err)
	}
	if want := "git.example.test:" + s.port; len(asked) != 1 || asked[0] != want {
		t.Errorf("dialled %q, want %s, the address the configuration given led to", asked, want)
	}
}

// Match criteria: a host or originalhost list that matches neither the
// alias nor the Hostname rules the block out; anything else may hold.
func TestMatchCouldApply(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		criteria string
		want     bool
	}{
		{"all", true},
		{"host git.example.test", true},
		{"host *.example.test,!x.example.test", true},
		{"host other.example", false},
		{"host real.example", true}, // the Hostname
		{"originalhost real.example", false},
		{"originalhost alias", true},
		{"host other.example exec true", false},
		{"exec \"host other.example\"", true},
		{"user git", true},
		{"canonical host other.example", false},
		{"!host alias", true},
		{"host", true},
		{"host ,", true},
	} {
		alias := "alias"
		if strings.Contains(c.criteria, "example.test") {
			alias = "git.example.test"
		}
		if got := (matchBlock{criteria: c.criteria}).couldApply(alias, "real.example"); got != c.want {
			t.Errorf("Match %s for %s at real.example: could apply %v, want %v", c.criteria, alias, got, c.want)
		}
	}
}

// Any configuration with Match lines is read as the parser reads it
// without them, line for line, and never panics; nor does reading the
// criteria.
func FuzzNeutraliseMatch(f *testing.F) {
	for _, s := range []string{"Match all\n  User x\n", "  match=host a\r\nHost b\n", "Matches x\n", "Host a\nMatch\n", "#Match all\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, blocks := neutraliseMatch(data)
		if strings.Count(string(out), "\n") != strings.Count(string(data), "\n") {
			t.Errorf("%q -> %q: the lines moved", data, out)
		}
		if got := strings.Count(string(out), matchStandIn); got < len(blocks) {
			t.Errorf("%q: %d blocks, %d stand-ins", data, len(blocks), got)
		}
		for _, b := range blocks {
			if b.line < 1 || strings.Contains(b.criteria, "\n") {
				t.Errorf("%q: block %+v", data, b)
			}
			// the criteria are read without a panic, and "all" added
			// to them rules nothing out that was not
			if b.couldApply("git.example.test", "h.example") != (matchBlock{criteria: "all " + b.criteria}).couldApply("git.example.test", "h.example") {
				t.Errorf("Match %q: all changes whether it could apply", b.criteria)
			}
		}
	})
}

// Include lines are read as OpenSSH reads them: ~/ is $HOME and a
// relative path is from ~/.ssh, so the Host blocks of an included file
// give the User and Hostname (the parser alone joined both to the passwd
// entry's home and read nothing, leaving Host *'s User in force).
func TestSSHConfigIncludeFromHome(t *testing.T) {
	_, home := newKeyServer(t)
	if err := os.Mkdir(filepath.Join(home, ".ssh", "conf.d"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, conf := range map[string]string{
		"conf.d/work": "Host work-git\n  User deploy\n  Hostname git.example.test\n",
		"personal":    "Host own-git\n  User me\n",
	} {
		if err := os.WriteFile(filepath.Join(home, ".ssh", name), []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeSSHConfig(t, home, "Include ~/.ssh/conf.d/*\nInclude = personal # mine\nHost *\n  User fallback\n")
	c := ReadSSHConfig()
	for alias, want := range map[string]string{"work-git": "deploy", "own-git": "me", "other": "fallback"} {
		if u, _, err := c.remoteUser("", alias); err != nil || u != want {
			t.Errorf("user for %s: %q, %v; want %q", alias, u, err, want)
		}
	}
	if h, _ := c.Address("work-git", ""); h != "git.example.test" {
		t.Errorf("Address(work-git) = %s, want the included file's Hostname", h)
	}
}

// The host is matched against Host patterns as the URL writes it, as
// OpenSSH 9.2 matches it (ssh -G Git.Example.TEST does not get Host
// git.example.test's lines; ssh -G GIT.UP gets Host GIT.UP's): a URL
// writing the host in capitals gets the block written so, and the name it
// dials is in lower case, as ssh's. Session 25 matched in lower case, so
// such a URL got another block's Hostname than ssh (and a Host line in
// capitals was never read). A Match host list matches in any case, as
// OpenSSH's.
func TestSSHConfigHostMatchedAsWritten(t *testing.T) {
	_, home := newKeyServer(t)
	writeSSHConfig(t, home, "Host git.example.test\n  User deploy\n  Hostname h.example.test\n  IdentityFile ~/.ssh/deploy\nHost GIT.UP\n  User upper\n  Hostname Up.Example.TEST\nHost *\n  User fallback\n")
	c := ReadSSHConfig()
	for _, tc := range []struct{ alias, user, host string }{
		{"Git.Example.TEST", "fallback", "git.example.test"},
		{"git.example.test", "deploy", "h.example.test"},
		{"GIT.UP", "upper", "up.example.test"},
		{"git.up", "fallback", "git.up"},
	} {
		if u, _, err := c.remoteUser("", tc.alias); err != nil || u != tc.user {
			t.Errorf("user for %s: %q, %v; want %s", tc.alias, u, err, tc.user)
		}
		if h, _ := c.Address(tc.alias, ""); h != tc.host {
			t.Errorf("Address(%s) = %s, want %s", tc.alias, h, tc.host)
		}
	}
	if files, _, err := identityLines(c.files[0].conf, "Git.Example.TEST"); err != nil || len(files) != 0 {
		t.Errorf("IdentityFile for Git.Example.TEST: %q, %v; want none (Host git.example.test's is not the host's)", files, err)
	}
	// a Match block's warning suggests a Host line that matches: the
	// host as the URL writes it
	writeSSHConfig(t, home, "Match host GIT.example.test\n  User deploy\n")
	ws := ReadSSHConfig().Warnings("Git.Example.TEST")
	if len(ws) != 1 || !strings.Contains(hint.Of(ws[0]), "(Host Git.Example.TEST)") {
		t.Errorf("warnings %v, want the Match block said, with a Host line as the URL writes the host", ws)
	}
}

// An included file is read as the file including it: a Match block in it
// is said like one in ~/.ssh/config, naming the included file, and costs
// nothing else (the parser, reading the file itself, refused it, and with
// it every Include line). A pattern that is not one costs its Include
// line, not the file: the rest is read, and the warning says so.
func TestSSHConfigIncludeRefusedSaid(t *testing.T) {
	_, home := newKeyServer(t)
	matching := filepath.Join(home, ".ssh", "matching")
	if err := os.WriteFile(matching, []byte("Match host git.example.test\n  User y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for include, want := range map[string]string{
		"Include ~/.ssh/matching": matching + " line 1: Match",
		"Include [":               ".ssh/config line 1: this Include line's ",
	} {
		writeSSHConfig(t, home, include+"\nHost git.example.test\n  User deploy\n")
		c := ReadSSHConfig()
		if u, _, err := c.remoteUser("", "git.example.test"); err != nil || u != "deploy" {
			t.Errorf("%s: user %q, %v; want deploy, from the rest of the file", include, u, err)
		}
		ws := c.Warnings("git.example.test")
		if len(ws) != 1 || !strings.Contains(ws[0].Error(), want) {
			t.Errorf("%s: warnings %v, want one with %q", include, ws, want)
		}
	}
}

// Include lines become markers in place, numbered in order; other lines
// are unchanged.
func FuzzMarkIncludes(f *testing.F) {
	for _, s := range []string{"Include a b\n", "include=~/x # c\r\nHost y\n", "Include\n", "Includes x\n", "  INCLUDE \"q r\"\n", "Include ~root/x ~/y\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, incs := markIncludes(data)
		in, got := strings.SplitAfter(string(data), "\n"), strings.SplitAfter(string(out), "\n")
		if len(in) != len(got) {
			t.Fatalf("%q -> %q: the lines moved", data, out)
		}
		n := 0
		for i := range in {
			if n < len(incs) && incs[n].line == i+1 {
				if w := strings.Fields(got[i]); len(w) != 2 || w[0] != includeMarker || w[1] != strconv.Itoa(n) {
					t.Errorf("line %q became %q, want marker %d", in[i], got[i], n)
				}
				n++
				continue
			}
			if in[i] != got[i] {
				t.Errorf("line %q became %q", in[i], got[i])
			}
		}
		if n != len(incs) {
			t.Errorf("%q: %d Include lines out of order", data, len(incs)-n)
		}
	})
}

// pemKey writes, with ssh-keygen, an ECDSA key in the PEM format at path
// (with the passphrase given, "" for none), keeps its .pub beside it or
// not, and returns the private key for an agent.
func pemKey(t *testing.T, path, passphrase string, keepPub bool) any {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("needs ssh-keygen")
	}
	if out, err := exec.Command("ssh-keygen", "-q", "-m", "PEM", "-t", "ecdsa", "-N", passphrase, "-C", "pem", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	data := mustRead(t, path)
	if !strings.HasPrefix(string(data), "-----BEGIN EC PRIVATE KEY-----") {
		t.Fatalf("ssh-keygen -m PEM wrote %.40q", data)
	}
	if !keepPub {
		if err := os.Remove(path + ".pub"); err != nil {
			t.Fatal(err)
		}
	}
	var raw any
	var err error
	if passphrase == "" {
		raw, err = ssh.ParseRawPrivateKey(data)
	} else {
		raw, err = ssh.ParseRawPrivateKeyWithPassphrase(data, []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// IdentitiesOnly keeps the agent's keys to the IdentityFile keys, known
// by their public keys. A PEM key file shows its public key only once it
// is decrypted: unencrypted, it is taken from the key; with a passphrase,
// from the .pub beside it, as OpenSSH does; with neither, the error says
// which key was left out, why, and how to write its .pub.
func TestSSHIdentitiesOnlyPEMKey(t *testing.T) {
	for _, c := range []struct {
		name       string
		passphrase string
		keepPub    bool
	}{{"unencrypted, no .pub", "", false}, {"passphrase, .pub beside it", "pem words", true}, {"passphrase, no .pub", "pem words", false}} {
		t.Run(c.name, func(t *testing.T) {
			s, home := newKeyServer(t)
			path := filepath.Join(home, ".ssh", "deploy")
			key := pemKey(t, path, c.passphrase, c.keepPub)
			signer, err := ssh.NewSignerFromKey(key)
			if err != nil {
				t.Fatal(err)
			}
			_, other, _ := ed25519.GenerateKey(rand.Reader)
			keyAgent(t, other, key)
			s.allow(signer.PublicKey())
			writeSSHConfig(t, home, "Host git.example.test\n  IdentitiesOnly yes\n  IdentityFile ~/.ssh/deploy\n")
			err = s.fetchSSH(t, "ssh://git@git.example.test:"+s.port+"/r.git")
			if c.passphrase != "" && !c.keepPub {
				want := path + " has a passphrase and is in the PEM format, which keeps its public key under the passphrase, and there is no " + path + ".pub beside it (IdentitiesOnly yes): write its public key beside it (ssh-keygen -y -f " + path + " > " + path + ".pub)"
				if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), want) {
					t.Errorf("fetch: %v\nwant ErrAuth saying %q", err, want)
				}
				if strings.Contains(err.Error(), "pem words") {
					t.Errorf("the error shows the passphrase: %v", err)
				}
				return
			}
			if err != nil {
				t.Errorf("fetch: %v", err)
			}
			for _, k := range s.seen() {
				if k == ssh.FingerprintSHA256(mustSigner(t, other).PublicKey()) {
					t.Errorf("the agent's other key was offered under IdentitiesOnly")
				}
			}
		})
	}
}

// A Host line whose patterns are written in quotes (Host "git.example.test",
// Host 'a' "b") applies to the host, as ssh reads it: its User is the
// login and its ProxyJump refuses the fetch. Before, the patterns were
// matched with their quotes, so the block was passed over and the fetch
// went around the jump host ssh goes through.
func TestSSHHostQuotedPatterns(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, conf := range []string{
		"Host \"git.example.test\"\n  User bob\n  ProxyJump jump.example.test\n",
		"Host 'other' \"git.example.*\" # c\n  User bob\n  ProxyJump jump.example.test\n",
		"Host=\"git.example.test\"\r\n  User bob\r\n  ProxyJump jump.example.test\r\n",
	} {
		config := writeSSHConfig(t, home, conf)
		c := readSSHConfigs(filepath.Join(home, "no-system-config"))
		user, _, err := c.remoteUser("", "git.example.test")
		if err != nil || user != "bob" {
			t.Errorf("%q: login %q (%v), want bob", conf, user, err)
		}
		var ce *SSHConfigError
		if err := c.Check("git.example.test"); !errors.As(err, &ce) || ce.Key != "ProxyJump" || ce.Line != 3 {
			t.Errorf("%q: Check: %v, want the ProxyJump of line 3 refused", conf, err)
		}
		if out, refused, ok := sshG(t, config, "git.example.test"); ok && (refused || !strings.Contains(out, "\nuser bob\n")) {
			t.Errorf("%q: ssh -G does not read it so:\n%s", conf, out)
		}
	}
}

// Any configuration has its Host patterns unquoted line for line without
// a panic: its lines keep their numbers, a line holding no quote or
// backslash is kept as it is, and a line rewritten is a Host line of
// patterns with no quote, space or "#".
func FuzzUnquoteHostPatterns(f *testing.F) {
	for _, s := range []string{"Host \"a\"\n", "host='a' b # c\r\n", "Host \"a b\"\n", "Host \"a\n", "Host \\\"\n", "Hostname \"a\"\n", "Host\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out := unquoteHostPatterns(data)
		in, got := strings.SplitAfter(string(data), "\n"), strings.SplitAfter(string(out), "\n")
		if len(in) != len(got) {
			t.Fatalf("%q -> %q: the lines moved", data, out)
		}
		for i, l := range in {
			if got[i] == l {
				continue
			}
			body := strings.TrimRight(got[i], "\r\n")
			if !strings.ContainsAny(l, "\"'\\") || !strings.HasPrefix(body, "Host ") || strings.ContainsAny(body, "\"'\\#\t") || strings.Contains(body, "  ") {
				t.Errorf("%q: line %d %q became %q", data, i+1, l, got[i])
			}
		}
	})
}
