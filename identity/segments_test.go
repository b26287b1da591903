package identity

import (
	"fmt"
	"strings"
	"testing"
)

// validatePathSplit is validatePath as it was, over strings.Split.
func validatePathSplit(p string) error {
	if p == "" {
		return fmt.Errorf("empty path")
	}
	if len(p) > MaxPathLen {
		return fmt.Errorf("path of %d bytes is longer than %d bytes (it names one git ref file); shorten it", len(p), MaxPathLen)
	}
	for _, seg := range strings.Split(p, "/") {
		if err := validateSegment(seg); err != nil {
			return err
		}
	}
	return nil
}

// validatePath walks the segments without strings.Split: the same verdict
// and the same error text for every path.
func TestValidatePathMatchesSplit(t *testing.T) {
	for _, p := range []string{"", "a", "a/b", "/", "a/", "/a", "a//b", "a/./b", "a/../b", "a/b.lock/c",
		"a/b.", "a/.b", "a/-b", "a b", "a/b/c/d/e", strings.Repeat("x/", 256) + "x", "ok/bad!/worse?"} {
		got, want := fmt.Sprint(validatePath(p)), fmt.Sprint(validatePathSplit(p))
		if got != want {
			t.Errorf("validatePath(%q) = %s, want %s", p, got, want)
		}
	}
}

func FuzzValidatePathMatchesSplit(f *testing.F) {
	for _, p := range []string{"a/b", "a//b", "/a/", "a/../b"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, want := fmt.Sprint(validatePath(p)), fmt.Sprint(validatePathSplit(p))
		if got != want {
			t.Errorf("validatePath(%q) = %s, want %s", p, got, want)
		}
	})
}
