// Package manifest owns the manifest format: the ordered record of what one
// run was delivered. It encodes and decodes manifest.json, decides where each
// entry's bytes live in a manifest commit's tree, compares two manifests and
// renders the comparison as provenance lines and unified diffs.
//
// It knows nothing about git or sources: package store builds manifests from
// resolutions and writes them as commits; this package only defines the data
// and the rules that make them readable and diffable.
package manifest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/strictjson"
	"github.com/readproof/readproof/internal/text"
)

// Format names the version of manifest.json.
const Format = "readproof-manifest/1"

// Decisions record why an entry holds the bytes it holds.
const (
	DecisionFetch      = "fetch"       // the source was read now
	DecisionUseCurrent = "use_current" // allow_stale: the current snapshot was young enough
	DecisionUsePinned  = "use_pinned"  // pinned: the policy names the snapshot
	DecisionUseTag     = "use_tag"     // uri@tag: the tag names the snapshot; policy not consulted
)

// Entry is one delivered document, at one position of a run.
type Entry struct {
	Position       int               `json:"position"`
	URI            string            `json:"uri"`
	Ref            string            `json:"ref"`
	Snapshot       string            `json:"snapshot"`
	ContentHash    string            `json:"content_hash"`
	SourceRevision string            `json:"source_revision"`
	ObservedAt     time.Time         `json:"observed_at"`
	Decision       string            `json:"decision"`
	Bytes          int64             `json:"bytes"`
	ContentType    string            `json:"content_type"`
	Provenance     map[string]string `json:"provenance,omitempty"`
	// File is the path of the delivered bytes inside the manifest tree.
	File string `json:"file"`
	// Probe is set when the entry was delivered with a proof-of-read
	// sentinel appended (see docs/PROBE_PROTOCOL.md).
	Probe *Probe `json:"probe,omitempty"`
}

// Probe records a delivery with a sentinel line: the bucket it was issued
// for and the hash of the bytes actually delivered. The sentinel itself is
// never stored.
type Probe struct {
	Bucket        int64  `json:"bucket"`
	Length        int    `json:"length"`
	DeliveredHash string `json:"delivered_hash"`
	DeliveredSize int64  `json:"delivered_bytes"`
	// Session names the form of the entry's probe session:
	// ProbeSessionContent, or "" for an entry mounted before sessions were
	// bound to the content (docs/PROBE_PROTOCOL.md, §10.2). A reader that
	// does not know the member refuses the manifest (its decoding is
	// strict) instead of checking the entry under the wrong session.
	Session string `json:"session,omitempty"`
}

// ProbeSessionContent is Probe.Session of an entry whose session is
// RUNID.POSITION.cTAG, bound to its content.
const ProbeSessionContent = "content"

// Manifest is a committed run. ID is the manifest commit id; it is not part
// of manifest.json (a commit cannot name itself).
type Manifest struct {
	ID        string    `json:"-"`
	Format    string    `json:"format"`
	RunID     string    `json:"run_id"`
	StartedAt time.Time `json:"started_at"`
	CreatedAt time.Time `json:"created_at"`
	// Caller names who committed the run, when it came through an
	// authenticated front end (the token name of `readproof mcp --http`);
	// "" (omitted) otherwise.
	Caller  string  `json:"caller,omitempty"`
	Entries []Entry `json:"entries"`

	// TraceID is the W3C trace id (32 lowercase hex) of the trace the run
	// was committed in: the TRACEPARENT readproof was started with, or its
	// own trace when OTEL_* configures one (docs/observability.md). Runs
	// committed without a trace have no trace_id field.
	TraceID string `json:"trace_id,omitempty"`
}

// ErrInvalid is wrapped by every decoding and validation error.
var ErrInvalid = errors.New("invalid manifest")

// ErrNewerFormat is wrapped, with ErrInvalid, by the error of a manifest in
// a later format than Format (readproof-manifest/N, N > 1): one a newer
// readproof wrote, which this one cannot read, rather than a broken one.
var ErrNewerFormat = errors.New("written by a newer version of readproof")

// MaxBytes is the largest manifest.json readproof writes or reads (64 MiB;
// docs/store-format.md, "Manifest"). A 10,000-document run's manifest is
// a few MB; a larger one is refused on write (split the run) and on every
// read before its content is inflated, so a forged manifest padded with
// whitespace cannot make a pull hold gigabytes.
const MaxBytes = 64 << 20

// Encode returns manifest.json: indented JSON with a trailing newline,
// entries in position order, map keys sorted (encoding/json sorts maps).
func Encode(m *Manifest) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	// The document without its entries, then each entry encoded on its own
	// into the one buffer: the same bytes as encoding the whole manifest
	// (TestEncodeMatchesWholeDocument), without encoding/json's scratch
	// copies of the whole document (about nine times a 10,000-entry
	// manifest's 6 MB).
	head, cut, err := encodeHead(m)
	if err != nil || len(m.Entries) == 0 {
		return head, err
	}
	var buf bytes.Buffer
	buf.Grow(len(head) + 700*len(m.Entries))
	buf.Write(head[:cut])
	enc := newEntryEncoder(&buf)
	for i := range m.Entries {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(entryIndent)
		if err := enc.Encode(&m.Entries[i]); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
	buf.WriteString(entriesEnd)
	buf.Write(head[cut:])
	return buf.Bytes(), nil
}

// entryIndent comes before each entry of manifest.json, after the comma
// that separates it from the one before; entriesEnd after the last.
const (
	entryIndent = "\n    "
	entriesEnd  = "\n  "
)

// encodeHead encodes m without its entries. When m has entries, the
// returned document has an empty entries list and cut is the offset of its
// closing bracket, where the entries go.
func encodeHead(m *Manifest) (head []byte, cut int, err error) {
	cp := *m
	cp.Format = Format
	if len(m.Entries) > 0 {
		cp.Entries = []Entry{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&cp); err != nil {
		return nil, 0, err
	}
	if len(m.Entries) == 0 {
		return b.Bytes(), 0, nil
	}
	const mark = "\n  \"entries\": []"
	cut = bytes.Index(b.Bytes(), []byte(mark))
	if cut < 0 {
		return nil, 0, errors.New("encode manifest: no entries field")
	}
	return b.Bytes(), cut + len(mark) - 1, nil
}

// newEntryEncoder encodes entries as manifest.json holds them (each
// followed by a newline the caller drops).
func newEntryEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent("    ", "  ")
	enc.SetEscapeHTML(false)
	return enc
}

// Decode parses manifest.json strictly: unknown fields, a wrong format, bad
// positions, invalid URIs or hashes are errors.
func Decode(data []byte) (*Manifest, error) {
	m, ok := decodeFast(data)
	if !ok {
		var err error
		if m, err = decodeJSON(data); err != nil {
			// a later format may add members this one refuses: say
			// which format it is rather than what it does not know
			var f struct {
				Format string `json:"format"`
			}
			if json.Unmarshal(data, &f) == nil && newerFormat(f.Format) {
				return nil, formatError(f.Format)
			}
			return nil, err
		}
	}
	if m.Format != Format {
		return nil, formatError(m.Format)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// newerFormat reports whether f names a later manifest format than Format.
func newerFormat(f string) bool {
	n, ok := strings.CutPrefix(f, "readproof-manifest/")
	if !ok || n == "" || n == "1" || n[0] == '0' || len(n) > 9 {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// formatError is the error of a manifest in format f, not Format.
func formatError(f string) error {
	if newerFormat(f) {
		return &newerFormatError{fmt.Errorf("%w: format %q, %w: this one reads %q", ErrInvalid, f, ErrNewerFormat, Format)}
	}
	return fmt.Errorf("%w: format %q, want %q", ErrInvalid, f, Format)
}

// newerFormatError is formatError's error for a later format: it carries
// what the user can do (the Hint method the CLI prints on its hint line,
// as internal/hint's errors do), wherever the error surfaces.
type newerFormatError struct{ err error }

func (e *newerFormatError) Error() string { return e.err.Error() }
func (e *newerFormatError) Unwrap() error { return e.err }
func (e *newerFormatError) Hint() string {
	return "a newer readproof wrote it: upgrade readproof to read it (`readproof version` shows this one)"
}

// decodeJSON is Decode's reading of any JSON, with encoding/json. First the
// member names: encoding/json matches them without regard to case and keeps
// the last of repeated ones, while jq and Python read them otherwise, so a
// manifest spelling "Run_ID", or naming "snapshot" twice, would be one run to
// readproof and another to an auditor's tool (internal/strictjson).
func decodeJSON(data []byte) (*Manifest, error) {
	if err := strictjson.Check(data, strictjson.Type(reflect.TypeFor[Manifest]())); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the manifest object", ErrInvalid)
	}
	return &m, nil
}

// Validate checks the invariants every manifest keeps.
//
// It reports the first fault in entry order, as checking entry after entry
// would (and within an entry, its file last). A large manifest's entries are
// checked in two halves side by side, the second on a goroutine of its own,
// while the files are checked for duplicates in one pass after the first
// half; of the faults found the earliest entry's is reported.
func (m *Manifest) Validate() error {
	if err := checkHeader(m.RunID, m.Caller); err != nil {
		return err
	}
	mid := len(m.Entries)
	var second chan entryFault
	if len(m.Entries) >= validateSplit {
		mid = len(m.Entries) / 2
		second = make(chan entryFault, 1)
		go func() { second <- checkEntries(m.Entries, mid, len(m.Entries)) }()
	}
	f := checkEntries(m.Entries, 0, mid)
	ff := checkFiles(m.Entries)
	if second != nil {
		if g := <-second; f.err == nil {
			f = g
		}
	}
	if f.err != nil && (ff.err == nil || f.index <= ff.index) {
		return f.err
	}
	if ff.err != nil {
		return ff.err
	}
	if m.TraceID != "" && !IsTraceID(m.TraceID) {
		return fmt.Errorf("%w: trace_id %q is not a W3C trace id (32 lowercase hex digits, not all zero)", ErrInvalid, m.TraceID)
	}
	return nil
}

// checkHeader checks a manifest's run id and caller (Validate, and
// DecodeView's reader).
func checkHeader(runID, caller string) error {
	if err := identity.ValidateRunID(runID); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if caller != "" {
		if err := identity.ValidateCaller(caller); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalid, err)
		}
	}
	return nil
}

// validateSplit is the number of entries from which Validate checks them in
// two halves side by side.
const validateSplit = 512

// entryFault is the first fault found in a range of entries (err nil: none).
type entryFault struct {
	index int
	err   error
}

// checkEntries checks entries[lo:hi] on their own (their files aside).
func checkEntries(entries []Entry, lo, hi int) entryFault {
	for i := lo; i < hi; i++ {
		e := &entries[i]
		if e.Position != i {
			return entryFault{i, fmt.Errorf("%w: entry %d has position %d", ErrInvalid, i, e.Position)}
		}
		if err := checkEntry(i, e.URI, e.Ref, e.Snapshot, e.ContentHash, e.Decision, e.Bytes); err != nil {
			return entryFault{i, err}
		}
		if e.Probe != nil && e.Probe.Session != "" && e.Probe.Session != ProbeSessionContent {
			return entryFault{i, fmt.Errorf("%w: entry %d: probe session %q (this readproof knows %q)", ErrInvalid, i, e.Probe.Session, ProbeSessionContent)}
		}
	}
	return entryFault{index: -1}
}

// checkEntry checks entry i's fields but its position and file
// (checkEntries, and DecodeView's reader).
func checkEntry(i int, uri, ref, snapshot, hash, decision string, bytes int64) error {
	u, err := identity.ParseURI(uri)
	if err != nil || u.Tag != "" {
		return fmt.Errorf("%w: entry %d: uri %q", ErrInvalid, i, uri)
	}
	if ref != "" {
		if err := identity.ValidateTag(ref); err != nil {
			return fmt.Errorf("%w: entry %d: %v", ErrInvalid, i, err)
		}
	}
	if !identity.IsObjectID(snapshot) {
		return fmt.Errorf("%w: entry %d: snapshot %q is not an object id", ErrInvalid, i, snapshot)
	}
	if !IsContentHash(hash) {
		return fmt.Errorf("%w: entry %d: content hash %q", ErrInvalid, i, hash)
	}
	switch decision {
	case DecisionFetch, DecisionUseCurrent, DecisionUsePinned, DecisionUseTag:
	default:
		return fmt.Errorf("%w: entry %d: decision %q", ErrInvalid, i, decision)
	}
	if bytes < 0 {
		return fmt.Errorf("%w: entry %d: negative size", ErrInvalid, i)
	}
	return nil
}

// checkFiles finds the first entry whose file is outside content/ or
// repeats an earlier entry's.
func checkFiles(entries []Entry) entryFault {
	files := make(map[string]bool, len(entries))
	for i := range entries {
		e := &entries[i]
		if e.File != "" {
			if !strings.HasPrefix(e.File, "content/") || files[e.File] {
				return entryFault{i, fmt.Errorf("%w: entry %d: file %q", ErrInvalid, i, e.File)}
			}
			files[e.File] = true
		}
	}
	return entryFault{index: -1}
}

// IsTraceID reports whether s is a W3C trace id: 32 lowercase hex digits,
// not all zero.
func IsTraceID(s string) bool {
	if len(s) != 32 || strings.Trim(s, "0") == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// IsContentHash reports whether s is "sha256:" followed by 64 lower-case hex.
func IsContentHash(s string) bool {
	const p = "sha256:"
	if len(s) != len(p)+64 || !strings.HasPrefix(s, p) {
		return false
	}
	return lowerHex(s[len(p):])
}

// lowerHex reports whether s is lower-case hex digits only, eight bytes at
// a time while eight are left: one test per word instead of a
// hard-to-predict branch per digit (Validate checks 64 per entry).
func lowerHex(s string) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for len(s) >= 8 {
		w := binary.LittleEndian.Uint64([]byte(s[:8]))
		// Below 0x80 each byte plus at most 0x80 stays below 0x100, so
		// bytes add without carries: x+(0x80-lo) has its high bit set
		// exactly when x >= lo.
		ge := func(lo uint64) uint64 { return w + ones*(0x80-lo) }
		if w&highs != 0 || (ge('0')&^ge('9'+1)|ge('a')&^ge('f'+1))&highs != highs {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// AssignFiles gives every entry its File: content/NAMESPACE/PATH, with
// "@TAG" appended for entries mounted by tag, and "~POSITION" appended when
// the same name is already taken in this manifest or a document's name is
// also needed as a directory (resource a/b and a/b/c in one run).
func AssignFiles(entries []Entry) {
	taken := map[string]bool{}
	dirs := map[string]bool{}
	names := make([]string, len(entries))
	for i, e := range entries {
		u, _ := identity.ParseURI(e.URI)
		name := "content/" + u.Namespace + "/" + u.Path
		if e.Ref != "" {
			name += "@" + e.Ref
		}
		names[i] = name
		for d := name; ; {
			j := strings.LastIndexByte(d, '/')
			if j < 0 {
				break
			}
			d = d[:j]
			dirs[d] = true
		}
	}
	for i := range entries {
		name := names[i]
		if taken[name] || dirs[name] {
			name = fmt.Sprintf("%s~%d", name, entries[i].Position)
		}
		taken[name] = true
		entries[i].File = name
	}
}

// Short abbreviates an object id or content hash for tables.
func Short(s string) string {
	if strings.HasPrefix(s, "sha256:") && len(s) > 19 {
		return s[:19]
	}
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// Message is the commit message of a manifest commit: a summary line, the
// entries as a table, and trailers naming the run.
func Message(m *Manifest) string {
	var b strings.Builder
	n := len(m.Entries)
	size := 2*len(m.RunID) + 96
	for i := range m.Entries {
		e := &m.Entries[i]
		size += len(e.URI) + len(e.Ref) + len(e.Decision) + 64
	}
	b.Grow(size) // at least the message: one allocation, not a doubling series
	fmt.Fprintf(&b, "readproof run %s: %d %s\n\n", m.RunID, n, text.Plural(n, "entry", "entries"))
	for _, e := range m.Entries {
		ref := e.Ref
		if ref == "" {
			ref = "-"
		}
		fmt.Fprintf(&b, "%d %s ref=%s %s %s %s\n", e.Position, e.URI, ref, Short(e.Snapshot), Short(e.ContentHash), e.Decision)
	}
	if n > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Readproof-Run: %s\nReadproof-Entries: %d\n", m.RunID, n)
	return b.String()
}

// SortedKeys returns a map's keys in order (for stable text output).
func SortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
