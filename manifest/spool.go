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
	size, rd, err := s.Reader(m, r)
	if err != nil {
		return nil, err
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(rd, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Reader is Encode without holding the document: after the same checks,
// it returns the size of manifest.json and a reader that assembles it as it
// is read, reading the spooled bytes from r. A read error names the entry
// whose spooled bytes could not be read.
func (s *Spool) Reader(m *Manifest, r io.Reader) (int64, io.Reader, error) {
	if len(m.Entries) != len(s.parts) {
		return 0, nil, fmt.Errorf("encode manifest: %d entries, %d spooled", len(m.Entries), len(s.parts))
	}
	if err := s.Flush(); err != nil {
		return 0, nil, err
	}
	if err := m.Validate(); err != nil {
		return 0, nil, err
	}
	head, cut, err := encodeHead(m)
	if err != nil {
		return 0, nil, err
	}
	if len(m.Entries) == 0 {
		return int64(len(head)), bytes.NewReader(head), nil
	}
	// Each file's JSON, encoded as the entry encoder encodes strings, one
	// after another; size is the whole document's.
	sr := &spoolReader{parts: s.parts, src: bufio.NewReaderSize(r, 64<<10), tail: head[cut:], ends: make([]int, len(m.Entries))}
	fenc := json.NewEncoder(&sr.files)
	fenc.SetEscapeHTML(false)
	size := int64(len(head) + len(entriesEnd))
	for i := range m.Entries {
		if err := fenc.Encode(m.Entries[i].File); err != nil {
			return 0, nil, err
		}
		sr.files.Truncate(sr.files.Len() - 1)
		sr.ends[i] = sr.files.Len()
		size += int64(len(entryIndent)) + int64(s.parts[i].before) + int64(s.parts[i].after)
		if i > 0 {
			size++
		}
	}
	size += int64(sr.files.Len())
	sr.lit = head[:cut]
	return size, sr, nil
}

// spoolReader assembles manifest.json: literal bytes (lit: the head, the
// separators, each file's JSON, the tail) and runs of spooled bytes (left
// of them still to copy from src), entry by entry.
type spoolReader struct {
	parts []spooled
	src   *bufio.Reader
	files bytes.Buffer
	ends  []int
	tail  []byte

	lit   []byte
	left  int
	i     int // the entry being assembled
	stage int // of entry i: 0 separator, 1 before, 2 file, 3 after
	done  bool
	err   error
}

func (sr *spoolReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if sr.err != nil {
			return n, sr.err
		}
		if len(sr.lit) > 0 {
			c := copy(p[n:], sr.lit)
			sr.lit = sr.lit[c:]
			n += c
			continue
		}
		if sr.left > 0 {
			want := len(p) - n
			if want > sr.left {
				want = sr.left
			}
			c, err := io.ReadFull(sr.src, p[n:n+want])
			n += c
			sr.left -= c
			if err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				sr.err = fmt.Errorf("encode manifest: read spooled entry %d: %w", sr.i, err)
			}
			continue
		}
		if sr.done {
			return n, io.EOF
		}
		sr.next()
	}
	return n, nil
}

// next moves to the next piece of the document.
func (sr *spoolReader) next() {
	if sr.i == len(sr.parts) {
		sr.lit = append([]byte(entriesEnd), sr.tail...)
		sr.done = true
		return
	}
	switch sr.stage {
	case 0:
		sr.lit = []byte(entryIndent)
		if sr.i > 0 {
			sr.lit = []byte("," + entryIndent)
		}
	case 1:
		sr.left = int(sr.parts[sr.i].before)
	case 2:
		start := 0
		if sr.i > 0 {
			start = sr.ends[sr.i-1]
		}
		sr.lit = sr.files.Bytes()[start:sr.ends[sr.i]]
	case 3:
		sr.left = int(sr.parts[sr.i].after)
		sr.i++
		sr.stage = 0
		return
	}
	sr.stage++
}
