package manifest

import (
	"bytes"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"time"
)

// View is what `readproof manifest` shows of a manifest: the run, when it
// was committed, and for each entry its position, document, tag, snapshot,
// content hash, decision and whether it was probed. ID is the manifest
// commit id, set by whoever read the commit.
type View struct {
	ID        string
	RunID     string
	CreatedAt time.Time
	Caller    string
	TraceID   string
	Entries   []ViewEntry
}

// ViewEntry is the part of an Entry a View keeps.
type ViewEntry struct {
	Position    int
	URI         string
	Ref         string
	Snapshot    string
	ContentHash string
	Decision    string
	Probed      bool // the entry has a Probe
}

// ViewOf is the View of m.
func ViewOf(m *Manifest) *View {
	v := &View{ID: m.ID, RunID: m.RunID, CreatedAt: m.CreatedAt, Caller: m.Caller, TraceID: m.TraceID}
	if len(m.Entries) > 0 {
		v.Entries = make([]ViewEntry, len(m.Entries))
	}
	for i := range m.Entries {
		e := &m.Entries[i]
		v.Entries[i] = ViewEntry{Position: e.Position, URI: e.URI, Ref: e.Ref, Snapshot: e.Snapshot,
			ContentHash: e.ContentHash, Decision: e.Decision, Probed: e.Probe != nil}
	}
	return v
}

// DecodeView is ViewOf(Decode(data)): it accepts and refuses what Decode
// does, with Decode's errors. A manifest as Encode writes it is read without
// building its Manifest: the fields the View does not keep (times of
// observation, provenance, sizes, files, probes) are checked as Decode
// checks them and dropped, and the strings the View keeps are cut from one
// buffer that holds only them. At 10,000 entries Decode made a string of
// the whole 6 MB text and 10,000 provenance maps, and the collection that
// followed cost as much as the reading.
func DecodeView(data []byte) (*View, error) {
	if v, ok := decodeViewFast(data); ok {
		return v, nil
	}
	m, err := Decode(data)
	if err != nil {
		return nil, err
	}
	return ViewOf(m), nil
}

// decodeViewFast reads a View when decodeFast would read the manifest and
// Validate accept it, and the strings the View keeps have no escapes; on
// anything else it gives up (ok false) and DecodeView decodes the whole
// manifest, whose reading decides and words the error.
// FuzzDecodeViewMatchesDecode holds it to ViewOf(Decode).
func decodeViewFast(data []byte) (v *View, ok bool) {
	return decodeViewFastSplit(data, splitAt)
}

// decodeViewFastSplit is decodeViewFast that reads the second half of the
// entries on a goroutine of its own when at least minSplit bytes of text
// follow their opening bracket, as decodeFastSplit does.
func decodeViewFastSplit(data []byte, minSplit int) (v *View, ok bool) {
	v, _, ok = decodeViewFastKeep(data, minSplit, nil)
	return v, ok
}

// decodeViewFastKeep is decodeViewFastSplit that also reads whole the
// entries at the positions keep accepts (nil: none), into the reader's
// wholes, which it returns.
func decodeViewFastKeep(data []byte, minSplit int, keep func(i int) bool) (v *View, d *viewJSON, ok bool) {
	d = &viewJSON{fastJSON: fastJSON{b: data}, seed: maphash.MakeSeed(), filesOK: true, keep: keep}
	v = &View{}
	format := false
	ok = d.fields(func(key []byte) (bit uint, ok bool) {
		switch string(key) {
		case "format":
			var s []byte
			s, ok = d.value()
			bit, format = 1, string(s) == Format
		case "run_id":
			bit, ok = 2, d.str(&v.RunID)
		case "started_at":
			bit, ok = 4, d.time(&d.started)
		case "created_at":
			bit, ok = 8, d.time(&v.CreatedAt)
		case "caller":
			bit, ok = 16, d.str(&v.Caller)
		case "trace_id":
			bit, ok = 32, d.str(&v.TraceID)
		case "entries":
			bit, ok = 64, d.entries(v, minSplit)
		}
		return
	})
	if !ok || !d.end() || !format || !d.valid(v) {
		return nil, nil, false
	}
	return v, d, true
}

// viewJSON is the reader of decodeViewFast: fastJSON's, with the buffer
// the View's strings are cut from and what the check of the entries'
// files needs.
type viewJSON struct {
	fastJSON
	arena strings.Builder
	// files holds a hash of each entry's file (filesOK: all are under
	// content/); two the same give up, Validate deciding. seed hashes
	// them and the keys of a provenance.
	files   []uint64
	filesOK bool
	seed    maphash.Seed
	// keys are the hashes of the keys of the provenance being read.
	provKeys []uint64
	// keep, when set, names the positions of the entries read whole as
	// well, into wholes (DecodeSome); started is the run's start.
	keep    func(i int) bool
	wholes  []Entry
	started time.Time
}

// value reads a string value and returns its unescaped bytes (valid until
// the next string is read).
func (d *viewJSON) value() ([]byte, bool) {
	d.space()
	return d.raw()
}

// kept reads a string without escapes into the arena.
func (d *viewJSON) kept(dst *string) bool {
	d.space()
	start := d.i
	s, ok := d.raw()
	if !ok || d.i-start != len(s)+2 {
		return false
	}
	if len(s) == 0 {
		*dst = ""
		return true
	}
	// Bytes written to a strings.Builder are never written again: a
	// string of them stays as it is while the builder grows.
	n := d.arena.Len()
	d.arena.Write(s)
	*dst = d.arena.String()[n:]
	return true
}

// entries reads the entries array into v.Entries, the second half on a
// goroutine of its own from minSplit bytes of text on (see
// fastJSON.entries: the same split, and the same reason why what the
// goroutine read is what reading on would have read).
func (d *viewJSON) entries(v *View, minSplit int) bool {
	v.Entries = nil
	if !d.byte('[') {
		return false
	}
	if d.byte(']') {
		return true
	}
	end := len(d.b)
	var rest chan viewTail
	if len(d.b)-d.i >= minSplit {
		if brace := d.splitBrace(); brace >= 0 {
			end = brace + 1
			rest = make(chan viewTail, 1)
			go func() { rest <- d.tail(end) }()
		}
	}
	drop := func() {
		if rest != nil {
			<-rest
		}
	}
	first := d.i
	for {
		if len(v.Entries) == 1 {
			d.room(&v.Entries, first, end, len(d.b))
		}
		v.Entries = append(v.Entries, ViewEntry{})
		if e, start := &v.Entries[len(v.Entries)-1], d.i; !d.entry(e) || e.Position != len(v.Entries)-1 || !d.whole(e.Position, start) {
			drop()
			return false
		}
		if rest != nil && d.i == end {
			t := <-rest
			if !t.ok || t.first != len(v.Entries) {
				return false
			}
			v.Entries = append(v.Entries, t.entries...)
			d.wholes = append(d.wholes, t.kept...)
			d.files = append(d.files, t.files...)
			d.filesOK = d.filesOK && t.filesOK
			d.i = t.end
			return true
		}
		if d.byte(',') {
			continue
		}
		drop()
		return d.byte(']')
	}
}

// viewTail is what tail read.
type viewTail struct {
	entries []ViewEntry
	kept    []Entry
	first   int // the position of the first entry
	files   []uint64
	filesOK bool
	end     int // just after the closing bracket
	ok      bool
}

// tail reads, from i on, what follows an entry: "," and entries up to the
// closing bracket, with a reader of its own; their positions follow the
// first one's.
func (d *viewJSON) tail(i int) viewTail {
	t := &viewJSON{fastJSON: fastJSON{b: d.b, i: i}, seed: d.seed, filesOK: true, keep: d.keep}
	if !t.byte(',') {
		return viewTail{}
	}
	t.space()
	first := t.i
	var es []ViewEntry
	for {
		if len(es) == 1 {
			t.room(&es, first, len(t.b), len(t.b))
		}
		es = append(es, ViewEntry{})
		if e, start := &es[len(es)-1], t.i; !t.entry(e) || e.Position != es[0].Position+len(es)-1 || !t.whole(e.Position, start) {
			return viewTail{}
		}
		if t.byte(',') {
			continue
		}
		if !t.byte(']') {
			return viewTail{}
		}
		return viewTail{entries: es, kept: t.wholes, first: es[0].Position, files: t.files, filesOK: t.filesOK, end: t.i, ok: true}
	}
}

// room makes room, once one entry (from first to d.i) is read, for as many
// entries and file hashes as the text up to all holds at that size and
// arena bytes for those up to own, and an eighth more (as fastJSON's
// room): the head of split entries reads up to own, and the tail's entries
// and files are appended to its own without growing them.
func (d *viewJSON) room(es *[]ViewEntry, first, own, all int) {
	per := d.i - first
	if per <= 0 {
		return
	}
	more := func(end int) int {
		n := (end - d.i) / per
		return n + n/8 + 16
	}
	n := more(all)
	*es = append(make([]ViewEntry, 0, len(*es)+n), *es...)
	d.files = slices.Grow(d.files, n)
	d.arena.Grow(more(own) * (d.arena.Len() + 8))
}

// decisions are the values an entry's decision may take, as the strings
// the View gives (none is cut from the arena).
var decisions = [...]string{DecisionFetch, DecisionUseCurrent, DecisionUsePinned, DecisionUseTag}

// entry reads an entry into e, and checks it as Validate does while its
// strings are in the cache, but for its position, which the caller checks,
// and its file, whose check valid finishes. An entry as Encode writes it
// is read by canonical, any other by the fields in any order.
func (d *viewJSON) entry(e *ViewEntry) bool {
	var f entryFields
	start, files, filesOK := d.i, len(d.files), d.filesOK
	ok := d.canonical(e, &f)
	if !ok {
		d.i, d.files, d.filesOK = start, d.files[:files], filesOK
		*e, f = ViewEntry{}, entryFields{}
		ok = d.fields(func(key []byte) (bit uint, ok bool) {
			switch string(key) {
			case "position":
				bit, ok = 1, d.position(e)
			case "uri":
				bit, ok = 2, d.kept(&e.URI)
			case "ref":
				bit, ok = 4, d.kept(&e.Ref)
			case "snapshot":
				bit, ok = 8, d.kept(&e.Snapshot)
			case "content_hash":
				bit, ok = 16, d.kept(&e.ContentHash)
			case "source_revision":
				bit, ok = 32, d.skip()
			case "observed_at":
				bit, ok = 64, d.observed()
			case "decision":
				bit, ok = 128, d.decision(e, &f)
			case "bytes":
				bit, ok = 256, d.int(&f.bytes, 64)
			case "content_type":
				bit, ok = 512, d.skip()
			case "file":
				bit, ok = 1024, d.file()
			case "provenance":
				bit, ok = 2048, d.provenance()
			case "probe":
				bit, ok = 4096, d.probed(e)
			}
			return
		})
	}
	return ok && f.decided && checkEntry(e.Position, e.URI, e.Ref, e.Snapshot, e.ContentHash, e.Decision, f.bytes) == nil
}

// whole reads again, whole, the entry at position i just read from start
// when keep accepts i, into wholes (true when there is nothing to read). Its
// strings are copies of their own (fastJSON's text is not set): a kept
// entry holds none of the manifest's text.
func (d *viewJSON) whole(i, start int) bool {
	if d.keep == nil || !d.keep(i) {
		return true
	}
	end := d.i
	d.i = start
	var e Entry
	if !d.fastJSON.entry(&e) || d.i != end {
		return false
	}
	d.wholes = append(d.wholes, e)
	return true
}

// entryFields is what entry reads of an entry besides e: its size, and
// whether its decision is one of decisions.
type entryFields struct {
	bytes   int64
	decided bool
}

// canonical reads an entry laid out as Encode writes it: its fields in the
// order of Entry's, each on a line of its own indented by six spaces, and
// the brace that ends it indented by four. The keys are matched as text
// (with the whitespace between them), the values read as entry's reading
// of any order reads them; on any other text it gives up (false), leaving
// d.i, e and the files for entry to start again.
func (d *viewJSON) canonical(e *ViewEntry, f *entryFields) bool {
	const lead = ",\n      \""
	d.space()
	if !(d.lit("{\n      \"position\": ") && d.position(e) &&
		d.lit(lead+"uri\": ") && d.kept(&e.URI) &&
		d.lit(lead+"ref\": ") && d.kept(&e.Ref) &&
		d.lit(lead+"snapshot\": ") && d.kept(&e.Snapshot) &&
		d.lit(lead+"content_hash\": ") && d.kept(&e.ContentHash) &&
		d.lit(lead+"source_revision\": ") && d.skip() &&
		d.lit(lead+"observed_at\": ") && d.observed() &&
		d.lit(lead+"decision\": ") && d.decision(e, f) &&
		d.lit(lead+"bytes\": ") && d.int(&f.bytes, 64) &&
		d.lit(lead+"content_type\": ") && d.skip()) {
		return false
	}
	if d.lit(lead+"provenance\": ") && !d.provenance() {
		return false
	}
	if !d.lit(lead+"file\": ") || !d.file() {
		return false
	}
	if d.lit(lead+"probe\": ") && !d.probed(e) {
		return false
	}
	return d.lit("\n    }")
}

// lit consumes s if the text at d.i starts with it.
func (d *viewJSON) lit(s string) bool {
	if len(d.b)-d.i < len(s) || string(d.b[d.i:d.i+len(s)]) != s {
		return false
	}
	d.i += len(s)
	return true
}

// position reads an entry's position.
func (d *viewJSON) position(e *ViewEntry) bool {
	var n int64
	ok := d.int(&n, strconv.IntSize)
	e.Position = int(n)
	return ok
}

// skip reads a string and keeps nothing of it.
func (d *viewJSON) skip() bool {
	_, ok := d.value()
	return ok
}

// observed reads an entry's time of observation and keeps nothing of it.
func (d *viewJSON) observed() bool {
	var t time.Time
	return d.time(&t)
}

// decision reads an entry's decision: f.decided when it is one of
// decisions.
func (d *viewJSON) decision(e *ViewEntry, f *entryFields) bool {
	s, ok := d.value()
	if ok {
		i := slices.Index(decisions[:], string(s))
		if f.decided = i >= 0; f.decided {
			e.Decision = decisions[i]
		}
	}
	return ok
}

// file reads an entry's file into the files' check.
func (d *viewJSON) file() bool {
	s, ok := d.value()
	if ok && len(s) > 0 {
		d.filesOK = d.filesOK && bytes.HasPrefix(s, []byte("content/"))
		d.files = append(d.files, maphash.Bytes(d.seed, s))
	}
	return ok
}

// probed reads an entry's probe, keeping only that it has one; a session
// this readproof does not know gives up, Validate refusing it.
func (d *viewJSON) probed(e *ViewEntry) bool {
	var p Probe
	e.Probed = d.probe(&p) && (p.Session == "" || p.Session == ProbeSessionContent)
	return e.Probed
}

// provenance reads a provenance object as decodeFast does (string values,
// no key twice), keeping nothing: a key hashing as an earlier one gives up.
func (d *viewJSON) provenance() bool {
	d.provKeys = d.provKeys[:0]
	return d.object(func(key []byte) bool {
		h := maphash.Bytes(d.seed, key)
		if slices.Contains(d.provKeys, h) || len(d.provKeys) == maxProvenance {
			return false
		}
		d.provKeys = append(d.provKeys, h)
		_, ok := d.value()
		return ok
	})
}

// maxProvenance is the number of provenance keys from which decodeViewFast
// gives up (each key is compared with every earlier one).
const maxProvenance = 64

// valid reports whether Validate accepts the manifest v was read from,
// given that entry checked each entry: the run, caller and trace ids, and
// that no two entries have the same file.
func (d *viewJSON) valid(v *View) bool {
	if checkHeader(v.RunID, v.Caller) != nil || !d.filesOK {
		return false
	}
	slices.Sort(d.files)
	for i := 1; i < len(d.files); i++ {
		if d.files[i] == d.files[i-1] {
			return false // the same file twice, or two hashing alike
		}
	}
	return v.TraceID == "" || IsTraceID(v.TraceID)
}
