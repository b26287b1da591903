package gitstore

import (
	"errors"
	"fmt"
	"os/user"
	"strings"
	"testing"
)

// IdentityFile lines of a Match block count toward ssh's 100 as those of
// a Host block do, where the block applies, in the order the file writes
// the blocks: ssh refuses the 101st line ("Too many identity files
// specified (max 100)"). A Match block whose criteria readproof does not
// evaluate (exec) counts too, and the refusal names the line of that
// block counted first, as ssh refuses under Match exec true and not
// under Match exec false. Before, Match blocks' lines were not counted,
// and a fetch went on where ssh connects to no host. Each case is
// checked with `ssh -G -F CONFIG git.example.test` when ssh is there
// (refused: "CONFIG line N: Too many identity files specified").
func TestSSHIdentityFileLimitInMatchAsSSH(t *testing.T) {
	home := sshHome(t)
	me, err := user.Current()
	if err != nil || me.Username == "" {
		t.Skip(err)
	}
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "  IdentityFile ~/.ssh/k%d\n", i)
		}
		return b.String()
	}
	for _, c := range []struct {
		name, conf string
		refused    int    // the line refused; 0 for none
		maybe      int    // the line named as the first of a block readproof does not evaluate; 0 for none
		sshRefused int    // the line ssh -G refuses; 0 for none
		skip       string // why ssh -G is not asked
	}{
		{name: "Match host, 101", conf: "Match host git.example.test\n" + lines(0, 101), refused: 102, sshRefused: 102},
		{name: "Match originalhost and localuser, 101", conf: "Match originalhost git.* localuser " + me.Username + "\n" + lines(0, 101), refused: 102, sshRefused: 102},
		{name: "Host 60, then Match all 41", conf: "Host git.*\n" + lines(0, 60) + "Match all\n" + lines(60, 101), refused: 103, sshRefused: 103},
		{name: "Match all 50, then Host 51", conf: "Match all\n" + lines(0, 50) + "Host *.test\n" + lines(50, 101), refused: 103, sshRefused: 103},
		{name: "Match all 100 and one again", conf: "Match all\n" + lines(0, 100) + "Host *\n" + lines(0, 1), refused: 103, sshRefused: 103},
		{name: "Match host for another, 101", conf: "Match host other.example.test\n" + lines(0, 101)},
		{name: "Match !host, 101", conf: "Match !host git.example.test\n" + lines(0, 101)},
		{name: "Match localuser another, 101", conf: "Match localuser readproof-nobody\n" + lines(0, 101)},
		{name: "Match exec true, 101", conf: "Match exec true\n" + lines(0, 101), refused: 102, maybe: 2, sshRefused: 102},
		{name: "Match exec false, 101", conf: "Match exec false\n" + lines(0, 101), refused: 102, maybe: 2, skip: "ssh runs false and applies no line: readproof runs no command"},
		{name: "Host 99, Match exec true 1, Host 1", conf: "Host git.*\n" + lines(0, 99) + "Match exec true\n" + lines(99, 100) + "Host *\n" + lines(100, 101), refused: 104, maybe: 102, sshRefused: 104},
	} {
		path := writeSSHConfig(t, home, c.conf)
		err := ReadSSHConfig().Check("git.example.test")
		var ce *SSHConfigError
		switch {
		case c.refused == 0 && err != nil:
			t.Errorf("%s: Check %v", c.name, err)
		case c.refused != 0 && (!errors.As(err, &ce) || ce.File != path || ce.Line != c.refused || !strings.Contains(err.Error(), "Too many identity files specified (max 100)")):
			t.Errorf("%s: Check %v, want line %d refused for too many identity files", c.name, err, c.refused)
		case c.maybe != 0 && !strings.Contains(err.Error(), fmt.Sprintf("the Match block holding the IdentityFile on %s line %d applies, and its criteria are ones readproof does not evaluate", path, c.maybe)):
			t.Errorf("%s: %v, want the Match block of line %d named", c.name, err, c.maybe)
		case c.maybe == 0 && c.refused != 0 && strings.Contains(err.Error(), "does not evaluate"):
			t.Errorf("%s: %v, want no Match block said to be not evaluated", c.name, err)
		}
		if c.skip != "" {
			continue
		}
		out, refused, ok := sshG(t, path, "git.example.test")
		if !ok {
			continue
		}
		if refused != (c.sshRefused != 0) || c.sshRefused != 0 && !strings.Contains(out, fmt.Sprintf(" line %d: Too many identity files", c.sshRefused)) {
			t.Errorf("%s: ssh -G does not agree: the case is wrong\n%s", c.name, out)
		}
	}
}
