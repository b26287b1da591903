package gitstore

import (
	"errors"
	"strings"
	"testing"
)

// An IdentityFile, IdentitiesOnly or IgnoreUnknown line given a comment
// alone refuses the configuration, naming the line, as ssh refuses it
// ("missing argument"). Before, IdentitiesOnly # and RefuseConnection #
// made readproof panic on reading ~/.ssh/config (an index out of range
// in refusedIdentityLine), and the others were taken.
func TestSSHIdentityLineCommentAlone(t *testing.T) {
	home := sshHome(t)
	for _, line := range []string{"IdentitiesOnly #", "IdentitiesOnly # yes", "RefuseConnection #", "IdentityFile #", "IgnoreUnknown # x"} {
		path := writeSSHConfig(t, home, "Host other.example.test\n  "+line+"\n")
		err := ReadSSHConfig().Check("git.example.test")
		var ce *SSHConfigError
		if !errors.As(err, &ce) || ce.File != path || ce.Line != 2 || !strings.Contains(err.Error(), "a comment alone") {
			t.Errorf("%q: %v, want line 2 refused, a comment alone", line, err)
		}
		if strings.HasPrefix(line, "RefuseConnection") {
			continue // ssh 9.2 does not know it
		}
		if out, refused, ok := sshG(t, path, "git.example.test"); ok && !refused {
			t.Errorf("%q: ssh -G takes it: the case is wrong\n%s", line, out)
		}
	}
}
