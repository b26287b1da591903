package adapters

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/readproof/readproof/adapters/sourcespec"
	"github.com/readproof/readproof/gitstore"
)

func TestClassifyIP(t *testing.T) {
	cases := map[string]string{
		"127.0.0.1":               RuleLoopback,
		"127.255.0.9":             RuleLoopback,
		"::1":                     RuleLoopback,
		"::ffff:127.0.0.1":        RuleLoopback,
		"64:ff9b::127.0.0.1":      RuleLoopback,
		"2002:7f00:1::":           RuleLoopback,
		"::127.0.0.1":             RuleLoopback,
		"10.0.0.1":                RulePrivate,
		"172.31.255.255":          RulePrivate,
		"192.168.1.1":             RulePrivate,
		"100.64.0.1":              RulePrivate,
		"100.127.255.254":         RulePrivate,
		"::ffff:10.0.0.1":         RulePrivate,
		"169.254.169.254":         RuleLinkLocal,
		"169.254.0.1":             RuleLinkLocal,
		"::ffff:169.254.169.254":  RuleLinkLocal,
		"fe80::1":                 RuleLinkLocal,
		"fe80::1%eth0":            RuleLinkLocal,
		"fc00::1":                 RuleUniqueLocal,
		"fd00:ec2::254":           RuleUniqueLocal,
		"fec0::1":                 RuleUniqueLocal,
		"0.0.0.0":                 RuleUnspecified,
		"0.1.2.3":                 RuleUnspecified,
		"::":                      RuleUnspecified,
		"224.0.0.1":               RuleMulticast,
		"239.255.255.250":         RuleMulticast,
		"ff02::1":                 RuleMulticast,
		"ff05::2":                 RuleMulticast,
		"255.255.255.255":         RuleReserved,
		"240.0.0.1":               RuleReserved,
		"192.0.0.8":               RuleReserved,
		"8.8.8.8":                 "",
		"140.82.112.6":            "",
		"100.128.0.1":             "",
		"172.32.0.1":              "",
		"2606:4700:4700::1111":    "",
		"::ffff:8.8.8.8":          "",
		"64:ff9b::8.8.8.8":        "",
		"2002:0808:0808::1":       "",
		"2001:db8::1":             "",
		"169.253.255.255":         "",
		"fe7f:ffff::1":            "",
		"::ffff:100.64.0.1":       RulePrivate,
		"64:ff9b:1::a9fe:a9fe":    RuleLinkLocal,
		"2002:a9fe:a9fe::1":       RuleLinkLocal,
		"::ffff:0.0.0.0":          RuleUnspecified,
		"::ffff:255.255.255.255":  RuleReserved,
		"::ffff:224.0.0.251":      RuleMulticast,
		"64:ff9b::ffff:ffff":      RuleReserved,
		"2002:c0a8:0101:0001::10": RulePrivate,
	}
	for s, want := range cases {
		ip := netip.MustParseAddr(s)
		if got, _ := classifyIP(ip); got != want {
			t.Errorf("classifyIP(%s) = %q, want %q", s, got, want)
		}
	}
}

func TestCheckIPAllowList(t *testing.T) {
	g := newGuard(NetPolicy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}})
	for _, s := range []string{"10.1.2.3", "::ffff:10.1.2.3", "fd00::1"} {
		if err := g.checkIP("", netip.MustParseAddr(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"11.0.0.1", "127.0.0.1", "fc00::1"} {
		err := g.checkIP("", netip.MustParseAddr(s))
		if s == "11.0.0.1" {
			if err != nil {
				t.Errorf("%s: %v", s, err)
			}
			continue
		}
		if !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v", s, err)
		}
	}
}

// The metadata endpoint, once allow-listed, is dialled: the hook stands in
// for the network so the test never sends a packet off the machine.
func TestMetadataAllowListedIsDialled(t *testing.T) {
	env := Env{Network: NetPolicy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32")}}}
	src, _ := openHTTP(Spec{Type: "http", URL: "http://169.254.169.254/latest/meta-data/"}, env)
	hs := src.(*httpSource)
	var dialled []string
	hs.n.g.dial = func(_ context.Context, network, addr string) (net.Conn, error) {
		dialled = append(dialled, addr)
		return nil, errors.New("test: not connecting")
	}
	_, err := hs.Fetch(context.Background(), Request{URI: "readproof://t/meta"})
	if err == nil || errors.Is(err, ErrRefused) {
		t.Fatalf("allow-listed metadata address: %v", err)
	}
	if len(dialled) == 0 || dialled[0] != "169.254.169.254:80" {
		t.Fatalf("dialled %v", dialled)
	}
	// Without the allow-list the address literal is refused when the source
	// is opened, before any client exists.
	src, _ = openHTTP(Spec{Type: "http", URL: "http://169.254.169.254/latest/meta-data/"}, Env{})
	if _, ok := src.(brokenSource); !ok {
		t.Fatalf("metadata address opened as %T", src)
	}
	if _, err := src.Fetch(context.Background(), Request{URI: "readproof://t/meta"}); !errors.Is(err, ErrRefused) {
		t.Fatalf("refused metadata address: %v", err)
	}
}

func TestAllowHostsWithPort(t *testing.T) {
	g := newGuard(NetPolicy{AllowHosts: []string{"10.0.0.5:443", "Docs.Internal."}})
	for _, u := range []string{"https://10.0.0.5/x", "https://10.0.0.5:443/x", "http://docs.internal/x", "http://DOCS.internal:8080/x"} {
		pu, _ := url.Parse(u)
		if err := g.checkURL(pu); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.5/x", "https://10.0.0.5:8443/x"} {
		pu, _ := url.Parse(u)
		if err := g.checkURL(pu); !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestParseRefs(t *testing.T) {
	lookup := func(n string) (string, bool) {
		v, ok := map[string]string{"A": "1", "TOKEN": "t0k", "EMPTY": ""}[n]
		return v, ok
	}
	good := map[string]string{
		"":                      "",
		"plain":                 "plain",
		"Bearer ${TOKEN}":       "Bearer t0k",
		"${A}${A}-${EMPTY}x":    "11-x",
		"cost $5":               "cost $5",
		"$$":                    "$",
		"$${A}":                 "${A}",
		"trailing $":            "trailing $",
		"${A}$":                 "1$",
		"$A":                    "$A",
		"{A}":                   "{A}",
		"ünïcode ${TOKEN} tail": "ünïcode t0k tail",
	}
	for in, want := range good {
		got, err := sourcespec.ExpandRefs(in, lookup)
		if err != nil || got != want {
			t.Errorf("expandRefs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"${", "${A", "${}", "${1A}", "${A-B}", "${ A}", "x ${A} ${"} {
		if _, err := sourcespec.ExpandRefs(in, lookup); err == nil {
			t.Errorf("expandRefs(%q) accepted a malformed reference", in)
		}
	}
	_, err := sourcespec.ExpandRefs("${NOPE}", lookup)
	var unset *sourcespec.UnsetError
	if !errors.As(err, &unset) || unset.Name != "NOPE" {
		t.Errorf("unset variable: %v", err)
	}
	names, _ := sourcespec.RefNames("${B} ${A} ${B}")
	if strings.Join(names, ",") != "B,A" {
		t.Errorf("refNames = %v", names)
	}
}

func FuzzParseRefs(f *testing.F) {
	for _, s := range []string{"", "Bearer ${TOKEN}", "$$", "$${X}", "${", "${A}${B}", "cost $5", "${A-B}", "\x00${A}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		parts, err := sourcespec.ParseRefs(v)
		if err != nil {
			return
		}
		// Expanding every reference to itself, re-escaped, gives back a
		// value that parses to the same parts.
		var b strings.Builder
		for _, p := range parts {
			if p.Ref {
				if !sourcespec.ValidEnvName(p.Text) {
					t.Fatalf("invalid name %q accepted from %q", p.Text, v)
				}
				b.WriteString("${" + p.Text + "}")
			} else {
				b.WriteString(strings.ReplaceAll(p.Text, "$", "$$"))
			}
		}
		again, err := sourcespec.ParseRefs(b.String())
		if err != nil {
			t.Fatalf("re-encoded %q of %q does not parse: %v", b.String(), v, err)
		}
		if len(again) != len(parts) {
			t.Fatalf("%q: %d parts, re-encoded %d", v, len(parts), len(again))
		}
		for i := range parts {
			if parts[i] != again[i] {
				t.Fatalf("%q: part %d %+v, re-encoded %+v", v, i, parts[i], again[i])
			}
		}
		// A value without "$" is its own expansion.
		if !strings.Contains(v, "$") {
			got, err := sourcespec.ExpandRefs(v, func(string) (string, bool) { return "", false })
			if err != nil || got != v {
				t.Fatalf("expandRefs(%q) = %q, %v", v, got, err)
			}
		}
	})
}

func FuzzParseContents(f *testing.F) {
	f.Add([]byte(`{"type":"file","encoding":"base64","size":3,"content":"YWJj\n","sha":"f2ba8f84ab5c1bce84a7b441cb1959cfc7093b7f"}`))
	f.Add([]byte(`[{"type":"file","path":"a"}]`))
	f.Add([]byte(`{"type":"dir"}`))
	f.Add([]byte(`{"type":"file","size":-1}`))
	f.Add([]byte(`null`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := parseContents(body)
		if err != nil {
			return
		}
		if c.Type == "" || c.Size < 0 {
			t.Fatalf("accepted %+v", c)
		}
		if c.Type == "file" && !hexID().MatchString(c.SHA) {
			t.Fatalf("accepted a file without a blob id: %+v", c)
		}
		if c.Encoding == "base64" {
			// The blob id check is what makes the decoded bytes trusted:
			// it accepts them and nothing else.
			if content, err := base64.StdEncoding.DecodeString(c.Content); err == nil && blobMatches(c.SHA, content) {
				if blobMatches(c.SHA, append(content, 0)) {
					t.Fatalf("blob id %s matches two contents", c.SHA)
				}
			}
		}
	})
}

func TestParseCommitSHA(t *testing.T) {
	id := strings.Repeat("a1", 20)
	for in, want := range map[string]string{id: id, id + "\n": id, strings.ToUpper(id): id, `{"sha":"` + id + `"}`: id} {
		got, err := parseCommitSHA([]byte(in))
		if err != nil || got != want {
			t.Errorf("parseCommitSHA(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "main", id[:39], `{"sha":"x"}`, "<html>"} {
		if _, err := parseCommitSHA([]byte(in)); err == nil {
			t.Errorf("parseCommitSHA(%q) accepted", in)
		}
	}
}

func FuzzRedactURL(f *testing.F) {
	f.Add("https://user:hunter2@example.com/a?token=hunter2&b=1", "hunter2")
	f.Add("http://hunter2@[::1]:80/x", "hunter2")
	f.Add("not a url hunter2@x", "hunter2")
	f.Add("git@github.com:org/repo.git", "org")
	f.Add("docs/a.md", "s3cr3t-value")
	f.Fuzz(func(t *testing.T, raw, pw string) {
		if len(pw) < 4 || !utf8.ValidString(pw) || strings.ContainsAny(pw, "@/?#%:[]") || strings.Contains(url.PathEscape(raw), pw) || strings.Contains(raw, pw) {
			_ = sourcespec.RedactURL(raw) // must not panic
			return
		}
		// A password placed in user information never survives.
		u := "https://reader:" + pw + "@example.com/" + url.PathEscape(raw)
		if got := sourcespec.RedactURL(u); strings.Contains(got, pw) || strings.Contains(got, url.UserPassword("reader", pw).String()) {
			t.Fatalf("redactURL(%q) = %q keeps the password", u, got)
		}
		// And a credential query parameter loses its value.
		q := "https://example.com/doc?access_token=" + url.QueryEscape(pw)
		if got := sourcespec.RedactURL(q); strings.Contains(got, url.QueryEscape(pw)) {
			t.Fatalf("redactURL(%q) = %q keeps the token", q, got)
		}
		_ = sourcespec.RedactURL(raw) // must not panic
	})
}

func FuzzClassifyIP(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1})
	f.Add([]byte{169, 254, 169, 254})
	f.Add([]byte{8, 8, 8, 8})
	f.Add([]byte{100, 64, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != 4 {
			return
		}
		v4 := netip.AddrFrom4([4]byte(b))
		rule, _ := classifyIP(v4)
		// Every IPv6 form that embeds an IPv4 address is judged by it.
		mapped := netip.AddrFrom16(v4.As16())
		var nat64, sixToFour [16]byte
		copy(nat64[:], []byte{0, 0x64, 0xff, 0x9b})
		copy(nat64[12:], b)
		sixToFour[0], sixToFour[1] = 0x20, 0x02
		copy(sixToFour[2:], b)
		sixToFour[15] = 1
		for _, ip := range []netip.Addr{mapped, netip.AddrFrom16(nat64), netip.AddrFrom16(sixToFour)} {
			if got, _ := classifyIP(ip); got != rule {
				t.Fatalf("classifyIP(%s) = %q, but %s is %q", ip, got, v4, rule)
			}
		}
	})
}

// A git source whose repository holds an object over the mirror's bound
// (gitstore refuses the pack before inflating it) is a too-large error that
// names the resource and says what to change.
func TestGitFetchErrObjectTooLarge(t *testing.T) {
	s := &gitSource{shown: "https://git.example.test/docs.git", path: "a.md", ref: "main"}
	cause := fmt.Errorf("git mirror: %w: pack entry 3 is an object of 1048576000 bytes, over the 67108864-byte limit", gitstore.ErrObjectTooLarge)
	err := s.fetchErr(context.Background(), "readproof://t/a", cause)
	if !errors.Is(err, ErrTooLarge) || !errors.Is(err, gitstore.ErrObjectTooLarge) {
		t.Fatalf("fetchErr = %v, want ErrTooLarge wrapping gitstore.ErrObjectTooLarge", err)
	}
	for _, want := range []string{"readproof://t/a", "https://git.example.test/docs.git", "1048576000 bytes", "keep large files out", "max_bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}
