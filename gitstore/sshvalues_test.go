package gitstore

import (
	"errors"
	"strings"
	"testing"
)

// A Hostname, Port or User line ssh refuses (no value: a comment or ""
// alone; more than one word; a Port that is no port) refuses every ssh
// fetch wherever it stands, in the host's block or another's: ssh reads
// every line of the files, whichever host it connects to, and connects
// to none then ("Missing argument", "extra arguments at end of line",
// "Bad port"). Before (session 27, revC), such a line was refused only in
// the block that applies to the host, and the fetch went on where ssh
// connects nowhere. Each case is checked against ssh -G when ssh is there.
func TestSSHValueRefusedInAnyBlock(t *testing.T) {
	home := sshHome(t)
	for _, c := range []struct {
		line, want string // want "": read, as by ssh
	}{
		{`User a b`, "more than one word"},
		{`Port 22 23`, "more than one word"},
		{`Hostname a b`, "more than one word"},
		{`Port # the port`, "no value"},
		{`User ""`, "no value"},
		{`"Hostname" ""`, "no value"},
		{`Port twenty-two`, "not a port"},
		{`Port 0`, "not a port"},
		{`User "a b"`, ""},
		{`Port ssh`, ""},
		{`Hostname %p.example.test`, ""}, // a token is refused for the host ssh connects to alone
		{`User git # the login`, ""},
	} {
		path := writeSSHConfig(t, home, "Host git.example.test\n  Hostname real.example.test\nHost other.example.test\n  "+c.line+"\n")
		err := ReadSSHConfig().Check("git.example.test")
		var ce *SSHConfigError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s in another host's block: %v; want it read, as by ssh", c.line, err)
		case c.want != "" && (!errors.As(err, &ce) || ce.File != path || ce.Line != 4 || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s in another host's block: %v; want every fetch refused, naming %s line 4 and %q", c.line, err, path, c.want)
		}
		if out, refused, ok := sshG(t, path, "git.example.test"); ok && refused != (c.want != "") {
			t.Errorf("%s: ssh -G disagrees with the case (refused %v):%s", c.line, refused, out)
		}
	}
}
