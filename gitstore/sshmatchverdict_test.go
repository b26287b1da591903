package gitstore

import (
	"errors"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// An IgnoreUnknown in a Match block counts only where readproof can tell
// the block applies (host, originalhost and localuser evaluated, a
// negated one too); in one whose criteria it does not evaluate (exec) it
// is not counted, and the refusal of the keyword it lists says why, with
// the way out. Before, it counted whenever the block's host lists could
// apply: Match exec false (which ssh never applies) or Match !host for
// the host let a keyword through that ssh refuses. Checked against ssh -G
// when ssh is there; under Match exec true ssh applies the block where
// readproof refuses, saying so (it runs no command).
func TestSSHIgnoreUnknownInMatchAsSSH(t *testing.T) {
	home := sshHome(t)
	me, err := user.Current()
	if err != nil || me.Username == "" {
		t.Skip(err)
	}
	for _, c := range []struct {
		match   string
		refused string // "" for taken
		sshTake bool
	}{
		{match: "host git.example.test", sshTake: true},
		{match: "originalhost git.* localuser " + me.Username, sshTake: true},
		{match: "all", sshTake: true},
		{match: "exec false", refused: "stands in a Match block whose criteria readproof does not evaluate"},
		{match: "exec true", refused: "stands in a Match block whose criteria readproof does not evaluate", sshTake: true},
		{match: "localuser readproof-nobody", refused: `the keyword "UseKeyring" is not one OpenSSH 9.2 knows`},
		{match: "!host git.example.test", refused: `the keyword "UseKeyring" is not one OpenSSH 9.2 knows`},
	} {
		path := writeSSHConfig(t, home, "Match "+c.match+"\n  IgnoreUnknown UseKeyring\nHost *\n  UseKeyring yes\n")
		err := ReadSSHConfig().Check("git.example.test")
		var ce *SSHConfigError
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("Match %s: Check %v", c.match, err)
		case c.refused != "" && (!errors.As(err, &ce) || ce.File != path || ce.Line != 4 || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("Match %s: Check %v, want line 4 refused saying %q", c.match, err, c.refused)
		case strings.Contains(c.refused, "does not evaluate") && !strings.Contains(err.Error(), "line 2 lists it") || strings.Contains(c.refused, "does not evaluate") && !strings.Contains(err.Error(), "move that IgnoreUnknown line to the top of the file"):
			t.Errorf("Match %s: %v, want the IgnoreUnknown of line 2 named, with the way out", c.match, err)
		}
		if out, refused, ok := sshG(t, path, "git.example.test"); ok && refused == c.sshTake {
			t.Errorf("Match %s: ssh -G takes it: %v; the case is wrong\n%s", c.match, !refused, out)
		}
	}
}

// RefuseConnection (OpenSSH 10.1) in a Match block that applies to the
// host refuses the fetch, as in a Host block; in one that may apply (an
// exec readproof does not run) it refuses the fetch too, saying why; the
// first value that applies wins, a no in a block that may not apply
// leaving a later yes to count. Before, a Match block's RefuseConnection
// was only said as a warning, and the fetch went on where ssh 10.1
// connects to no host.
func TestSSHRefuseConnectionInMatch(t *testing.T) {
	home := sshHome(t)
	for _, c := range []struct {
		conf string
		line int // refused; 0 for not
		want string
	}{
		{"Match host git.example.test\n  RefuseConnection yes\n", 2, "ssh refuses to connect to this host"},
		{"Match exec \"test -d /\"\n  RefuseConnection yes\n", 2, "stands in a Match block whose criteria readproof does not evaluate"},
		{"Match host other.example.test\n  RefuseConnection yes\n", 0, ""},
		{"Host git.example.test\n  RefuseConnection no\nMatch exec true\n  RefuseConnection yes\n", 0, ""},
		{"Match exec true\n  RefuseConnection no\nHost *\n  RefuseConnection yes\n", 4, "ssh refuses to connect to this host"},
		{"Match all\n  RefuseConnection no\nHost *\n  RefuseConnection yes\n", 0, ""},
	} {
		path := writeSSHConfig(t, home, c.conf)
		err := readSSHConfigs(filepath.Join(home, "no-system-config")).Check("git.example.test")
		var ce *SSHConfigError
		if c.line == 0 && err != nil {
			t.Errorf("%q: Check %v", c.conf, err)
		} else if c.line != 0 && (!errors.As(err, &ce) || ce.File != path || ce.Line != c.line || ce.Key != "RefuseConnection" || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: Check %v, want line %d refused saying %q", c.conf, err, c.line, c.want)
		}
	}
}

// A Match block's verdict: every criterion must hold; host, originalhost
// and localuser are evaluated (a host list matching the alias and not
// the Hostname, or the other way, may hold); exec, user, canonical and
// final may hold.
func TestMatchVerdict(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		criteria string
		want     matchVerdict
	}{
		{"all", matchYes},
		{"!all", matchNo},
		{"host alias,real.example", matchYes},
		{"host alias", matchMaybe},
		{"host other", matchNo},
		{"!host other", matchYes},
		{"!host alias,real.example", matchNo},
		{"originalhost alias", matchYes},
		{"originalhost real.example", matchNo},
		{"exec true", matchMaybe},
		{"exec true host other", matchNo},
		{"user git", matchMaybe},
		{"final", matchMaybe},
		{"localuser readproof-nobody", matchNo},
		{"host", matchMaybe},
	} {
		if got := (matchBlock{criteria: c.criteria}).verdict("alias", "real.example"); got != c.want {
			t.Errorf("Match %s for alias at real.example: %d, want %d", c.criteria, got, c.want)
		}
	}
}

// Any criteria are read for a verdict without a panic, and criteria that
// rule a block out for couldApply rule it out for verdict too.
func FuzzMatchVerdict(f *testing.F) {
	for _, s := range []string{"all", "!host a,b exec x", "host", "originalhost \"a b\" localuser me", "final !all", "user"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, criteria string) {
		m := matchBlock{criteria: criteria}
		if !m.couldApply("alias", "real.example") && m.verdict("alias", "real.example") != matchNo {
			t.Errorf("Match %q: ruled out by couldApply, verdict %d", criteria, m.verdict("alias", "real.example"))
		}
	})
}

// An IgnoreUnknown in a Match block readproof cannot evaluate (exec),
// given before the one in force, is the list ssh takes where the block
// applies (the first IgnoreUnknown obtained wins): a keyword the later
// list holds and it does not is refused, naming that line, as ssh
// refuses it under Match exec true; one both lists hold is taken. Before,
// the Match block's list was passed over and the keyword taken, where ssh
// connects to no host. Checked against ssh -G when ssh is there.
func TestSSHIgnoreUnknownMatchFirstAsSSH(t *testing.T) {
	home := sshHome(t)
	for _, c := range []struct {
		conf    string
		refused bool
		sshTake bool // under Match exec true
	}{
		{conf: "Match exec true\n  IgnoreUnknown Foo\nHost *\n  IgnoreUnknown Bar\n  Bar yes\n", refused: true},
		{conf: "Match exec true\n  IgnoreUnknown Foo,Bar\nHost *\n  IgnoreUnknown Bar\n  Bar yes\n", sshTake: true},
		{conf: "Host *\n  IgnoreUnknown Bar\nMatch exec true\n  IgnoreUnknown Foo\nHost *\n  Bar yes\n", sshTake: true},
	} {
		path := writeSSHConfig(t, home, c.conf)
		err := readSSHConfigs(filepath.Join(home, "no-system-config")).Check("git.example.test")
		var ce *SSHConfigError
		switch {
		case !c.refused && err != nil:
			t.Errorf("%q: Check %v", c.conf, err)
		case c.refused && (!errors.As(err, &ce) || ce.File != path || ce.Line != 5 || !strings.Contains(err.Error(), path+" line 2, which does not, comes first in a Match block")):
			t.Errorf("%q: Check %v, want line 5 refused, naming the IgnoreUnknown of line 2", c.conf, err)
		}
		if out, refused, ok := sshG(t, path, "git.example.test"); ok && refused == c.sshTake {
			t.Errorf("%q: ssh -G takes it: %v; the case is wrong\n%s", c.conf, !refused, out)
		}
	}
}
