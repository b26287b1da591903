package policy

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/readproof/readproof/adapters/sourcespec"
)

// The raw document: what BurntSushi/toml decodes into. Pointers mark keys
// whose absence matters. The struct tags are the schema: the type check and
// the did-you-mean hints read the toml names from them, "want" describes the
// expected value in type errors and "hint" says how to write it.
type rawFile struct {
	Version  *int64        `toml:"version" hint:"write version = 1"`
	Defaults rawDefaults   `toml:"defaults"`
	Sources  rawSources    `toml:"sources"`
	Network  rawNetwork    `toml:"network"`
	Signing  rawSigning    `toml:"signing"`
	Probe    rawKey        `toml:"probe"`
	Receipts rawKey        `toml:"receipts"`
	Resource []rawResource `toml:"resource" want:"an array of tables" hint:"declare each resource in its own [[resource]] block (double brackets)"`
}

type rawDefaults struct {
	Policy   *string    `toml:"policy" hint:"write policy = \"require_fresh\", \"allow_stale\" or \"pinned\""`
	MaxAge   *string    `toml:"max_age" want:"a duration string" hint:"write a duration such as \"90s\", \"15m\", \"1h\" or \"7d\""`
	MaxBytes *sizeValue `toml:"max_bytes" want:"a size" hint:"write a size such as \"4096\", \"512KiB\", \"10MiB\" or \"1GiB\""`
}

type rawSources struct {
	Roots    *[]string `toml:"roots" hint:"write roots = [\".\", \"docs\"]"`
	Env      []string  `toml:"env" hint:"write env = [\"POLICY_TOKEN\"]"`
	CacheDir *string   `toml:"cache_dir" hint:"write cache_dir = \"~/.cache/readproof/git\""`
}

type rawNetwork struct {
	AllowHosts   []string `toml:"allow_hosts" hint:"write allow_hosts = [\"policies.internal\"]"`
	AllowCIDRs   []string `toml:"allow_cidrs" hint:"write allow_cidrs = [\"10.0.0.0/8\"]"`
	Timeout      *string  `toml:"timeout" want:"a duration string" hint:"write a duration such as \"30s\" or \"2m\""`
	MaxRedirects *int64   `toml:"max_redirects" hint:"write max_redirects = 5"`
}

type rawSigning struct {
	Key            *string `toml:"key" want:"a path string" hint:"write key = \"~/.config/readproof/evidence_ed25519\""`
	AllowedSigners *string `toml:"allowed_signers" want:"a path string" hint:"write allowed_signers = \"allowed_signers\""`
}

type rawKey struct {
	Key *string `toml:"key" want:"a path string" hint:"write key = \"PATH\", a file outside every repository"`
}

type rawResource struct {
	URI         *string          `toml:"uri" hint:"write uri = \"readproof://NAMESPACE/PATH\""`
	Policy      *string          `toml:"policy" hint:"write policy = \"require_fresh\", \"allow_stale\" or \"pinned\""`
	MaxAge      *string          `toml:"max_age" want:"a duration string" hint:"write a duration such as \"90s\", \"15m\", \"1h\" or \"7d\""`
	Snapshot    *string          `toml:"snapshot" want:"a snapshot id string" hint:"write snapshot = \"<40-hex snapshot id>\", as readproof history URI prints it"`
	ContentType *string          `toml:"content_type" hint:"write content_type = \"text/markdown\""`
	Description *string          `toml:"description" hint:"write description = \"one line of text\""`
	Source      *sourcespec.Spec `toml:"source" hint:"write source = { type = \"filesystem\", path = \"docs/file.md\" }"`

	// Filled by the fast path (fastResource), which may reuse the memory
	// of the tree it read the resource from: line is where the resource's
	// table starts, srcKeys the keys its source sets (a bit for each of
	// sourceKeys), and vals holds the strings the fields above point at.
	line    int
	srcKeys uint16
	vals    [6]string
}

// sizeValue accepts a size string ("10MiB") or a plain integer.
type sizeValue struct{ v any }

func (s *sizeValue) UnmarshalTOML(v any) error { s.v = v; return nil }

var (
	sizeType    = reflect.TypeOf(sizeValue{})
	rawFileType = reflect.TypeOf(rawFile{})
)

type fieldSet struct {
	names  []string
	fields map[string]reflect.StructField
}

var fieldCache sync.Map // reflect.Type -> fieldSet

// tomlFields lists the fields of struct type t by toml name, in order.
func tomlFields(t reflect.Type) (names []string, fields map[string]reflect.StructField) {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(fieldSet).names, fs.(fieldSet).fields
	}
	defer func() { fieldCache.Store(t, fieldSet{names, fields}) }()
	fields = map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		names = append(names, name)
		fields[name] = f
	}
	return names, fields
}

// checkTypes walks the generic tree v (as BurntSushi decodes into
// map[string]any) against the raw document type t, reporting unknown keys
// and values of the wrong type with their exact paths. Parse uses it when
// decoding into rawFile failed, because BurntSushi's own type errors name
// the line of the last [[resource]] rather than the one at fault.
func (c *checker) checkTypes(p *keyPath, v any, t reflect.Type, want, hint string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if want == "" {
		want = describeType(t)
	}
	bad := func() {
		c.add(p, fmt.Sprintf("want %s, got %s", want, tomlTypeName(v)), hint, nil)
	}
	switch {
	case t == sizeType:
		switch v.(type) {
		case string, int64:
		default:
			bad()
		}
	case t.Kind() == reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			bad()
			return
		}
		names, fields := tomlFields(t)
		for _, k := range c.sortedKeys(p, m) {
			f, ok := fields[k]
			if !ok {
				c.add(p.child(k), "unknown key", unknownHint(k, names), nil)
				continue
			}
			c.checkTypes(p.child(k), m[k], f.Type, f.Tag.Get("want"), f.Tag.Get("hint"))
		}
	case t.Kind() == reflect.Slice:
		var elems []any
		switch a := v.(type) {
		case []any:
			elems = a
		case []map[string]any:
			for _, e := range a {
				elems = append(elems, e)
			}
		default:
			bad()
			return
		}
		for i, e := range elems {
			c.checkTypes(p.index(i+1), e, t.Elem(), "", hint)
		}
	case t.Kind() == reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			bad()
			return
		}
		for _, k := range c.sortedKeys(p, m) {
			c.checkTypes(p.child(k), m[k], t.Elem(), "", `write the value as a quoted string`)
		}
	case t.Kind() == reflect.String:
		if _, ok := v.(string); !ok {
			bad()
		}
	case t.Kind() == reflect.Int64:
		if _, ok := v.(int64); !ok {
			bad()
		}
	default:
		c.add(p, fmt.Sprintf("internal error: no type check for %s", t), "", nil)
	}
}

// sortedKeys orders the keys of a table as they appear in the file.
func (c *checker) sortedKeys(p *keyPath, m map[string]any) []string {
	type kl struct {
		k    string
		line int
	}
	order := make([]kl, 0, len(m))
	for k := range m {
		order = append(order, kl{k, c.pos.lineOf(p.child(k))})
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].line != order[j].line {
			return order[i].line < order[j].line
		}
		return order[i].k < order[j].k
	})
	keys := make([]string, len(order))
	for i, o := range order {
		keys[i] = o.k
	}
	return keys
}

func unknownHint(k string, valid []string) string {
	if s := suggest(k, valid); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	if len(valid) == 0 {
		return "remove it"
	}
	return "valid keys here: " + strings.Join(valid, ", ")
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int64:
		return "an integer"
	case reflect.Struct:
		return "a table"
	case reflect.Map:
		return "a table of strings"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
		return "an array of tables"
	}
	return t.String()
}

func tomlTypeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case time.Time:
		return "a date-time"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}
