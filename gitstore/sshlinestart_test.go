package gitstore

import (
	"errors"
	"strings"
	"testing"
)

// A line is taken as ssh takes it (readconf.c): an "=" starting it, after
// spaces or not, makes an empty first word and the next word the keyword
// (=Port 2200 is Port 2200; ==Port 2200 is nothing); the form feeds and
// spaces ending it are taken off but for its first byte, so a form feed
// alone is a keyword with nothing after it, which ssh refuses, and a
// space and a form feed a blank line. A byte order mark starting the file
// is refused saying so. Before, =Port 2200 and a form feed alone were
// refused as the unknown keywords "" and "\f" (with a hint to list them
// in IgnoreUnknown), and the byte order mark was an unknown keyword
// "\ufeffHost". Each case is checked against ssh -G when ssh is there.
func TestSSHLineStartAsSSH(t *testing.T) {
	home := sshHome(t)
	for _, c := range []struct{ conf, port, refused string }{
		{conf: "=Port 2200\n", port: "2200"},
		{conf: "  =  Port 2201\n", port: "2201"},
		{conf: "\t=Port=2202\n", port: "2202"},
		{conf: "==Port 2203\n", port: "22"},
		{conf: " ==Port 2204\n", port: "22"},
		{conf: "Port 2205\f\f\n", port: "2205"},
		{conf: " \f\nPort 2206\n", port: "2206"},
		{conf: "Host *\n\f\nPort 2207\n", refused: `line 2: nothing after the keyword "\f"`},
		{conf: "\f \f\nPort 2208\n", refused: `line 1: nothing after the keyword "\f"`},
		{conf: "\ufeffHost *\nPort 2209\n", refused: "line 1: the file starts with a UTF-8 byte order mark"},
		{conf: "\ufeff\nPort 2210\n", refused: "line 1: the file starts with a UTF-8 byte order mark"},
		{conf: "\ufeff# a comment\nPort 2211\n", refused: "line 1: the file starts with a UTF-8 byte order mark"},
	} {
		path := writeSSHConfig(t, home, c.conf)
		conf := ReadSSHConfig()
		err := conf.Check("git.example.test")
		if c.refused != "" {
			var ce *SSHConfigError
			if !errors.As(err, &ce) || ce.File != path || !strings.Contains(err.Error(), c.refused) || strings.Contains(err.Error(), "IgnoreUnknown") {
				t.Errorf("%q: Check %v, want a refusal of %s saying %q, with no IgnoreUnknown hint", c.conf, err, path, c.refused)
			}
		} else if err != nil {
			t.Errorf("%q: Check %v", c.conf, err)
		} else if _, p := conf.Address("git.example.test", ""); p != c.port {
			t.Errorf("%q: port %s, want %s", c.conf, p, c.port)
		}
		out, refused, ok := sshG(t, path, "git.example.test")
		if !ok {
			continue
		}
		if refused != (c.refused != "") || c.port != "" && !strings.Contains(out, "\nport "+c.port+"\n") {
			t.Errorf("%q: ssh -G does not agree: the case is wrong\n%s", c.conf, out)
		}
	}
}
