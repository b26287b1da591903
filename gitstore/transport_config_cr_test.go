package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestAddRemoteQuotesCR: a URL holding a carriage return is written in
// double quotes, as git writes it (git quotes such values since
// CVE-2025-48384: unquoted, a CR before the end of the line is dropped when
// the file is read, so git would fetch from another URL than the one
// given). Other odd bytes are written as git writes them too.
func TestAddRemoteQuotesCR(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, tr := newTransport(t)
	urls := []string{"a\rb", "ab\r", "\rab", "/srv/r.git\r", "x\\", "a\bb", "a\fb", "\tx", "x\t", " ", "x\x7f", "a\vb", "x \t"}
	for _, u := range urls {
		dirs := [2]string{}
		for k := range dirs {
			dirs[k] = filepath.Join(t.TempDir(), "r.git")
			gitInit(t, dirs[k], "--quiet", "--bare")
		}
		old := &Transport{dir: dirs[0], git: tr.git}
		now := &Transport{dir: dirs[1], git: tr.git}
		if err := addRemoteWithGit(ctx, old, "o", u, nil); err != nil {
			t.Fatalf("url %q: with git: %v", u, err)
		}
		if err := now.AddRemote(ctx, "o", u, nil); err != nil {
			t.Fatalf("url %q: %v", u, err)
		}
		a, _ := os.ReadFile(filepath.Join(dirs[0], "config"))
		b, _ := os.ReadFile(filepath.Join(dirs[1], "config"))
		if string(a) != string(b) {
			t.Errorf("url %q:\ngit wrote:\n%q\nAddRemote wrote:\n%q", u, a, b)
		}
		// git reads AddRemote's config back; what it reads from its own
		// is asked only when the bytes differ (the same bytes read the same).
		got := git(t, dirs[1], "config", "--get", "remote.o.url")
		if string(a) != string(b) {
			if want := git(t, dirs[0], "config", "--get", "remote.o.url"); got != want {
				t.Errorf("url %q: git reads back %q from AddRemote's config, %q from its own", u, got, want)
			}
		}
	}
}
