package gitstore

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A # inside a word of a value is part of it, as ssh reads it (misc.c,
// argv_split: a # is a comment only at a word's start):
//
//	printf 'Host *\n  UserKnownHostsFile ~/x#y ~/z #c\n  IdentityFile ~/i#d\n' >cfg; ssh -G -F cfg h   # identityfile ~/i#d, userknownhostsfile ~/x#y ~/z
//
// Before, the parser cut the value at the #: readproof read ~/x and ~/i.
func TestSSHHashInsideAWordKept(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := "Host *\n  UserKnownHostsFile ~/x#y ~/z #c\n  IdentityFile ~/i#d\n  IdentityFile=\"~/q #r\"#s #t\n"
	config := writeSSHConfig(t, home, conf)
	c := readSSHConfigs(filepath.Join(home, "no-system-config"))
	if len(c.files) != 1 {
		t.Fatalf("%d files read, want 1 (%v)", len(c.files), c.unread)
	}
	ids, _ := c.files[0].identities("git.example.test")
	for i := range ids {
		ids[i] = sshValue(ids[i])
	}
	if want := []string{"~/i#d", "~/q #r#s"}; !slices.Equal(ids, want) {
		t.Errorf("IdentityFile values %q, want %q", ids, want)
	}
	files, _, err := c.knownHostsWritten("git.example.test", "git.example.test", "22", "git")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 || files[0] != filepath.Join(home, "x#y") || files[1] != filepath.Join(home, "z") {
		t.Errorf("known_hosts files %q, want %s and %s first", files, filepath.Join(home, "x#y"), filepath.Join(home, "z"))
	}
	if out, _, ok := sshG(t, config, "git.example.test"); ok && (!strings.Contains(out, "\nidentityfile ~/i#d\n") || !strings.Contains(out, "\nidentityfile ~/q #r#s\n") || !strings.Contains(out, "x#y ")) {
		t.Errorf("ssh -G does not read it so:\n%s", out)
	}
}

// What sshLineValue keeps of a line splits into the words ssh reads of
// the whole line (sshArgs), for any line, without a panic.
func FuzzSSHLineValue(f *testing.F) {
	for _, s := range []string{"~/x#y ~/z #c", "\"a #b\"#c #d", "a\\ #b", "#", "'#' x", "a\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsAny(s, "\n\r") || strings.HasPrefix(strings.TrimLeft(s, " \t"), "=") {
			return
		}
		v := sshLineValue("IdentityFile " + s)
		want, wok := sshArgs(s)
		got, gok := sshArgs(v)
		if wok != gok || !slices.Equal(got, want) {
			t.Errorf("%q: kept %q, words %q (%v), want %q (%v)", s, v, got, gok, want, wok)
		}
	})
}
