package adapters_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/adapters"
)

const uri = "readproof://test/doc"

func fetchSpec(t *testing.T, spec adapters.Spec, env adapters.Env) (adapters.Result, error) {
	t.Helper()
	src := mustOpen(t, spec, env)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return src.Fetch(ctx, adapters.Request{URI: uri})
}

// wantRefused checks err is a policy refusal naming the resource and rule.
func wantRefused(t *testing.T, err error, rule string) {
	t.Helper()
	if err == nil {
		t.Fatalf("fetch succeeded, want a refusal by rule %q", rule)
	}
	if !errors.Is(err, adapters.ErrRefused) {
		t.Fatalf("error %q is not a refusal", err)
	}
	var ae *adapters.Error
	if !errors.As(err, &ae) || ae.Rule != rule || ae.URI != uri {
		t.Fatalf("error %q: want *adapters.Error with URI %q and rule %q, got %+v", err, uri, rule, ae)
	}
	if !strings.Contains(err.Error(), uri) || !strings.Contains(err.Error(), rule) {
		t.Fatalf("error %q does not name the resource and the rule", err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFilesystemSeedRevisionAndProvenance(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "policies", "refunds.md"), "Products can be refunded within 30 days.\n")
	r, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "policies/refunds.md"}, adapters.Env{BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// The seed's walkthrough records this revision for these 41 bytes.
	if r.Revision != "sha256:c8b0bb212e93" {
		t.Errorf("revision %q, want sha256:c8b0bb212e93", r.Revision)
	}
	if r.ContentType != "text/markdown" {
		t.Errorf("content type %q", r.ContentType)
	}
	if r.Provenance["source_type"] != "filesystem" || r.Provenance["path"] != "policies/refunds.md" || len(r.Provenance) != 2 {
		t.Errorf("provenance %v", r.Provenance)
	}
}

func TestFilesystemContentTypes(t *testing.T) {
	dir := t.TempDir()
	for name, want := range map[string]string{
		"a.md": "text/markdown", "a.MD": "text/markdown", "a.json": "application/json", "a.yaml": "application/yaml",
		"a.yml": "application/yaml", "a.txt": "text/plain", "a.html": "text/html", "a.csv": "text/csv",
		"a.pdf": "application/pdf", "a.toml": "application/toml",
		"noext": "text/plain; charset=utf-8", "page": "text/html; charset=utf-8",
	} {
		body := "plain words\n"
		if name == "page" {
			body = "<!DOCTYPE html><html><body>x</body></html>"
		}
		write(t, filepath.Join(dir, name), body)
		r, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: name}, adapters.Env{BaseDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if r.ContentType != want {
			t.Errorf("%s: content type %q, want %q", name, r.ContentType, want)
		}
	}
}

func TestFilesystemConfinement(t *testing.T) {
	top := t.TempDir()
	base := filepath.Join(top, "project")
	outside := filepath.Join(top, "secret.txt")
	write(t, outside, "outside the roots\n")
	write(t, filepath.Join(base, "docs", "in.md"), "inside\n")
	env := adapters.Env{BaseDir: base}

	// A symlink inside the base that points outside is refused, whatever
	// the declared path looks like.
	if err := os.Symlink(outside, filepath.Join(base, "docs", "escape.md")); err != nil {
		t.Fatal(err)
	}
	_, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "docs/escape.md"}, env)
	wantRefused(t, err, adapters.RuleRoots)
	if !strings.Contains(err.Error(), "readproof.toml") {
		t.Errorf("refusal %q does not say what to change", err)
	}

	// A symlinked directory on the way out is refused too.
	if err := os.Symlink(top, filepath.Join(base, "up")); err != nil {
		t.Fatal(err)
	}
	_, err = fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "up/secret.txt"}, env)
	wantRefused(t, err, adapters.RuleRoots)

	// Plain "..", and absolute paths outside the roots.
	_, err = fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "../secret.txt"}, env)
	wantRefused(t, err, adapters.RuleRoots)
	_, err = fetchSpec(t, adapters.Spec{Type: "filesystem", Path: outside}, env)
	wantRefused(t, err, adapters.RuleRoots)

	// A symlink that stays inside is followed; an absolute path inside a
	// root is allowed.
	if err := os.Symlink("in.md", filepath.Join(base, "docs", "alias.md")); err != nil {
		t.Fatal(err)
	}
	r, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "docs/alias.md"}, env)
	if err != nil || string(r.Content) != "inside\n" || r.Provenance["path"] != "docs/alias.md" {
		t.Fatalf("inside symlink: %q, %v, %v", r.Content, r.Provenance, err)
	}
	if _, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: filepath.Join(base, "docs", "in.md")}, env); err != nil {
		t.Fatalf("absolute path inside the root: %v", err)
	}

	// Declaring the outer directory a root allows all of it.
	env.Roots = []string{".", top}
	if r, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "docs/escape.md"}, env); err != nil || string(r.Content) != "outside the roots\n" {
		t.Fatalf("with the root declared: %q, %v", r.Content, err)
	}
	// Relative roots are relative to the base directory.
	env.Roots = []string{"docs"}
	if _, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "docs/in.md"}, env); err != nil {
		t.Fatalf("relative root: %v", err)
	}
	_, err = fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "docs/escape.md"}, env)
	wantRefused(t, err, adapters.RuleRoots)
}

func TestFilesystemRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "sub"}, adapters.Env{BaseDir: dir})
	wantRefused(t, err, adapters.RuleRegular)
	if !strings.Contains(err.Error(), "directory") {
		t.Errorf("error %q does not say it is a directory", err)
	}

	// A device, even inside a declared root.
	if _, err := os.Stat("/dev/null"); err == nil {
		_, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "/dev/null"}, adapters.Env{BaseDir: dir, Roots: []string{"/dev"}})
		wantRefused(t, err, adapters.RuleRegular)
	}
}

func TestFilesystemErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "missing.md"}, adapters.Env{BaseDir: dir})
	if !errors.Is(err, adapters.ErrNotFound) || !strings.Contains(err.Error(), uri) || !strings.Contains(err.Error(), "missing.md") {
		t.Errorf("missing file: %v", err)
	}
	// A path through a regular file is "not found", not an I/O error.
	write(t, filepath.Join(dir, "file"), "x")
	_, err = fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "file/below"}, adapters.Env{BaseDir: dir})
	if !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("path through a file: %v", err)
	}
	// A dangling symlink is not found.
	if err := os.Symlink("nowhere", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	_, err = fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "dangling"}, adapters.Env{BaseDir: dir})
	if !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("dangling symlink: %v", err)
	}
	// No path: a configuration error, reported by Check and by Fetch.
	spec := adapters.Spec{Type: "filesystem"}
	if err := adapters.Check(spec, adapters.Env{BaseDir: dir}); !errors.Is(err, adapters.ErrConfig) {
		t.Errorf("Check without a path: %v", err)
	}
	_, err = fetchSpec(t, spec, adapters.Env{BaseDir: dir})
	if !errors.Is(err, adapters.ErrConfig) || !strings.Contains(err.Error(), uri) {
		t.Errorf("fetch without a path: %v", err)
	}
}

// TestFilesystemOutsideRootsBeforeExistence (issue 13.9): a path outside the
// allowed roots is refused with the same answer whether a file is there or
// not, so the error does not reveal which files exist; the missing-file error
// is kept for paths inside the roots.
func TestFilesystemOutsideRootsBeforeExistence(t *testing.T) {
	base := t.TempDir()
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret.txt"), "exists\n")
	env := adapters.Env{BaseDir: base}
	answer := func(name string) string {
		_, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: filepath.Join(outside, name)}, env)
		wantRefused(t, err, adapters.RuleRoots)
		if errors.Is(err, adapters.ErrNotFound) {
			t.Fatalf("%s: %v reveals that no file is there", name, err)
		}
		return strings.ReplaceAll(err.Error(), name, "NAME")
	}
	if present, missing := answer("secret.txt"), answer("nothing.txt"); present != missing {
		t.Errorf("outside the roots, an existing and a missing file are answered differently:\n%s\n%s", present, missing)
	}
	// Through a missing directory, too.
	answer(filepath.Join("no", "such", "dir.txt"))
	// Inside the roots a missing file is still "not found".
	_, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "missing.md"}, env)
	if !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("missing file inside the roots: %v, want ErrNotFound", err)
	}
}
