package gitstore

import (
	"fmt"
	"strings"
	"testing"
)

// checkRefNameLoop is CheckRefName before session 27, whose first loop
// tested every byte four ways: the oracle of the bit-mask test.
func checkRefNameLoop(name string) error {
	if !strings.HasPrefix(name, "refs/") {
		return fmt.Errorf("ref name %q does not start with refs/: use a full ref name such as refs/heads/main", name)
	}
	bad := func(why string) error {
		return fmt.Errorf("ref name %q %s: choose a name git check-ref-format accepts", name, why)
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c < 0x20 || c == 0x7f:
			return bad("contains a control character")
		case c == ' ':
			return bad("contains a space")
		case strings.IndexByte(`~^:?*[\`, c) >= 0:
			return bad(fmt.Sprintf("contains %q", c))
		}
	}
	switch {
	case strings.Contains(name, ".."):
		return bad(`contains ".."`)
	case strings.Contains(name, "@{"):
		return bad(`contains "@{"`)
	case strings.HasSuffix(name, "/"):
		return bad("ends with '/'")
	case strings.HasSuffix(name, "."):
		return bad("ends with '.'")
	}
	for rest := name; rest != ""; {
		comp := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			comp, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		switch {
		case comp == "":
			return bad("has an empty component")
		case comp[0] == '.':
			return bad("has a component starting with '.'")
		case strings.HasSuffix(comp, ".lock"):
			return bad(`has a component ending with ".lock"`)
		}
	}
	return nil
}

func sameError(a, b error) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error())
}

// TestCheckRefNameEveryByte puts every byte value inside, at the end of
// and twice in a name, and compares with the loop.
func TestCheckRefNameEveryByte(t *testing.T) {
	for c := 0; c < 256; c++ {
		b := string([]byte{byte(c)})
		for _, name := range []string{"refs/heads/a" + b + "z", "refs/heads/" + b, "refs/" + b + "/x" + b, b + "refs/x"} {
			if got, want := CheckRefName(name), checkRefNameLoop(name); !sameError(got, want) {
				t.Fatalf("CheckRefName(%q) = %v, want %v", name, got, want)
			}
		}
	}
}

func FuzzCheckRefNameOracle(f *testing.F) {
	for _, seed := range []string{"refs/heads/main", "refs/heads/a..b", "refs/heads/a b\x7f", "refs/tags/x^{}",
		"refs/heads/é~", "refs/x\\y", "refs/a[b", "refs/heads/x.lock", "refs/a@{b", "refs/a/"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := CheckRefName(name), checkRefNameLoop(name); !sameError(got, want) {
			t.Fatalf("CheckRefName(%q) = %v, want %v", name, got, want)
		}
	})
}
