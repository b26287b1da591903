package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/internal/policy"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is a project directory with a policy file, documents and a store.
type fixture struct {
	dir   string
	clock *clock
	s     *Store
}

// newFixture writes readproof.toml from tomlBody plus the given files and
// opens a fresh store with a test clock.
func newFixture(t testing.TB, tomlBody string, files map[string]string) *fixture {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pp := filepath.Join(dir, "readproof.toml")
	if err := os.WriteFile(pp, []byte(tomlBody), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Init(filepath.Join(dir, ".readproof")); err != nil {
		t.Fatal(err)
	}
	f := &fixture{dir: dir, clock: &clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}}
	f.reopen(t, Options{})
	return f
}

func (f *fixture) reopen(t testing.TB, opts Options) {
	t.Helper()
	if f.s != nil {
		f.s.Close()
	}
	pol, err := policy.Load(filepath.Join(f.dir, "readproof.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if opts.Now == nil {
		opts.Now = f.clock.Now
	}
	s, err := Open(filepath.Join(f.dir, ".readproof"), pol, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f.s = s
}

func (f *fixture) write(t testing.TB, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// manyDocs returns a policy declaring n filesystem documents of size bytes.
func manyDocs(n, size int) (string, map[string]string, []string) {
	var b strings.Builder
	files := map[string]string{}
	uris := make([]string, n)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("docs/d%05d.md", i)
		files[name] = string(bytes.Repeat([]byte(fmt.Sprintf("doc %05d.\n", i)), size/11+1)[:size])
		uris[i] = fmt.Sprintf("readproof://bench/docs/d%05d", i)
		fmt.Fprintf(&b, "[[resource]]\nuri = %q\nsource = { type = \"filesystem\", path = %q }\n\n", uris[i], name)
	}
	return b.String(), files, uris
}

// scripted is a source whose answers the test sets.
type scripted struct {
	mu    sync.Mutex
	calls int
	next  adapters.Result
	err   error
	last  adapters.Request
}

func (s *scripted) Fetch(_ context.Context, req adapters.Request) (adapters.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.last = req
	return s.next, s.err
}
