package gitstore

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// Whether a Match block could apply (Warnings: a Match block not applied
// is said; an Include in it is followed for the Match blocks of the files
// it reads) is now the verdict's rule, which every other reader of Match
// blocks follows: a block could apply unless its verdict is matchNo.
// These are the cases where the two rules differed: a negated criterion
// that holds (!host, !originalhost, !all, !localuser) and localuser,
// which the old rule took as ones that may hold, so that a block ssh
// never applies was said not to be applied, and an Include in it read for
// warnings. Each case is checked with `ssh -G -F CONFIG git.example.test`
// (the block's User is taken or not) when ssh is there, and the rule
// never rules out a block ssh applies. The cases after them, where the
// rules agreed, stay as they were.
func TestSSHMatchCouldApplyIsVerdict(t *testing.T) {
	home := sshHome(t)
	me, err := user.Current()
	if err != nil || me.Username == "" {
		t.Skip(err)
	}
	inc := filepath.Join(home, ".ssh", "inc.conf")
	if err := os.WriteFile(inc, []byte("Match all\n  User included\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		criteria string
		hostname bool // a Hostname real.example given before the Match line
		before   bool // the old rule: could apply
		could    bool
		ssh      bool // ssh applies the block
	}{
		{criteria: "!host git.example.test", before: true, could: false, ssh: false},
		{criteria: "!originalhost git.example.test", hostname: true, before: true, could: false, ssh: false},
		{criteria: "!all", before: true, could: false, ssh: false},
		{criteria: "localuser readproof-nobody", before: true, could: false, ssh: false},
		{criteria: "!localuser " + me.Username, before: true, could: false, ssh: false},
		{criteria: "host git.example.test !localuser " + me.Username, before: true, could: false, ssh: false},

		{criteria: "!host git.example.test", hostname: true, before: true, could: true, ssh: true},
		{criteria: "localuser " + me.Username, before: true, could: true, ssh: true},
		{criteria: "!host other.example.test", before: true, could: true, ssh: true},
		{criteria: "host other.example.test", before: false, could: false, ssh: false},
	} {
		conf := ""
		hostname := "git.example.test"
		if c.hostname {
			conf, hostname = "Host git.*\n  Hostname real.example\n", "real.example"
		}
		m := matchBlock{criteria: c.criteria}
		if got := m.couldApply("git.example.test", hostname); got != c.could || (m.verdict("git.example.test", hostname) != matchNo) != got {
			t.Errorf("Match %s (hostname %s): could apply %v, verdict %d, want %v", c.criteria, hostname, got, m.verdict("git.example.test", hostname), c.could)
		}
		if c.ssh && !c.could {
			t.Errorf("Match %s: the case rules out a block ssh applies", c.criteria)
		}
		// said, and the Include in it followed for warnings, as it could apply
		for _, body := range []string{"  User matchuser\n", "  Include inc.conf\n"} {
			path := writeSSHConfig(t, home, conf+"Match "+c.criteria+"\n"+body)
			var said []int
			for _, w := range ReadSSHConfig().Warnings("git.example.test") {
				var ce *SSHConfigError
				if errors.As(w, &ce) && ce.Key == "Match" {
					said = append(said, ce.Line)
				}
			}
			if (len(said) > 0) != c.could {
				t.Errorf("Match %s with %q: Match blocks said on lines %v, want said %v", c.criteria, body, said, c.could)
			}
			if !strings.Contains(body, "User") {
				continue
			}
			out, refused, ok := sshG(t, path, "git.example.test")
			if !ok {
				continue
			}
			if refused || strings.Contains(out, "\nuser matchuser\n") != c.ssh {
				t.Errorf("Match %s: ssh -G applies it: %v; the case is wrong\n%s", c.criteria, !c.ssh, out)
			}
		}
	}
}
