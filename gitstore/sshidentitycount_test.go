package gitstore

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// More than 100 IdentityFile lines for the host refuse the fetch, naming
// the 101st, as ssh refuses the configuration ("Too many identity files
// specified (max 100)"): a path given twice counts once (quotes taken
// off), but no line is taken past the hundredth, a path given before
// included; lines for another host do not count. Before, every line was
// taken. Each case is checked against ssh -G when ssh is there.
func TestSSHIdentityFileLimitAsSSH(t *testing.T) {
	home := sshHome(t)
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "  IdentityFile ~/.ssh/k%d\n", i)
		}
		return b.String()
	}
	for _, c := range []struct {
		name, conf string
		refused    int // the line refused; 0 for none
	}{
		{"100", "Host git.example.test\n" + lines(0, 100), 0},
		{"101", "Host git.example.test\n" + lines(0, 101), 102},
		{"100 and one again", "Host git.example.test\n" + lines(0, 100) + "  IdentityFile ~/.ssh/k0\n", 102},
		{"99 and twice again", "Host git.example.test\n" + lines(0, 99) + "  IdentityFile ~/.ssh/k0\n  IdentityFile \"~/.ssh/k0\"\n" + lines(99, 100), 0},
		{"101 for another host", "Host other.example.test\n" + lines(0, 101), 0},
		{"60 and 41 in two blocks", "Host git.*\n" + lines(0, 60) + "Host *.test\n" + lines(60, 101), 103},
	} {
		path := writeSSHConfig(t, home, c.conf)
		err := ReadSSHConfig().Check("git.example.test")
		var ce *SSHConfigError
		switch {
		case c.refused == 0 && err != nil:
			t.Errorf("%s: Check %v", c.name, err)
		case c.refused != 0 && (!errors.As(err, &ce) || ce.File != path || ce.Line != c.refused || !strings.Contains(err.Error(), "Too many identity files specified (max 100)")):
			t.Errorf("%s: Check %v, want line %d refused for too many identity files", c.name, err, c.refused)
		}
		out, refused, ok := sshG(t, path, "git.example.test")
		if !ok {
			continue
		}
		if refused != (c.refused != 0) || c.refused != 0 && !strings.Contains(out, fmt.Sprintf(" line %d: Too many identity files", c.refused)) {
			t.Errorf("%s: ssh -G does not agree: the case is wrong\n%s", c.name, out)
		}
	}
}
