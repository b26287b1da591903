package commands

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/manifest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.md from the renderers")

// hostile is text a document, a source or a path could carry: markup,
// HTML, a mention, a link, a table pipe, a fence and a line break.
const hostile = "<script>alert(1)</script> **bold** @team [x](https://evil.example) a|b ``` `code`\n# heading"

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/commands -run TestMarkdown -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the renderer's output (go test ./internal/commands -run TestMarkdown -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func hex40(c byte) string { return strings.Repeat(string(c), 40) }
func hash(c byte) string  { return "sha256:" + strings.Repeat(string(c), 64) }

func entry(pos int, uri, ref string, c byte, rev string, at time.Time) manifest.Entry {
	return manifest.Entry{Position: pos, URI: uri, Ref: ref, Snapshot: hex40(c), ContentHash: hash(c), SourceRevision: rev,
		ObservedAt: at, Decision: manifest.DecisionFetch, Bytes: 41, ContentType: "text/markdown", File: "content/" + strings.TrimPrefix(uri, "readproof://")}
}

func TestMarkdownDiff(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	a := &manifest.Manifest{ID: hex40('a'), RunID: "run-a", CreatedAt: t0, Entries: []manifest.Entry{
		entry(0, "readproof://demo/policies/refunds", "", '1', "sha256:111111111111", t0),
		entry(1, "readproof://demo/handbook", "prod", '2', hostile, t0),
		entry(2, "readproof://demo/gone", "", '3', "r3", t0),
	}}
	b := &manifest.Manifest{ID: hex40('b'), RunID: "run-b", CreatedAt: t0.Add(time.Hour), Entries: []manifest.Entry{
		entry(0, "readproof://demo/policies/refunds", "", '4', "sha256:444444444444", t0.Add(time.Hour)),
		entry(1, "readproof://demo/handbook", "prod", '5', "r5", t0.Add(time.Hour)),
		entry(2, "readproof://demo/new", "", '6', "r6", t0.Add(time.Hour)),
	}}
	cmp := manifest.Compare(a, b)
	d := diffJSON{A: a.ID, B: b.ID, Changes: []changeJSON{},
		Counts: map[string]int{"changed": cmp.Changed, "added": cmp.Added, "removed": cmp.Removed, "unchanged": cmp.Unchanged}}
	var long1, long2 strings.Builder
	for i := range 30 {
		fmt.Fprintf(&long1, "line %d\n", i)
		fmt.Fprintf(&long2, "line %d changed\n", i)
	}
	long2.WriteString("```\n</details>\n<img src=x onerror=alert(1)>\n")
	for _, ch := range cmp.Changes {
		j := changeJSON{Change: ch}
		if ch.Kind == manifest.Changed {
			j.Why = ch.Why()
			switch ch.URI {
			case "readproof://demo/policies/refunds":
				j.Unified = manifest.Unified("a/"+ch.A.File, "b/"+ch.B.File, []byte("Products can be refunded within 30 days.\n"), []byte("Products can be refunded within 14 days.\n"), 3)
			default:
				j.Unified = manifest.Unified("a/"+ch.A.File, "b/"+ch.B.File, []byte(long1.String()), []byte(long2.String()), 3)
			}
		}
		d.Changes = append(d.Changes, j)
	}
	var out bytes.Buffer
	markdownDiff(&out, a, b, d, defaultMaxChars, "readproof diff run-a run-b")
	golden(t, "diff.md", out.Bytes())
	checkInert(t, out.String())

	// cut to fit: every row, the short diff, not the long one
	out.Reset()
	markdownDiff(&out, a, b, d, 2500, "readproof diff run-a run-b")
	golden(t, "diff-cut.md", out.Bytes())
	validMarkdown(t, "diff --max-chars 2500", out.String())

	out.Reset()
	// as runDiff builds it: every entry of the two runs, the unchanged ones too
	same := diffJSON{A: a.ID, B: a.ID, Counts: map[string]int{"unchanged": 3}}
	for _, ch := range manifest.Compare(a, a).Changes {
		same.Changes = append(same.Changes, changeJSON{Change: ch})
	}
	markdownDiff(&out, a, a, same, defaultMaxChars, "readproof diff run-a run-a")
	golden(t, "diff-same.md", out.Bytes())
}

func TestMarkdownManifest(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	m := &manifest.Manifest{ID: hex40('c'), RunID: "run-c", CreatedAt: t0, Entries: []manifest.Entry{
		entry(0, "readproof://demo/policies/refunds", "", '1', "sha256:111111111111", t0),
		entry(1, "readproof://demo/handbook", "prod", '2', hostile, t0),
	}}
	var out bytes.Buffer
	markdownManifest(&out, m, []string{"proof of read: " + hostile}, defaultMaxChars, "readproof manifest run-c")
	golden(t, "manifest.md", out.Bytes())
	checkInert(t, out.String())
}

func TestMarkdownStatus(t *testing.T) {
	obs := func(c byte) *store.Observation {
		return &store.Observation{URI: "x", Snapshot: hex40(c), ContentHash: hash(c)}
	}
	list := []store.ResourceStatus{
		{URI: "readproof://demo/policies/refunds", State: store.StatusUpToDate, Current: obs('1'), Source: &store.Peeked{Snapshot: hex40('1'), ContentHash: hash('1')},
			Tags: []store.PointStatus{{Name: "prod", Snapshot: hex40('1')}}},
		{URI: "readproof://demo/handbook", State: store.StatusChanged, Current: obs('2'), Source: &store.Peeked{Snapshot: hex40('3'), ContentHash: hash('3')},
			Tags: []store.PointStatus{{Name: "prod", Snapshot: hex40('2'), Behind: true}}, Drift: true},
		{URI: "readproof://demo/api", State: store.StatusSourceError, Error: hostile, Tags: []store.PointStatus{{Name: "staging", Snapshot: hex40('4')}}},
		{URI: "readproof://demo/new", State: store.StatusNoSnapshot, Source: &store.Peeked{Snapshot: hex40('5'), ContentHash: hash('5')}, Drift: true},
	}
	var out bytes.Buffer
	markdownStatus(&out, list, "readproof.toml", defaultMaxChars)
	golden(t, "status.md", out.Bytes())
	checkInert(t, out.String())
}

func TestMarkdownVerify(t *testing.T) {
	counts := storecheck.Counts{Runs: 3, Resources: 2, Observations: 5, Tags: 1, Commits: 20, Trees: 30, Blobs: 10, Snapshots: 4, Rehashed: 4}
	var out bytes.Buffer
	markdownVerify(&out, &storecheck.Report{Mode: "structure", Counts: counts}, defaultMaxChars, "readproof verify")
	golden(t, "verify-ok.md", out.Bytes())

	out.Reset()
	markdownVerify(&out, &storecheck.Report{Mode: "read-data", Counts: counts, Problems: []storecheck.Problem{
		{Kind: storecheck.Broken, Check: "manifest", Subject: "run run-a", Object: hex40('d'), Path: "content/demo/x", Message: "snapshot hashes to " + hash('e')},
		{Kind: storecheck.Warning, Check: "journal", Subject: "journal", Message: hostile},
	}}, defaultMaxChars, "readproof verify --read-data")
	golden(t, "verify-broken.md", out.Bytes())
	checkInert(t, out.String())
}

// checkInert checks that hostile text left no markup of its own: no raw
// HTML tag, no unescaped mention or link, no heading line from a document.
func checkInert(t *testing.T, md string) {
	t.Helper()
	inFence := ""
	for _, l := range strings.Split(md, "\n") {
		if inFence != "" {
			if l == inFence {
				inFence = ""
			}
			continue
		}
		if strings.HasPrefix(l, "```") {
			inFence = strings.TrimRight(l, "abcdefghijklmnopqrstuvwxyz")
			continue
		}
		for _, bad := range []string{"<script", "<img", " @team", "](https", "https://"} {
			if strings.Contains(l, bad) {
				t.Errorf("hostile text became markup: %q in line %q", bad, l)
			}
		}
		if strings.HasPrefix(l, "# ") {
			t.Errorf("hostile text became a heading: %q", l)
		}
	}
	if inFence != "" {
		t.Errorf("a fence was left open (a document closed ours?):\n%s", md)
	}
}

// TestMarkdownWithinLimit renders large inputs under limits from the
// smallest to past the whole size: the page is never longer than the
// limit, stays valid markdown (whole rows, closed fences and <details>),
// keeps its verdict, and says what it left out.
func TestMarkdownWithinLimit(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	var a, b manifest.Manifest
	a.ID, a.RunID, b.ID, b.RunID = hex40('a'), "run-a", hex40('b'), "run-b"
	d := diffJSON{A: a.ID, B: b.ID, Counts: map[string]int{}}
	var long strings.Builder
	for i := range 200 {
		fmt.Fprintf(&long, "+line %d ``` </details>\n", i)
	}
	for i := range 60 {
		uri := fmt.Sprintf("readproof://demo/d%02d", i)
		ea, eb := entry(i, uri, "", '1', "r1", t0), entry(i, uri, "", '2', hostile, t0)
		a.Entries, b.Entries = append(a.Entries, ea), append(b.Entries, eb)
		uni := "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n"
		if i == 3 {
			uni = "--- a\n+++ b\n@@ -1 +1,200 @@\n" + long.String() // a long diff, then short ones
		}
		d.Changes = append(d.Changes, changeJSON{Change: manifest.Change{Kind: manifest.Changed, URI: uri, A: &ea, B: &eb}, Why: "why " + hostile, Unified: uni})
		d.Counts["changed"]++
	}
	obs := func(c byte) *store.Observation {
		return &store.Observation{URI: "x", Snapshot: hex40(c), ContentHash: hash(c)}
	}
	var list []store.ResourceStatus
	for i := range 80 {
		r := store.ResourceStatus{URI: fmt.Sprintf("readproof://demo/s%02d", i), State: store.StatusUpToDate, Current: obs('1'),
			Source: &store.Peeked{Snapshot: hex40('1'), ContentHash: hash('1')}, Tags: []store.PointStatus{{Name: "prod", Snapshot: hex40('1')}}}
		if i%20 == 19 { // the late ones drifted: they come first all the same
			r.State, r.Drift, r.Error, r.Source = store.StatusSourceError, true, hostile, nil
		}
		list = append(list, r)
	}
	var problems []storecheck.Problem
	for i := range 120 {
		p := storecheck.Problem{Kind: storecheck.Warning, Check: "journal", Subject: fmt.Sprintf("w%03d", i), Message: hostile}
		if i >= 110 {
			p = storecheck.Problem{Kind: storecheck.Broken, Check: "manifest", Subject: fmt.Sprintf("b%03d", i), Object: hex40('d'), Message: "snapshot hashes to " + hash('e')}
		}
		problems = append(problems, p)
	}
	rep := &storecheck.Report{Mode: "structure", Problems: problems}
	por := []string{""}
	for i := range 60 {
		por = append(por, fmt.Sprintf("proof of read: [%d] readproof://demo/d%02d probed, not checked", i, i))
	}
	for _, c := range []struct {
		name, verdict string
		render        func(io.Writer, int)
		first         []string // what stays at every limit
	}{
		{"diff", "**60 changed, 0 added, 0 removed, 0 unchanged**", func(w io.Writer, n int) { markdownDiff(w, &a, &b, d, n, "readproof diff run-a run-b") }, []string{"| changed | `readproof://demo/d00` |"}},
		{"manifest", "60 entries", func(w io.Writer, n int) { markdownManifest(w, &b, por, n, "readproof manifest run-b") }, nil},
		{"status", "80 resources: 4 drifted, 4 source errors", func(w io.Writer, n int) { markdownStatus(w, list, "readproof.toml", n) },
			[]string{"`readproof://demo/s19`", "`readproof://demo/s79`"}},
		{"verify", "❌ **broken**", func(w io.Writer, n int) { markdownVerify(w, rep, n, "readproof verify") }, []string{"| b110 |", "| b119 |"}},
	} {
		var whole bytes.Buffer
		c.render(&whole, 0)
		if whole.Len() < 2*minMaxChars {
			t.Fatalf("%s: the whole page is %d bytes: too small to cut", c.name, whole.Len())
		}
		for n := minMaxChars + 200; n < whole.Len()+100; n += 97 {
			var out bytes.Buffer
			c.render(&out, n)
			md := out.String()
			if out.Len() > n {
				t.Fatalf("%s --max-chars %d: %d bytes", c.name, n, out.Len())
			}
			if !strings.Contains(md, c.verdict) {
				t.Fatalf("%s --max-chars %d: no verdict %q:\n%s", c.name, n, c.verdict, md)
			}
			if n > 3000 {
				for _, f := range c.first {
					if !strings.Contains(md, f) {
						t.Fatalf("%s --max-chars %d: %q left out before less important parts:\n%s", c.name, n, f, md)
					}
				}
			}
			cut := n < whole.Len()
			if got := strings.Contains(md, "**Shortened to fit"); got != cut {
				t.Fatalf("%s --max-chars %d (whole %d): closing line %v, want %v:\n%s", c.name, n, whole.Len(), got, cut, md)
			}
			if !cut && md != whole.String() {
				t.Fatalf("%s --max-chars %d: the whole page fits but differs from it", c.name, n)
			}
			validMarkdown(t, fmt.Sprintf("%s --max-chars %d", c.name, n), md)
		}
	}
}

// validMarkdown checks that md has no row, fence or <details> cut short.
func validMarkdown(t *testing.T, what, md string) {
	t.Helper()
	checkInert(t, md)
	inFence := ""
	details := 0
	for _, l := range strings.Split(md, "\n") {
		if inFence != "" {
			if l == inFence {
				inFence = ""
			}
			continue
		}
		switch {
		case strings.HasPrefix(l, "```"):
			inFence = strings.TrimRight(l, "abcdefghijklmnopqrstuvwxyz")
		case strings.HasPrefix(l, "<details>"):
			details++
		case l == "</details>":
			details--
		case strings.HasPrefix(l, "|") && !strings.HasSuffix(l, " |"):
			t.Fatalf("%s: a table row cut short: %q", what, l)
		}
	}
	if details != 0 || inFence != "" {
		t.Fatalf("%s: %d <details> or a fence (%q) left open:\n%s", what, details, inFence, md)
	}
	if !strings.HasSuffix(md, "\n") {
		t.Fatalf("%s: no final newline", what)
	}
}

// TestMarkdownExactFit: a page exactly --max-chars long is printed whole,
// not cut with a closing line: a manifest without proof-of-read lines, and
// a verify report whose problems are too few for a <details> around them
// or many enough for one.
func TestMarkdownExactFit(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	m := &manifest.Manifest{ID: hex40('c'), RunID: "run-c", CreatedAt: t0, Entries: []manifest.Entry{
		entry(0, "readproof://demo/policies/refunds", "", '1', "sha256:111111111111", t0),
		entry(1, "readproof://demo/handbook", "prod", '2', hostile, t0),
	}}
	report := func(n int) *storecheck.Report {
		rep := &storecheck.Report{Mode: "structure"}
		for i := range n {
			rep.Problems = append(rep.Problems, storecheck.Problem{Kind: storecheck.Warning, Check: "journal", Subject: fmt.Sprintf("w%03d", i), Message: hostile})
		}
		return rep
	}
	for _, c := range []struct {
		name   string
		render func(io.Writer, int)
	}{
		{"manifest", func(w io.Writer, n int) { markdownManifest(w, m, nil, n, "readproof manifest run-c") }},
		{"verify, 2 problems", func(w io.Writer, n int) { markdownVerify(w, report(2), n, "readproof verify") }},
		{"verify, 30 problems", func(w io.Writer, n int) { markdownVerify(w, report(30), n, "readproof verify") }},
	} {
		var whole, out bytes.Buffer
		c.render(&whole, 0)
		c.render(&out, whole.Len())
		if out.String() != whole.String() {
			t.Errorf("%s --max-chars %d, the whole page's size: cut to %d bytes:\n%s", c.name, whole.Len(), out.Len(), out.String())
		}
	}
}
