package gitstore

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// sshG is what `ssh -G -F conf host` prints (stdout and stderr) and
// whether it ran; ok is false when there is no ssh. It is the oracle:
// ssh reads $HOME's ~/.ssh for an Include's ~, as readproof does.
func sshG(t *testing.T, conf, host string) (out string, refused, ok bool) {
	t.Helper()
	if _, err := exec.LookPath("ssh"); err != nil {
		return "", false, false
	}
	var b bytes.Buffer
	cmd := exec.Command("ssh", "-G", "-F", conf, host)
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("ssh -G: %v", err)
	}
	return "\n" + b.String(), err != nil, true
}

// A ~/.ssh/config, or a file an Include line of it names, that ssh
// refuses (a line it cannot parse, a file others can write, an included
// file it cannot open, Include lines more than 16 deep), or that readproof
// cannot read as ssh does (over 1 MiB; a FIFO: TestSSHConfigIncludedFIFORefused),
// refuses every ssh fetch
// before any connection, naming the file (and the line), with a hint:
// ssh connects to no host then, or follows lines readproof never read.
// Before, the fetch went on: without the file, said as a warning, so a
// ProxyJump or Hostname in it was not followed, or, for a line ssh
// refuses, with the file as the parser read it. Each case ssh
// refuses too is checked against ssh -G when ssh is there.
func TestSSHConfigUnreadableRefusesFetch(t *testing.T) {
	s, home := newKeyServer(t)
	dir := filepath.Join(home, ".ssh")
	inc := filepath.Join(dir, "inc.conf")
	config := filepath.Join(dir, "config")
	jump := "Host git.example.test\n  ProxyJump bastion.example.test\n"
	huge := append([]byte(jump), bytes.Repeat([]byte("# padding\n"), maxSSHConfigBytes/10+1)...)
	type setup struct {
		name          string
		conf, incConf string
		prepare       func(t *testing.T) // after the files are written
		file          string             // the file the refusal names
		line          int
		want          string
		sshRefuses    bool // ssh -G -F config refuses it too
	}
	cases := []setup{
		{name: "keyword alone", conf: jump + "  Hostname\n", file: config, line: 3, want: `nothing after the keyword "Hostname"`, sshRefuses: true},
		{name: "keyword and =", conf: jump + "  Port =\n", file: config, line: 3, want: `nothing after the keyword "Port"`, sshRefuses: true},
		{name: "quote not closed", conf: jump + "  Hostname \"real.example.test\n", file: config, line: 3, want: "a quote is not closed", sshRefuses: true},
		{name: "quote not closed, included", conf: "Include inc.conf\n" + jump, incConf: "# x\nUser \"git\n", file: inc, line: 2, want: "a quote is not closed", sshRefuses: true},
		{name: "over 1 MiB", conf: string(huge), file: config, want: "larger than 1 MiB"},
		{name: "included, over 1 MiB", conf: "Include inc.conf\n", incConf: string(huge), file: config, line: 1, want: "the file " + inc + " this Include line names is larger than 1 MiB"},
		{name: "included, others can write it", conf: jump + "Include inc.conf\n", incConf: "User git\n", file: config, line: 3, want: "Bad owner or permissions",
			prepare: func(t *testing.T) { unixModes(t); chmod(t, inc, 0o666) }, sshRefuses: true},
		{name: "others can write it", conf: jump, file: config, want: "others than its owner can write it (mode 0620)",
			prepare: func(t *testing.T) { unixModes(t); chmod(t, config, 0o620) }},
		{name: "included, cannot be opened", conf: jump + "Include inc.conf\n", file: config, line: 3, want: "cannot be opened (",
			prepare: func(t *testing.T) {
				// a link to itself: open fails (ELOOP), even for root
				if err := os.Symlink("inc.conf", inc); err != nil {
					t.Skip(err)
				}
			}, sshRefuses: true},
		{name: "Include lines 17 deep", conf: jump + "Include inc.conf\n", incConf: "Include inc.conf\n", file: inc, line: 1, want: "more than 16 Include lines deep", sshRefuses: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_ = os.Remove(inc)
			writeSSHConfig(t, home, c.conf)
			chmod(t, config, 0o600)
			if c.incConf != "" {
				if err := os.WriteFile(inc, []byte(c.incConf), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if c.prepare != nil {
				c.prepare(t)
			}
			asked, err := fetchDialled(t, "git@git.example.test:r.git", s.target)
			var ce *SSHConfigError
			if !errors.As(err, &ce) || ce.File != c.file || ce.Line != c.line || !strings.Contains(err.Error(), c.want) || len(asked) != 0 {
				t.Errorf("fetch: %v (dialled %q), want a refusal naming %s line %d, saying %q, before dialling", err, asked, c.file, c.line, c.want)
			}
			if err != nil && !strings.Contains(err.Error(), "; ") {
				t.Errorf("refusal %q ends in no hint", err)
			}
			if err := ReadSSHConfig().Check("other.example.test"); !errors.As(err, &ce) {
				t.Errorf("Check of another host: %v, want the same refusal", err)
			}
			if c.sshRefuses {
				if out, refused, ok := sshG(t, config, "git.example.test"); ok && !refused {
					t.Errorf("ssh -G takes the configuration: the case is wrong\n%s", out)
				}
			}
		})
	}
}

// unixModes skips a test of OpenSSH's owner and mode check, a unix one.
func unixModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("ssh's owner and mode check of its configuration is a unix one")
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// What ssh goes on without stays a warning, and the fetch goes on, as
// ssh's: no ~/.ssh/config, one that is a directory (ssh reads it as an
// empty file), one that cannot be opened (ssh skips ~/.ssh/config then),
// and a directory an Include line names.
func TestSSHConfigSkippedAsSSHSkipsIt(t *testing.T) {
	s, home := newKeyServer(t)
	key := writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "")
	s.allow(key.PublicKey())
	config := filepath.Join(home, ".ssh", "config")
	port := "Host git.example.test\n  Port " + s.port + "\n"
	for _, c := range []struct {
		name    string
		prepare func(t *testing.T)
		warned  bool
	}{
		{"missing", func(t *testing.T) {}, false},
		{"a directory", func(t *testing.T) {
			if err := os.Mkdir(config, 0o700); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"cannot be opened", func(t *testing.T) {
			if err := os.Symlink("config", config); err != nil {
				t.Skip(err)
			}
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_ = os.RemoveAll(config)
			c.prepare(t)
			conf := ReadSSHConfig()
			if err := conf.Check("git.example.test"); err != nil {
				t.Fatalf("Check: %v, want none: ssh goes on without the file", err)
			}
			if ws := conf.Warnings("git.example.test"); (len(ws) == 1) != c.warned || (c.warned && !strings.Contains(ws[0].Error(), config+": not read (")) {
				t.Errorf("warnings %v, want one saying %s not read: %v", ws, config, c.warned)
			}
		})
	}
	// a directory an Include line names: read as empty, said, the rest
	// followed (its Port)
	_ = os.RemoveAll(config)
	if err := os.Mkdir(filepath.Join(home, ".ssh", "conf.d"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeSSHConfig(t, home, "Include conf.d\n"+port)
	asked, err := fetchDialled(t, "git@git.example.test:r.git", s.target)
	if err != nil && !errors.Is(err, ErrRepoNotFound) || len(asked) != 1 || asked[0] != "git.example.test:"+s.port {
		t.Errorf("fetch with a directory included: %v, dialled %q; want the file's Port followed", err, asked)
	}
}

// Hostname's tokens are ssh's (ssh.c expands %h and %% alone there): %h
// is the host as the url names it, %% a %, ${NAME} and ~ are kept; any
// other token, a % ending it, or a second word, is refused naming it, as
// ssh refuses it. Before, Hostname %h.example.test was dialled as written. Each case is
// checked against ssh -G when ssh is there.
func TestSSHHostnameTokensAsSSH(t *testing.T) {
	home := sshHome(t)
	for _, c := range []struct{ value, host, refused string }{
		{"%h.example.test", "git.example.test.example.test", ""},
		{"%%h.example.test", "%h.example.test", ""},
		{"a%%%h", "a%git.example.test", ""},
		{"${HOME}.example.test", "${home}.example.test", ""},
		{"Real.Example.TEST", "real.example.test", ""},
		{"%p.example.test", "", "%p is a token ssh does not expand in Hostname"},
		{"%H", "", "%H is a token"},
		{"%d", "", "%d is a token"},
		{"x%", "", "a % ends it"},
		{"\"%r.example.test\"", "", "%r is a token"},
		{"real.example.test other", "", "more than one word"},
	} {
		path := writeSSHConfig(t, home, "Host git.example.test\n  Hostname "+c.value+"\n")
		conf := ReadSSHConfig()
		err := conf.Check("git.example.test")
		var ce *SSHConfigError
		if c.refused != "" {
			if !errors.As(err, &ce) || ce.Key != "Hostname" || ce.File != path || ce.Line != 2 || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("Hostname %s: Check %v, want a refusal at %s line 2 saying %q", c.value, err, path, c.refused)
			}
		} else {
			if err != nil {
				t.Errorf("Hostname %s: Check %v", c.value, err)
			}
			if h, _ := conf.Address("git.example.test", ""); h != c.host {
				t.Errorf("Hostname %s: Address %s, want %s", c.value, h, c.host)
			}
		}
		out, refused, ok := sshG(t, path, "git.example.test")
		if ok && (refused != (c.refused != "") || (c.host != "" && !strings.Contains(out, "\nhostname "+c.host+"\n"))) {
			t.Errorf("Hostname %s: ssh -G does not agree (refused %v, host %q): the case is wrong\n%s", c.value, refused, c.host, out)
		}
	}
	// a Match block's host list is checked against the expanded name
	writeSSHConfig(t, home, "Host git.example.test\n  Hostname %h.internal\nMatch host git.example.test.internal\n  User deploy\n")
	if ws := ReadSSHConfig().Warnings("git.example.test"); len(ws) != 1 {
		t.Errorf("warnings %v, want the Match block for the expanded Hostname said", ws)
	}
}

// A keyword in double quotes takes no "=" after it (readconf.c, strdelim:
// only whitespace is skipped after a closing quote), so the "=" is the
// value's: "Port"=2200 is Port "=2200", which ssh refuses, and
// "Hostname"=h is the host "=h". A value's quotes and escapes are ssh's
// (Port 22"00" is 2200), and a second word after Port or User is
// refused, as ssh refuses it. Before, "Port"=2200 was port 2200, Port
// 22"00" was refused, Port 2200 x said "not a port number", and User git
// deploy was the login "git deploy". Each case is checked against ssh -G when ssh is
// there.
func TestSSHQuotedKeywordEqualsAsSSH(t *testing.T) {
	home := sshHome(t)
	for _, c := range []struct{ line, host, port, user, refused string }{
		{line: `"Port"=2200`, refused: `Port "=2200"`},
		{line: `"Port" = 2200`, refused: `Port "= 2200"`},
		{line: `Po"rt"=2200`, refused: `Port "=2200"`},
		{line: `Port="2200"`, port: "2200"},
		{line: `"Port" "2200"`, port: "2200"},
		{line: `Port 22"00"`, port: "2200"},
		{line: `Port 2200 # the port`, port: "2200"},
		{line: `Port 2200 x`, refused: "more than one word"},
		{line: `"Hostname"=real.example.test`, host: "=real.example.test"},
		{line: `Hostname="real.example.test"`, host: "real.example.test"},
		{line: `"User"=git`, user: "=git"},
		{line: `User "git deploy"`, user: "git deploy"},
		{line: `User git deploy`, refused: "more than one word"},
	} {
		path := writeSSHConfig(t, home, "Host git.example.test\n  "+c.line+"\n")
		conf := ReadSSHConfig()
		err := conf.Check("git.example.test")
		if c.refused != "" {
			var ce *SSHConfigError
			if !errors.As(err, &ce) || ce.Line != 2 || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("%s: Check %v, want a refusal of line 2 saying %q", c.line, err, c.refused)
			}
		} else if err != nil {
			t.Errorf("%s: Check %v", c.line, err)
		}
		h, p := conf.Address("git.example.test", "")
		if c.host != "" && h != c.host || c.port != "" && p != c.port {
			t.Errorf("%s: Address %s %s, want host %q port %q", c.line, h, p, c.host, c.port)
		}
		if c.user != "" {
			if u, _, err := conf.remoteUser("", "git.example.test"); err != nil || u != c.user {
				t.Errorf("%s: user %q, %v; want %q", c.line, u, err, c.user)
			}
		}
		out, refused, ok := sshG(t, path, "git.example.test")
		if !ok {
			continue
		}
		if refused != (c.refused != "") || c.host != "" && !strings.Contains(out, "\nhostname "+c.host+"\n") || c.port != "" && !strings.Contains(out, "\nport "+c.port+"\n") || c.user != "" && !strings.Contains(out, "\nuser "+c.user+"\n") {
			t.Errorf("%s: ssh -G does not agree: the case is wrong\n%s", c.line, out)
		}
	}
}

// Include ~USER/PATH reads from that user's home directory, as ssh's glob
// expands it; a user the system does not know matches no file, silently,
// as in ssh. Before, ~USER was left out with a warning, and the files ssh
// reads (a ProxyJump in them) were not.
func TestSSHIncludeTildeUser(t *testing.T) {
	_, home := newKeyServer(t)
	me, err := user.Current()
	if err != nil || me.HomeDir == "" || strings.ContainsAny(me.Username, "/ \t\"") {
		t.Skipf("no usable current user: %v", err)
	}
	if _, err := os.Stat(me.HomeDir); err != nil {
		t.Skipf("the passwd home %s: %v", me.HomeDir, err)
	}
	jump := filepath.Join(t.TempDir(), "jump.conf")
	if err := os.WriteFile(jump, []byte("ProxyJump bastion.example.test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(me.HomeDir, jump)
	if err != nil {
		t.Skip(err)
	}
	path := writeSSHConfig(t, home, "Host git.example.test\n  Include ~"+me.Username+"/"+filepath.ToSlash(rel)+"\n")
	conf := ReadSSHConfig()
	var ce *SSHConfigError
	if err := conf.Check("git.example.test"); !errors.As(err, &ce) || ce.Key != "ProxyJump" || ce.File != jump {
		t.Errorf("Check: %v, want the ProxyJump of %s, read through ~%s", err, jump, me.Username)
	}
	if ws := conf.Warnings("git.example.test"); len(ws) != 0 {
		t.Errorf("warnings %v, want none", ws)
	}
	if out, _, ok := sshG(t, path, "git.example.test"); ok && !strings.Contains(out, "\nproxyjump bastion.example.test\n") {
		t.Errorf("ssh -G does not read the ProxyJump through ~%s: the case is wrong\n%s", me.Username, out)
	}
	writeSSHConfig(t, home, "Host git.example.test\n  Include ~no-such-user-readproof/x.conf\n  User deploy\n")
	conf = ReadSSHConfig()
	if err := conf.Check("git.example.test"); err != nil {
		t.Errorf("Check with an unknown user's ~: %v, want none", err)
	}
	if ws := conf.Warnings("git.example.test"); len(ws) != 0 {
		t.Errorf("warnings with an unknown user's ~: %v, want none (ssh's glob matches nothing)", ws)
	}
	if u, _, err := conf.remoteUser("", "git.example.test"); err != nil || u != "deploy" {
		t.Errorf("user %q, %v; want deploy, the rest of the file read", u, err)
	}
}
