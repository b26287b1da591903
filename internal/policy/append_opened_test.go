package policy

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/adapters/sourcespec"
)

// TestAppendOpened (session 31, revops): resource add reads the policy
// file it judged and appends from that open (AppendOptions.Opened) when
// the path still names that file under the lock. A file replaced by a
// rename since is read by its path (else the resource another writer added
// would be lost), a file rewritten in place is read from its start, and
// the open is closed before the new file is renamed over it: Windows
// refuses to replace a file that is open (Go opens without
// FILE_SHARE_DELETE), which made every resource add fail there.
func TestAppendOpened(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	b := "version = 1\n\n[[resource]]\nuri = \"readproof://demo/b\"\nsource = { type = \"filesystem\", path = \"b.md\" }\n"
	for _, c := range []struct {
		name   string
		change func(t *testing.T, path string)
	}{
		{"replaced by a rename", func(t *testing.T, path string) {
			next := path + ".next"
			if err := os.WriteFile(next, []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(next, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"rewritten in place", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "readproof.toml")
			if err := os.WriteFile(path, []byte("version = 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			opened, _, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer opened.Close()
			if _, err := io.ReadAll(opened); err != nil { // read once, as the command does
				t.Fatal(err)
			}
			c.change(t, path)
			r := Resource{URI: mustURI(t, "readproof://demo/a"), Source: sourcespec.Spec{Type: "filesystem", Path: "a.md"}}
			closed := false
			if err := AppendResourceWith(path, r, AppendOptions{Opened: opened, BeforeWrite: func() error {
				_, err := opened.Stat()
				closed = errors.Is(err, os.ErrClosed)
				return nil
			}}); err != nil {
				t.Fatal(err)
			}
			got := string(mustRead(t, path))
			if !strings.HasPrefix(got, b) || !strings.Contains(got[len(b):], "readproof://demo/a") {
				t.Errorf("the file %s since it was opened, appended to:\n%s\nwant all of it kept and readproof://demo/a added", c.name, got)
			}
			if !closed {
				t.Errorf("the file opened before the lock is still open when the new file is renamed over it")
			}
		})
	}
}
