package gitstore

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The known_hosts files are those ssh reads for the host, in its order:
// the first UserKnownHostsFile line's (several files, ~, %-tokens and
// ${NAME} expanded as in an IdentityFile; none for none), else
// ~/.ssh/known_hosts and ~/.ssh/known_hosts2; then the first
// GlobalKnownHostsFile line's, else /etc/ssh/ssh_known_hosts and
// /etc/ssh/ssh_known_hosts2. Before, ~/.ssh/known_hosts and
// /etc/ssh/ssh_known_hosts were read whatever the configuration said,
// and known_hosts2 never. Each case is checked against
// `ssh -G -F CONFIG -l git git.example.test` when ssh is there: its
// userknownhostsfile and globalknownhostsfile lines, the home directory
// written HOME on both sides (ssh expands ~ to the passwd entry's, the
// test to its own), or its refusal.
func TestSSHKnownHostsFilesAsSSH(t *testing.T) {
	home := sshHome(t)
	t.Setenv("SSH_KNOWN_HOSTS", "")
	t.Setenv("READPROOF_KH_TEST", "/env")
	for _, c := range []struct {
		name, conf string
		user       string // the user's files, space-separated, HOME for the home directory; "none" for none
		global     string // the system's, as ssh -G writes them (it expands no ~ there before connecting)
		refused    int    // the line ssh refuses; 0 for none
	}{
		{name: "no line", conf: "Host other\n  UserKnownHostsFile /x\n",
			user: "HOME/.ssh/known_hosts HOME/.ssh/known_hosts2", global: "/etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2"},
		{name: "several, ~, tokens and ${NAME}", conf: "Host git.*\n  UserKnownHostsFile ~/.ssh/a %h/b /k/%r-%p-%n-%%-%d ${READPROOF_KH_TEST}/c \"/q/d\"\n",
			user: "HOME/.ssh/a git.example.test/b /k/git-22-git.example.test-%-HOME /env/c /q/d", global: "/etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2"},
		{name: "Hostname and HostKeyAlias", conf: "Host git.*\n  Hostname real.example\n  HostKeyAlias kal\n  UserKnownHostsFile /x/%h-%k\n",
			user: "/x/real.example-kal", global: "/etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2"},
		{name: "HostKeyAlias in capitals", conf: "Host git.*\n  HostKeyAlias KAL\n  UserKnownHostsFile /x/%k\n",
			user: "/x/kal", global: "/etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2"},
		{name: "the first line wins", conf: "Host git.*\n  UserKnownHostsFile /first\n  GlobalKnownHostsFile /g1\nHost *\n  UserKnownHostsFile /second\n  GlobalKnownHostsFile /g2\n",
			user: "/first", global: "/g1"},
		{name: "none", conf: "Host git.*\n  UserKnownHostsFile NONE\n  GlobalKnownHostsFile none\n",
			user: "none", global: "none"},
		{name: "global, no token expanded", conf: "Host git.*\n  GlobalKnownHostsFile /g/%h /g2\n",
			user: "HOME/.ssh/known_hosts HOME/.ssh/known_hosts2", global: "/g/%h /g2"},
		{name: "none beside a file", conf: "Host other\n  UserKnownHostsFile /x none\n", refused: 2},
		{name: "none first, beside a file", conf: "Host other\n  GlobalKnownHostsFile none /x\n", refused: 2},
		{name: "an empty word", conf: "Host git.*\n  UserKnownHostsFile /x \"\"\n", refused: 2},
		{name: "a token ssh does not know", conf: "Host git.*\n  UserKnownHostsFile /x/%Z\n", refused: 2},
		{name: "a variable not set", conf: "Host git.*\n  UserKnownHostsFile /x/${READPROOF_KH_UNSET}\n", refused: 2},
	} {
		path := writeSSHConfig(t, home, c.conf)
		conf := ReadSSHConfig()
		host, port := conf.Address("git.example.test", "")
		err := conf.Check("git.example.test")
		var files []string
		if err == nil {
			files, err = conf.knownHostsFor("git.example.test", host, port, "git")
		}
		var ce *SSHConfigError
		switch {
		case c.refused != 0 && (!errors.As(err, &ce) || ce.File != path || ce.Line != c.refused):
			t.Errorf("%s: %v, want line %d refused", c.name, err, c.refused)
		case c.refused == 0 && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.refused == 0:
			want := c.user + " " + c.global
			want = strings.ReplaceAll(want, "none", "")
			want = strings.ReplaceAll(want, "HOME", home)
			if got := strings.Join(files, " "); got != strings.Join(strings.Fields(want), " ") {
				t.Errorf("%s: known_hosts files\n%s\nwant\n%s", c.name, got, strings.Join(strings.Fields(want), " "))
			}
		}
		out, refused, ok := sshGUser(t, path, "git", "git.example.test")
		if !ok {
			continue
		}
		if refused != (c.refused != 0) {
			t.Errorf("%s: ssh -G refuses: %v; the case is wrong\n%s", c.name, refused, out)
			continue
		}
		if refused {
			continue
		}
		sshHomeDir, err := passwdHome()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range []string{"userknownhostsfile " + c.user, "globalknownhostsfile " + c.global} {
			l = strings.ReplaceAll(l, "HOME", sshHomeDir)
			if !strings.Contains(out, "\n"+l+"\n") {
				t.Errorf("%s: ssh -G does not say %q: the case is wrong\n%s", c.name, l, out)
			}
		}
	}
}

// sshGUser is sshG for the remote user login (ssh -G -l).
func sshGUser(t *testing.T, conf, login, host string) (out string, refused, ok bool) {
	t.Helper()
	if _, err := exec.LookPath("ssh"); err != nil {
		return "", false, false
	}
	var b bytes.Buffer
	cmd := exec.Command("ssh", "-G", "-F", conf, "-l", login, host)
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("ssh -G: %v", err)
	}
	return "\n" + b.String(), err != nil, true
}

// A fetch checks the host key against the files ssh reads for the host:
// ~/.ssh/known_hosts2 when it alone lists the host; the files a
// UserKnownHostsFile line names, passing over one missing or a
// directory, as ssh passes over a file it cannot open (hostfile.c,
// load_hostkeys) and reads a directory as empty; not ~/.ssh/known_hosts
// when a UserKnownHostsFile line leaves it out (the host is not known
// then, as to ssh); and with none for both, the fetch stops, saying no
// file is read. Before, ~/.ssh/known_hosts was read whatever the
// configuration said, and known_hosts2 never.
func TestSSHKnownHostsFileFollowed(t *testing.T) {
	s, home := newKeyServer(t) // home's known_hosts lists the server
	s.allow(writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "").PublicKey())
	dir := filepath.Join(home, ".ssh")
	listed, err := os.ReadFile(filepath.Join(dir, "known_hosts"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "a-directory"), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, conf string
		files      map[string][]byte // the files under ~/.ssh, known_hosts included
		want       string            // "" for the host key taken
	}{
		{name: "known_hosts2 alone lists the host", files: map[string][]byte{"known_hosts": nil, "known_hosts2": listed}},
		{name: "a missing file and a directory passed over", conf: "Host git.example.test\n  UserKnownHostsFile ~/.ssh/missing ~/.ssh/a-directory ~/.ssh/kh-%r\n",
			files: map[string][]byte{"known_hosts": nil, "kh-git": listed}},
		{name: "known_hosts left out", conf: "Host git.example.test\n  UserKnownHostsFile ~/.ssh/other\n",
			files: map[string][]byte{"known_hosts": listed, "other": []byte("# no host\n")}, want: "known"},
		{name: "none for both", conf: "Host *\n  UserKnownHostsFile none\n  GlobalKnownHostsFile none\n",
			files: map[string][]byte{"known_hosts": listed}, want: "no known_hosts file to check the host key of git.example.test against"},
	} {
		for _, n := range []string{"known_hosts", "known_hosts2", "kh-git", "other"} {
			_ = os.Remove(filepath.Join(dir, n))
		}
		for n, data := range c.files {
			if data != nil {
				write(n, data)
			}
		}
		writeSSHConfig(t, home, c.conf)
		err := s.open(t, "git@git.example.test:r.git")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want the host key taken", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want the host refused saying %q", c.name, err, c.want)
		}
	}
}

// The files a UserKnownHostsFile line names are read as ssh reads them:
// one missing passed over, a directory read as empty, none for none; the
// host key is taken by the fetch where ssh takes it. Checked by
// connecting ssh itself to the same server when ssh is there:
// `ssh -vvv -F CONFIG git@git.example.test true`, with Hostname 127.0.0.1,
// HostKeyAlias git.example.test, StrictHostKeyChecking yes and
// BatchMode yes (ssh says "load_hostkeys: fopen FILE: No such file or
// directory" of a missing file and goes on to the server's refusal of
// its key, "Permission denied (publickey)", where it takes the host key;
// "Host key verification failed" where it does not). The paths are
// absolute: ssh expands ~ to the passwd entry's home, not the test's.
func TestSSHKnownHostsFilesReadAsSSH(t *testing.T) {
	s, home := newKeyServer(t) // home's known_hosts lists the server
	s.allow(writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "").PublicKey())
	dir := filepath.Join(home, ".ssh")
	listed, err := os.ReadFile(filepath.Join(dir, "known_hosts"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "known_hosts")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "a-directory"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"listed": listed, "unlisted": []byte("# no host\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, sshErr := exec.LookPath("ssh")
	for _, c := range []struct {
		files string // the UserKnownHostsFile value, ~/.ssh/ written D/
		taken bool
	}{
		{"D/missing D/a-directory D/listed", true},
		{"D/unlisted D/listed", true},
		{"D/missing D/unlisted", false},
		{"D/a-directory", false},
		{"none", false},
	} {
		files := strings.ReplaceAll(c.files, "D/", dir+"/")
		path := writeSSHConfig(t, home, "Host git.example.test\n  UserKnownHostsFile "+files+"\n  GlobalKnownHostsFile none\n")
		err := s.open(t, "git@git.example.test:r.git")
		if (err == nil) != c.taken {
			t.Errorf("UserKnownHostsFile %s: %v, want the host key taken: %v", c.files, err, c.taken)
		}
		if sshErr != nil {
			continue
		}
		sshConf := filepath.Join(home, "ssh-check.conf")
		if err := os.WriteFile(sshConf, []byte("Host git.example.test\n  Hostname 127.0.0.1\n  Port "+s.port+"\n  HostKeyAlias git.example.test\n  CheckHostIP no\n  StrictHostKeyChecking yes\n  BatchMode yes\n  UpdateHostKeys no\n  ControlPath none\n  IdentitiesOnly yes\n  IdentityFile none\n  UserKnownHostsFile "+files+"\n  GlobalKnownHostsFile none\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command("ssh", "-vvv", "-F", sshConf, "git@git.example.test", "true").CombinedOutput()
		sshTaken := strings.Contains(string(out), "Permission denied (publickey)")
		if sshTaken != c.taken || !sshTaken && !strings.Contains(string(out), "Host key verification failed") {
			t.Errorf("UserKnownHostsFile %s (%s): ssh takes the host key: %v; the case is wrong\n%s", c.files, path, sshTaken, out)
		}
	}
}

// A UserKnownHostsFile or GlobalKnownHostsFile line given a comment alone
// sets nothing: the next line for the host gives the files, as in ssh
// (ssh -G shows it). Before, the comment's line was taken for the first,
// and ~/.ssh/known_hosts and known_hosts2 read where ssh reads the next
// line's file alone.
func TestSSHKnownHostsLineCommentAlone(t *testing.T) {
	home := sshHome(t)
	t.Setenv("SSH_KNOWN_HOSTS", "")
	path := writeSSHConfig(t, home, "Host git.example.test\n  UserKnownHostsFile # old\n  GlobalKnownHostsFile #\nHost *\n  UserKnownHostsFile /kh/user\n  GlobalKnownHostsFile /kh/global\n")
	c := ReadSSHConfig()
	if err := c.Check("git.example.test"); err != nil {
		t.Fatal(err)
	}
	files, err := c.knownHostsFor("git.example.test", "git.example.test", "22", "git")
	if want := []string{filepath.FromSlash("/kh/user"), filepath.FromSlash("/kh/global")}; err != nil || !equalStrings(files, want) {
		t.Errorf("known_hosts files %q, %v; want %q", files, err, want)
	}
	if out, refused, ok := sshG(t, path, "git.example.test"); ok && (refused || !strings.Contains(out, "\nuserknownhostsfile /kh/user\n") || !strings.Contains(out, "\nglobalknownhostsfile /kh/global\n")) {
		t.Errorf("ssh -G reads other files: the case is wrong\n%s", out)
	}
}

// Any configuration is read for the known_hosts files of a host without a
// panic: the files are at most 32 of the user's and 32 of the system's,
// none of them empty, or the refusal is an *SSHConfigError naming a line
// of the file; a line refusedLine refuses is one of the file's.
func FuzzSSHKnownHostsLines(f *testing.F) {
	for _, s := range []string{
		"Host git.*\n  UserKnownHostsFile ~/a %h/b ${HOME}/c \"d e\"\n",
		"Host *\n  UserKnownHostsFile none\n  GlobalKnownHostsFile ~/g %h\n",
		"Host *\n  UserKnownHostsFile a none\n",
		"UserKnownHostsFile=\"\"\n",
		"Host *\n  GlobalKnownHostsFile NONE x\n  UserKnownHostsFile /x/%Z\n",
		"Host *\n  UserKnownHostsFile ~nobody-here/x ~\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r *sshRefusal
		if err := refusedLine(data); errors.As(err, &r) && (r.line < 1 || r.line > strings.Count(string(data), "\n")+1) {
			t.Errorf("refusedLine(%q) = %v: not a line of it", data, err)
		}
		path := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := readSSHConfigFile(path, "/home/u")
		if err != nil || f == nil {
			return
		}
		c := &SSHConfig{home: "/home/u", files: sshConfigs{*f}}
		files, err := c.knownHostsFor("git.example.test", "git.example.test", "22", "git")
		var ce *SSHConfigError
		switch {
		case err != nil && (!errors.As(err, &ce) || ce.File != path || ce.Line < 1):
			t.Errorf("%q: %v, want an *SSHConfigError naming a line of %s", data, err, path)
		case err == nil && len(files) > 2*maxSSHHostsFiles:
			t.Errorf("%q: %d files", data, len(files))
		}
		for _, p := range files {
			if p == "" {
				t.Errorf("%q: an empty file name in %q", data, files)
			}
		}
	})
}

// What a fetch says of the known_hosts files (none read, or one it cannot
// read) shows a file a UserKnownHostsFile line names through ${NAME} as
// the line writes it, never with the variable's value, as for an
// IdentityFile: an MCP client or an evidence bundle may receive it.
// Before, the path was shown expanded.
func TestSSHKnownHostsFileVariableNotShown(t *testing.T) {
	s, home := newKeyServer(t)
	secret := "s3cret-in-a-variable"
	dir := filepath.Join(home, secret)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("READPROOF_KH_DIR", dir)
	for _, c := range []struct {
		name string
		data []byte // the file's; nil for none
		want string
	}{
		{name: "missing", want: "(the files ssh reads for this host: ${READPROOF_KH_DIR}/kh)"},
		{name: "unreadable line", data: []byte("git.example.test ssh-ed25519 not-base64!\n"), want: "cannot read known hosts (${READPROOF_KH_DIR}/kh): knownhosts: ${READPROOF_KH_DIR}/kh"},
	} {
		_ = os.Remove(filepath.Join(dir, "kh"))
		if c.data != nil {
			if err := os.WriteFile(filepath.Join(dir, "kh"), c.data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		writeSSHConfig(t, home, "Host git.example.test\n  UserKnownHostsFile ${READPROOF_KH_DIR}/kh\n  GlobalKnownHostsFile none\n")
		err := s.open(t, "git@git.example.test:r.git")
		if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q, and no %q", c.name, err, c.want, secret)
		}
	}
}

// With a HostKeyAlias, the host key is looked up under the alias, in
// lower case and without a port, as ssh looks it up: a key known_hosts
// lists for the host name alone is not taken. Before, the host name was
// looked up whatever the alias, so a key ssh refuses was taken, and one
// it takes refused. Checked by connecting ssh itself to the same server
// when ssh is there (as in TestSSHKnownHostsFilesReadAsSSH).
func TestSSHHostKeyAlias(t *testing.T) {
	s, home := newKeyServer(t)
	s.allow(writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "").PublicKey())
	dir := filepath.Join(home, ".ssh")
	listed, err := os.ReadFile(filepath.Join(dir, "known_hosts")) // under [git.example.test]:PORT and git.example.test
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(string(listed))
	key := words[1] + " " + words[2]
	_, sshErr := exec.LookPath("ssh")
	for _, c := range []struct {
		alias, kh string
		taken     bool
	}{
		{"kal", string(listed), false},
		{"kal", "[127.0.0.1]:" + s.port + " " + key + "\n", false},
		{"KAL", "kal " + key + "\n", true},
		{"kal", "[kal]:" + s.port + " " + key + "\n", false},
	} {
		kh := filepath.Join(dir, "kh")
		if err := os.WriteFile(kh, []byte(c.kh), 0o600); err != nil {
			t.Fatal(err)
		}
		conf := "Host git.example.test\n  Hostname 127.0.0.1\n  Port " + s.port + "\n  HostKeyAlias " + c.alias + "\n  UserKnownHostsFile " + kh + "\n  GlobalKnownHostsFile none\n"
		writeSSHConfig(t, home, conf)
		err := s.open(t, "ssh://git@git.example.test/r.git")
		if (err == nil) != c.taken {
			t.Errorf("HostKeyAlias %s, known_hosts %q: %v, want the host key taken: %v", c.alias, c.kh, err, c.taken)
		}
		if sshErr != nil {
			continue
		}
		sshConf := filepath.Join(home, "ssh-check.conf")
		if err := os.WriteFile(sshConf, []byte(conf+"  CheckHostIP no\n  StrictHostKeyChecking yes\n  BatchMode yes\n  UpdateHostKeys no\n  ControlPath none\n  IdentitiesOnly yes\n  IdentityFile none\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command("ssh", "-F", sshConf, "git@git.example.test", "true").CombinedOutput()
		sshTaken := strings.Contains(string(out), "Permission denied (publickey)")
		if sshTaken != c.taken || !sshTaken && !strings.Contains(string(out), "Host key verification failed") {
			t.Errorf("HostKeyAlias %s, known_hosts %q: ssh takes the host key: %v; the case is wrong\n%s", c.alias, c.kh, sshTaken, out)
		}
	}
}
