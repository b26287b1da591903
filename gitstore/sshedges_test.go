package gitstore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/hint"
)

// sshHome makes HOME a new directory with a ~/.ssh.
func sshHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	return home
}

// A Match or Include line with nothing after it (a comment aside) costs
// the file, as ssh refuses it ("no argument after keyword"): said, naming
// the file and line, and none of its lines used. Before, a bare Match was
// the parser's own refusal, and a bare Include read nothing, silently.
func TestSSHConfigBareKeywordSaid(t *testing.T) {
	home := sshHome(t)
	for _, c := range []struct{ line, want string }{
		{"Match", "line 3: Match with no criteria, which ssh refuses"},
		{"  match= # all", "line 3: Match with no criteria, which ssh refuses"},
		{"Include", "line 3: Include with no file named, which ssh refuses"},
		{"INCLUDE # x", "line 3: Include with no file named, which ssh refuses"},
	} {
		path := writeSSHConfig(t, home, "Host git.example.test\n  User cfg\n"+c.line+"\n  Port 1\n")
		ws := ReadSSHConfig().Warnings("git.example.test")
		var ce *SSHConfigError
		if len(ws) != 1 || !errors.As(ws[0], &ce) || ce.File != path || !strings.Contains(ws[0].Error(), c.want) {
			t.Errorf("%q: warnings %v, want one naming %s and saying %q", c.line, ws, path, c.want)
		}
		if u, from, _ := ReadSSHConfig().remoteUser("", "git.example.test"); u == "cfg" {
			t.Errorf("%q: User from %s, want the file unread", c.line, from)
		}
	}
}

// A Match block of a file included only from a block that does not apply
// to the host (a Host block for another, a Match block ruled out) is not
// said: OpenSSH reads such a file without applying any of its lines. One
// included from the host's Host block still is.
func TestSSHMatchInIncludedFileSaidOnlyWhereItCouldApply(t *testing.T) {
	home := sshHome(t)
	dir := filepath.Join(home, ".ssh")
	for _, name := range []string{"other.conf", "git.conf", "never.conf"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("# "+name+"\nMatch host *.example.test\n  User nobody\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeSSHConfig(t, home, "Host other.example.test\n  Include other.conf\nHost git.example.test\n  Include git.conf\nMatch originalhost none.test\n  Include never.conf\n")
	for alias, want := range map[string]string{"git.example.test": "git.conf", "other.example.test": "other.conf", "third.example.test": ""} {
		var got []string
		for _, w := range ReadSSHConfig().Warnings(alias) {
			var ce *SSHConfigError
			if !errors.As(w, &ce) || ce.Line != 2 || ce.Key != "Match" {
				t.Errorf("%s: warning %v, want a Match block's, line 2", alias, w)
				continue
			}
			got = append(got, filepath.Base(ce.File))
		}
		if (want == "" && len(got) != 0) || (want != "" && (len(got) != 1 || got[0] != want)) {
			t.Errorf("%s: Match blocks said in %q, want only %q's", alias, got, want)
		}
	}
}

// A bad Port or a ProxyCommand in a file included two levels down is
// refused naming that file and its line, and the Include line of
// ~/.ssh/config that reads it; a User there names that file too.
func TestSSHRefusalInNestedIncludeNamesItsFile(t *testing.T) {
	home := sshHome(t)
	dir := filepath.Join(home, ".ssh")
	mid, deep := filepath.Join(dir, "mid.conf"), filepath.Join(dir, "deep.conf")
	if err := os.WriteFile(mid, []byte("Include deep.conf\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ conf, key string }{
		{"Host git.example.test\n  User x\n  Port twenty-two\n", "Port"},
		{"Host git.example.test\n  User x\n  ProxyCommand ssh -W %h:%p bastion\n", "ProxyCommand"},
	} {
		if err := os.WriteFile(deep, []byte(c.conf), 0o600); err != nil {
			t.Fatal(err)
		}
		path := writeSSHConfig(t, home, "# first\nHost *.example.test\n  Include mid.conf\n")
		err := ReadSSHConfig().Check("git.example.test")
		var ce *SSHConfigError
		if !errors.As(err, &ce) || ce.Key != c.key || ce.File != deep || ce.Line != 3 || !strings.Contains(err.Error(), deep+" line 3: "+c.key) || !strings.Contains(err.Error(), "read through the Include on "+path+" line 3") {
			t.Errorf("%s: %v, want it refused at %s line 3, read through %s line 3", c.key, err, deep, path)
		}
		if _, from, _ := ReadSSHConfig().remoteUser("", "git.example.test"); from != "User in "+deep {
			t.Errorf("User from %q, want %s", from, deep)
		}
	}
}

// ssh refuses a ~ in an Include line of the system configuration
// (/etc/ssh/ssh_config) or of a file it includes, wherever the line
// stands: "bad include path", and it connects to no host (ssh_config(5):
// ~ is for user configurations). An ssh fetch is refused the same way,
// naming the file and line, before any connection; before, the line was
// left out and the rest read. An Include there with a full path is read.
func TestSSHSystemConfigTildeIncludeRefused(t *testing.T) {
	s, home := newKeyServer(t)
	key := writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "")
	s.allow(key.PublicKey())
	dir := t.TempDir()
	sys, mid, abs := filepath.Join(dir, "ssh_config"), filepath.Join(dir, "mid.conf"), filepath.Join(dir, "port.conf")
	write := func(path, conf string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, "x.conf"), "Host git.example.test\n  Port 1\n")
	for _, c := range []struct {
		name, sys, mid, file string
		line                 int
	}{
		{"in a Host block for another host", "# system\nHost other.test\n  Include ~/x.conf\n", "", sys, 3},
		{"~user", "Include /nonexistent/*.conf ~root/x.conf\n", "", sys, 1},
		{"in a file it includes", "Include " + mid + "\n", "Host *\n  Include ~/x.conf\n", mid, 2},
	} {
		write(sys, c.sys)
		write(mid, c.mid)
		var asked []string
		m, err := OpenMirror(t.TempDir(), "git@git.example.test:r.git", MirrorOptions{SSHConfig: readSSHConfigs(sys), Dial: dialTo(s.target, &asked)})
		if err != nil {
			t.Fatal(err)
		}
		err = m.Fetch(context.Background())
		var ce *SSHConfigError
		if !errors.As(err, &ce) || ce.File != c.file || ce.Line != c.line || !strings.Contains(err.Error(), "bad include path") || !strings.Contains(err.Error(), "write the path out in full") {
			t.Errorf("%s: %v, want it refused at %s line %d", c.name, err, c.file, c.line)
		}
		if len(asked) != 0 {
			t.Errorf("%s: dialled %q before refusing", c.name, asked)
		}
	}
	write(abs, "Host git.example.test\n  Port "+s.port+"\n")
	write(sys, "Host *\n  Include "+abs+"\n")
	conf := readSSHConfigs(sys)
	if err := conf.Check("git.example.test"); err != nil {
		t.Fatalf("an Include with a full path: %v", err)
	}
	var asked []string
	m, err := OpenMirror(t.TempDir(), "git@git.example.test:r.git", MirrorOptions{SSHConfig: conf, Dial: dialTo(s.target, &asked)})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fetch(context.Background()); err != nil && !errors.Is(err, ErrRepoNotFound) {
		t.Errorf("fetch: %v", err)
	}
	if want := "git.example.test:" + s.port; len(asked) != 1 || asked[0] != want {
		t.Errorf("dialled %q, want %s, the included file's Port", asked, want)
	}
}

// A Match block's warning shows its criteria, but not the command of an
// exec criterion, which may carry a token as a ProxyCommand may (whose
// value is not repeated either): the rest of the criteria, and the file
// and line, say which block it is. Before, the whole command line was
// printed on stderr and in an MCP answer's warnings.
func TestSSHMatchExecCommandNotShown(t *testing.T) {
	_, home := newKeyServer(t)
	writeSSHConfig(t, home, "Match host git.example.test exec \"curl -sf -H 'Authorization: Bearer tok-s3cr3t' https://vpn.example.test/up\" user git\n  User deploy\n"+
		"Match !Exec probe-tok-0pen host git.example.test\n  Port 2222\n")
	ws := ReadSSHConfig().Warnings("git.example.test")
	if len(ws) != 2 {
		t.Fatalf("warnings %v, want both Match blocks said", ws)
	}
	for i, want := range []string{`"host git.example.test exec (command not shown) user git"`, `"!Exec (command not shown) host git.example.test"`} {
		msg := ws[i].Error() + " " + hint.Of(ws[i])
		if strings.Contains(msg, "s3cr3t") || strings.Contains(msg, "0pen") || !strings.Contains(msg, want) {
			t.Errorf("warning %q, want the criteria shown as %s, without the command", msg, want)
		}
	}
}

// A keyword written in double quotes ("Match", "Include", "Hostname",
// Ho"stname") is the keyword, as OpenSSH reads it (ssh -G gives the same
// hostname and proxyjump for each file below, checked when ssh is
// there). Before, the quoted word was an unknown keyword to readproof: a
// "Match" block's Hostname led the host elsewhere than ssh, and a
// "Include" file's ProxyJump, or a "Hostname", went unread.
func TestSSHQuotedKeywordReadAsSSH(t *testing.T) {
	_, home := newKeyServer(t)
	inc := filepath.Join(home, ".ssh", "jump.conf")
	if err := os.WriteFile(inc, []byte("ProxyJump bastion.example.test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ conf, host, jump string }{
		{"Host git.example.test\n  User git\n\"Match\" host other.example.test\n  Hostname elsewhere.example.test\n", "git.example.test", ""},
		{"Host git.example.test\n  \"Include\" jump.conf\n", "git.example.test", "bastion.example.test"},
		{"Host git.example.test\n  \"Hostname\" real.example.test\n", "real.example.test", ""},
		{"Host git.example.test\n  Host\"name\" real.example.test\n", "real.example.test", ""},
		{"Host git.example.test\n\"\" Hostname real.example.test\n", "real.example.test", ""},
		{"Host git.example.test\n  \"\" Hostname elsewhere.example.test\n", "git.example.test", ""},
		{"Host git.example.test\n  \"Hostname elsewhere.example.test\n", "git.example.test", ""},
		{"\"Host\" git.example.test\n  \"ProxyJump\"   bastion.example.test\n", "git.example.test", "bastion.example.test"},
	} {
		path := writeSSHConfig(t, home, tc.conf)
		c := ReadSSHConfig()
		if h, _ := c.Address("git.example.test", ""); h != tc.host {
			t.Errorf("%q: Address = %s, want %s", tc.conf, h, tc.host)
		}
		var ce *SSHConfigError
		err := c.Check("git.example.test")
		if got := errors.As(err, &ce) && ce.Key == "ProxyJump"; got != (tc.jump != "") {
			t.Errorf("%q: Check = %v, want a ProxyJump refusal: %v", tc.conf, err, tc.jump != "")
		}
		if _, err := exec.LookPath("ssh"); err == nil {
			out, err := exec.Command("ssh", "-F", path, "-G", "git.example.test").Output()
			if err != nil {
				t.Errorf("%q: ssh -G: %v", tc.conf, err)
				continue
			}
			for _, want := range []string{"\nhostname " + tc.host + "\n"} {
				if !strings.Contains("\n"+string(out), want) {
					t.Errorf("%q: ssh -G does not say %q: the case is wrong", tc.conf, want)
				}
			}
			if strings.Contains(string(out), "\nproxyjump ") != (tc.jump != "") {
				t.Errorf("%q: ssh -G proxyjump is not %q: the case is wrong", tc.conf, tc.jump)
			}
		}
	}
	// a quoted keyword holding a space: ssh refuses the file
	writeSSHConfig(t, home, "Host git.example.test\n  \"Hostname elsewhere.example.test\"\n")
	if ws := ReadSSHConfig().Warnings("git.example.test"); len(ws) != 1 || !strings.Contains(ws[0].Error(), "line 2: keyword \"Hostname elsewhere.example.test\" holds a space, which ssh refuses") {
		t.Errorf("warnings %v, want the file said unread, naming line 2", ws)
	}
}

// Any configuration is unquoted line for line without a panic: its lines
// keep their numbers, and a line whose first word holds no quote is kept
// as it is, unless it starts with an "=" or holds a form feed (ssh's
// empty first word, and its end of line: TestSSHLineStartAsSSH).
func FuzzUnquoteKeywords(f *testing.F) {
	for _, s := range []string{"\"Match\" host a\n", "  Ho\"stn\"ame x\r\n", "\"\" \"Include\" f\n", "\"Port\"=22\n", "\"Hostname\" = =h\n", "Po\"rt\"\t=22\n", "\"Host\n", "# \"x\"\n", "Host a\n", " =Port 1\n", " \f\n", "Port 2\f\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := unquoteKeywords(data)
		if err != nil {
			return
		}
		in, got := strings.SplitAfter(string(data), "\n"), strings.SplitAfter(string(out), "\n")
		if len(in) != len(got) {
			t.Fatalf("%q -> %q: the lines moved", data, out)
		}
		for i, l := range in {
			word, _, _ := strings.Cut(strings.TrimLeft(l, " \t"), " ")
			if !strings.ContainsAny(word, "\"") && !strings.HasPrefix(strings.TrimLeft(l, " \t"), "=") && !strings.Contains(l, "\f") && got[i] != l {
				t.Errorf("%q: line %d %q became %q", data, i+1, l, got[i])
			}
		}
	})
}

// A line for which ssh refuses the whole configuration (a bare Match or
// Include, a quoted keyword holding a space), in ~/.ssh/config or a file
// it includes, refuses every ssh fetch before any connection, naming the
// file and line: ssh connects to no host then (ssh -G: "terminating, 1
// bad configuration options"). Before, the file was left unread and the
// fetch went on without it, around a ProxyJump it gives.
func TestSSHConfigRefusedLineRefusesFetch(t *testing.T) {
	s, home := newKeyServer(t)
	inc := filepath.Join(home, ".ssh", "more.conf")
	for _, tc := range []struct{ conf, included, file string }{
		{"Host git.example.test\n  ProxyJump bastion.example.test\nMatch\n", "", "config"},
		{"Host git.example.test\n  ProxyJump bastion.example.test\n  \"Port 22\"\n", "", "config"},
		{"Host git.example.test\n  ProxyJump bastion.example.test\nInclude more.conf\n", "# more\n# more\nInclude\n", "more.conf"},
	} {
		if err := os.WriteFile(inc, []byte(tc.included), 0o600); err != nil {
			t.Fatal(err)
		}
		writeSSHConfig(t, home, tc.conf)
		asked, err := fetchDialled(t, "git@git.example.test:r.git", s.target)
		var ce *SSHConfigError
		if !errors.As(err, &ce) || ce.File != filepath.Join(home, ".ssh", tc.file) || ce.Line != 3 || !strings.Contains(err.Error(), "which ssh refuses") || len(asked) != 0 {
			t.Errorf("%q: fetch %v (dialled %q), want a refusal naming %s line 3 before dialling", tc.conf, err, asked, tc.file)
		}
		if err := ReadSSHConfig().Check("other.example.test"); !errors.As(err, &ce) {
			t.Errorf("%q: Check of another host: %v, want the same refusal", tc.conf, err)
		}
	}
}
