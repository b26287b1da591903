package policy

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// treeOf is the fast reader's tree as BurntSushi decodes into
// map[string]any: tables as maps, every array as []any.
func treeOf(v *fval) any {
	switch v.kind {
	case fString:
		return v.s
	case fInt:
		return v.n
	case fArray, fTables:
		arr := v.elems()
		out := make([]any, len(arr))
		for i := range arr {
			out[i] = treeOf(&arr[i])
		}
		return out
	case fTable:
		m := make(map[string]any, len(v.t.ents))
		for i := range v.t.ents {
			m[v.t.ents[i].key] = treeOf(&v.t.ents[i].val)
		}
		return m
	}
	return fmt.Sprintf("<kind %d>", v.kind)
}

// normalized turns BurntSushi's []map[string]any into []any, recursively.
func normalizedTree(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = normalizedTree(e)
		}
		return m
	case []map[string]any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalizedTree(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalizedTree(e)
		}
		return out
	}
	return v
}

// checkFastMatchesTOML: whatever fastRead accepts, BurntSushi accepts too,
// with the same values.
func checkFastMatchesTOML(t *testing.T, text string) {
	t.Helper()
	tree, ok := fastRead(text)
	if !ok {
		return
	}
	var want map[string]any
	if _, err := toml.Decode(text, &want); err != nil {
		t.Fatalf("fastRead accepted what BurntSushi refuses (%v):\n%q", err, text)
	}
	got := treeOf(&fval{kind: fTable, t: tree})
	if w := normalizedTree(want); !reflect.DeepEqual(got, w) {
		t.Fatalf("fastRead reads differently:\n got %#v\nwant %#v\n%q", got, w, text)
	}
}

// checkFastMatchesSlow: what the fast path accepts, the slow path accepts
// with the same File (lines included).
func checkFastMatchesSlow(t *testing.T, text string) {
	t.Helper()
	const path = "/srv/policy/readproof.toml"
	f, ok := parseFast(path, path, text)
	if !ok {
		return
	}
	g, err := parseSlow(path, path, text)
	if err != nil {
		t.Fatalf("fast path accepted, slow path refused: %v\n%q", err, text)
	}
	if !reflect.DeepEqual(f, g) {
		t.Fatalf("fast and slow paths differ:\nfast %+v\nslow %+v\n%q", f, g, text)
	}
}

// fastSeeds are inputs on both sides of every rule fastRead applies.
var fastSeeds = []string{
	"",
	"\ufeffversion = 1\n",
	"version = 1\r\n[defaults]\r\npolicy = \"pinned\"\r\n",
	"version = 1\rx = 2\n",
	"a.b.c = 1\na.b.d = 2\n",
	"a.b = 1\n[a]\nc = 2\n",
	"[a.b]\nx = 1\n[a]\ny = 2\n",
	"[a]\ny = 2\n[a]\nz = 3\n",
	"[a]\nb.c = 1\n[a.b]\nd = 2\n",
	"[[a]]\nx = 1\n[[a]]\nx = 2\n[a.b]\ny = 3\n",
	"[[a]]\n[a]\n",
	"[a]\n[[a]]\n",
	"a = [1, 2,\n 3, # c\n]\n[[a]]\n",
	"a = { b = 1 }\n[a]\n",
	"a = { b = 1 }\n[a.c]\n",
	"a = { b.c = 1, b.d = 2 }\n",
	"a = { b = 1, }\n",
	"a = {\n b = 1 }\n",
	"a = {}\nb = { }\n",
	"s = \"\\u00e9\\U0001F600\\t\\\"\\\\\\b\\f\\n\\r\"\n",
	"s = \"\\ud800\"\n",
	"s = \"\\e\\x41\"\n",
	"s = 'C:\\path'\n",
	"s = \"a\tb\"\nt = \"a\x01b\"\n",
	"s = \"\"\"\nx\"\"\"\n",
	"s = '''x'''\n",
	"n = +5\nm = -0\no = 0\n",
	"n = 05\n", "n = 1_000\n", "n = 0x1F\n", "n = 1.5\n", "n = 1e3\n", "n = 9223372036854775808\n",
	"d = 1979-05-27\n", "b = true\n", "f = inf\n",
	"\"quoted key\" = 1\n'lit' = 2\n\"\" = 3\n",
	"a . b = 1\n[ c . d ]\n[[ e . f ]]\n",
	"a = 1 b = 2\n", "a = 1 # comment\n", "# c\x7f\na = 1\n",
	"[a]]\n", "[[a]\n", "[a\n", "a =\n", "= 1\n", "a\n",
	"x = [ [1, 2], [\"a\"] ]\n",
	"version = 1\nresource = []\n",
	// [[resource]] blocks decoded as the next begins, with tables made
	// between them (whose memory is not reused) and after them
	"[[resource]]\nuri = \"readproof://a/a\"\nsource = { type = \"filesystem\", path = \"p\" }\n[defaults]\npolicy = \"allow_stale\"\n[[resource]]\nuri = \"readproof://a/b\"\nsource = { type = \"filesystem\", path = \"q\" }\n[sources]\nenv = [\"T\"]\n[[resource]]\nuri = \"readproof://a/c\"\npolicy = \"require_fresh\"\nsource = { type = \"http\", url = \"https://h/c\", headers = { A = \"${T}\" } }\n[[resource]]\nuri = \"readproof://a/d\"\nsource.type = \"git\"\nsource.url = \"https://h/r.git\"\nsource.path = \"d\"\n[defaults.x]\n",
	"version = 1\n[[resource]]\nuri = \"readproof://a/a\"\n[resource.source]\ntype = \"filesystem\"\npath = \"p\"\n[[resource]]\nuri = \"readproof://a/b\"\n[resource.source]\ntype = \"github\"\nowner = \"o\"\nrepo = \"r\"\npath = \"b\"\n[[resource]]\nuri = \"readproof://a/c\"\nsource = { type = \"filesystem\", path = \"p\" }\n[network]\ntimeout = \"5s\"\n[[resource]]\nuri = \"readproof://a/a\"\nsource = { type = \"filesystem\", path = \"p\" }\n",
	"[[resource]]\nuri = \"readproof://a/a\"\nsource = { type = \"filesystem\", path = \"p\" }\n[[resource]]\nuri = \"readproof://a/b\"\nsource = { type = \"filesystem\", path = \"p\", bogus = 1 }\n[[resource]]\nuri = \"readproof://a/c\"\nsource = { type = \"filesystem\", path = \"p\" }\n",
	"[[resource]]\nuri = \"readproof://a/a\"\nsource = { type = \"filesystem\", path = \"p\" }\n[[resource.x]]\n[[resource]]\nuri = \"readproof://a/b\"\nsource = { type = \"filesystem\", path = \"p\" }\n",
	"[resource.source]\ntype = \"filesystem\"\n",
	"resource = [{ uri = \"readproof://a/b\", source = { type = \"filesystem\", path = \"p\" } }]\n",
	"[[resource]]\nuri = \"readproof://a/b\"\nsource.type = \"filesystem\"\nsource.path = \"p\"\n",
	"[[resource]]\nuri = \"readproof://a/b\"\n[resource.source]\ntype = \"filesystem\"\npath = \"p\"\n[[resource]]\nuri = \"readproof://a/c\"\nsource = { type = \"filesystem\", path = \"q\" }\n",
	"[[resource]]\nURI = \"readproof://a/b\"\nsource = { type = \"filesystem\", path = \"p\" }\n",
	"[[resource]]\nuri = \"readproof://a/b\"\nsource = { type = \"http\", url = \"https://h/x\", headers = { Authorization = \"Bearer ${T}\" } }\n[sources]\nenv = [\"T\"]\n",
}

func fastCorpus(t testing.TB) []string {
	seeds := append([]string(nil), fastSeeds...)
	for _, name := range []string{"testdata/valid.toml", "../../readproof.toml.example"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, string(data))
		seeds = append(seeds, policySections(string(data))...)
	}
	for _, file := range readArchive(t, "testdata/errors.txtar") {
		seeds = append(seeds, file.data)
	}
	return append(seeds, bench1000(30))
}

func TestFastMatchesTOMLSeeds(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, s := range fastCorpus(t) {
		checkFastMatchesTOML(t, s)
		checkFastMatchesSlow(t, s)
	}
}

// The files policy files are made of take the fast path: otherwise the
// speed is silently lost.
func TestFastPathTaken(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for name, text := range map[string]string{
		"valid.toml":             string(mustRead(t, "testdata/valid.toml")),
		"readproof.toml.example": string(mustRead(t, "../../readproof.toml.example")),
		"bench":                  bench1000(1000),
	} {
		if _, ok := parseFast("/srv/policy/readproof.toml", "readproof.toml", text); !ok {
			t.Errorf("%s: not read by the fast path", name)
		}
	}
}

// TestFastDecodeKnowsEveryKey: every key of the schema (the raw types'
// struct tags) is read by fastDecode, so a key added to the schema and not
// to fastDecode is caught here rather than by a slower Parse.
func TestFastDecodeKnowsEveryKey(t *testing.T) {
	sample := func(ft reflect.Type) string {
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == sizeType:
			return `"1KiB"`
		case ft.Kind() == reflect.String:
			return `"x"`
		case ft.Kind() == reflect.Int64:
			return "1"
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String:
			return `["x"]`
		case ft.Kind() == reflect.Map:
			return `{ A = "x" }`
		}
		return ""
	}
	n := 0
	var walk func(prefix string, st reflect.Type, doc func(k, v string) string)
	walk = func(prefix string, st reflect.Type, doc func(k, v string) string) {
		names, fields := tomlFields(st)
		for _, k := range names {
			ft := fields[k].Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.Struct && ft != sizeType:
				walk(prefix+k+".", ft, func(k2, v string) string {
					return doc(k, "{ "+k2+" = "+v+" }")
				})
				continue
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(prefix+k+"[].", ft.Elem(), func(k2, v string) string {
					return doc(k, "[{ "+k2+" = "+v+" }]")
				})
				continue
			}
			text := doc(k, sample(ft))
			tree, ok := fastRead(text)
			if !ok {
				t.Fatalf("%s%s: fastRead refuses %q", prefix, k, text)
			}
			if _, ok := fastDecode(tree, new([]Resource), nil); !ok {
				t.Errorf("%s%s: fastDecode does not read it (%q)", prefix, k, text)
			}
			n++
		}
	}
	walk("", rawFileType, func(k, v string) string { return k + " = " + v + "\n" })
	if n < 30 {
		t.Fatalf("only %d keys checked", n)
	}
}

// FuzzParseMatchesTOML holds the fast reader to BurntSushi/toml: on any
// input it accepts, BurntSushi accepts too and reads the same values (so
// where BurntSushi fails, it fails), and Parse's fast path gives the File
// the slow path gives, lines included.
func FuzzParseMatchesTOML(f *testing.F) {
	for _, s := range fastCorpus(f) {
		if len(s) <= maxFuzzPolicy {
			f.Add([]byte(s))
		}
	}
	os.Setenv("HOME", f.TempDir())
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzPolicy {
			return
		}
		checkFastMatchesTOML(t, string(data))
		checkFastMatchesSlow(t, string(data))
	})
}

// bench1000 is the policy file of BenchmarkParse1000 with n resources.
func bench1000(n int) string {
	var sb strings.Builder
	sb.WriteString("version = 1\n[sources]\nenv = [\"TOKEN\"]\n")
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&sb, "\n[[resource]]\nuri = \"readproof://bench/docs/doc-%d\"\nsource = { type = \"filesystem\", path = \"docs/doc-%d.md\" }\n", i, i)
		case 1:
			fmt.Fprintf(&sb, "\n[[resource]]\nuri = \"readproof://bench/web/doc-%d\"\npolicy = \"allow_stale\"\nmax_age = \"1h\"\nsource = { type = \"http\", url = \"https://docs.internal/%d\", headers = { Authorization = \"Bearer ${TOKEN}\" } }\n", i, i)
		default:
			fmt.Fprintf(&sb, "\n[[resource]]\nuri = \"readproof://bench/git/doc-%d\"\nsource = { type = \"git\", url = \"https://git.internal/r.git\", path = \"d/%d.md\" }\n", i, i)
		}
	}
	return sb.String()
}
