package manifest

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Change kinds.
const (
	Added     = "added"
	Removed   = "removed"
	Changed   = "changed"
	Unchanged = "unchanged"
)

// Change is one entry's fate between two manifests. Entries are paired by
// identity (URI and tag) and by occurrence: the second mount of URI@prod in
// A pairs with the second mount of it in B. The entries of a URI left then
// pair in order whatever their tags, as a change of tag.
type Change struct {
	Kind string `json:"kind"`
	URI  string `json:"uri"`
	A    *Entry `json:"a,omitempty"`
	B    *Entry `json:"b,omitempty"`
}

// Comparison is the result of Compare.
type Comparison struct {
	Changes   []Change `json:"changes"`
	Added     int      `json:"added"`
	Removed   int      `json:"removed"`
	Changed   int      `json:"changed"`
	Unchanged int      `json:"unchanged"`
}

// Compare pairs the entries of a and b. An entry is unchanged when its
// content hash and ref are the same on both sides. Changes come in B's order,
// then entries only in A.
func Compare(a, b *Manifest) *Comparison {
	v := pairEntries(a.Entries, b.Entries, func(e *Entry) (string, string, string) { return e.URI, e.ContentHash, e.Ref })
	c := &Comparison{Changes: make([]Change, len(v.Pairs)), Added: v.Added, Removed: v.Removed, Changed: v.Changed, Unchanged: v.Unchanged}
	for i, p := range v.Pairs {
		ch := Change{Kind: p.Kind, URI: p.URI}
		if p.A >= 0 {
			ch.A = &a.Entries[p.A]
		}
		if p.B >= 0 {
			ch.B = &b.Entries[p.B]
		}
		c.Changes[i] = ch
	}
	return c
}

// whereKeys are the provenance members that say where a document's bytes
// were read (its source type, URL, repository, path, ref), as the adapters
// record them; the others (a blob or commit id, an HTTP status) change with
// every revision and are in the source revision already.
var whereKeys = []string{"source_type", "url", "owner", "repo", "path", "ref"}

// Why explains a changed entry in one line: "source revision X → Y; observed
// T1 → T2", plus "; source path P1 → P2" (and url, owner, repo, ref,
// source_type) when the bytes were read from another place, and "; ref A →
// B" when either side was mounted by tag. A document whose source file was
// renamed, or moved to another URL or repository, is said to be: a reviewer
// of the diff would otherwise take the new bytes for a new revision of the
// same file (before session 29 nothing said so).
func (c Change) Why() string {
	if c.A == nil || c.B == nil {
		return ""
	}
	parts := []string{}
	if c.A.SourceRevision != c.B.SourceRevision {
		parts = append(parts, fmt.Sprintf("source revision %s → %s", c.A.SourceRevision, c.B.SourceRevision))
	} else {
		parts = append(parts, fmt.Sprintf("source revision %s (unchanged)", c.A.SourceRevision))
	}
	for _, k := range whereKeys {
		va, oka := c.A.Provenance[k]
		vb, okb := c.B.Provenance[k]
		if va != vb || oka != okb {
			parts = append(parts, fmt.Sprintf("source %s %s → %s", k, orNone(va, oka), orNone(vb, okb)))
		}
	}
	parts = append(parts, fmt.Sprintf("observed %s → %s", stamp(c.A.ObservedAt), stamp(c.B.ObservedAt)))
	if c.A.Ref != "" || c.B.Ref != "" {
		parts = append(parts, fmt.Sprintf("ref %s → %s", refName(c.A.Ref), refName(c.B.Ref)))
	}
	if c.A.ContentHash == c.B.ContentHash {
		parts = append(parts, "content unchanged")
	}
	return "why: " + strings.Join(parts, "; ")
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func orNone(v string, ok bool) string {
	if !ok {
		return "(none)"
	}
	return v
}

func refName(r string) string {
	if r == "" {
		return "(none)"
	}
	return "@" + r
}

// Unified renders a line-based unified diff of a and b with the given lines
// of context, computed with sergi/go-diff. Bytes that are not valid UTF-8 are
// reported as a binary difference instead.
func Unified(nameA, nameB string, a, b []byte, context int) string {
	if !utf8.Valid(a) || !utf8.Valid(b) {
		if string(a) == string(b) {
			return ""
		}
		return fmt.Sprintf("Binary content differs (%d → %d bytes)\n", len(a), len(b))
	}
	dmp := diffmatchpatch.New()
	ra, rb, lines := dmp.DiffLinesToRunes(string(a), string(b))
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), lines)

	type op struct {
		kind byte // ' ', '-', '+'
		text string
	}
	var ops []op
	for _, d := range diffs {
		kind := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			kind = '-'
		case diffmatchpatch.DiffInsert:
			kind = '+'
		}
		for _, l := range splitLines(d.Text) {
			ops = append(ops, op{kind, l})
		}
	}
	var out strings.Builder
	i := 0
	for i < len(ops) {
		// find the next change
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-context, 0)
		end := i
		for {
			for end < len(ops) && ops[end].kind != ' ' {
				end++
			}
			next := end
			for next < len(ops) && ops[next].kind == ' ' {
				next++
			}
			if next < len(ops) && next-end <= 2*context {
				end = next
				continue
			}
			end = min(end+context, len(ops))
			break
		}
		if out.Len() == 0 {
			fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
		}
		// line numbers of the hunk
		la, lb := 1, 1
		for _, o := range ops[:start] {
			if o.kind != '+' {
				la++
			}
			if o.kind != '-' {
				lb++
			}
		}
		na, nb := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(la, na), hunkRange(lb, nb))
		for _, o := range ops[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(o.text)
			if !strings.HasSuffix(o.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

func splitLines(s string) []string {
	var out []string
	for s != "" {
		j := strings.IndexByte(s, '\n')
		if j < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:j+1])
		s = s[j+1:]
	}
	return out
}

// Pair is one entry's fate between two manifests read as Views: A and B
// are its positions in each, -1 on the side it is absent from.
type Pair struct {
	Kind string
	URI  string
	A, B int
}

// ViewComparison is the result of CompareViews.
type ViewComparison struct {
	Pairs     []Pair
	Added     int
	Removed   int
	Changed   int
	Unchanged int
}

// CompareViews is Compare for two Views: the same changes, in the same
// order, by position (a reader of one page of a comparison reads whole
// only the entries of that page: manifest.DecodeSome).
func CompareViews(a, b *View) *ViewComparison {
	return pairEntries(a.Entries, b.Entries, func(e *ViewEntry) (string, string, string) { return e.URI, e.ContentHash, e.Ref })
}

// pairEntries pairs the entries of A and B as Compare says, by position,
// key giving an entry's URI, content hash and ref. First by identity: the
// n-th mount of a URI with a tag (or none) in B takes the n-th in A with
// the same tag. Then the entries left of a URI pair in order whatever
// their tags (a run that read URI@prod and one that read URI: the why
// names the tag). So an entry that both runs mounted alike is never
// paired with another mount of its URI (before session 30, `doc` and
// `doc@prod` in A against `doc@prod` in B paired B's with A's `doc`, a
// change, and left A's `doc@prod` removed). Each pass keeps one map of
// A's keys; next[i] is the entry of A after i with the same key, -1 for
// none, and head[key] the first of them not yet paired.
func pairEntries[E any](a, b []E, key func(*E) (uri, hash, ref string)) *ViewComparison {
	type identity struct{ uri, ref string }
	match := make([]int, len(b)) // the entry of A each of B takes, -1 for none
	used := make([]bool, len(a))
	next := make([]int, len(a))
	leftA, leftB := len(a), len(b) // entries not yet paired
	pass := func(keyOf func(uri, ref string) identity) {
		if leftA == 0 || leftB == 0 {
			return // nothing left to pair: no map to build
		}
		head := make(map[identity]int, leftA)
		for i := len(a) - 1; i >= 0; i-- {
			if used[i] {
				continue
			}
			uri, _, ref := key(&a[i])
			k := keyOf(uri, ref)
			next[i] = -1
			if j, ok := head[k]; ok {
				next[i] = j
			}
			head[k] = i
		}
		for i := range b {
			if match[i] >= 0 {
				continue
			}
			uri, _, ref := key(&b[i])
			k := keyOf(uri, ref)
			if j, ok := head[k]; ok && j >= 0 {
				head[k] = next[j]
				match[i], used[j] = j, true
				leftA--
				leftB--
			}
		}
	}
	for i := range match {
		match[i] = -1
	}
	pass(func(uri, ref string) identity { return identity{uri, ref} })
	pass(func(uri, _ string) identity { return identity{uri: uri} })
	c := &ViewComparison{Pairs: make([]Pair, 0, max(len(a), len(b)))}
	for i := range b {
		uri, hash, ref := key(&b[i])
		j := match[i]
		if j < 0 {
			c.Pairs = append(c.Pairs, Pair{Kind: Added, URI: uri, A: -1, B: i})
			c.Added++
			continue
		}
		if _, ah, ar := key(&a[j]); ah == hash && ar == ref {
			c.Pairs = append(c.Pairs, Pair{Kind: Unchanged, URI: uri, A: j, B: i})
			c.Unchanged++
		} else {
			c.Pairs = append(c.Pairs, Pair{Kind: Changed, URI: uri, A: j, B: i})
			c.Changed++
		}
	}
	for j := range a {
		if !used[j] {
			uri, _, _ := key(&a[j])
			c.Pairs = append(c.Pairs, Pair{Kind: Removed, URI: uri, A: j, B: -1})
			c.Removed++
		}
	}
	return c
}
