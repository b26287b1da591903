package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/readproof/readproof/adapters/sourcespec"
	"github.com/readproof/readproof/identity"
)

// Strategy is a resource's freshness policy.
type Strategy string

// The freshness strategies.
const (
	// RequireFresh re-reads the source on every resolve.
	RequireFresh Strategy = "require_fresh"
	// AllowStale reuses the current snapshot while it is at most MaxAge old.
	AllowStale Strategy = "allow_stale"
	// Pinned always delivers one snapshot, named by its id.
	Pinned Strategy = "pinned"
)

// Strategies lists the valid strategies.
var Strategies = []Strategy{RequireFresh, AllowStale, Pinned}

// SourceTypes lists the source types a policy file may declare.
var SourceTypes = []string{"filesystem", "http", "github", "git"}

// Defaults applied when the policy file says nothing.
const (
	DefaultFileName  = "readproof.toml"
	DefaultStrategy  = RequireFresh
	DefaultGitHubRef = "main"
	DefaultGitRef    = "HEAD"
)

// Freshness is the policy in force for one resource.
type Freshness struct {
	Strategy Strategy
	// MaxAge is set for AllowStale only.
	MaxAge time.Duration
	// Snapshot is the pinned snapshot id (40 hex), set for Pinned only.
	Snapshot string
}

// Resource is one declared document.
type Resource struct {
	URI    identity.URI
	Source sourcespec.Spec
	// Freshness has the file's defaults applied.
	Freshness   Freshness
	ContentType string
	Description string
	// Line is where the resource's block starts in the file (0 when not
	// read from a file).
	Line int
}

// Defaults are the [defaults] table with the built-in defaults applied.
type Defaults struct {
	Policy   Strategy
	MaxAge   time.Duration
	MaxBytes int64
}

// File is a parsed policy file.
type File struct {
	// Path and Dir are the absolute path of the file and its directory.
	Path, Dir string
	Version   int
	Defaults  Defaults
	// Roots are the directories filesystem sources may read: absolute, with
	// symlinks resolved when they exist.
	Roots []string
	// EnvAllow lists the environment variables ${NAME} may expand.
	EnvAllow []string
	// CacheDir holds the git adapter's clones ("" when no default could be
	// found and none is configured).
	CacheDir string
	Network  sourcespec.NetPolicy
	// Absolute key paths ("~" expanded, relative paths against Dir), ""
	// when unset.
	SigningKey, AllowedSigners, ProbeKey, ReceiptsKey string

	// res are the declared resources (Resources), in the file's order;
	// nil in a File read from the parse cache, whose lazy holds them.
	res []Resource
	// byURI indexes res for Lookup: their indexes in increasing order of
	// namespace, then path (4 bytes a resource; a map took about 80).
	// Parse fills it. Lookup scans instead when it is nil (a File built by
	// hand) or no longer matches res.
	byURI []int32
	// lazy holds the resources of a File read from the parse cache, still
	// in the cache's form: a command naming one document decodes only
	// that one (cache.go, lazyResources).
	lazy *lazyResources
}

// Resources returns the declared resources, in the order the file declares
// them. A File read from the parse cache decodes them on the first call
// (safe for concurrent use); the slice is the File's own, not a copy, and
// must not be changed.
func (f *File) Resources() []Resource {
	if f.lazy != nil {
		return f.lazy.all()
	}
	return f.res
}

// Load reads and parses the policy file at path. A missing file is an error
// matching fs.ErrNotExist; use Empty for the defaults. What Open refuses
// is refused.
func Load(path string) (*File, error) {
	text, _, err := readText(path)
	if err != nil {
		return nil, err
	}
	return parseText(path, text)
}

// readText reads the policy file at path (Open, readFrom), and gives its
// FileInfo as opened. Its errors start "read policy file", but for the
// *Error of a file over the bound.
func readText(path string) (string, fs.FileInfo, error) {
	f, fi, err := Open(path)
	if err != nil {
		return "", nil, readError(err)
	}
	defer f.Close()
	text, err := readFrom(path, f, fi)
	if err != nil {
		return "", nil, readError(err)
	}
	return text, fi, nil
}

// readError is err of a read of the policy file: an *Error as it is,
// anything else after "read policy file".
func readError(err error) error {
	if _, ok := err.(*Error); ok {
		return err
	}
	return fmt.Errorf("read policy file: %w", err)
}

// Empty returns the settings of a policy file that does not exist yet: the
// defaults and no resources.
func Empty(path string) *File {
	if path == "" {
		path = DefaultFileName
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = filepath.Clean(path)
	}
	dir := filepath.Dir(abs)
	return &File{
		Path:     abs,
		Dir:      dir,
		Version:  1,
		Defaults: Defaults{Policy: DefaultStrategy, MaxBytes: sourcespec.DefaultMaxBytes},
		Roots:    []string{resolveExisting(dir)},
		CacheDir: defaultCacheDir(),
		Network: sourcespec.NetPolicy{
			Timeout:      sourcespec.DefaultTimeout,
			MaxRedirects: sourcespec.DefaultMaxRedirects,
		},
	}
}

func defaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil || d == "" {
		return ""
	}
	return filepath.Join(d, "readproof", "git")
}

// Parse parses data as the policy file at path; path names the file in
// errors and anchors relative paths. Every problem is returned as an *Error
// (the one nearest the top of the file).
//
// A file is read in one pass by fastRead when it keeps to the TOML policy
// files are written in and is accepted; anything else (other TOML, and every
// file with a problem) is read again by BurntSushi/toml and the position
// scanner, which word the errors. Both readers give the same File for every
// input (FuzzParseFastMatchesSlow).
func Parse(path string, data []byte) (*File, error) {
	return parseText(path, string(data))
}

// parseText is Parse of the file's text.
func parseText(path, text string) (*File, error) {
	name := path
	if name == "" {
		name = DefaultFileName
	}
	if f, ok := parseFast(path, name, text); ok {
		return f, nil
	}
	return parseRest(path, name, text)
}

// parseRest is parseText of a file parseFast gave up on.
func parseRest(path, name, text string) (*File, error) {
	if line, deep := tooDeep(text); deep {
		return nil, &Error{File: name, Line: line,
			Msg:  fmt.Sprintf("tables, arrays or dotted keys nested more than %d deep", maxNesting),
			Hint: "a policy nests four levels at most (resource, source, headers, a header); see readproof.toml.example for the format"}
	}
	return parseSlow(path, name, text)
}

// maxNesting bounds how deep the slow path lets a file nest tables,
// arrays and the parts of dotted keys. BurntSushi's reading copies a
// key's path for every key below it, the square of the depth (a line of
// 2,000 nested inline tables, 11 KB, was 629 MB), and no policy nests
// more than four deep: a deeper file is refused before it is read.
const maxNesting = 32

// tooDeep reports whether text nests brackets and dotted keys deeper than
// maxNesting, and the line where it first does. It skips comments and
// strings (basic, literal, and their multi-line forms); a dotted key's
// parts count from the last newline, '=', ',' or bracket.
func tooDeep(text string) (line int, deep bool) {
	line = 1
	depth, dots := 0, 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '\n':
			line++
			dots = 0
		case '#':
			for i+1 < len(text) && text[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			triple := strings.Repeat(string(c), 3)
			multi := strings.HasPrefix(text[i:], triple)
			if multi {
				i += 2
			}
			for i++; i < len(text); i++ {
				if text[i] == '\n' {
					if !multi {
						break // unterminated: BurntSushi says so
					}
					line++
				}
				if c == '"' && text[i] == '\\' {
					if i+1 < len(text) && text[i+1] == '\n' {
						line++
					}
					i++
					continue
				}
				if multi && strings.HasPrefix(text[i:], triple) {
					i += 2
					break
				}
				if !multi && text[i] == c {
					break
				}
			}
			if i < len(text) && text[i] == '\n' {
				i-- // the newline ends the line above
			}
		case '{', '[':
			depth++
			dots = 0
		case '}', ']':
			depth = max(depth-1, 0)
			dots = 0
		case '=', ',':
			dots = 0
		case '.':
			dots++
		}
		if depth+dots > maxNesting {
			return line, true
		}
	}
	return line, false
}

// parseFast is Parse by fastRead; ok is false when it gave up or found a
// problem.
func parseFast(path, name, text string) (*File, bool) {
	return parseFastHeads(path, name, text, nil)
}

// parseFastHeads is parseFast that also records, when heads is set, where
// the file's resource blocks are (headRun).
func parseFastHeads(path, name, text string, heads *[]headRun) (*File, bool) {
	var read fastResources
	tree, ok := readTreeHeads(text, &read, heads)
	if !ok {
		return nil, false
	}
	// f is made once the file decodes: Empty resolves the project's
	// directory and cache, which the slow path does again when this gives
	// up. The resources' sources point into res's array, which f takes.
	var res []Resource
	raw, ok := fastDecode(tree, &res, &read)
	if !ok {
		return nil, false
	}
	f := Empty(path)
	f.res = res
	c := &checker{file: name, fast: &fastIndex{root: fval{kind: fTable, t: tree}}}
	c.build(f, raw)
	if len(c.errs) > 0 {
		return nil, false
	}
	f.index()
	if f.uriClash() {
		return nil, false
	}
	return f, true
}

// parseSlow is Parse by BurntSushi/toml: a decode into rawFile, and the
// position scanner for lines.
func parseSlow(path, name, text string) (*File, error) {
	c := &checker{file: name}
	var raw rawFile
	md, err := toml.Decode(text, &raw)
	if err != nil {
		// Malformed TOML, or a value of the wrong type somewhere. Decode
		// the generic tree to tell which, and where.
		var tree map[string]any
		if _, terr := toml.Decode(text, &tree); terr != nil {
			return nil, syntaxError(name, text, terr)
		}
		c.pos = scanPositions(text)
		c.checkTypes(root, tree, rawFileType, "", "")
		if err := c.first(); err != nil {
			return nil, err
		}
		// The type check found nothing: a bug, but still an error.
		return nil, &Error{File: name, Msg: oneLine("cannot decode: " + err.Error()), Err: err}
	}
	c.pos = scanPositions(text)
	// BurntSushi decodes a value that is not a table into a map field as
	// nothing, without an error: headers = "Authorization: ..." would drop
	// the header unsaid. When a header table is missing from what was
	// decoded, the type check of the generic tree says where and why.
	if headersDropped(md, &raw) {
		var tree map[string]any
		if _, err := toml.Decode(text, &tree); err == nil {
			c.checkTypes(root, tree, rawFileType, "", "")
			if err := c.first(); err != nil {
				return nil, err
			}
		}
	}

	c.unknownKeys(md)
	// A misspelt key makes the checks of meaning misleading (a "missing
	// source" next to "sorce"), so structure errors come first.
	if err := c.first(); err != nil {
		return nil, err
	}

	f := Empty(path)
	c.build(f, &raw)
	if err := c.first(); err != nil {
		return nil, err
	}
	f.index()
	return f, nil
}

// headersDropped reports whether the file names a source's headers or
// public_headers more often than the decode filled them in: the map fields
// of the schema, which BurntSushi leaves nil for a value that is not a
// table. (A dotted key may name one more than once; that costs a type check
// that finds nothing, never an error.)
func headersDropped(md toml.MetaData, raw *rawFile) bool {
	named, filled := 0, 0
	for _, k := range md.Keys() {
		if len(k) == 3 && k[0] == "resource" && k[1] == "source" && (k[2] == "headers" || k[2] == "public_headers") {
			named++
		}
	}
	for _, r := range raw.Resource {
		if r.Source != nil {
			if r.Source.Headers != nil {
				filled++
			}
			if r.Source.PublicHeaders != nil {
				filled++
			}
		}
	}
	return named != filled
}

// unknownKeys reports every key the schema does not name exactly. BurntSushi
// matches struct fields case-insensitively, so md.Undecoded alone would let
// "Cache_Dir" pass; every key in md.Keys is therefore checked against the
// struct tags, and md.Undecoded is consulted as well. Keys come without
// array indexes; the first occurrence in the file is the one named.
func (c *checker) unknownKeys(md toml.MetaData) {
	reported := map[string]bool{}
	report := func(k toml.Key) {
		ks := k.String()
		if reported[ks] {
			return
		}
		reported[ks] = true
		for i := 1; i < len(k); i++ {
			if reported[k[:i].String()] {
				return // inside an unknown table: reported with it
			}
		}
		p, ok := c.pos.firstOf(k)
		if !ok {
			p = root
			for _, n := range k {
				p = p.child(n)
			}
		}
		valid, _ := validKeysAt(k[:len(k)-1])
		c.add(p, "unknown key", unknownHint(k[len(k)-1], valid), nil)
	}
	type place struct {
		names    []string
		isStruct bool
	}
	places := map[string]place{}
	for _, k := range md.Keys() {
		parent := k[:len(k)-1].String()
		pl, ok := places[parent]
		if !ok {
			pl.names, pl.isStruct = validKeysAt(k[:len(k)-1])
			places[parent] = pl
		}
		if pl.isStruct && !contains(pl.names, k[len(k)-1]) {
			report(k)
		}
	}
	for _, k := range md.Undecoded() {
		report(k)
	}
}

// validKeysAt lists the keys the schema allows in the table named by
// parent; ok is false when parent is not a table of the schema (a map such
// as headers, a scalar, or an unknown key).
func validKeysAt(parent toml.Key) (names []string, ok bool) {
	t := rawFileType
	deref := func() {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
	}
	for _, n := range parent {
		deref()
		if t.Kind() != reflect.Struct || t == sizeType {
			return nil, false
		}
		_, fields := tomlFields(t)
		f, found := fields[n]
		if !found {
			return nil, false
		}
		t = f.Type
	}
	deref()
	if t.Kind() != reflect.Struct || t == sizeType {
		return nil, false
	}
	names, _ = tomlFields(t)
	return names, true
}

func syntaxError(name, text string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		line, col := pe.Position.Line, pe.Position.Col
		// The parser's line is one too far when the error is at a newline;
		// the byte offset is exact, so derive line and column from it. The
		// offset counts from after the byte-order mark the parser skips (an
		// editor shows none, so no column counts it either).
		if rest, ok := strings.CutPrefix(text, "\ufeff"); ok {
			text = rest
		} else if strings.HasPrefix(text, "\xff\xfe") || strings.HasPrefix(text, "\xfe\xff") {
			text = text[2:]
		}
		if start := pe.Position.Start; start >= 0 && start <= len(text) {
			before := text[:start]
			line = strings.Count(before, "\n") + 1
			col = utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
		}
		return &Error{
			File:   name,
			Line:   line,
			Column: col,
			Msg:    oneLine("malformed TOML: " + strings.TrimSuffix(pe.Message, ".")),
			Hint:   "fix the syntax at this position; see readproof.toml.example for the format",
			Err:    err,
		}
	}
	return &Error{File: name, Msg: oneLine("malformed TOML: " + err.Error()), Err: err}
}

// index builds byURI. Parse refuses duplicate URIs, so every key is one
// resource. A file without resources keeps byURI nil, as Empty has it.
func (f *File) index() {
	if len(f.res) == 0 {
		return
	}
	f.byURI = make([]int32, len(f.res))
	sorted := true
	for i := range f.byURI {
		f.byURI[i] = int32(i)
		if i > 0 && sorted {
			sorted = uriCompare(&f.res[i-1].URI, &f.res[i].URI) < 0
		}
	}
	// Files are often written in order: that is checked as the index is
	// filled, in one pass. Otherwise the comparisons read the URIs side by
	// side, not in the Resources, 300 bytes apart (two cache lines a
	// comparison); the sort moves int32s, which the garbage collector need
	// not see moved.
	if sorted {
		return
	}
	uris := make([]identity.URI, len(f.res))
	for i := range uris {
		uris[i] = f.res[i].URI
	}
	slices.SortFunc(f.byURI, func(a, b int32) int { return uriCompare(&uris[a], &uris[b]) })
}

// uriCompare orders URIs by namespace, then path.
func uriCompare(a, b *identity.URI) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Path, b.Path)
}

// uriClash reports whether two resources of the indexed file f declare
// one URI, or URIs that differ only in letter case: what the checker's
// map of the URIs seen finds on the slow path, found on the fast path
// from the index (the slow path then words the error).
func (f *File) uriClash() bool {
	for i := 1; i < len(f.byURI); i++ {
		a, b := &f.res[f.byURI[i-1]].URI, &f.res[f.byURI[i]].URI
		if a.Namespace == b.Namespace && a.Path == b.Path {
			return true
		}
	}
	// Namespaces are lower-case; paths without an upper-case letter (or
	// a byte ToLower could change) that differ differ in lower case too.
	folds := false
	for i := range f.res {
		p := f.res[i].URI.Path
		for j := 0; j < len(p) && !folds; j++ {
			folds = p[j] >= 'A' && p[j] <= 'Z' || p[j] >= 0x80
		}
	}
	if !folds {
		return false
	}
	seen := make(map[[2]string]bool, len(f.res))
	for i := range f.res {
		u := &f.res[i].URI
		k := [2]string{u.Namespace, strings.ToLower(u.Path)}
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

// uriLess orders URIs as uriCompare does, for Lookup: a comparison
// with < is a fifth faster there than one with strings.Compare
// (BenchmarkLookup1000 82 against 103 us).
func uriLess(a, b identity.URI) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Path < b.Path
}

// Lookup returns the resource declared for u, ignoring u.Tag. A parsed
// file answers from its index, in logarithmic time; a run that mounts every
// declared resource would otherwise scan the list once per URI.
func (f *File) Lookup(u identity.URI) (*Resource, bool) {
	if f.lazy != nil {
		return f.lazy.lookup(u)
	}
	if f.byURI != nil && len(f.byURI) == len(f.res) {
		k := sort.Search(len(f.byURI), func(i int) bool { return !uriLess(f.res[f.byURI[i]].URI, u) })
		if k < len(f.byURI) {
			if r := &f.res[f.byURI[k]]; r.URI.Namespace == u.Namespace && r.URI.Path == u.Path {
				return r, true
			}
		}
		return nil, false
	}
	for i := range f.res {
		r := &f.res[i]
		if r.URI.Namespace == u.Namespace && r.URI.Path == u.Path {
			return r, true
		}
	}
	return nil, false
}

// Near returns the declared URI that u, which is not declared, is a slip
// of: one that differs from it only in the case of letters, or, for a path
// of four letters or more, by one letter (one inserted, removed or changed)
// in the same namespace; "" when none is. It looks at every declared resource, so it is
// for the error path.
func (f *File) Near(u identity.URI) string {
	if _, ok := f.Lookup(u); ok {
		return ""
	}
	typed := u.Namespace + "/" + u.Path
	near := ""
	res := f.Resources()
	for i := range res {
		r := res[i].URI
		name := r.Namespace + "/" + r.Path
		if strings.EqualFold(name, typed) {
			return identity.Scheme + name
		}
		if near == "" && r.Namespace == u.Namespace && len(u.Path) >= 4 && oneEdit(r.Path, u.Path) {
			near = identity.Scheme + name
		}
	}
	return near
}

// oneEdit reports whether a and b differ by exactly one byte inserted,
// removed or changed (URI paths are ASCII), in one pass.
func oneEdit(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 || a == b {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		return a[i+1:] == b[i+1:]
	}
	return a[i:] == b[i+1:]
}

// AdapterEnv is what the file allows sources to do.
func (f *File) AdapterEnv() sourcespec.Env {
	// max_redirects = 0 follows none; to the adapters 0 is "unset" (the
	// default) and a negative number none.
	redirects := f.Network.MaxRedirects
	if redirects == 0 {
		redirects = -1
	}
	return sourcespec.Env{
		BaseDir:  f.Dir,
		Roots:    append([]string(nil), f.Roots...),
		EnvAllow: append([]string(nil), f.EnvAllow...),
		Network: sourcespec.NetPolicy{
			AllowHosts:   append([]string(nil), f.Network.AllowHosts...),
			AllowCIDRs:   append(f.Network.AllowCIDRs[:0:0], f.Network.AllowCIDRs...),
			Timeout:      f.Network.Timeout,
			MaxRedirects: redirects,
		},
		MaxBytes: f.Defaults.MaxBytes,
		CacheDir: f.CacheDir,
	}
}
