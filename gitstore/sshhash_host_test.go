package gitstore

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSSHHostHashInWord: a # inside a word of a Host line is part of the
// pattern, as ssh reads it (argv_split cuts only at a # that starts a
// word): Host foo#bar applies to foo#bar and not to foo, while a # that
// starts a word is a comment. Before rr1's re-read of session 29 the
// parser's cut applied the block to foo.
func TestSSHHostHashInWord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	conf := "Host foo#bar !no#t\n  Hostname in-word.example\n\nHost baz #a comment\n  Hostname commented.example\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := readSSHConfigFile(path, t.TempDir())
	if err != nil || f == nil {
		t.Fatalf("read %s: %v", path, err)
	}
	cs := sshConfigs{*f}
	for _, c := range []struct{ alias, want string }{
		{"foo", ""},
		{"foo#bar", "in-word.example"},
		{"baz", "commented.example"},
	} {
		if got := cs.Get(c.alias, "Hostname"); got != c.want {
			t.Errorf("Hostname of %s: %q, want %q", c.alias, got, c.want)
		}
	}
}

// TestSSHIncludeHashInWord: an Include line names a file with a # inside
// a word as ssh reads it (Include x#y reads x#y, not x), and a # that
// starts a word begins a comment.
func TestSSHIncludeHashInWord(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("x#y", "Host a\n  Hostname from-x-hash-y.example\n")
	write("x", "Host a\n  Hostname from-x.example\n")
	write("z", "Host b\n  Hostname from-z.example\n")
	write("config", "Include x#y\nInclude z #x\n")
	f, err := readSSHConfigFile(filepath.Join(dir, "config"), t.TempDir())
	if err != nil || f == nil {
		t.Fatalf("read: %v", err)
	}
	cs := sshConfigs{*f}
	if got := cs.Get("a", "Hostname"); got != "from-x-hash-y.example" {
		t.Errorf("Hostname of a: %q, want the one of the file x#y", got)
	}
	if got := cs.Get("b", "Hostname"); got != "from-z.example" {
		t.Errorf("Hostname of b: %q, want the one of the file z", got)
	}
}
