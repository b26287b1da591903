package sourcespec

import "testing"

// This machine is decided on the host as written, never by a lookup: a
// name that a resolver, a wildcard DNS service or an inet_aton-style
// parser would take to loopback is another machine, and only "localhost"
// and loopback address literals are this one.
func TestCleartextRemoteByNameAsWritten(t *testing.T) {
	for _, c := range []struct {
		url    string
		remote bool
	}{
		{"http://localhost/a", false},
		{"http://LocalHost:8080/a", false},
		{"http://localhost./a", false},
		{"http://127.0.0.1/a", false},
		{"http://127.9.8.7:8080/a", false},
		{"http://[::1]:8080/a", false},
		{"http://[::ffff:127.0.0.1]/a", false},
		{"http://[::1%25lo]/a", false},
		{"https://docs.example.test/a", false},
		{"ftp://docs.example.test/a", false},
		{"http://docs.example.test/a", true},
		{"HTTP://docs.example.test/a", true},
		{" http://docs.example.test/a", true},
		{"http://localhost.evil.example/a", true},
		{"http://127.0.0.1.nip.io/a", true},
		{"http://localhost../a", true},
		{"http://0x7f.1/a", true},
		{"http://0x7f000001/a", true},
		{"http://2130706433/a", true},
		{"http://127.1/a", true},
		{"http://0177.0.0.1/a", true},
		{"http://[::127.0.0.1]/a", true},
		{"http://localhost@docs.example.test/a", true},
		{"http://127.0.0.1:80@docs.example.test/a", true},
		{"http://docs.example.test/a#@localhost", true},
	} {
		if got := CleartextRemote(c.url); got != c.remote {
			t.Errorf("CleartextRemote(%q) = %v, want %v", c.url, got, c.remote)
		}
	}
}
