package identity

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseURI(t *testing.T) {
	good := map[string]URI{
		"readproof://demo/policies/refunds":      {Namespace: "demo", Path: "policies/refunds"},
		"readproof://demo/policies/refunds@prod": {Namespace: "demo", Path: "policies/refunds", Tag: "prod"},
		"readproof://a-b.c_d/x":                  {Namespace: "a-b.c_d", Path: "x"},
		"readproof://n/_private/README.v2-final": {Namespace: "n", Path: "_private/README.v2-final"},
		"readproof://n/p@v1.2.3":                 {Namespace: "n", Path: "p", Tag: "v1.2.3"},
	}
	for in, want := range good {
		got, err := ParseURI(in)
		if err != nil || got != want {
			t.Errorf("ParseURI(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if got.Ref() != in {
			t.Errorf("Ref() = %q, want %q", got.Ref(), in)
		}
	}
	bad := map[string]string{
		"readproof://":                                  "missing namespace and path",
		"readproof://ns":                                "missing path",
		"readproof://ns/":                               "empty path",
		"readproof://ns//x":                             "empty path segment",
		"readproof://ns/a/../b":                         `".." not allowed`,
		"readproof://ns/./b":                            `"." not allowed`,
		"readproof://ns/a b":                            "' ' not allowed",
		"READPROOF://ns/a":                              "lower-case",
		"Readproof://ns/a":                              "lower-case",
		"http://ns/a":                                   "must start with readproof://",
		"readproof://NS/a":                              "not allowed",
		"readproof://ns/a.lock":                         ".lock",
		"readproof://ns/a.":                             "end in '.'",
		"readproof://ns/a@":                             "empty tag name",
		"readproof://ns/a@../x":                         "the first character must be a letter or digit",
		"readproof://.ns/a":                             "the first character must be a lower-case letter or digit",
		"readproof://ns/a@b/c":                          "not allowed",
		"readproof://ns/a\x00b":                         "not allowed",
		"readproof://ns/-a":                             "not allowed",
		"readproof://ns/a+b":                            "'+' not allowed",
		"readproof://ns/a%2Fb":                          "'%' not allowed",
		"readproof://" + strings.Repeat("n", 65) + "/a": "longer than 64",
	}
	for in, why := range bad {
		_, err := ParseURI(in)
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseURI(%q) = %v, want an error containing %q", in, err, why)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseURI(%q): multi-line error", in)
		}
	}
}

func TestKeysAreInjectiveAndRefSafe(t *testing.T) {
	a, _ := ParseURI("readproof://ns/a/b")
	b, _ := ParseURI("readproof://ns/a")
	c, _ := ParseURI("readproof://ns/a.b")
	if a.Key() == b.Key() || a.Key() == c.Key() || strings.HasPrefix(a.Key(), b.Key()+"/") {
		t.Fatalf("keys collide or nest: %q %q %q", a.Key(), b.Key(), c.Key())
	}
	if a.Key() != "ns/a+b" {
		t.Fatalf("Key() = %q", a.Key())
	}
}

func TestNames(t *testing.T) {
	for _, ok := range []string{"run-a", "R1", "a.b_c-d", strings.Repeat("x", 128)} {
		if err := ValidateRunID(ok); err != nil {
			t.Errorf("ValidateRunID(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a/b", "a..b", "../x", ".a", "-a", "a.", "a.lock", "a b", "a\x01", "a\n", strings.Repeat("x", 129),
		"0123456789abcdef0123456789abcdef01234567"} {
		if err := ValidateRunID(bad); err == nil {
			t.Errorf("ValidateRunID(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"", "a/b", "..", "a..b", strings.Repeat("t", 65), "prod\t"} {
		if err := ValidateTag(bad); err == nil {
			t.Errorf("ValidateTag(%q) accepted", bad)
		}
	}
	if !IsObjectID("0123456789abcdef0123456789abcdef01234567") || IsObjectID("0123456789ABCDEF0123456789abcdef01234567") {
		t.Error("IsObjectID")
	}
}

// FuzzParseURI: no input panics; an accepted URI prints back to itself,
// re-parses to the same value, and its key contains no ref-breaking text.
func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"readproof://demo/policies/refunds@prod", "readproof://", "readproof://a/b/../c", "readproof://a/b@", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURI(s)
		if err != nil {
			return
		}
		if u.Ref() != s {
			t.Fatalf("Ref() = %q for input %q", u.Ref(), s)
		}
		again, err := ParseURI(u.Ref())
		if err != nil || again != u {
			t.Fatalf("re-parse of %q: %+v, %v", s, again, err)
		}
		k := u.Key()
		if strings.Contains(k, "..") || strings.ContainsAny(k, " ~^:?*[\\\x00\x7f") || strings.HasSuffix(k, ".lock") || strings.Count(k, "/") != 1 {
			t.Fatalf("key %q of %q is not ref-safe", k, s)
		}
	})
}

// FuzzKeyInjective: two different URIs never share a key.
func FuzzKeyInjective(f *testing.F) {
	f.Add("readproof://a/b/c", "readproof://a/b+c")
	f.Fuzz(func(t *testing.T, a, b string) {
		ua, err1 := ParseURI(a)
		ub, err2 := ParseURI(b)
		if err1 != nil || err2 != nil || ua.String() == ub.String() {
			return
		}
		if ua.Key() == ub.Key() {
			t.Fatalf("%q and %q share key %q", a, b, ua.Key())
		}
	})
}

// TestNameErrorsSayWhy: a refused name's error names the rule it broke. A
// run id starting with '.', '_' or '-' was refused as "character '.' not
// allowed (letters, digits, '.', ...)", which lists the character as
// allowed.
func TestNameErrorsSayWhy(t *testing.T) {
	for name, want := range map[string]string{
		"../x": `starts with '.': the first character must be a letter or digit`,
		"_a":   `starts with '_'`,
		"-a":   `starts with '-'`,
		"a/b":  `character '/' not allowed`,
		"a..b": `may not contain '..'`,
	} {
		err := ValidateRunID(name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateRunID(%q) = %v, want it to say %s", name, err, want)
		}
	}
}

// TestValidPathsNameLooseRefs: a resource's ref ends in its whole PATH as
// one file name (Key joins the segments with '+'), which git writes as a
// loose ref and locks as NAME.lock: every PATH ParseURI accepts must make
// a file name the file system takes (255 bytes on Linux, macOS and
// Windows). A longer one was accepted by resource add, then every run
// failed writing the ref ("file name too long").
func TestValidPathsNameLooseRefs(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{100, MaxPathLen - 1, MaxPathLen, MaxPathLen + 1, 300, 512} {
		p := strings.Repeat("a", n)
		if n > 120 {
			p = strings.Repeat("b", 100) + "/" + strings.Repeat("c", n-101)
		}
		u, err := ParseURI("readproof://ns/" + p)
		if n > MaxPathLen {
			if err == nil || !strings.Contains(err.Error(), "longer than") {
				t.Errorf("%d-byte path: %v, want refused as too long", n, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%d-byte path: %v", n, err)
			continue
		}
		name := u.Key()[strings.LastIndexByte(u.Key(), '/')+1:] + ".lock"
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Errorf("%d-byte path: its ref's lock file: %v", n, err)
		}
	}
}
