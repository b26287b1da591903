package adapters

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRoots: the add-time roots check refuses what Fetch refuses, with
// the same rule, names the flag when given, and passes paths inside the
// roots whether or not the file exists yet.
func TestCheckRoots(t *testing.T) {
	base := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(base, "link")); err != nil {
		t.Skip("no symlinks:", err)
	}
	env := Env{BaseDir: base}
	for _, c := range []struct {
		spec    Spec
		flag    string
		refused string // "" when accepted
	}{
		{Spec{Type: "filesystem", Path: "docs/later.md"}, "--path", ""},
		{Spec{Type: "filesystem", Path: filepath.Join(outside, "x.md")}, "--path", "--path " + filepath.Join(outside, "x.md") + " is outside the allowed roots"},
		{Spec{Type: "filesystem", Path: "../x.md"}, "", "../x.md is outside the allowed roots"},
		{Spec{Type: "filesystem", Path: "link/x.md"}, "--path", "--path link/x.md is outside the allowed roots"},
		{Spec{Type: "git", URL: filepath.Join(outside, "repo.git"), Path: "a.md"}, "--url", "git repository --url " + filepath.Join(outside, "repo.git") + " is outside"},
		{Spec{Type: "git", URL: "repo.git", Path: "a.md"}, "--url", ""},
		{Spec{Type: "git", URL: "https://git.example.com/r.git", Path: "a.md"}, "--url", ""},
		{Spec{Type: "http", URL: "https://example.com/a.md"}, "--url", ""},
	} {
		err := CheckRoots("readproof://demo/x", c.spec, env, c.flag)
		if c.refused == "" {
			if err != nil {
				t.Errorf("%+v: %v, want accepted", c.spec, err)
			}
			continue
		}
		var ae *Error
		if !errors.As(err, &ae) || ae.Rule != RuleRoots || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.refused) || !strings.HasSuffix(err.Error(), hintRoots) {
			t.Errorf("%+v: %v, want a roots refusal saying %q", c.spec, err, c.refused)
		}
	}
}
