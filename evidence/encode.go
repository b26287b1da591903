package evidence

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Marshal encodes a statement deterministically: fields in format order, map
// keys sorted, two-space indentation, no HTML escaping, a final newline. The
// output is byte for byte what encoding/json's Encoder produces with
// SetIndent("", "  ") and SetEscapeHTML(false) (a test holds it to that); it
// is written by hand because a 10,000-entry bundle with content is tens of
// megabytes and the generic indenting pass doubled the export time.
func Marshal(st *Statement) ([]byte, error) {
	if st == nil {
		return nil, fmt.Errorf("%w: nil statement", ErrInvalidInput)
	}
	e := &encoder{b: make([]byte, 0, estimateSize(st))}
	if err := e.statement(st); err != nil {
		return nil, fmt.Errorf("%w: encoding statement for manifest %q: %v", ErrInvalidInput, st.Predicate.ManifestID, err)
	}
	e.b = append(e.b, '\n')
	return e.b, nil
}

func estimateSize(st *Statement) int {
	n := 4096 + 512*len(st.Predicate.Resources)
	for i := range st.Predicate.Entries {
		e := &st.Predicate.Entries[i]
		n += 1024 + len(e.ContentB64) + len(e.b64) + base64.StdEncoding.EncodedLen(len(e.content))
	}
	if st.Predicate.Replay != nil {
		n += 384 * len(st.Predicate.Replay.Entries)
	}
	return n
}

type encoder struct {
	b   []byte
	tmp bytes.Buffer
}

func (e *encoder) nl(depth int) {
	e.b = append(e.b, '\n')
	for i := 0; i < depth; i++ {
		e.b = append(e.b, ' ', ' ')
	}
}

// field writes the separator, newline and indentation, then "name": .
func (e *encoder) field(depth int, name string, first bool) {
	if !first {
		e.b = append(e.b, ',')
	}
	e.nl(depth)
	e.str(name)
	e.b = append(e.b, ':', ' ')
}

func (e *encoder) str(s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			e.generic(0, s) // rare: let encoding/json escape it
			return
		}
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"')
}

func (e *encoder) int(n int64) { e.b = strconv.AppendInt(e.b, n, 10) }

func (e *encoder) bool(v bool) { e.b = strconv.AppendBool(e.b, v) }

// generic encodes any value with encoding/json (sorted map keys, no HTML
// escaping) and indents it for nesting depth.
func (e *encoder) generic(depth int, v any) error {
	e.tmp.Reset()
	enc := json.NewEncoder(&e.tmp)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	compact := bytes.TrimRight(e.tmp.Bytes(), "\n")
	if depth == 0 || (len(compact) > 0 && compact[0] != '{' && compact[0] != '[') {
		e.b = append(e.b, compact...)
		return nil
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, strings.Repeat("  ", depth), "  "); err != nil {
		return err
	}
	e.b = append(e.b, out.Bytes()...)
	return nil
}

func (e *encoder) statement(st *Statement) error {
	e.b = append(e.b, '{')
	e.field(1, "_type", true)
	e.str(st.Type)
	e.field(1, "subject", false)
	if st.Subject == nil {
		e.b = append(e.b, "null"...)
	} else if len(st.Subject) == 0 {
		e.b = append(e.b, "[]"...)
	} else {
		e.b = append(e.b, '[')
		for i, s := range st.Subject {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.nl(2)
			e.b = append(e.b, '{')
			e.field(3, "name", true)
			e.str(s.Name)
			e.field(3, "digest", false)
			if err := e.generic(3, s.Digest); err != nil {
				return err
			}
			e.nl(2)
			e.b = append(e.b, '}')
		}
		e.nl(1)
		e.b = append(e.b, ']')
	}
	e.field(1, "predicateType", false)
	e.str(st.PredicateType)
	e.field(1, "predicate", false)
	if err := e.predicate(&st.Predicate); err != nil {
		return err
	}
	e.nl(0)
	e.b = append(e.b, '}')
	return nil
}

func (e *encoder) predicate(p *Predicate) error {
	const d = 2
	e.b = append(e.b, '{')
	e.field(d, "run_id", true)
	e.str(p.RunID)
	e.field(d, "manifest_id", false)
	e.str(p.ManifestID)
	e.field(d, "manifest_created_at", false)
	e.str(p.ManifestCreatedAt)
	e.field(d, "generated_at", false)
	e.str(p.GeneratedAt)
	e.field(d, "exporter", false)
	e.b = append(e.b, '{')
	e.field(d+1, "name", true)
	e.str(p.Exporter.Name)
	e.field(d+1, "version", false)
	e.str(p.Exporter.Version)
	e.nl(d)
	e.b = append(e.b, '}')
	e.field(d, "merkle", false)
	e.b = append(e.b, '{')
	e.field(d+1, "algorithm", true)
	e.str(p.Merkle.Algorithm)
	e.field(d+1, "leaf", false)
	e.str(p.Merkle.Leaf)
	e.field(d+1, "root", false)
	e.str(p.Merkle.Root)
	if p.Merkle.LeafCount != nil {
		e.field(d+1, "leaf_count", false)
		e.int(int64(*p.Merkle.LeafCount))
	}
	e.nl(d)
	e.b = append(e.b, '}')

	e.field(d, "entries", false)
	if err := e.entries(d, p.Entries); err != nil {
		return err
	}
	e.field(d, "resources", false)
	if err := array(e, d, p.Resources, (*encoder).resource); err != nil {
		return err
	}
	if p.Replay != nil {
		e.field(d, "replay", false)
		if err := e.replay(d, p.Replay); err != nil {
			return err
		}
	}
	if p.Git != nil {
		e.field(d, "git", false)
		e.git(d, p.Git)
	}
	if len(p.ProofOfRead) > 0 {
		e.field(d, "proof_of_read", false)
		if err := e.generic(d, p.ProofOfRead); err != nil {
			return err
		}
	}
	if len(p.Receipts) > 0 {
		e.field(d, "receipts", false)
		if err := e.generic(d, p.Receipts); err != nil {
			return err
		}
	}
	e.nl(d - 1)
	e.b = append(e.b, '}')
	return nil
}

// array writes a JSON array of items at nesting depth d (the depth of the
// field holding it), each item an object written by one at depth d+1.
func array[T any](e *encoder, d int, items []T, one func(*encoder, int, *T) error) error {
	if items == nil {
		e.b = append(e.b, "null"...)
		return nil
	}
	if len(items) == 0 {
		e.b = append(e.b, "[]"...)
		return nil
	}
	e.b = append(e.b, '[')
	for i := range items {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.nl(d + 1)
		if err := one(e, d+1, &items[i]); err != nil {
			return err
		}
	}
	e.nl(d)
	e.b = append(e.b, ']')
	return nil
}

// entries writes the entries array as array does; a long one is split in
// runs of entries encoded on all cores, each into a buffer of its own, and
// joined in order.
func (e *encoder) entries(d int, items []BundleEntry) error {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || len(items) < 64 {
		return array(e, d, items, (*encoder).entry)
	}
	workers = min(workers, 8)
	chunk := (len(items) + 4*workers - 1) / (4 * workers)
	parts := make([]encoder, (len(items)+chunk-1)/chunk)
	errs := make([]error, len(parts))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= len(parts) {
					return
				}
				from, to := k*chunk, min((k+1)*chunk, len(items))
				size := 0
				for i := from; i < to; i++ {
					size += 1024 + len(items[i].ContentB64) + len(items[i].b64) + base64.StdEncoding.EncodedLen(len(items[i].content))
				}
				p := &parts[k]
				p.b = make([]byte, 0, size)
				for i := from; i < to && errs[k] == nil; i++ {
					if i > 0 {
						p.b = append(p.b, ',')
					}
					p.nl(d + 1)
					errs[k] = p.entry(d+1, &items[i])
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	e.b = append(e.b, '[')
	for k := range parts {
		e.b = append(e.b, parts[k].b...)
	}
	e.nl(d)
	e.b = append(e.b, ']')
	return nil
}

// stringMap writes a map as generic does; one whose values are all strings
// (provenance always) is written here: keys sorted bytewise, one member a
// line.
func (e *encoder) stringMap(d int, m map[string]any) error {
	if m == nil {
		return e.generic(d, m)
	}
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if _, ok := v.(string); !ok {
			return e.generic(d, m)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		e.b = append(e.b, '{', '}')
		return nil
	}
	sort.Strings(keys)
	e.b = append(e.b, '{')
	for i, k := range keys {
		e.field(d+1, k, i == 0)
		e.str(m[k].(string))
	}
	e.nl(d)
	e.b = append(e.b, '}')
	return nil
}

func (e *encoder) entry(d int, x *BundleEntry) error {
	e.b = append(e.b, '{')
	e.field(d+1, "position", true)
	e.int(int64(x.Position))
	e.field(d+1, "uri", false)
	e.str(x.URI)
	e.field(d+1, "snapshot_id", false)
	e.str(x.SnapshotID)
	e.field(d+1, "materialization_id", false)
	e.str(x.MaterializationID)
	e.field(d+1, "content_hash", false)
	e.str(x.ContentHash)
	e.field(d+1, "source_revision", false)
	e.str(x.SourceRevision)
	e.field(d+1, "observed_at", false)
	e.str(x.ObservedAt)
	e.field(d+1, "content_type", false)
	e.str(x.ContentType)
	e.field(d+1, "bytes", false)
	e.int(x.Bytes)
	e.field(d+1, "provenance", false)
	if err := e.stringMap(d+1, x.Provenance); err != nil {
		return err
	}
	if x.ContentB64 != "" {
		e.field(d+1, "content_b64", false)
		e.str(x.ContentB64)
	} else if len(x.b64) > 0 {
		// the text as Verify read it (rare: Marshal of a verified
		// statement)
		e.field(d+1, "content_b64", false)
		e.str(string(x.b64))
	} else if len(x.content) > 0 {
		// what e.str(base64 of content) writes: the alphabet needs no
		// escaping
		e.field(d+1, "content_b64", false)
		e.b = append(e.b, '"')
		e.b = base64.StdEncoding.AppendEncode(e.b, x.content)
		e.b = append(e.b, '"')
	}
	if x.Ref != "" {
		e.field(d+1, "ref", false)
		e.str(x.Ref)
	}
	e.nl(d)
	e.b = append(e.b, '}')
	return nil
}

func (e *encoder) resource(d int, x *BundleResource) error {
	e.b = append(e.b, '{')
	e.field(d+1, "uri", true)
	e.str(x.URI)
	e.field(d+1, "namespace", false)
	e.str(x.Namespace)
	e.field(d+1, "path", false)
	e.str(x.Path)
	if x.Source != nil {
		e.field(d+1, "source", false)
		e.b = append(e.b, '{')
		e.field(d+2, "kind", true)
		e.str(x.Source.Kind)
		e.field(d+2, "config", false)
		if err := e.generic(d+2, x.Source.Config); err != nil {
			return err
		}
		e.nl(d + 1)
		e.b = append(e.b, '}')
	}
	if x.Policy != nil {
		e.field(d+1, "policy", false)
		e.b = append(e.b, '{')
		e.field(d+2, "strategy", true)
		e.str(x.Policy.Strategy)
		if x.Policy.MaxAgeSeconds != 0 {
			e.field(d+2, "max_age_seconds", false)
			e.int(x.Policy.MaxAgeSeconds)
		}
		e.nl(d + 1)
		e.b = append(e.b, '}')
	}
	if x.Missing {
		e.field(d+1, "missing", false)
		e.bool(true)
	}
	e.nl(d)
	e.b = append(e.b, '}')
	return nil
}

func (e *encoder) replay(d int, r *BundleReplay) error {
	e.b = append(e.b, '{')
	e.field(d+1, "verified_at", true)
	e.str(r.VerifiedAt)
	e.field(d+1, "all_match", false)
	e.bool(r.AllMatch)
	e.field(d+1, "entries", false)
	if err := array(e, d+1, r.Entries, func(e *encoder, d int, x *BundleReplayEntry) error {
		e.b = append(e.b, '{')
		e.field(d+1, "position", true)
		e.int(int64(x.Position))
		e.field(d+1, "match", false)
		e.bool(x.Match)
		e.field(d+1, "expected_hash", false)
		e.str(x.ExpectedHash)
		e.field(d+1, "actual_hash", false)
		e.str(x.ActualHash)
		if x.Error != "" {
			e.field(d+1, "error", false)
			e.str(x.Error)
		}
		e.nl(d)
		e.b = append(e.b, '}')
		return nil
	}); err != nil {
		return err
	}
	if r.Error != "" {
		e.field(d+1, "error", false)
		e.str(r.Error)
	}
	e.nl(d)
	e.b = append(e.b, '}')
	return nil
}

func (e *encoder) git(d int, g *GitInfo) {
	e.b = append(e.b, '{')
	e.field(d+1, "manifest_commit", true)
	e.str(g.ManifestCommit)
	for _, f := range []struct{ name, value string }{
		{"tree", g.Tree}, {"run_ref", g.RunRef}, {"manifest_sha256", g.ManifestSHA256},
		{"commit_signer", g.CommitSigner}, {"store", g.Store},
	} {
		if f.value != "" {
			e.field(d+1, f.name, false)
			e.str(f.value)
		}
	}
	e.nl(d)
	e.b = append(e.b, '}')
}
