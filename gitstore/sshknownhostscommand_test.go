package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/readproof/readproof/internal/hint"
)

// hostsCommand writes a KnownHostsCommand script in dir that logs its
// arguments, one run a line, to the file it returns, and prints the file
// printed, then exits with status exit.
func hostsCommand(t *testing.T, dir, exit string) (script, log, printed string) {
	t.Helper()
	script, log, printed = filepath.Join(dir, "khcmd"), filepath.Join(dir, "khcmd.log"), filepath.Join(dir, "khcmd.out")
	body := "#!/bin/sh\nfor a; do printf '%s|' \"$a\"; done >> " + log + "\necho >> " + log + "\ncat " + printed + "\nexit " + exit + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, log, printed
}

// A KnownHostsCommand for the host is run as ssh 9.2 runs it: no shell,
// its words' tokens expanded (the same arguments as ssh's, for the order
// of host key algorithms and for the key, checked against ssh itself
// connecting to the same server), and its output read as a known_hosts
// file after the files: a key it lists is taken, a @revoked line it
// prints refuses a key a file lists, and a command that fails refuses the
// fetch, naming it, with a hint. Before, the command was not run: the
// @revoked line was missed and the key taken, and a host it alone lists
// was refused as unknown.
func TestKnownHostsCommandAsSSH(t *testing.T) {
	key := newKey(t)
	keyLine := strings.TrimSuffix(string(ssh.MarshalAuthorizedKey(key.PublicKey())), "\n")
	port, open := hostKeyServer(t, key)
	home := os.Getenv("HOME")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var revoked *knownhosts.RevokedError
	for _, c := range []struct {
		what          string
		exit          string
		file, printed string // known_hosts file, and the command's output
		want          string // "" for taken, "revoked" for a *knownhosts.RevokedError
		sshTakes      bool
	}{
		{what: "the key printed by the command alone", exit: "0", printed: "git.example.test " + keyLine + "\n", sshTakes: true},
		{what: "the key listed, @revoked by the command", exit: "0", file: "git.example.test " + keyLine + "\n", printed: "@revoked * " + keyLine + "\n", want: "revoked"},
		{what: "the key printed for another host", exit: "0", printed: "other.example.test " + keyLine + "\n", want: "key is unknown"},
		{what: "the key listed, the command failing", exit: "3", file: "git.example.test " + keyLine + "\n", want: "exit status 3"},
	} {
		script, log, printed := hostsCommand(t, dir, c.exit)
		if err := os.WriteFile(printed, []byte(c.printed), 0o600); err != nil {
			t.Fatal(err)
		}
		cmdLine := "  KnownHostsCommand " + script + " %H %I %t %f %K %h %p %r %u %n %k %C %% x%%y\n"
		writeSSHConfig(t, home, "Host git.example.test\n  Hostname 127.0.0.1\n  HostKeyAlias git.example.test\n"+cmdLine)
		_ = os.Remove(log)
		err := open(c.file)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want it taken", c.what, err)
		case c.want == "revoked" && !errors.As(err, &revoked):
			t.Errorf("%s: %v, want a revoked key", c.what, err)
		case c.want != "" && c.want != "revoked" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want it refused: %s", c.what, err, c.want)
		}
		if c.exit != "0" && (err == nil || !strings.Contains(err.Error(), "KnownHostsCommand for host git.example.test: "+script+" failed") || !strings.Contains(hint.Of(err), "KnownHostsCommand none")) {
			t.Errorf("%s: %v (hint %q), want the command named, with a hint", c.what, err, hint.Of(err))
		}
		ours, _ := os.ReadFile(log)
		_ = os.Remove(log)
		taken, out, ok := sshTakesHostKeyWith(t, port, os.Getenv("SSH_KNOWN_HOSTS"), cmdLine)
		if !ok {
			continue
		}
		if taken != c.sshTakes {
			t.Errorf("%s: ssh takes the host key: %v; the case is wrong\n%s", c.what, taken, out)
		}
		theirs, _ := os.ReadFile(log)
		if string(ours) != string(theirs) {
			t.Errorf("%s: the command's arguments, one run a line:\n%s\nssh's:\n%s", c.what, ours, theirs)
		}
	}
}

// A KnownHostsCommand readproof would not run as ssh runs it refuses the
// fetch before dialling, naming the line, with a hint: a program not
// written from / (ssh does not run it), a token ssh does not expand; one
// printing more than a known_hosts file's bound is refused, naming it.
// "none" is no command. A ${NAME} not set in the environment is refused,
// as ssh refuses it ("env var ${NAME} has no value"), not put in as
// nothing.
func TestKnownHostsCommandRefused(t *testing.T) {
	s, home := newKeyServer(t)
	for _, c := range []struct {
		conf, want string
	}{
		{"  KnownHostsCommand khcmd %H\n", "not written from /"},
		{"  KnownHostsCommand /bin/cat %Q\n", "%Q is not a token"},
		{"  KnownHostsCommand /bin/cat %H%\n", "lone %"},
		{"  KnownHostsCommand /bin/cat ${READPROOF_REVSSH_NOT_SET}\n", "${READPROOF_REVSSH_NOT_SET}, which is not set"},
		{"  KnownHostsCommand /usr/bin/head -c 16777217 /dev/zero\n", "prints more than 16 MiB"},
		{"  KnownHostsCommand /nonexistent/khcmd\n", "does not start"},
		{"  KnownHostsCommand none\n", ""},
		{"Match host git.example.test\n  KnownHostsCommand khcmd %H\n", "not written from /"},
		{"Match host other.example.test\n  KnownHostsCommand khcmd %H\n", ""},
	} {
		conf := "Host git.example.test\n" + c.conf
		if strings.HasPrefix(c.conf, "Match") {
			conf = c.conf + "\n"
		}
		path := writeSSHConfig(t, home, conf)
		err := s.open(t, "git@git.example.test:r.git")
		if c.want == "" {
			var authErr *SSHAuthError // past the host key, no key to log in with
			if !errors.As(err, &authErr) {
				t.Errorf("%q: %v, want the host key taken", c.conf, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), path+" line 2: KnownHostsCommand") || !strings.Contains(err.Error(), c.want) || hint.Of(err) == "" {
			t.Errorf("%q: %v (hint %q), want the line named: %s", c.conf, err, hint.Of(err), c.want)
		}
	}
}

// FuzzKnownHostsCommandTokens: a KnownHostsCommand word expands or is
// refused, never panics; a word with no % or $ is itself.
func FuzzKnownHostsCommandTokens(f *testing.F) {
	for _, s := range []string{"%H %I", "%%", "x%", "${HOME}/%k", "${", "%t%f%K", "%C-%l-%L", "%é"} {
		f.Add(s)
	}
	x := identityTokens{home: "/home/u", localUser: "u", host: "h", remoteUser: "git", alias: "a", port: "22"}
	f.Fuzz(func(t *testing.T, w string) {
		out, err := expandCommandTokens(w, x, commandKeyTokens{name: "a", invocation: "ORDER"})
		if !strings.ContainsAny(w, "%$") && (err != nil || out != w) {
			t.Errorf("%q: %q, %v; want it as written", w, out, err)
		}
	})
}
