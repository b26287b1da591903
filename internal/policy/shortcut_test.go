package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/fspath"
)

// The checker's shortcuts answer as the checks they shortcut: the fuzz
// tests that hold the fast path to the slow one cannot see them, since
// both paths take them.

// FuzzPlainURL: with plainURL's shortcut, checkHTTPURL and checkGitURL
// say what url.Parse's checks say of every URL.
func FuzzPlainURL(f *testing.F) {
	for _, s := range []string{
		"https://docs.internal/1", "http://h", "HTTPS://H.example/a/b.md", "https://h:8443/x", "https://h:/x",
		"https://h:x/", "https://-/", "https://h..i/", "https://h/a%20b", "https://u@h/", "https://u:p@h/",
		"ftp://h/x", "file:///srv/r.git", "file://h/r.git", "ssh://git@h/r.git", "git://h/r.git",
		"https://git.internal/r.git", "https:///x", "https://h?q", "https://h#f", "https://[::1]/x",
		"https://h/~u/a_b-c.d", "x://h", "https//h", "", "h", "ext::sh", "https://h/a b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		msg, hint := checkHTTPURL(s, "url")
		wmsg, whint := checkHTTPURLParsed(s, "url")
		if msg != wmsg || hint != whint {
			t.Fatalf("checkHTTPURL(%q) = %q, %q; by url.Parse %q, %q", s, msg, hint, wmsg, whint)
		}
		msg, hint = checkGitURL(s)
		wmsg, whint = checkGitURLParsed(s)
		if msg != wmsg || hint != whint {
			t.Fatalf("checkGitURL(%q) = %q, %q; by url.Parse %q, %q", s, msg, hint, wmsg, whint)
		}
	})
}

// The fast path finds duplicate URIs from its index, after the checks; a
// file declaring one twice, or two that differ only in letter case, in
// any order, is read by the slow path, which words the error.
func TestFastPathLeavesDuplicates(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	res := func(uri string) string {
		return "\n[[resource]]\nuri = \"" + uri + "\"\nsource = { type = \"filesystem\", path = \"p\" }\n"
	}
	for _, c := range []struct{ uris []string }{
		{[]string{"readproof://a/x", "readproof://a/y", "readproof://a/x"}},
		{[]string{"readproof://a/y", "readproof://a/x", "readproof://a/y"}},
		{[]string{"readproof://a/X", "readproof://a/y", "readproof://a/x"}},
		{[]string{"readproof://a/b/c", "readproof://a/B/C"}},
	} {
		text := "version = 1\n"
		for _, u := range c.uris {
			text += res(u)
		}
		if _, ok := parseFast("/srv/readproof.toml", "readproof.toml", text); ok {
			t.Errorf("%q: the fast path accepted a duplicate", c.uris)
		}
		if _, err := Parse("/srv/readproof.toml", []byte(text)); err == nil {
			t.Errorf("%q: accepted", c.uris)
		}
	}
	// Distinct URIs that sort apart in letter case are not duplicates.
	text := "version = 1\n" + res("readproof://a/B") + res("readproof://a/a") + res("readproof://a/b/c")
	if _, ok := parseFast("/srv/readproof.toml", "readproof.toml", text); !ok {
		t.Errorf("the fast path refused distinct URIs")
	}
}

// Load reads the file as Parse is given it: the same File, the same
// error, and os.ReadFile's errors for a file that is not there; a
// directory is refused at its open, as not a regular file (Open).
func TestLoadReadsAsParse(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	big := bench1000(300) // more than readText's buffer
	for name, text := range map[string]string{
		"valid.toml": string(mustRead(t, "testdata/valid.toml")),
		"big.toml":   big,
		"bad.toml":   big + "\n[[resource]]\nuri = \"readproof://bench/docs/doc-0\"\nsource = { type = \"filesystem\", path = \"p\" }\n",
		"empty.toml": "",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		got, gerr := Load(path)
		want, werr := Parse(path, []byte(text))
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Load gave %v, %v; Parse %v, %v", name, got, gerr, want, werr)
		}
	}
	if _, err := Load(dir); !errors.Is(err, fspath.ErrNotRegular) || err.Error() != "read policy file: "+dir+" is a directory, not a regular file" {
		t.Errorf("Load(%s) = %v, want it refused as a directory", dir, err)
	}
	for _, path := range []string{filepath.Join(dir, "nosuch.toml")} {
		_, rerr := os.ReadFile(path)
		_, err := Load(path)
		if want := "read policy file: " + rerr.Error(); err == nil || err.Error() != want {
			t.Errorf("Load(%s) = %v, want %s", path, err, want)
		}
		if errors.Is(rerr, fs.ErrNotExist) != errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Load(%s) = %v: fs.ErrNotExist %v, os.ReadFile's %v", path, err, errors.Is(err, fs.ErrNotExist), rerr)
		}
	}
}

// sourceKeys, the keys fastSource records, are the keys of a source.
func TestSourceKeys(t *testing.T) {
	names, _ := tomlFields(specType)
	if !slices.Equal(names, sourceKeys[:]) {
		t.Fatalf("sourceKeys = %q, sourcespec.Spec's keys %q", sourceKeys, names)
	}
	for i, k := range sourceKeys {
		if sourceKeyBit(k) != 1<<i {
			t.Errorf("sourceKeyBit(%q) = %#x, want %#x", k, sourceKeyBit(k), 1<<i)
		}
	}
	if sourceKeyBit("Type") != 0 || sourceKeyBit("") != 0 {
		t.Errorf("a key that is not a source's has a bit")
	}
}

// The fast path decodes each [[resource]] block as the next begins and
// reuses its tables' memory for the next, unless a table outside the
// blocks was made in between: files that do both read as the slow path
// reads them.
func TestFastPathReusesBlocks(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	fs := func(uri, path string) string {
		return "[[resource]]\nuri = \"readproof://a/" + uri + "\"\nsource = { type = \"filesystem\", path = \"" + path + "\" }\n"
	}
	for _, text := range []string{
		fs("a", "p") + fs("b", "q") + fs("c", "r"),
		fs("a", "p") + "[defaults]\npolicy = \"allow_stale\"\nmax_age = \"1h\"\n" + fs("b", "q") +
			"[sources]\nenv = [\"T\"]\nroots = [\".\"]\n" +
			"[[resource]]\nuri = \"readproof://a/c\"\npolicy = \"require_fresh\"\nsource = { type = \"http\", url = \"https://h/c\", headers = { A = \"${T}\" } }\n" +
			"[[resource]]\nuri = \"readproof://a/d\"\nsource.type = \"git\"\nsource.url = \"https://h/r.git\"\nsource.path = \"d\"\n" +
			"[network]\ntimeout = \"5s\"\n" + fs("e", "s"),
		"version = 1\n[[resource]]\nuri = \"readproof://a/a\"\n[resource.source]\ntype = \"filesystem\"\npath = \"p\"\n" +
			"[[resource]]\nuri = \"readproof://a/b\"\ndescription = \"b\"\n[resource.source]\ntype = \"github\"\nowner = \"o\"\nrepo = \"r\"\npath = \"b\"\n" +
			fs("c", "p") + "[signing]\nkey = \"k\"\n" + fs("d", "p") + "[probe]\nkey = \"p\"\n",
		// the root's fifth key, resource, moves the root's keys to a slab
		// (a large one: the file is long), where the blocks' memory is
		"version = 1\n[defaults]\npolicy = \"require_fresh\"\n[sources]\nenv = [\"TOKEN\"]\n[network]\ntimeout = \"5s\"\n" +
			strings.TrimPrefix(bench1000(40), "version = 1\n[sources]\nenv = [\"TOKEN\"]\n"),
		bench1000(40),
	} {
		f, ok := parseFast("/srv/policy/readproof.toml", "/srv/policy/readproof.toml", text)
		if !ok {
			t.Errorf("not read by the fast path:\n%s", text)
			continue
		}
		checkFastMatchesSlow(t, text)
		if len(f.Resources()) < 3 {
			t.Errorf("%d resources", len(f.Resources()))
		}
	}
}
