package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Host or Match host pattern matches a host as ssh matches it
// (match.c): a ? is exactly one character, a * any run, a ! pattern that
// matches refuses the block, Host patterns keep case and Match host lists
// do not. Before, the parser's ? matched zero or one character, so Host
// ab? gave ab its Hostname and readproof dialled another host than ssh:
//
//	printf 'Host ab?\n  Hostname other.example.test\n' >cfg; ssh -G -F cfg ab | grep ^hostname   # hostname ab
func TestSSHHostPatternsMatchAsSSH(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ conf, host, want string }{
		{"Host ab?\n  Hostname other.example.test\n", "ab", "ab"},
		{"Host ab?\n  Hostname other.example.test\n", "abc", "other.example.test"},
		{"Host ab?\n  Hostname other.example.test\n", "abcd", "abcd"},
		{"Host ab?\n  Hostname other.example.test\n", "AbC", "abc"},
		{"Host a?c\n  Hostname other.example.test\n", "ac", "ac"},
		{"Host x*y !xzy\n  Hostname other.example.test\n", "xy", "other.example.test"},
		{"Host x*y !xzy\n  Hostname other.example.test\n", "xaay", "other.example.test"},
		{"Host x*y !xzy\n  Hostname other.example.test\n", "xzy", "xzy"},
		{"Host *.?\n  Hostname other.example.test\n", "a.", "a."},
	} {
		config := writeSSHConfig(t, home, tc.conf)
		c := readSSHConfigs(filepath.Join(home, "no-system-config"))
		if got, _ := c.Address(tc.host, "22"); got != tc.want {
			t.Errorf("%q, host %s: dials %s, want %s", tc.conf, tc.host, got, tc.want)
		}
		if out, _, ok := sshG(t, config, tc.host); ok && !strings.Contains(out, "\nhostname "+tc.want+"\n") {
			t.Errorf("%q, host %s: ssh -G does not read it so:\n%s", tc.conf, tc.host, out)
		}
	}
	// a Match host list, lowered as ssh lowers both (match_hostname):
	// printf 'Match host "ab?,!abx"\n  Hostname m.example.test\n' >cfg; ssh -G -F cfg ab   # hostname ab; ABC: m.example.test; abx: abx
	for _, tc := range []struct {
		host string
		want bool
	}{{"ab", false}, {"abc", true}, {"abx", false}} {
		if m, ok := matchList("ab?,!abx", []string{tc.host}); !ok || m != tc.want {
			t.Errorf("Match host ab?,!abx, host %s: matched %v (a list: %v), want %v", tc.host, m, ok, tc.want)
		}
	}
}

// The pattern matching ssh's agrees with a plain reading of its rules
// on every pattern and name, without a panic.
func FuzzSSHPatternMatch(f *testing.F) {
	for _, s := range [][2]string{{"ab", "ab?"}, {"abc", "a*c"}, {"", "*"}, {"a", "**?"}, {"aXbXc", "*X*c"}, {"*0", "*"}} {
		f.Add(s[0], s[1])
	}
	var slow func(n, p string) bool
	slow = func(n, p string) bool {
		switch {
		case p == "":
			return n == ""
		case p[0] == '*':
			return slow(n, p[1:]) || (n != "" && slow(n[1:], p))
		case n == "":
			return false
		case p[0] == '?' || p[0] == n[0]:
			return slow(n[1:], p[1:])
		}
		return false
	}
	f.Fuzz(func(t *testing.T, name, pat string) {
		if len(name) > 24 || len(pat) > 12 {
			return
		}
		if got, want := sshPatternMatch(name, pat), slow(name, pat); got != want {
			t.Errorf("sshPatternMatch(%q, %q) = %v, want %v", name, pat, got, want)
		}
	})
}
