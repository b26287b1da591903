package mcpauth

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func TestAddVerifyRevokeExpire(t *testing.T) {
	f := Empty()
	w, err := f.Add("writer", ScopeWrite, 0, t0, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.Add("reader", ScopeRead, time.Hour, t0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ParseToken(w); err != nil {
		t.Fatalf("issued token does not parse: %v", err)
	}
	if bytes.Contains(f.Encode(), []byte(w[len(TokenPrefix):])) {
		t.Fatal("the token file holds the token itself")
	}
	c, err := f.Verify(w, t0)
	if err != nil || c.Name != "writer" || !c.CanWrite() || !c.ExpiresAt.IsZero() {
		t.Fatalf("writer: %+v %v", c, err)
	}
	c, err = f.Verify(r, t0.Add(59*time.Minute))
	if err != nil || c.Name != "reader" || c.CanWrite() || !c.ExpiresAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("reader: %+v %v", c, err)
	}
	if _, err := f.Verify(r, t0.Add(time.Hour)); !errors.Is(err, ErrExpired) {
		t.Fatalf("expired reader: %v", err)
	}
	if _, err := f.Add("writer", ScopeRead, 0, t0, nil); !errors.Is(err, ErrExists) {
		t.Fatalf("second live writer: %v", err)
	}
	if err := f.Revoke("writer", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Verify(w, t0); !errors.Is(err, ErrRevoked) {
		t.Fatalf("revoked writer: %v", err)
	}
	if err := f.Revoke("nobody", t0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoke unknown: %v", err)
	}
	// A revoked name is refused (its receipts would be the new
	// token's); given again as the same caller, the old token stays dead.
	if _, err := f.Add("writer", ScopeWrite, 0, t0, nil); !errors.Is(err, ErrUsed) {
		t.Fatalf("Add of a revoked name: %v, want ErrUsed", err)
	}
	w2, err := f.Readd("writer", ScopeWrite, 0, t0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Verify(w, t0); !errors.Is(err, ErrUnknown) {
		t.Fatalf("replaced token: %v", err)
	}
	if _, err := f.Verify(w2, t0); err != nil {
		t.Fatal(err)
	}
	// Round trip through the encoding.
	g, err := Decode(f.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Verify(w2, t0); err != nil {
		t.Fatalf("after decode: %v", err)
	}
	other, _ := NewToken(nil)
	if _, err := g.Verify(other, t0); !errors.Is(err, ErrUnknown) {
		t.Fatalf("unknown token: %v", err)
	}
	for _, bad := range []string{"", "rpmcp_", strings.ToUpper(w2), w2 + "0", "Bearer " + w2, w2[:len(w2)-1] + "g"} {
		if _, err := g.Verify(bad, t0); !errors.Is(err, ErrMalformed) {
			t.Errorf("Verify(%q) = %v, want ErrMalformed", bad, err)
		}
	}
}

func TestErrorsNeverQuoteTheToken(t *testing.T) {
	f := Empty()
	tok, _ := f.Add("a", ScopeWrite, time.Second, t0, nil)
	_ = f.Revoke("a", t0)
	for _, p := range []string{tok, tok + "x", tok[:20]} {
		_, err := f.Verify(p, t0.Add(time.Hour))
		if err == nil || strings.Contains(err.Error(), p[len(TokenPrefix):]) {
			t.Errorf("error %v for %q", err, p)
		}
	}
}

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"a", "ci-bot", "agent.7", "A_b", strings.Repeat("x", 64)} {
		if err := ValidateName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", ".a", "a b", "a/b", "é", "a\n", "a..b", "a.lock", strings.Repeat("x", 65)} {
		if err := ValidateName(bad); !errors.Is(err, ErrName) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	h := strings.Repeat("ab", 32)
	for name, data := range map[string]string{
		"format":    `{"format":"x","tokens":[]}`,
		"unknown":   `{"format":"` + Format + `","tokens":[],"x":1}`,
		"scope":     `{"format":"` + Format + `","tokens":[{"name":"a","scope":"admin","sha256":"` + h + `","created_at":"2026-01-01T00:00:00Z"}]}`,
		"hash":      `{"format":"` + Format + `","tokens":[{"name":"a","scope":"read","sha256":"AB","created_at":"2026-01-01T00:00:00Z"}]}`,
		"upperhash": `{"format":"` + Format + `","tokens":[{"name":"a","scope":"read","sha256":"` + strings.ToUpper(h) + `","created_at":"2026-01-01T00:00:00Z"}]}`,
		"dup":       `{"format":"` + Format + `","tokens":[{"name":"a","scope":"read","sha256":"` + h + `","created_at":"2026-01-01T00:00:00Z"},{"name":"a","scope":"read","sha256":"` + h + `","created_at":"2026-01-01T00:00:00Z"}]}`,
		"trailing":  `{"format":"` + Format + `","tokens":[]} {}`,
	} {
		if _, err := Decode([]byte(data)); !errors.Is(err, ErrFile) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestFilePolicyAndVerifierReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cfg", "mcp-tokens.json")
	if _, err := NewVerifier(path, nil, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	var tok string
	err := Update(path, nil, func(f *File) error {
		var err error
		tok, err = f.Add("ci", ScopeWrite, 0, time.Now(), nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	if _, err := os.Stat(path + ".lock"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("lock left behind: %v", err)
	}
	v, err := NewVerifier(path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := v.Verify(tok); err != nil || c.Name != "ci" {
		t.Fatalf("%+v %v", c, err)
	}
	if err := Update(path, nil, func(f *File) error { return f.Revoke("ci", time.Now()) }); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(tok); !errors.Is(err, ErrRevoked) {
		t.Fatalf("revocation not seen by a running verifier: %v", err)
	}
	// The token file may not live inside a forbidden directory or a git repository.
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	err = Update(filepath.Join(repo, "tokens.json"), nil, func(*File) error { return nil })
	if err == nil {
		t.Fatal("token file inside a git repository accepted")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, nil); err == nil {
		t.Fatal("a token file open to others was read")
	}
}

// TestUpdateLockedHint: a token file whose lock another process holds past
// the timeout fails with ErrLocked, and the hint the command prints after
// it says how to remove the lock.
func TestUpdateLockedHint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-tokens.json")
	if err := os.WriteFile(path+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := UpdateWith(path, nil, LockOptions{Timeout: 50 * time.Millisecond, StaleAge: time.Hour},
		func(*File) error { t.Fatal("updated under another's lock"); return nil })
	var h interface{ Hint() string }
	if !errors.Is(err, ErrLocked) || !errors.As(err, &h) || !strings.Contains(h.Hint(), "rm "+path+".lock") {
		t.Fatalf("update under a held lock: %v, want ErrLocked with a hint naming rm %s.lock", err, path)
	}
}

// TestAddRefusesAUsedName: receipts, runs and tag moves belong to a
// token's name, so Add refuses the name of a revoked or an expired token
// (ErrUsed, naming it and its state) as it refuses a live one's
// (ErrExists), and leaves the file as it was; Readd gives a used name
// again, as the same caller, and still refuses a live one's.
func TestAddRefusesAUsedName(t *testing.T) {
	f := Empty()
	if _, err := f.Add("gone", ScopeRead, 0, t0, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Add("brief", ScopeRead, time.Hour, t0, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.Revoke("gone", t0); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(2 * time.Hour)
	before := string(f.Encode())
	for name, state := range map[string]string{"gone": "revoked", "brief": "expired"} {
		_, err := f.Add(name, ScopeRead, 0, later, nil)
		if !errors.Is(err, ErrUsed) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), state) {
			t.Errorf("Add(%s), %s: %v, want ErrUsed naming it", name, state, err)
		}
	}
	if got := string(f.Encode()); got != before {
		t.Errorf("a refused Add changed the file:\n%s\nwas\n%s", got, before)
	}
	tok, err := f.Readd("brief", ScopeWrite, 0, later, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := f.Verify(tok, later); err != nil || c.Name != "brief" || !c.CanWrite() {
		t.Fatalf("readded token: %+v, %v", c, err)
	}
	if _, err := f.Readd("brief", ScopeWrite, 0, later, nil); !errors.Is(err, ErrExists) {
		t.Errorf("Readd of a live name: %v, want ErrExists", err)
	}
}

// TestReaddRefusesANameNeverUsed: Readd says the new token is the same
// caller as a revoked or expired one; for a name no token of the file had
// (a mistyped name) it is refused with ErrUnused, naming it, and leaves
// the file as it was, rather than adding a new caller taken for an old one.
func TestReaddRefusesANameNeverUsed(t *testing.T) {
	f := Empty()
	if _, err := f.Add("agent-7", ScopeRead, 0, t0, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.Revoke("agent-7", t0); err != nil {
		t.Fatal(err)
	}
	before := string(f.Encode())
	_, err := f.Readd("agnet-7", ScopeRead, 0, t0, nil)
	if !errors.Is(err, ErrUnused) || !strings.Contains(err.Error(), "agnet-7") {
		t.Errorf("Readd of a name never used: %v, want ErrUnused naming it", err)
	}
	if got := string(f.Encode()); got != before {
		t.Errorf("a refused Readd changed the file:\n%s\nwas\n%s", got, before)
	}
}
