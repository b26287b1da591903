package gitstore

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// bracketedCases are git's bracketed scp-like addresses and what git 2.39
// hands ssh for them (TestParseBracketedSCPAsGit checks each against
// git), those readproof refuses (git hands ssh a host or port ssh cannot
// use, or drops part of the address), and addresses that are not
// bracketed ones.
var bracketedCases = []struct {
	url     string
	want    SCPAddress
	ok, bad bool // a bracketed address; refused
}{
	{"[git@host.example:2222]:srv/r.git", SCPAddress{"git", "host.example", 2222, "srv/r.git"}, true, false},
	{"[host.example:2222]:srv/r.git", SCPAddress{"", "host.example", 2222, "srv/r.git"}, true, false},
	{"[host.example]:srv/r.git", SCPAddress{"", "host.example", 0, "srv/r.git"}, true, false},
	{"[git@host.example]:r.git", SCPAddress{"git", "host.example", 0, "r.git"}, true, false},
	{"[git@host.example:2222]:/srv/r.git", SCPAddress{"git", "host.example", 2222, "/srv/r.git"}, true, false},
	{"[git@host.example:2222]:2222:r.git", SCPAddress{"git", "host.example", 2222, "2222:r.git"}, true, false},
	{"git@[host.example:2222]:r.git", SCPAddress{"git", "host.example", 2222, "r.git"}, true, false},
	{"[::1]:r.git", SCPAddress{"", "::1", 0, "r.git"}, true, false},
	{"[git@::1]:r.git", SCPAddress{"git", "::1", 0, "r.git"}, true, false},
	{"[git@fe80::1:22]:r.git", SCPAddress{"git", "fe80::1:22", 0, "r.git"}, true, false},
	{"[u@h@x:22]:r", SCPAddress{"u@h", "x", 22, "r"}, true, false},
	{"[h:22]:~u/r", SCPAddress{"", "h", 22, "~u/r"}, true, false},
	{"[h:022]:r", SCPAddress{"", "h", 22, "r"}, true, false},
	{"[h:65535]:r", SCPAddress{"", "h", 65535, "r"}, true, false},
	{"[U@H.Example:22]:r", SCPAddress{"U", "H.Example", 22, "r"}, true, false},
	{"[h:22]:[x]", SCPAddress{"", "h", 22, "[x]"}, true, false},

	{"[h:0]:r", SCPAddress{}, true, true},
	{"[h:65536]:r", SCPAddress{}, true, true},
	{"[h:99999999999999999999999]:r", SCPAddress{}, true, true},
	{"[h:abc]:r", SCPAddress{}, true, true},
	{"[h:]:r", SCPAddress{}, true, true},
	{"[h:+22]:r", SCPAddress{}, true, true},
	{"[h:22 ]:r", SCPAddress{}, true, true},
	{"[a:b]:c:d", SCPAddress{}, true, true},
	{"[host:2222:3]:r.git", SCPAddress{}, true, true},
	{"[h:22]x:r", SCPAddress{}, true, true},
	{"[h:22]]:r", SCPAddress{}, true, true},
	{"[[h:22]:r", SCPAddress{}, true, true},
	{"[h:22]:", SCPAddress{}, true, true},
	{"[h:22]", SCPAddress{}, true, true}, // git: no path specified
	{"[@h:22]:r", SCPAddress{}, true, true},
	{"[u@:22]:r", SCPAddress{}, true, true},
	{"[]:r", SCPAddress{}, true, true},
	{"[:22]:r", SCPAddress{}, true, true},
	{"[-oProxyCommand=x:22]:r", SCPAddress{}, true, true},
	{"[-u@h]:r", SCPAddress{}, true, true},
	{"h:a@[b]:c", SCPAddress{}, true, true},

	{"git@host.example:r.git", SCPAddress{}, false, false},
	{"host.example:2222:r.git", SCPAddress{}, false, false},
	{"ssh://git@[::1]:22/r.git", SCPAddress{}, false, false},
	{"[h/x:22]:r", SCPAddress{}, false, false},
	{"./[h:22]:r", SCPAddress{}, false, false},
	{"x[h:22]:r", SCPAddress{}, false, false},
	{"[h:22:r", SCPAddress{}, false, false},
	{"srv/r.git", SCPAddress{}, false, false},
}

// TestParseBracketedSCPZone: an IPv6 address with a zone, which git and ssh
// take, is refused as what it is, not as a host whose port is not a number.
func TestParseBracketedSCPZone(t *testing.T) {
	for _, url := range []string{"[fe80::1%eth0]:r.git", "[git@fe80::1%eth0:22]:r.git"} {
		_, ok, err := ParseBracketedSCP(url)
		if !ok || err == nil || !strings.Contains(err.Error(), "with a zone (%eth0") || strings.Contains(err.Error(), "port number") {
			t.Errorf("%s: bracketed %v, %v; want a refusal naming the zone", url, ok, err)
		}
	}
}

func TestParseBracketedSCP(t *testing.T) {
	for _, c := range bracketedCases {
		a, ok, err := ParseBracketedSCP(c.url)
		switch {
		case ok != c.ok:
			t.Errorf("%s: bracketed %v, want %v", c.url, ok, c.ok)
		case c.bad && err == nil:
			t.Errorf("%s: read as %+v, want a refusal", c.url, a)
		case c.bad && !strings.Contains(err.Error(), "write it as [USER@HOST:PORT]:PATH"):
			t.Errorf("%s: %v, want a hint", c.url, err)
		case !c.bad && err != nil:
			t.Errorf("%s: %v", c.url, err)
		case !c.bad && a != c.want:
			t.Errorf("%s: %+v, want %+v", c.url, a, c.want)
		}
		if ep, err := newEndpoint(c.url); c.ok && !c.bad && (err != nil || ep.Protocol != "ssh" || ep.User != c.want.User || endpointHost(ep) != c.want.Host || ep.Port != c.want.Port || ep.Path != c.want.Path) {
			t.Errorf("newEndpoint(%s) = %+v, %v, want %+v", c.url, ep, err, c.want)
		}
	}
}

// What git itself hands ssh for each bracketed address readproof reads:
// the user and host, the port and the path (GIT_SSH_COMMAND shows them).
func TestParseBracketedSCPAsGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	home := t.TempDir()
	for _, c := range bracketedCases {
		if !c.ok || c.bad {
			continue
		}
		cmd := exec.Command("git", "ls-remote", c.url)
		cmd.Dir = home
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_SSH_VARIANT=ssh",
			`GIT_SSH_COMMAND=printf '%s\n' >&2`}
		out, _ := cmd.CombinedOutput()
		args := strings.Split(strings.TrimSpace(string(out)), "\n")
		var port, dest, path string
		for i := 0; i < len(args); i++ {
			switch {
			case args[i] == "-o":
				i++
			case args[i] == "-p" && i+1 < len(args):
				port = args[i+1]
				i++
			case strings.HasPrefix(args[i], "git-upload-pack '"):
				path = strings.TrimSuffix(strings.TrimPrefix(args[i], "git-upload-pack '"), "'")
			case dest == "":
				dest = args[i]
			}
		}
		want := c.want.Host
		if c.want.User != "" {
			want = c.want.User + "@" + want
		}
		p, _ := strconv.Atoi(port)
		if dest != want || p != c.want.Port || path != c.want.Path {
			t.Errorf("%s: git hands ssh %q port %q path %q, readproof reads %+v\n%s", c.url, dest, port, path, c.want, out)
		}
	}
}

// ParseBracketedSCP never panics; what it reads is an address ssh can
// use, and written back as [USER@HOST:PORT]:PATH it reads the same.
func FuzzParseBracketedSCP(f *testing.F) {
	for _, c := range bracketedCases {
		f.Add(c.url)
	}
	f.Fuzz(func(t *testing.T, url string) {
		a, ok, err := ParseBracketedSCP(url)
		if !ok || err != nil {
			if !ok && (err != nil || a != (SCPAddress{})) {
				t.Fatalf("%q: not bracketed, yet %+v, %v", url, a, err)
			}
			return
		}
		if checkSCPHost(a.Host) != nil || a.Path == "" || a.Port < 0 || a.Port > 65535 || strings.HasPrefix(a.User, "-") {
			t.Fatalf("%q: read as %+v", url, a)
		}
		if strings.Contains(a.Host, ":") {
			return // an IPv6 address takes no port in this form
		}
		back := a.Host
		if a.User != "" {
			back = a.User + "@" + back
		}
		if a.Port != 0 {
			back += ":" + strconv.Itoa(a.Port)
		}
		back = "[" + back + "]:" + a.Path
		if b, ok, err := ParseBracketedSCP(back); strings.Contains(a.Path, "@[") || strings.Contains(a.User, "/") {
			return // not the same address written back
		} else if !ok || err != nil || b != a {
			t.Fatalf("%q read as %+v; written back, %q reads as %+v, %v, %v", url, a, back, b, ok, err)
		}
	})
}

// A fetch of a bracketed address dials the port and logs in as the user
// the brackets give, over the Port and User ~/.ssh/config gives for the
// host (before, go-git read "[deploy" as the user and the port as part of
// the path); with no user in the brackets, the configuration's User.
func TestSSHBracketedAddressDialsItsPort(t *testing.T) {
	s, home := newKeyServer(t)
	key := writeKeyFile(t, filepath.Join(home, ".ssh", "id_ed25519"), 0o600, "")
	s.allow(key.PublicKey())
	s.user = "deploy"
	for _, c := range []struct{ url, conf string }{
		{"[deploy@git.example.test:" + s.port + "]:srv/r.git", "Host git.example.test\n  Port 1\n  User other\n"},
		{"deploy@[git.example.test:" + s.port + "]:srv/r.git", "Host git.example.test\n  Port 1\n  User other\n"},
		{"[git.example.test:" + s.port + "]:srv/r.git", "Host git.example.test\n  Port 1\n  User deploy\n"},
		{"[git.example.test]:srv/r.git", "Host git.example.test\n  Port " + s.port + "\n  User deploy\n"},
	} {
		writeSSHConfig(t, home, c.conf)
		asked, err := fetchDialled(t, c.url, s.target)
		if err != nil && !errors.Is(err, ErrRepoNotFound) {
			t.Errorf("%s: fetch: %v", c.url, err)
		}
		if want := "git.example.test:" + s.port; len(asked) != 1 || asked[0] != want {
			t.Errorf("%s: dialled %q, want %s", c.url, asked, want)
		}
	}
	// refused before any connection, with the way to write it
	var asked []string
	_, err := OpenMirror(t.TempDir(), "[deploy@git.example.test:0]:srv/r.git", MirrorOptions{Dial: dialTo(s.target, &asked)})
	if err == nil || !strings.Contains(err.Error(), "port 0 is not a port number") || len(asked) != 0 {
		t.Errorf("port 0: %v, dialled %q; want a refusal", err, asked)
	}
}

// TestOpenMirrorBracketed (session 27): OpenMirror reads a bracketed
// address once (parseEndpoint), and its error is still the one that names
// the part ssh cannot use, not "not a git URL"; one it reads opens.
func TestOpenMirrorBracketed(t *testing.T) {
	cache := t.TempDir()
	for _, c := range bracketedCases {
		if !c.ok {
			continue
		}
		_, _, want := ParseBracketedSCP(c.url)
		_, err := OpenMirror(cache, c.url, MirrorOptions{})
		switch {
		case c.bad && (err == nil || err.Error() != "git mirror: "+want.Error()):
			t.Errorf("OpenMirror(%s): %v, want git mirror: %v", c.url, err, want)
		case !c.bad && err != nil:
			t.Errorf("OpenMirror(%s): %v", c.url, err)
		}
	}
}
