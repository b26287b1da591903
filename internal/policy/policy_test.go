package policy

import (
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/adapters/sourcespec"
	"github.com/readproof/readproof/identity"
)

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustURI(t testing.TB, s string) identity.URI {
	t.Helper()
	u, err := identity.ParseURI(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestParseValid(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := t.TempDir()
	// docs is a symlink: roots must hold the resolved directory.
	real := filepath.Join(dir, "real-docs")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "readproof.toml")
	f, err := Parse(path, mustRead(t, "testdata/valid.toml"))
	if err != nil {
		t.Fatal(err)
	}
	rdir, _ := filepath.EvalSymlinks(dir)
	rreal, _ := filepath.EvalSymlinks(real)

	if f.Path != path || f.Dir != dir || f.Version != 1 {
		t.Errorf("Path, Dir, Version = %q, %q, %d", f.Path, f.Dir, f.Version)
	}
	if want := (Defaults{Policy: AllowStale, MaxAge: 2 * time.Hour, MaxBytes: 512 << 10}); f.Defaults != want {
		t.Errorf("Defaults = %+v, want %+v", f.Defaults, want)
	}
	if want := []string{rdir, rreal, filepath.Join(home, "shared"), "/abs/elsewhere"}; !reflect.DeepEqual(f.Roots, want) {
		t.Errorf("Roots = %q, want %q", f.Roots, want)
	}
	if want := []string{"POLICY_TOKEN", "GITHUB_TOKEN"}; !reflect.DeepEqual(f.EnvAllow, want) {
		t.Errorf("EnvAllow = %q, want %q", f.EnvAllow, want)
	}
	if want := filepath.Join(dir, "cache", "git"); f.CacheDir != want {
		t.Errorf("CacheDir = %q, want %q", f.CacheDir, want)
	}
	wantNet := sourcespec.NetPolicy{
		AllowHosts:   []string{"policies.internal", "127.0.0.1"},
		AllowCIDRs:   []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("fd00::/8")},
		Timeout:      45 * time.Second,
		MaxRedirects: 0,
	}
	if !reflect.DeepEqual(f.Network, wantNet) {
		t.Errorf("Network = %+v, want %+v", f.Network, wantNet)
	}
	for _, kv := range [][2]string{
		{f.SigningKey, filepath.Join(home, ".config/readproof/signing_key")},
		{f.AllowedSigners, filepath.Join(dir, "allowed_signers")},
		{f.ProbeKey, "/etc/readproof/probe.key"},
		{f.ReceiptsKey, filepath.Join(dir, "keys/receipts.key")},
	} {
		if kv[0] != kv[1] {
			t.Errorf("key path %q, want %q", kv[0], kv[1])
		}
	}

	want := []Resource{
		{
			URI:         mustURI(t, "readproof://demo/policies/refunds"),
			Source:      sourcespec.Spec{Type: "filesystem", Path: "policies/refunds.md"},
			Freshness:   Freshness{Strategy: AllowStale, MaxAge: 2 * time.Hour},
			Description: `Refunds: "30 days" \ ünïcødé ✓`,
			Line:        31,
		},
		{
			URI: mustURI(t, "readproof://demo/policies/shipping"),
			Source: sourcespec.Spec{Type: "http", URL: "https://policies.internal/shipping.md", Headers: map[string]string{
				"Authorization": "Bearer ${POLICY_TOKEN}", "X-Cost": "$$5 per ${POLICY_TOKEN}",
			}, PublicHeaders: map[string]string{"Accept": "text/markdown"}},
			Freshness:   Freshness{Strategy: RequireFresh},
			ContentType: "text/markdown; charset=utf-8",
			Line:        36,
		},
		{
			URI: mustURI(t, "readproof://acme/runbooks/oncall"),
			Source: sourcespec.Spec{Type: "github", Owner: "acme", Repo: "company-docs", Path: "runbooks/oncall.md",
				Ref: "main", TokenEnv: "GITHUB_TOKEN", APIBase: "https://ghe.example.com/api/v3"},
			Freshness: Freshness{Strategy: AllowStale, MaxAge: 7 * 24 * time.Hour},
			Line:      47,
		},
		{
			URI:       mustURI(t, "readproof://acme/specs/pricing"),
			Source:    sourcespec.Spec{Type: "git", URL: "file:///srv/git/specs.git", Path: "pricing.md", Ref: "HEAD"},
			Freshness: Freshness{Strategy: Pinned, Snapshot: "1ae984e288457551a53914820e8411431331791c"},
			Line:      52,
		},
	}
	if len(f.Resources()) != len(want) {
		t.Fatalf("%d resources, want %d", len(f.Resources()), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(f.Resources()[i], want[i]) {
			t.Errorf("resource %d:\n got %+v\nwant %+v", i+1, f.Resources()[i], want[i])
		}
	}
}

// TestExampleFile: readproof.toml.example as copied declares the one
// filesystem resource and turns on nothing that needs a file of the user's
// (issue 15: its live [signing] key made the first run fail); with its
// commented-out tables and resources enabled, it still parses and shows one
// source of each type and every top-level table of the schema.
func TestExampleFile(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	text := string(mustRead(t, "../../readproof.toml.example"))
	f, err := Parse("readproof.toml", []byte(text))
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			t.Fatalf("%v (hint: %s)", err, pe.Hint)
		}
		t.Fatal(err)
	}
	if len(f.Resources()) != 1 || f.Resources()[0].URI.String() != "readproof://demo/policies/refunds" || f.Resources()[0].Source.Type != "filesystem" {
		t.Errorf("the example as copied declares %+v, want only readproof://demo/policies/refunds", f.Resources())
	}
	if f.SigningKey != "" || f.AllowedSigners != "" || f.ProbeKey != "" || f.ReceiptsKey != "" || len(f.EnvAllow) != 0 || len(f.Network.AllowHosts) != 0 || len(f.Network.AllowCIDRs) != 0 {
		t.Errorf("the example as copied sets something the user must provide: %+v", f)
	}

	all := enableExample(text)
	f, err = Parse("readproof.toml", []byte(all))
	if err != nil {
		t.Fatalf("the example with its commented-out parts enabled: %v\n%s", err, all)
	}
	type summary struct {
		uri, typ string
		strat    Strategy
	}
	var got []summary
	for _, r := range f.Resources() {
		got = append(got, summary{r.URI.String(), r.Source.Type, r.Freshness.Strategy})
	}
	want := []summary{
		{"readproof://demo/policies/refunds", "filesystem", RequireFresh},
		{"readproof://demo/policies/shipping", "http", AllowStale},
		{"readproof://acme/runbooks/oncall", "github", RequireFresh},
		{"readproof://acme/specs/pricing", "git", Pinned},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("example resources = %+v, want %+v", got, want)
	}
	shipping, _ := f.Lookup(mustURI(t, "readproof://demo/policies/shipping"))
	if shipping.Source.Headers["Authorization"] != "Bearer ${POLICY_TOKEN}" || shipping.Freshness.MaxAge != 15*time.Minute {
		t.Errorf("shipping resource = %+v", shipping)
	}
	if !reflect.DeepEqual(f.EnvAllow, []string{"POLICY_TOKEN", "GITHUB_TOKEN"}) {
		t.Errorf("EnvAllow = %q", f.EnvAllow)
	}
	if f.SigningKey == "" || f.AllowedSigners == "" || f.ProbeKey == "" || f.ReceiptsKey == "" {
		t.Errorf("the enabled example lacks a key: %+v", f)
	}
	// Every top-level table of the schema appears in the example.
	names, _ := tomlFields(rawFileType)
	for _, n := range names {
		if !containsLine(all, n) {
			t.Errorf("example does not document %q", n)
		}
	}
}

// enableExample removes the "# " in front of the example's commented-out
// TOML: table headers and "key = value" lines.
func enableExample(text string) string {
	lines := strings.Split(text, "\n")
	code := regexp.MustCompile(`^# (\[\[?[a-z_.]+\]\]?$|[a-z_]+ = )`)
	for i, l := range lines {
		if code.MatchString(l) {
			lines[i] = strings.TrimPrefix(l, "# ")
		}
	}
	return strings.Join(lines, "\n")
}

func containsLine(text, key string) bool {
	_, ok := scanPositions(text).firstOf([]string{key})
	return ok
}

func TestEmpty(t *testing.T) {
	dir := t.TempDir()
	f := Empty(filepath.Join(dir, "readproof.toml"))
	rdir, _ := filepath.EvalSymlinks(dir)
	if f.Dir != dir || f.Version != 1 || f.Defaults.Policy != RequireFresh || f.Defaults.MaxBytes != sourcespec.DefaultMaxBytes {
		t.Errorf("Empty = %+v", f)
	}
	if !reflect.DeepEqual(f.Roots, []string{rdir}) {
		t.Errorf("Roots = %q, want [%q]", f.Roots, rdir)
	}
	if f.Network.Timeout != sourcespec.DefaultTimeout || f.Network.MaxRedirects != sourcespec.DefaultMaxRedirects {
		t.Errorf("Network = %+v", f.Network)
	}
	// Parsing an empty file gives the same settings.
	p, err := Parse(filepath.Join(dir, "readproof.toml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, f) {
		t.Errorf("Parse(empty) = %+v, Empty = %+v", p, f)
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "readproof.toml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want fs.ErrNotExist", err)
	}
}

func TestLookupAndAdapterEnv(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	f, err := Parse("testdata/valid.toml", mustRead(t, "testdata/valid.toml"))
	if err != nil {
		t.Fatal(err)
	}
	r, ok := f.Lookup(mustURI(t, "readproof://acme/runbooks/oncall@prod"))
	if !ok || r.Source.Type != "github" {
		t.Errorf("Lookup with a tag = %+v, %v", r, ok)
	}
	if _, ok := f.Lookup(mustURI(t, "readproof://acme/runbooks/other")); ok {
		t.Errorf("Lookup found an undeclared URI")
	}
	env := f.AdapterEnv()
	// valid.toml says max_redirects = 0: none, which the adapters spell -1.
	wantNet := f.Network
	wantNet.MaxRedirects = -1
	if env.BaseDir != f.Dir || env.MaxBytes != 512<<10 || env.CacheDir != f.CacheDir ||
		!reflect.DeepEqual(env.Roots, f.Roots) || !reflect.DeepEqual(env.EnvAllow, f.EnvAllow) ||
		!reflect.DeepEqual(env.Network, wantNet) || env.LookupEnv != nil {
		t.Errorf("AdapterEnv = %+v", env)
	}
	env.Roots[0] = "changed"
	if f.Roots[0] == "changed" {
		t.Errorf("AdapterEnv shares the Roots slice with the File")
	}
}

func TestDurations(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"90s", 90 * time.Second, true},
		{"1h30m", 90 * time.Minute, true},
		{"7d", 7 * 24 * time.Hour, true},
		{"1d", 24 * time.Hour, true},
		{"250ms", 250 * time.Millisecond, true},
		{"0s", 0, false},
		{"-1h", 0, false},
		{"1", 0, false},
		{"d", 0, false},
		{"1.5d", 0, false},
		{"99999999999d", 0, false},
		{"1 hour", 0, false},
		{"", 0, false},
	} {
		got, err := ParseDuration(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok {
			back, err := ParseDuration(FormatDuration(got))
			if err != nil || back != got {
				t.Errorf("FormatDuration(%v) = %q does not read back", got, FormatDuration(got))
			}
		}
	}
	for d, want := range map[time.Duration]string{
		time.Hour: "1h", 90 * time.Minute: "1h30m", 48 * time.Hour: "2d", 90 * time.Second: "1m30s", 1500 * time.Millisecond: "1.5s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestSizes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4096", 4096, true},
		{"512KiB", 512 << 10, true},
		{"10MiB", 10 << 20, true},
		{"10 MiB", 10 << 20, true},
		{"1GiB", 1 << 30, true},
		{"2TiB", 2 << 40, true},
		{"100B", 100, true},
		{"10MB", 0, false},
		{"1.5MiB", 0, false},
		{"0", 0, false},
		{"-1", 0, false},
		{"MiB", 0, false},
		{"99999999999TiB", 0, false},
		{"", 0, false},
	} {
		got, err := ParseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok {
			if back, err := ParseSize(FormatSize(got)); err != nil || back != got {
				t.Errorf("FormatSize(%d) = %q does not read back", got, FormatSize(got))
			}
		}
	}
}

func TestPositions(t *testing.T) {
	src := `# comment [[resource]]
when = 1979-05-27 07:32:00Z
list = [ 1, [2, 3],
  { a = 1 }, # comment ]
]
s = """
x = "not a key"
[[resource]]
"""
lit = '''
[[resource]] '''
"quoted.key" = 1
a.b . c = 2
[[resource]]
uri = 'x'
[resource.source]
type = "t"
[[resource]]
[[resource.nested]]
k = 1
[[resource.nested]]
k = 2
[ t . "u v" ]
w = { x = { y = 1 } }
`
	pos := scanPositions(src)
	for key, line := range map[string]int{
		"when":                    2,
		"list":                    3,
		"list[2]":                 3,
		"list[2][2]":              3,
		"list[3].a":               4,
		"s":                       6,
		"lit":                     10,
		`"quoted.key"`:            12,
		"a.b.c":                   13,
		"resource":                14,
		"resource[1]":             14,
		"resource[1].uri":         15,
		"resource[1].source":      16,
		"resource[1].source.type": 17,
		"resource[2]":             18,
		"resource[2].nested[1].k": 20,
		"resource[2].nested[2]":   21,
		"resource[2].nested[2].k": 22,
		`t."u v".w.x.y`:           24,
		`t."u v"`:                 23,
	} {
		if got, ok := pos.lines[key]; !ok || got != line {
			t.Errorf("line of %s = %d (recorded %v), want %d", key, got, ok, line)
		}
	}
	if _, ok := pos.lines["x"]; ok {
		t.Errorf("a key inside a multi-line string was recorded")
	}
	if _, ok := pos.lines["resource[3]"]; ok {
		t.Errorf("a [[resource]] inside a string was counted")
	}
}
