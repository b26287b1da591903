package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitBareSameBytes: the config file InitBare writes into a repository
// it creates is byte for byte what `git init --bare` and one `git config KEY
// VALUE` per pair write, for the remote guard's keys, values git quotes or
// escapes and a section spelled in capitals; pairs newSectionsText leaves
// to git (a subsection, a section that comes back, a section the file
// already has) give the same bytes too.
func TestInitBareSameBytes(t *testing.T) {
	cases := []struct {
		name   string
		config [][2]string
		direct bool // newSectionsText writes it
	}{
		{"guard", [][2]string{{"receive.denyDeletes", "true"}, {"receive.denyNonFastForwards", "true"}, {"receive.fsckObjects", "true"}, {"readproof.remote", "1"}}, true},
		{"quoted", [][2]string{{"readproof.note", " leading space"}, {"readproof.other", "a;b#c\td\"e\\f"}}, true},
		{"capitals", [][2]string{{"Receive.DenyDeletes", "true"}, {"RECEIVE.fsckObjects", "false"}}, true},
		{"subsection", [][2]string{{"remote.origin.url", "/tmp/x"}}, false},
		{"section again", [][2]string{{"receive.denyDeletes", "true"}, {"readproof.remote", "1"}, {"receive.fsckObjects", "true"}}, false},
		{"core", [][2]string{{"core.logAllRefUpdates", "false"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, ok := newSectionsText([]byte("[core]\n\tbare = true\n"), c.config); ok != c.direct {
				t.Fatalf("newSectionsText ok = %v, want %v", ok, c.direct)
			}
			base := t.TempDir()
			ours := filepath.Join(base, "ours.git")
			tr, err := NewTransport(ours, TransportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.InitBare(context.Background(), true, c.config); err != nil {
				t.Fatal(err)
			}
			theirs := filepath.Join(base, "theirs.git")
			if out, err := GitCommand(t, "", "init", "--quiet", "--bare", "--initial-branch=main", theirs).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			for _, kv := range c.config {
				git(t, theirs, "config", "--", kv[0], kv[1])
			}
			a, err := os.ReadFile(filepath.Join(ours, "config"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(theirs, "config"))
			if err != nil {
				t.Fatal(err)
			}
			if string(a) != string(b) {
				t.Fatalf("config differs from git's:\nours:\n%s\ngit:\n%s", a, b)
			}
			for _, kv := range c.config {
				if got, want := git(t, ours, "config", "--get", kv[0]), git(t, theirs, "config", "--get", kv[0]); got != want {
					t.Fatalf("%s = %q, git's %q", kv[0], got, want)
				}
			}
		})
	}
}

// FuzzNewSectionsText: whatever the existing file and the pairs, a text
// newSectionsText accepts has one header per section, none of them in the
// existing file, and each pair's line under its section's header.
func FuzzNewSectionsText(f *testing.F) {
	f.Add("[core]\n\tbare = true\n", "receive.denyDeletes", "true", "readproof.remote", "1")
	f.Add("[Receive]\n", "receive.fsckObjects", "true", "RECEIVE.x", "a b")
	f.Add("", "a.b.c", "v", "x.y", "\"")
	f.Fuzz(func(t *testing.T, existing, k1, v1, k2, v2 string) {
		config := [][2]string{{k1, v1}, {k2, v2}}
		text, ok := newSectionsText([]byte(existing), config)
		if !ok {
			return
		}
		if !strings.HasSuffix(text, "\n") || !strings.HasPrefix(text, "[") {
			t.Fatalf("text %q", text)
		}
		headers := map[string]int{}
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "[") {
				headers[strings.ToLower(strings.Trim(line, "[]"))]++
			}
		}
		for _, kv := range config {
			section, name, _ := strings.Cut(kv[0], ".")
			lower := strings.ToLower(section)
			if headers[lower] != 1 {
				t.Fatalf("section %s has %d headers in %q", section, headers[lower], text)
			}
			for _, line := range strings.Split(existing, "\n") {
				if h := strings.ToLower(strings.TrimLeft(line, " \t")); strings.HasPrefix(h, "["+lower+"]") {
					t.Fatalf("section %s is already in %q", section, existing)
				}
			}
			var b strings.Builder
			writeConfigPair(&b, name, kv[1])
			if !strings.Contains(text, b.String()) {
				t.Fatalf("no line %q in %q", b.String(), text)
			}
		}
	})
}
