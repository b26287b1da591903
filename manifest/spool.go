package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Spool writes the entries of a manifest being built to a file as they are
// made, so that a writer of many entries holds a few words per entry
// instead of each entry's provenance, revision and type until the manifest
// is encoded (a 10,000-document run held about 4 MB of them). Add encodes
// an entry as Encode would, without its file, which depends on every entry
// of the run (AssignFiles); Encode then assembles manifest.json from the
// manifest's head, the spooled entries and the files: the same bytes as
// Encode of the manifest with its entries whole (TestSpoolMatchesEncode).
//
// The caller owns the file: Add appends to w, and Encode reads the spooled
// bytes back from r, from their start.
type Spool struct {
	w     *bufio.Writer
	enc   *json.Encoder
	buf   bytes.Buffer
	parts []spooled
	err   error
}

// spooled is where an entry's file goes in its spooled bytes: before is
// how many come before the file's value, after how many come after it.
type spooled struct{ before, after uint32 }

// fileKey is the file field of an entry with no file yet, as the entry
// encoder writes it (its fields are indented by six spaces: a key nested
// deeper, in provenance or probe, is indented further and never matches).
const fileKey = "\n      \"file\": "

// NewSpool returns a Spool appending to w.
func NewSpool(w io.Writer) *Spool {
	s := &Spool{w: bufio.NewWriterSize(w, 64<<10)}
	s.enc = newEntryEncoder(&s.buf)
	return s
}

// Len is the number of entries added.
func (s *Spool) Len() int { return len(s.parts) }

// Add encodes e, without its file, at the end of the spool. After an error
// every later call fails with it.
func (s *Spool) Add(e *Entry) error {
	if s.err != nil {
		return s.err
	}
	cp := *e
	cp.File = ""
	s.buf.Reset()
	if err := s.enc.Encode(&cp); err != nil {
		s.err = err
		return err
	}
	data := s.buf.Bytes()
	data = data[:len(data)-1] // Encode's newline
	at := bytes.Index(data, []byte(fileKey+`""`))
	if at < 0 {
		s.err = errors.New("spool manifest entry: no file field")
		return s.err
	}
	before := at + len(fileKey)
	if len(data) > 1<<31 {
		s.err = fmt.Errorf("spool manifest entry: %d bytes", len(data))
		return s.err
	}
	s.w.Write(data[:before])
	if _, err := s.w.Write(data[before+2:]); err != nil {
		s.err = err
		return err
	}
	s.parts = append(s.parts, spooled{before: uint32(before), after: uint32(len(data) - before - 2)})
	return nil
}

// Flush writes what Add buffered to the spool's writer.
func (s *Spool) Flush() error {
	if s.err != nil {
		return s.err
	}
	if err := s.w.Flush(); err != nil {
		s.err = err
	}
	return s.err
}

// Encode returns manifest.json for m, whose entries are the spooled ones in
// the order they were added, each holding at least what Validate checks
// (position, URI, ref, snapshot, content hash, decision, size and file);
// the rest of each entry is read from r, the spooled bytes from their
// start. It fails as Encode does for a manifest that does not validate.
func (s *Spool) Encode(m *Manifest, r io.Reader) ([]byte, error) {
	if len(m.Entries) != len(s.parts) {
		return nil, fmt.Errorf("encode manifest: %d entries, %d spooled", len(m.Entries), len(s.parts))
	}
	if err := s.Flush(); err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	head, cut, err := encodeHead(m)
	if err != nil || len(m.Entries) == 0 {
		return head, err
	}
	// Each file's JSON, encoded as the entry encoder encodes strings, one
	// after another; size is the whole document's.
	var files bytes.Buffer
	ends := make([]int, len(m.Entries))
	fenc := json.NewEncoder(&files)
	fenc.SetEscapeHTML(false)
	size := len(head) + len(entriesEnd)
	for i := range m.Entries {
		if err := fenc.Encode(m.Entries[i].File); err != nil {
			return nil, err
		}
		files.Truncate(files.Len() - 1)
		ends[i] = files.Len()
		size += len(entryIndent) + int(s.parts[i].before) + int(s.parts[i].after)
		if i > 0 {
			size++
		}
	}
	size += files.Len()
	out := make([]byte, 0, size)
	out = append(out, head[:cut]...)
	br := bufio.NewReaderSize(r, 64<<10)
	read := func(n uint32) error {
		k := len(out)
		if k+int(n) > cap(out) {
			return io.ErrUnexpectedEOF // spooled lengths that do not add up
		}
		out = out[:k+int(n)]
		_, err := io.ReadFull(br, out[k:])
		return err
	}
	start := 0
	for i, p := range s.parts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, entryIndent...)
		if err := read(p.before); err != nil {
			return nil, fmt.Errorf("encode manifest: read spooled entry %d: %w", i, err)
		}
		out = append(out, files.Bytes()[start:ends[i]]...)
		start = ends[i]
		if err := read(p.after); err != nil {
			return nil, fmt.Errorf("encode manifest: read spooled entry %d: %w", i, err)
		}
	}
	out = append(out, entriesEnd...)
	out = append(out, head[cut:]...)
	return out, nil
}
