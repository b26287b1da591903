package gitstore

import (
	"net"
	"strings"
	"testing"
)

// authority is the user information and host of url as the guard's
// helpers cut it: after "://", up to the first '/', '?' or '#'.
func authority(url string) (string, bool) {
	_, rest, ok := strings.Cut(url, "://")
	if !ok {
		return "", false
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest, true
}

// FuzzWithoutSecret: whatever the URL, what withoutSecret gives for the
// guard's argv (git config --get-urlmatch, http.<url>.proxy) carries no
// password, and no user name at all when that name is an access token
// (token), and is unchanged by a second pass.
func FuzzWithoutSecret(f *testing.F) {
	for _, s := range []string{
		"https://x-access-token:ghs_secret@github.com/o/r.git",
		"https://ghp_0123456789abcdef0123456789abcdef0123@github.com/o/r",
		"https://user:pa:ss@host:8443/a@b/c",
		"http://u@h/p?q=a:b@c#f",
		"https://h/p",
		"ssh://git@h:22/r",
		"not a url",
		"https://:only-password@h/",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, url string, token bool) {
		out := withoutSecret(url, token)
		auth, ok := authority(out)
		if !ok {
			if out != url {
				t.Fatalf("withoutSecret(%q) = %q: a string without :// must be left as it is", url, out)
			}
			return
		}
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			if strings.Contains(auth[:at], ":") {
				t.Fatalf("withoutSecret(%q, %v) = %q still holds a password", url, token, out)
			}
			if token && accessTokenUser(auth[:at]) {
				t.Fatalf("withoutSecret(%q, true) = %q still names an access token", url, out)
			}
		}
		if again := withoutSecret(out, token); again != out {
			t.Fatalf("withoutSecret is not stable: %q -> %q -> %q", url, out, again)
		}
	})
}

// FuzzURLHost: the host the guard's error names is never a user name, a
// password or a path.
func FuzzURLHost(f *testing.F) {
	for _, s := range []string{"https://u:p@h:443/x", "http://[::1]:8080/p", "git://h/r", "https://h?x=@y", "h", "https://a@b@c/d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, url string) {
		h := urlHost(url)
		if strings.ContainsAny(h, "@/?#") {
			t.Fatalf("urlHost(%q) = %q: holds user information or a path", url, h)
		}
		if auth, ok := authority(url); ok && !strings.Contains(auth, h) {
			t.Fatalf("urlHost(%q) = %q: not part of the URL's authority %q", url, h, auth)
		}
	})
}

// FuzzNoProxyMatches: "*" in a no_proxy list names every host, an empty
// list none, and a list naming the host itself (a plain name, as written)
// names it; and, as curl reads the list (session 31's last re-read: none
// of the first three can fail when the list names too many hosts, which
// sends the pack fetch around the user's proxy), a name does not name a
// host that only ends in its letters, a range names no host that is not
// an address, and ASCII case does not matter.
func FuzzNoProxyMatches(f *testing.F) {
	for _, s := range [][2]string{{"*", "h"}, {".example.com", "a.example.com"}, {"10.0.0.0/8", "10.1.2.3"}, {"[::1]", "::1"}, {"a, b\tc", "c"}, {"", "h"},
		{"example.com", "badexample.com"}, {"10.0.0.0/8", "example.com"}, {"Example.COM", "a.example.com"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, list, host string) {
		got := noProxyMatches(list, host)
		if strings.TrimSpace(list) == "" && got {
			t.Fatalf("noProxyMatches(%q, %q): an empty list names a host", list, host)
		}
		if !got && noProxyMatches(list+",*", host) == false {
			t.Fatalf("noProxyMatches(%q+\",*\", %q): * must name every host", list, host)
		}
		plain := host != "" && !strings.ContainsAny(host, ", \t./[]")
		if plain && !noProxyMatches(host, host) {
			t.Fatalf("noProxyMatches(%q, %q): a list naming the host itself must name it", host, host)
		}
		if plain && host != "*" && noProxyMatches(host, "x"+host) {
			t.Fatalf("noProxyMatches(%q, %q): a name must not name a host that only ends in it", host, "x"+host)
		}
		if one := strings.TrimSpace(list); strings.Contains(one, "/") && !strings.ContainsAny(one, ", \t*") && net.ParseIP(strings.TrimSuffix(host, ".")) == nil && got {
			t.Fatalf("noProxyMatches(%q, %q): a range names a host that is not an address", list, host)
		}
		if up := noProxyMatches(asciiUpper(list), asciiUpper(host)); up != got {
			t.Fatalf("noProxyMatches(%q, %q) = %v, with its letters in upper case %v: case must not matter", list, host, got, up)
		}
	})
}

// asciiUpper is s with its ASCII letters in upper case, and nothing else
// changed.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
