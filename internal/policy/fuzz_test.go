package policy

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// encodeFile writes f as a policy file that Parse reads back to f (paths
// become absolute, defaults explicit).
func encodeFile(f *File) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "version = %d\n\n[defaults]\npolicy = %s\n", f.Version, quote(string(f.Defaults.Policy)))
	if f.Defaults.MaxAge != 0 {
		fmt.Fprintf(&b, "max_age = %s\n", quote(FormatDuration(f.Defaults.MaxAge)))
	}
	fmt.Fprintf(&b, "max_bytes = %s\n\n[sources]\n", quote(FormatSize(f.Defaults.MaxBytes)))
	b.WriteString("roots = " + quoteList(f.Roots) + "\n")
	if len(f.EnvAllow) > 0 {
		b.WriteString("env = " + quoteList(f.EnvAllow) + "\n")
	}
	if f.CacheDir != "" {
		b.WriteString("cache_dir = " + quote(f.CacheDir) + "\n")
	}
	b.WriteString("\n[network]\n")
	if len(f.Network.AllowHosts) > 0 {
		b.WriteString("allow_hosts = " + quoteList(f.Network.AllowHosts) + "\n")
	}
	if len(f.Network.AllowCIDRs) > 0 {
		var cidrs []string
		for _, p := range f.Network.AllowCIDRs {
			cidrs = append(cidrs, p.String())
		}
		b.WriteString("allow_cidrs = " + quoteList(cidrs) + "\n")
	}
	fmt.Fprintf(&b, "timeout = %s\nmax_redirects = %d\n", quote(FormatDuration(f.Network.Timeout)), f.Network.MaxRedirects)
	b.WriteString("\n[signing]\n")
	for _, kv := range []struct{ table, key, v string }{
		{"", "key", f.SigningKey}, {"", "allowed_signers", f.AllowedSigners},
		{"[probe]", "key", f.ProbeKey}, {"[receipts]", "key", f.ReceiptsKey},
	} {
		if kv.table != "" {
			b.WriteString("\n" + kv.table + "\n")
		}
		if kv.v != "" {
			fmt.Fprintf(&b, "%s = %s\n", kv.key, quote(kv.v))
		}
	}
	for _, r := range f.Resources() {
		block, err := encodeResource(r)
		if err != nil {
			return "", err
		}
		b.WriteString("\n" + block)
	}
	return b.String(), nil
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func withoutLines(f *File) *File {
	g := *f
	g.res, g.lazy = append([]Resource(nil), f.Resources()...), nil
	for i := range g.res {
		g.res[i].Line = 0
	}
	return &g
}

func TestEncodeFileRoundTrip(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, name := range []string{"testdata/valid.toml", "../../readproof.toml.example"} {
		f, err := Parse("/srv/policy/readproof.toml", mustRead(t, name))
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, f)
	}
}

func roundTrip(t *testing.T, f *File) {
	t.Helper()
	text, err := encodeFile(f)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	g, err := Parse(f.Path, []byte(text))
	if err != nil {
		t.Fatalf("an accepted file does not re-parse: %v\n%s", err, text)
	}
	if !reflect.DeepEqual(withoutLines(f), withoutLines(g)) {
		t.Fatalf("re-parse differs:\n got %+v\nwant %+v\n%s", g, f, text)
	}
}

// maxFuzzPolicy bounds the inputs FuzzParse explores. Go minimizes every
// input that reaches new coverage, and its minimizer makes about n*n/2
// attempts for an n-byte input; with whole policy files as seeds (6 KiB,
// and the 20 KiB errors archive) each new input kept the only worker
// minimizing for the full -fuzzminimizetime (60 s) while the coordinator
// reported 0 execs/s. Policy files longer than this are covered by the
// unit tests (TestExampleFile, TestParseErrors); the fuzzer works on
// sections of them.
const maxFuzzPolicy = 1 << 10

// policySections splits a policy file into pieces that each start at a
// [table] or [[array]] header, so seeds stay below maxFuzzPolicy.
func policySections(data string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.SplitAfter(data, "\n") {
		if strings.HasPrefix(line, "[") && cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
		cur.WriteString(line)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// addPolicySeeds seeds f with every section of the valid file and of the
// example, and every file of the error archive, that fits maxFuzzPolicy.
func addPolicySeeds(f *testing.F) {
	for _, name := range []string{"testdata/valid.toml", "../../readproof.toml.example"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, sec := range policySections(string(data)) {
			if len(sec) <= maxFuzzPolicy {
				f.Add([]byte(sec))
			}
		}
	}
	for _, file := range readArchive(f, "testdata/errors.txtar") {
		if len(file.data) <= maxFuzzPolicy {
			f.Add([]byte(file.data))
		}
	}
}

func FuzzParse(f *testing.F) {
	addPolicySeeds(f)
	f.Add([]byte(""))
	f.Add([]byte("\ufeffversion = 1\n"))
	f.Add([]byte("resource = [{ uri = \"readproof://a/b\", source = { type = \"filesystem\", path = \"p\" } }]\n"))
	f.Add([]byte("[[resource]]\nuri = \"readproof://a/b\"\ndescription = \"\"\"\nx\n\"\"\"\nsource = {\n type = \"filesystem\",\n path = \"p\",\n}\n"))

	home := f.TempDir()
	os.Setenv("HOME", home)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzPolicy {
			return
		}
		// The position scanner sees arbitrary text only through Parse, but it
		// must not panic or hang on anything.
		scanPositions(string(data))
		path := "/srv/policy/readproof.toml"
		file, err := Parse(path, data)
		if err != nil {
			if pe, ok := err.(*Error); !ok {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			} else if strings.ContainsAny(pe.Error()+pe.Hint, "\n\r") {
				t.Fatalf("multi-line error %q / %q", pe.Error(), pe.Hint)
			}
			return
		}
		again, err := Parse(path, data)
		if err != nil || !reflect.DeepEqual(file, again) {
			t.Fatalf("parsing twice differs: %v", err)
		}
		for _, r := range file.Resources() {
			if r.Line < 1 || r.Line > strings.Count(string(data), "\n")+1 {
				t.Fatalf("resource line %d outside the file", r.Line)
			}
		}
		roundTrip(t, file)
	})
}
