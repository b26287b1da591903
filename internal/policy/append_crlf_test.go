package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/readproof/readproof/adapters/sourcespec"
)

// TestAppendResourceKeepsLineEnds: resource add writes its block with the
// line ends the file has (a file saved on Windows, or checked out with
// core.autocrlf, ends its lines in CRLF), so the file is not left with two
// kinds; a byte-order mark stays first.
func TestAppendResourceKeepsLineEnds(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	r := Resource{URI: mustURI(t, "readproof://demo/b"), Source: sourcespec.Spec{Type: "filesystem", Path: "b.md"}}
	const block = "[[resource]]\nuri = \"readproof://demo/b\"\nsource = { type = \"filesystem\", path = \"b.md\" }\n"
	crlf := func(s string) string {
		out := ""
		for _, c := range s {
			if c == '\n' {
				out += "\r"
			}
			out += string(c)
		}
		return out
	}
	for _, c := range []struct{ name, orig, want string }{
		{"lf", "version = 1\n", "version = 1\n\n" + block},
		{"crlf", "\ufeffversion = 1\r\n# kept\r\n", "\ufeffversion = 1\r\n# kept\r\n\r\n" + crlf(block)},
		{"crlf-no-final-newline", "version = 1\r\n# no newline at the end", "version = 1\r\n# no newline at the end\r\n\r\n" + crlf(block)},
	} {
		path := filepath.Join(t.TempDir(), "readproof.toml")
		if err := os.WriteFile(path, []byte(c.orig), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := AppendResource(path, r); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := string(mustRead(t, path)); got != c.want {
			t.Errorf("%s: file =\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}
