package policy

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/readproof/readproof/adapters/sourcespec"
)

// allocated is the number of bytes Parse allocates reading text.
func allocated(t *testing.T, text string) uint64 {
	t.Helper()
	return allocatedBy(func() { Parse("/srv/policy/readproof.toml", []byte(text)) })
}

// allocatedBy is the number of bytes fn allocates.
func allocatedBy(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A policy file costs memory in proportion to what it declares, not to
// the "[[" in its text: the fast path sizes its resources by a look
// ahead, which a comment or a string full of brackets must not inflate.
func TestParseMemoryOfBrackets(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	one := "[[resource]]\nuri = \"readproof://a/b\"\nsource = { type = \"filesystem\", path = \"p\" }\n"
	for name, text := range map[string]string{
		"comment":     one + "# " + strings.Repeat("[[", 50_000) + "\n",
		"description": strings.Replace(one, "\nsource", "\ndescription = \""+strings.Repeat("[[", 50_000)+"\"\nsource", 1),
	} {
		if _, ok := parseFast("/srv/policy/readproof.toml", "readproof.toml", text); !ok {
			t.Fatalf("%s: not read by the fast path", name)
		}
		if n, limit := allocated(t, text), uint64(16*len(text)); n > limit {
			t.Errorf("%s: a %d-byte policy file of one resource allocated %d bytes (%.0fx its size), want at most %d",
				name, len(text), n, float64(n)/float64(len(text)), limit)
		}
	}
}

// The bound on the blocks the fast path makes room for (minBlockBytes)
// is below the shortest block the checker accepts: a file of such blocks
// is read by the fast path.
func TestFastPathReadsShortestBlocks(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	var sb strings.Builder
	for i := range 200 {
		sb.WriteString("[[resource]]\nuri=\"readproof://a/" + string(rune('a'+i%26)) + strings.Repeat("z", i/26) + "\"\nsource={type=\"filesystem\",path=\"p\"}\n")
	}
	text := strings.TrimSuffix(sb.String(), "\n")
	f, ok := parseFast("/srv/policy/readproof.toml", "readproof.toml", text)
	if !ok || len(f.Resources()) != 200 {
		t.Fatalf("200 short blocks (%d bytes): fast path ok %v", len(text), ok)
	}
	checkFastMatchesSlow(t, text)
}

// Arrays of tables other than [[resource]] start small: each was given
// room for every "[[" of the file, so a file of many of them allocated
// the square of its size before the fast path gave up on it. (The slow
// path, BurntSushi and the position scanner, then reads it on its own
// account: this is the fast reader's.)
func TestParseMemoryOfArraysOfTables(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	var sb strings.Builder
	for i := range 30 {
		for j := range 30 {
			fmt.Fprintf(&sb, "[[k%d]]\n[[k%d.k%d]]\n", i, i, j)
		}
	}
	text := sb.String()
	if n, limit := allocatedBy(func() { fastRead(text) }), uint64(64*len(text)); n > limit {
		t.Errorf("the fast reader of a %d-byte policy file of %d arrays of tables allocated %d bytes (%.0fx its size), want at most %d",
			len(text), 30+30*30, n, float64(n)/float64(len(text)), limit)
	}
}

// A source's header names are compared, whatever their case, in time
// that grows with their number, not its square (headers and
// public_headers; a policy file of 100,000 headers took seconds). The
// guard counts work, not time: a name is compared one by one with at
// most maxFoldedSearch others, then looked up by its lower case, so the
// names seen are never searched in a slice longer than maxFoldedSearch,
// however many there are. BenchmarkHeaderNames times it.
func TestHeaderNamesInLinearTime(t *testing.T) {
	const n = 4_000
	h, pub := make(map[string]string, n), make(map[string]string, n)
	for i := range n {
		h[fmt.Sprintf("H%d", i)] = "${T}"
		pub[fmt.Sprintf("P%d", i)] = "v"
	}
	c := &checker{file: "readproof.toml", fast: &fastIndex{}}
	f := &File{EnvAllow: []string{"T"}}
	sp := &keyPath{name: "source"}
	spec := &sourcespec.Spec{Type: "http", URL: "https://h/x", Headers: h, PublicHeaders: pub}
	c.source(f, sp, spec, keySet{c: c, parent: sp, bits: sourceKeyBit("type") | sourceKeyBit("url") | sourceKeyBit("headers") | sourceKeyBit("public_headers")})
	if len(c.errs) > 0 {
		t.Fatalf("errors: %v", c.errs[0])
	}
	// the names seen, as the check of public_headers searches them: each
	// found by one lookup, after at most maxFoldedSearch comparisons
	folded := c.headers(f, sp, h, foldedNames{})
	if len(c.errs) > 0 {
		t.Fatalf("errors: %v", c.errs[0])
	}
	if folded.byLower == nil || len(folded.byLower) != n || len(folded.names) > maxFoldedSearch {
		t.Errorf("%d header names seen: %d searched one by one (at most %d wanted), %d by their lower case (want all %d)",
			n, len(folded.names), maxFoldedSearch, len(folded.byLower), n)
	}
	if got := folded.find("h1234"); got != "H1234" {
		t.Errorf("find(h1234) among %d names = %q, want H1234", n, got)
	}
	// and a repeat in another case is still found, among many
	h["h7"], pub["p9"] = "${T}", "w"
	c.source(f, sp, spec, keySet{c: c, parent: sp, bits: sourceKeyBit("type") | sourceKeyBit("url") | sourceKeyBit("headers") | sourceKeyBit("public_headers")})
	if len(c.errs) != 2 {
		t.Fatalf("%d errors, want the two repeats: %v", len(c.errs), c.errs)
	}
}

// A policy file that nests tables, arrays or dotted keys deeper than any
// policy can is refused before BurntSushi reads it: its reading grows
// with the square of the depth (a line of 2,000 nested inline tables,
// 11 KB, was 629 MB; 240 KB was out of memory). Policy files of every
// shape this package reads (testdata/valid.toml, the example) nest far
// less, and are read as before.
func TestParseRefusesDeepNesting(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	const n = 2_000
	for name, text := range map[string]string{
		"inline tables": "version = 1\na = " + strings.Repeat("{b = ", n) + "1" + strings.Repeat("}", n) + "\n",
		"arrays":        "version = 1\na = " + strings.Repeat("[", n) + "1" + strings.Repeat("]", n) + "\n",
		"dotted key":    "version = 1\n" + strings.Repeat("a.", n) + "b = 1\n",
		"header":        "version = 1\n[" + strings.Repeat("a.", n) + "b]\n",
		"mixed":         "version = 1\n[[" + strings.Repeat("a.", n/4) + "b]]\nc = [" + strings.Repeat("{ d.e = [", n/4) + "\n",
	} {
		var err error
		if n := allocatedBy(func() { _, err = Parse("/srv/policy/readproof.toml", []byte(text)) }); n > 64<<20 {
			t.Errorf("%s: %d bytes of policy allocated %d MB", name, len(text), n>>20)
		}
		var pe *Error
		if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(pe.Msg, "nested more than") || pe.Hint == "" {
			t.Errorf("%s: %v, want an error at line 2 saying it is nested too deep", name, err)
		}
	}
	// strings and comments do not nest
	deepText := strings.Repeat("{[", 40)
	for _, text := range []string{
		"version = 1\n# " + deepText + "\n",
		"version = 1\n[defaults]\npolicy = \"pinned\" # " + deepText + "\n",
		"version = 1\n[[resource]]\nuri = \"readproof://a/b\"\ndescription = \"" + deepText + "\\\"" + deepText + "\"\nsource = { type = \"filesystem\", path = '" + deepText + "' }\n",
		"version = 1\n[[resource]]\nuri = \"readproof://a/b\"\ndescription = \"\"\"\n" + deepText + "\\\"\"\"\n" + deepText + "\n\"\"\"\nsource = { type = \"filesystem\", path = '''\n" + deepText + "''' }\n",
	} {
		if line, deep := tooDeep(text); deep {
			t.Errorf("tooDeep at line %d of %q", line, text)
		}
		if _, err := Parse("/srv/policy/readproof.toml", []byte(text)); err != nil && strings.Contains(err.Error(), "nested more than") {
			t.Errorf("%q: %v", text, err)
		}
	}
	for _, name := range []string{"testdata/valid.toml", "../../readproof.toml.example"} {
		if line, deep := tooDeep(string(mustRead(t, name))); deep {
			t.Errorf("%s: tooDeep at line %d", name, line)
		}
	}
}

// The fast reader gives up on arrays and inline tables nested deeper
// than maxNesting, rather than follow them a call deeper each: a line of
// millions (a few MB) made its stack grow past Go's limit, a crash.
func TestFastReaderGivesUpOnDeepNesting(t *testing.T) {
	for name, text := range map[string]string{
		"arrays":        "a = " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "\n",
		"inline tables": "a = " + strings.Repeat("{b = ", 100_000) + "1" + strings.Repeat("}", 100_000) + "\n",
	} {
		if _, ok := fastRead(text); ok {
			t.Errorf("%s: the fast reader read %d levels", name, 100_000)
		}
	}
	ok := "a = " + strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting) + "\n"
	if _, read := fastRead(ok); !read {
		t.Errorf("the fast reader gave up on %d levels", maxNesting)
	}
}
