//go:build unix

package mcpauth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTokenFileOfAnotherUserRefused: a token file owned by another user is
// refused, naming its owner, at start and while the server runs: whoever
// owns the file can write it, so could issue themselves a token for this
// server. Mode 0600 alone said nothing about whose it was, and root served
// from a file another user controls. Changing a file's owner takes root.
func TestTokenFileOfAnotherUserRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp-tokens.json")
	if err := Update(path, nil, func(f *File) error {
		_, err := f.Add("w", ScopeWrite, 0, time.Now(), nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(path, nil, nil)
	if err != nil {
		t.Fatalf("own token file: %v", err)
	}
	if err := os.Chown(path, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"NewVerifier":        func() error { _, err := NewVerifier(path, nil, nil); return err }(),
		"Verify after chown": func() error { _, err := v.Verify("rpmcp_" + strings.Repeat("0", 64)); return err }(),
		"Update (token add)": Update(path, nil, func(*File) error { return nil }),
	} {
		if err == nil || !strings.Contains(err.Error(), "uid 4242") || !strings.Contains(err.Error(), "chown") {
			t.Errorf("%s of a token file uid 4242 owns: %v; want a refusal naming the owner and the chown to make", what, err)
		}
	}
}
