package gitstore

import (
	"errors"
	"net"
	"strings"
	"testing"
)

// A Port in ~/.ssh/config may name a service of /etc/services, as ssh
// reads it (misc.c, a2port: a number, else getservbyname(NAME, "tcp")):
// Port ssh is port 22, and the fetch goes on. Before (session 27,
// revC), such a Port was refused as "not a port number, which ssh
// refuses", though ssh -G gives its port. A name no service has, or one
// in capitals (getservbyname matches the file's spelling), is still
// refused, as ssh refuses it. Each case is checked against ssh -G when
// ssh is there.
func TestSSHPortServiceName(t *testing.T) {
	home := sshHome(t)
	for _, c := range []struct {
		value, port string // port "": refused
	}{
		{"ssh", "22"},
		{"git", "9418"},
		{"SSH", ""},
		{"nosuchservice-readproof", ""},
		{"0", ""},
		{"+2200", "2200"},
	} {
		if c.port != "" && c.value[0] != '+' {
			if p, err := net.LookupPort("tcp", c.value); err != nil || p == 0 {
				t.Logf("Port %s: this system has no such service (%v): skipped", c.value, err)
				continue
			}
		}
		path := writeSSHConfig(t, home, "Host git.example.test\n  Port "+c.value+"\n")
		conf := ReadSSHConfig()
		err := conf.Check("git.example.test")
		_, port := conf.Address("git.example.test", "")
		if c.port != "" && (err != nil || port != c.port) {
			t.Errorf("Port %s: Check %v, port %s; want port %s, as ssh reads it", c.value, err, port, c.port)
		}
		var ce *SSHConfigError
		if c.port == "" && (!errors.As(err, &ce) || ce.Key != "Port" || ce.Line != 2 || !strings.Contains(err.Error(), "not a port number")) {
			t.Errorf("Port %s: Check %v; want it refused, naming Port at line 2", c.value, err)
		}
		if out, refused, ok := sshG(t, path, "git.example.test"); ok {
			if refused != (c.port == "") || (c.port != "" && !strings.Contains(out, "\nport "+c.port+"\n")) {
				t.Errorf("Port %s: ssh -G disagrees with the case (refused %v):%s", c.value, refused, out)
			}
		}
	}
}
