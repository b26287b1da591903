package policy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/adapters/sourcespec"
	"github.com/readproof/readproof/identity"
)

func TestAppendResourceCreatesAndRoundTrips(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	path := filepath.Join(dir, "readproof.toml")

	// The first add creates the file; http headers need [sources].env, so the
	// file is then extended by hand and later adds must keep that text.
	first := Resource{
		URI:         mustURI(t, "readproof://demo/policies/refunds"),
		Source:      sourcespec.Spec{Type: "filesystem", Path: `policies/re"funds\ ü.md`},
		Freshness:   Freshness{Strategy: RequireFresh},
		Description: `Quotes "like this", a backslash \ and unicode: ünïcødé ✓ 日本語`,
	}
	if err := AppendResource(path, first); err != nil {
		t.Fatal(err)
	}
	created := mustRead(t, path)
	if !bytes.HasPrefix(created, []byte("# readproof policy file")) || !bytes.Contains(created, []byte("\nversion = 1\n")) {
		t.Fatalf("new file lacks the header or version:\n%s", created)
	}
	edited := string(created) + "\n# hand-written comment, kept as is\n[sources] # trailing comment\nenv = [\"POLICY_TOKEN\", \"GITHUB_TOKEN\"]\n"
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}

	added := []Resource{
		{
			URI: mustURI(t, "readproof://demo/policies/shipping"),
			Source: sourcespec.Spec{Type: "http", URL: "https://policies.internal/shipping.md?a=1&b=\"2\"", Headers: map[string]string{
				"Authorization": "Bearer ${POLICY_TOKEN}",
			}, PublicHeaders: map[string]string{"X-Note": `tab	"quoted" \back`, "X-Api-Version": "2"}},
			Freshness:   Freshness{Strategy: AllowStale, MaxAge: 90 * time.Minute},
			ContentType: "text/markdown; charset=utf-8",
		},
		{
			URI:       mustURI(t, "readproof://acme/runbooks/oncall"),
			Source:    sourcespec.Spec{Type: "github", Owner: "acme", Repo: "docs", Path: "run books/on-call.md", TokenEnv: "GITHUB_TOKEN"},
			Freshness: Freshness{Strategy: AllowStale, MaxAge: 7 * 24 * time.Hour},
		},
		{
			URI:       mustURI(t, "readproof://acme/specs/pricing"),
			Source:    sourcespec.Spec{Type: "git", URL: "file:///srv/git/specs.git", Path: "pricing.md", Ref: "v1.0"},
			Freshness: Freshness{Strategy: Pinned, Snapshot: "1ae984e288457551a53914820e8411431331791c"},
		},
		{
			// No strategy: inherits [defaults] (require_fresh).
			URI:    mustURI(t, "readproof://acme/specs/other"),
			Source: sourcespec.Spec{Type: "git", URL: "ssh://git@git.internal/specs.git", Path: "other.md"},
		},
	}
	for _, r := range added {
		before := mustRead(t, path)
		if err := AppendResource(path, r); err != nil {
			t.Fatalf("AppendResource(%s): %v", r.URI, err)
		}
		after := mustRead(t, path)
		if !bytes.HasPrefix(after, before) {
			t.Fatalf("existing content changed:\n--- before\n%s\n--- after\n%s", before, after)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, %v; want the original 0600 kept", st.Mode(), err)
	}

	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]Resource{first}, added...)
	if len(f.Resources()) != len(want) {
		t.Fatalf("%d resources, want %d", len(f.Resources()), len(want))
	}
	for i, w := range want {
		got := f.Resources()[i]
		if got.Line == 0 {
			t.Errorf("resource %d has no line", i+1)
		}
		if n := normalized(w, f); !sameResource(got, n) {
			t.Errorf("resource %d:\n got %+v\nwant %+v", i+1, got, n)
		}
	}
	if r := f.Resources()[4]; r.Freshness.Strategy != RequireFresh || r.Source.Ref != DefaultGitRef {
		t.Errorf("defaults not applied to the last resource: %+v", r)
	}
	text := string(mustRead(t, path))
	for _, s := range []string{
		`description = "Quotes \"like this\", a backslash \\ and unicode: ünïcødé ✓ 日本語"`,
		`source = { type = "http", url = "https://policies.internal/shipping.md?a=1&b=\"2\"", headers = { Authorization = "Bearer ${POLICY_TOKEN}" }, public_headers = { X-Api-Version = "2", X-Note = "tab\t\"quoted\" \\back" } }`,
		`max_age = "1h30m"`,
		`max_age = "7d"`,
		"# hand-written comment, kept as is\n[sources] # trailing comment\n",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("file lacks %s\n%s", s, text)
		}
	}
	leftovers(t, dir, "readproof.toml")
}

// leftovers fails when dir holds anything but the named files (a temporary
// file or a lock file left behind).
func leftovers(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("directory holds %q, want %q", names, want)
	}
}

func TestAppendResourceFailuresLeaveFileUnchanged(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	const original = `# my policy, with comments   
version = 1
[sources]
env = ["POLICY_TOKEN"]

[[resource]]
uri = "readproof://demo/a"
source = { type = "filesystem", path = "a.md" } # no trailing newline`
	fs := func(uri string) Resource {
		return Resource{URI: mustURI(t, uri), Source: sourcespec.Spec{Type: "filesystem", Path: "x.md"}}
	}
	tagged := fs("readproof://demo/t")
	tagged.URI.Tag = "prod"
	for _, tc := range []struct {
		name     string
		content  string
		r        Resource
		key, msg string
		line     int
		is       error
	}{
		{name: "duplicate", content: original, r: fs("readproof://demo/a"), key: "resource[1].uri",
			msg: "readproof://demo/a is already declared at line 6", line: 6, is: ErrDuplicate},
		{name: "tagged uri", content: original, r: tagged, key: "resource[2].uri", msg: "cannot carry a tag"},
		{name: "no uri", content: original, r: Resource{Source: sourcespec.Spec{Type: "filesystem", Path: "x"}}, key: "resource[2].uri", msg: "missing uri"},
		{name: "unknown source type", content: original,
			r:   Resource{URI: mustURI(t, "readproof://demo/b"), Source: sourcespec.Spec{Type: "s3", Path: "x"}},
			key: "resource[2].source.type", msg: `unknown source type "s3"`},
		{name: "env not allowed", content: original,
			r: Resource{URI: mustURI(t, "readproof://demo/b"), Source: sourcespec.Spec{Type: "http", URL: "https://x.example/",
				Headers: map[string]string{"Authorization": "Bearer ${OTHER}"}}},
			key: "resource[2].source.headers.Authorization", msg: "${OTHER} is not listed in [sources].env"},
		{name: "allow_stale without max_age", content: original,
			r:   Resource{URI: mustURI(t, "readproof://demo/b"), Source: sourcespec.Spec{Type: "filesystem", Path: "b"}, Freshness: Freshness{Strategy: AllowStale}},
			key: "resource[2].max_age", msg: "allow_stale needs max_age"},
		{name: "pinned bad snapshot", content: original,
			r:   Resource{URI: mustURI(t, "readproof://demo/b"), Source: sourcespec.Spec{Type: "filesystem", Path: "b"}, Freshness: Freshness{Strategy: Pinned, Snapshot: "nope"}},
			key: "resource[2].snapshot", msg: "is not a snapshot id"},
		{name: "invalid utf-8", content: original,
			r:   Resource{URI: mustURI(t, "readproof://demo/b"), Source: sourcespec.Spec{Type: "filesystem", Path: "b\xff"}},
			msg: "not valid UTF-8"},
		{name: "inline resource array", content: "resource = [{ uri = \"readproof://demo/a\", source = { type = \"filesystem\", path = \"a\" } }]\n",
			r: fs("readproof://demo/b"), msg: "cannot append a [[resource]] block to this file"},
		{name: "existing file malformed", content: "version = 1\n[[resource]\n", r: fs("readproof://demo/b"),
			msg: "malformed TOML", line: 2},
		{name: "existing file invalid", content: "version = 1\n[[resource]]\nsorce = 1\n", r: fs("readproof://demo/b"),
			key: "resource[1].sorce", msg: "unknown key", line: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "readproof.toml")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			err := AppendResource(path, tc.r)
			if err == nil {
				t.Fatal("accepted")
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not an *Error", err)
			}
			if pe.Key != tc.key || pe.Line != tc.line || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("error = %v (key %q, line %d); want key %q, line %d, msg containing %q", err, pe.Key, pe.Line, tc.key, tc.line, tc.msg)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error does not match %v", tc.is)
			}
			if got := string(mustRead(t, path)); got != tc.content {
				t.Errorf("file changed:\n%s", got)
			}
			leftovers(t, dir, "readproof.toml")
		})
	}

	t.Run("missing file and invalid resource", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "readproof.toml")
		err := AppendResource(path, Resource{URI: mustURI(t, "readproof://demo/b"), Source: sourcespec.Spec{Type: "http", URL: "ftp://x/"}})
		if err == nil || !strings.Contains(err.Error(), `url scheme "ftp" is not allowed`) {
			t.Fatalf("error = %v", err)
		}
		leftovers(t, dir) // not even created
	})
}

func TestAppendResourceNoTrailingNewline(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	path := filepath.Join(dir, "readproof.toml")
	orig := "version = 1 # no newline at the end"
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Resource{URI: mustURI(t, "readproof://demo/a"), Source: sourcespec.Spec{Type: "filesystem", Path: "a.md"}}
	if err := AppendResource(path, r); err != nil {
		t.Fatal(err)
	}
	got := string(mustRead(t, path))
	want := orig + "\n\n[[resource]]\nuri = \"readproof://demo/a\"\nsource = { type = \"filesystem\", path = \"a.md\" }\n"
	if got != want {
		t.Errorf("file =\n%q\nwant\n%q", got, want)
	}
}

func TestAppendResourceThroughSymlink(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	real := filepath.Join(dir, "real.toml")
	link := filepath.Join(dir, "readproof.toml")
	if err := os.WriteFile(real, []byte("version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	r := Resource{URI: mustURI(t, "readproof://demo/a"), Source: sourcespec.Spec{Type: "filesystem", Path: "a.md"}}
	if err := AppendResource(link, r); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced by a file")
	}
	if !strings.Contains(string(mustRead(t, real)), "readproof://demo/a") {
		t.Errorf("the link target was not updated")
	}
}

func TestAppendResourceConcurrent(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	path := filepath.Join(dir, "readproof.toml")
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := Resource{URI: mustURI(t, fmt.Sprintf("readproof://demo/doc-%d", i)), Source: sourcespec.Spec{Type: "filesystem", Path: "a.md"}}
			errs <- AppendResource(path, r)
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Resources()) != n {
		t.Errorf("%d resources after %d concurrent adds", len(f.Resources()), n)
	}
	leftovers(t, dir, "readproof.toml")
}

func TestAppendResourceLocked(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	old := lockWait
	lockWait = 50 * time.Millisecond
	defer func() { lockWait = old }()
	dir := t.TempDir()
	path := filepath.Join(dir, "readproof.toml")
	if err := os.WriteFile(path+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := Resource{URI: mustURI(t, "readproof://demo/a"), Source: sourcespec.Spec{Type: "filesystem", Path: "a.md"}}
	err := AppendResource(path, r)
	if err == nil || !strings.Contains(err.Error(), "locked by another readproof") {
		t.Fatalf("error = %v", err)
	}
	// Session 17: the error had no hint line; it now says to run again or
	// how to remove the lock.
	var h interface{ Hint() string }
	if !errors.As(err, &h) || !strings.Contains(h.Hint(), "rm "+path+".lock") {
		t.Errorf("error %v: want a hint with rm %s.lock", err, path)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("file created while locked")
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		``:               `""`,
		`plain`:          `"plain"`,
		`a"b`:            `"a\"b"`,
		`a\b`:            `"a\\b"`,
		"tab\tnl\ncr\r":  `"tab\tnl\ncr\r"`,
		"nul\x00del\x7f": `"nul\u0000del\u007F"`,
		"ünï ✓":          `"ünï ✓"`,
		`${X}`:           `"${X}"`,
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
		// And the TOML parser reads it back.
		back := decodeBasicString(quote(in))
		if back != in {
			t.Errorf("quote(%q) reads back as %q", in, back)
		}
	}
	for in, want := range map[string]string{"Accept": "Accept", "X-Api_2": "X-Api_2", "a b": `"a b"`, "a.b": `"a.b"`, "": `""`, "ü": `"ü"`} {
		if got := encodeKey(in); got != want {
			t.Errorf("encodeKey(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCreateFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "readproof.toml")
	if err := CreateFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil || f.Version != 1 || len(f.Resources()) != 0 {
		t.Fatalf("Load after CreateFile = %+v, %v", f, err)
	}
	before := mustRead(t, path)
	if err := CreateFile(path); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second CreateFile = %v, want an already-exists error", err)
	}
	if !bytes.Equal(mustRead(t, path), before) {
		t.Errorf("second CreateFile changed the file")
	}
}

// TestAppendBreaksStaleLock: a lock left by a killed process is taken as
// stale once it is older than staleLockAge; a fresh one is waited for.
func TestAppendBreaksStaleLock(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "readproof.toml")
	lock := path + ".lock"
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(lock, old, old)
	r := Resource{Source: sourcespec.Spec{Type: "filesystem", Path: "a.md"}, Freshness: Freshness{Strategy: RequireFresh}}
	r.URI, _ = identity.ParseURI("readproof://demo/a")
	if err := AppendResource(path, r); err != nil {
		t.Fatalf("append with a stale lock: %v", err)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Fatalf("lock left behind: %v", err)
	}
	// a fresh lock is respected
	os.WriteFile(lock, nil, 0o600)
	defer os.Remove(lock)
	saved := lockWait
	lockWait = 100 * time.Millisecond
	defer func() { lockWait = saved }()
	r.URI, _ = identity.ParseURI("readproof://demo/b")
	if err := AppendResource(path, r); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("append with a fresh lock: %v", err)
	}
}
