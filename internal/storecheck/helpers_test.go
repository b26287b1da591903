package storecheck_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
)

// clock is a test clock that moves one second per call, so every record
// gets a distinct time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// project is a directory with readproof.toml, documents and a store.
type project struct {
	dir   string
	clock *clock
	s     *store.Store
}

// newProject declares every document in docs (name -> body) as
// readproof://demo/<name without .md> on the filesystem, require_fresh.
// extra is appended to readproof.toml.
func newProject(t testing.TB, docs map[string]string, extra string) *project {
	t.Helper()
	dir := t.TempDir()
	var toml strings.Builder
	toml.WriteString(extra + "\n")
	for name, body := range docs {
		writeFile(t, filepath.Join(dir, name), body)
		fmt.Fprintf(&toml, "[[resource]]\nuri = %q\nsource = { type = \"filesystem\", path = %q }\n\n", uriOf(name), name)
	}
	writeFile(t, filepath.Join(dir, "readproof.toml"), toml.String())
	if err := store.Init(filepath.Join(dir, ".readproof")); err != nil {
		t.Fatal(err)
	}
	p := &project{dir: dir, clock: &clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}}
	p.reopen(t, store.Options{})
	return p
}

func uriOf(name string) string {
	return "readproof://demo/" + strings.TrimSuffix(name, ".md")
}

func writeFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (p *project) reopen(t testing.TB, opts store.Options) {
	t.Helper()
	if p.s != nil {
		p.s.Close()
	}
	pol, err := policy.Load(filepath.Join(p.dir, "readproof.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if opts.Now == nil {
		opts.Now = p.clock.Now
	}
	s, err := store.Open(filepath.Join(p.dir, ".readproof"), pol, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	p.s = s
}

func (p *project) storePath() string { return filepath.Join(p.dir, ".readproof") }

func (p *project) run(t testing.TB, id string, uris ...string) string {
	t.Helper()
	m, _, err := p.s.RunOnce(context.Background(), id, uris)
	if err != nil {
		t.Fatal(err)
	}
	return m.ID
}

func (p *project) check(t testing.TB, opts storecheck.Options) *storecheck.Report {
	t.Helper()
	rep, err := storecheck.Check(context.Background(), p.s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// looseObject is the path of a loose object in the store, whose packs are
// first written out loose (a write of a few objects makes a small pack),
// and the store opened again (the handle had the packs mapped).
func (p *project) looseObject(t testing.TB, id string) string {
	t.Helper()
	if err := gitstore.UnpackForTest(p.storePath()); err != nil {
		t.Fatal(err)
	}
	p.reopen(t, store.Options{})
	return filepath.Join(p.storePath(), "objects", id[:2], id[2:])
}

// rewriteObject replaces the content of a loose object (keeping its name and
// header) with edit(content), as a disk error or an attacker would.
func (p *project) rewriteObject(t testing.TB, id string, edit func([]byte) []byte) {
	t.Helper()
	path := p.looseObject(t, id)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	nul := bytes.IndexByte(data, 0)
	body := edit(append([]byte(nil), data[nul+1:]...))
	obj := append([]byte(string(data[:bytes.IndexByte(data, ' ')])+fmt.Sprintf(" %d\x00", len(body))), body...)
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(obj)
	zw.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
}

// snapshotOf returns the snapshot a run recorded at position 0.
func (p *project) snapshotOf(t testing.TB, run string) string {
	t.Helper()
	m, err := p.s.Manifest(run)
	if err != nil {
		t.Fatal(err)
	}
	return m.Entries[0].Snapshot
}

func mustURI(t testing.TB, s string) identity.URI {
	t.Helper()
	u, err := identity.ParseURI(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// problems renders a report's problems for failure messages.
func problems(rep *storecheck.Report) string {
	var b strings.Builder
	for _, p := range rep.Problems {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}

// find returns the problems of kind k whose rendering contains every
// fragment.
func find(rep *storecheck.Report, k storecheck.Kind, fragments ...string) []storecheck.Problem {
	var out []storecheck.Problem
next:
	for _, p := range rep.Problems {
		if p.Kind != k {
			continue
		}
		s := p.String()
		for _, f := range fragments {
			if !strings.Contains(s, f) {
				continue next
			}
		}
		out = append(out, p)
	}
	return out
}

// putFile writes nested trees for path -> blob maps (a small copy of what
// the store does, so tests can forge records).
func putFiles(t testing.TB, g gitstore.Store, files map[string]gitstore.OID) gitstore.OID {
	t.Helper()
	sub := map[string]map[string]gitstore.OID{}
	var entries []gitstore.TreeEntry
	for p, id := range files {
		if d, rest, ok := strings.Cut(p, "/"); ok {
			if sub[d] == nil {
				sub[d] = map[string]gitstore.OID{}
			}
			sub[d][rest] = id
			continue
		}
		entries = append(entries, gitstore.TreeEntry{Name: p, Mode: gitstore.ModeFile, OID: id})
	}
	for d, m := range sub {
		entries = append(entries, gitstore.TreeEntry{Name: d, Mode: gitstore.ModeDir, OID: putFiles(t, g, m)})
	}
	id, err := g.PutTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func sig() gitstore.Signature {
	return gitstore.Signature{Name: "readproof", Email: "readproof@localhost", When: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
}
