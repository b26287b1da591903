package adapters

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// sizedCase is a read of readSizedInto, with no buffer or with one: from r, checked at
// size, with the limit max.
type sizedCase struct {
	name      string
	r         io.Reader
	size, max int64
	want      string
}

// sizedCases are the reads both are held to, each with a fresh reader of
// doc (4,096 bytes).
func sizedCases(doc string) []sizedCase {
	return []sizedCase{
		{"exact", strings.NewReader(doc), 4096, 1 << 20, doc},
		{"one byte at a time", iotest.OneByteReader(strings.NewReader(doc)), 4096, 1 << 20, doc},
		{"grew", strings.NewReader(doc + doc), 4096, 1 << 20, doc + doc},
		{"shrank", strings.NewReader(doc[:10]), 4096, 1 << 20, doc[:10]},
		{"empty", strings.NewReader(""), 0, 1 << 20, ""},
		{"past the limit", strings.NewReader(doc), 100, 100, doc[:101]},
	}
}

// TestReadSized: the filesystem source reads a document into one buffer of
// the size it was checked at (io.ReadAll grew it by doubling: issue 14,
// memory), and still reads all of a file that grew or shrank meanwhile, up
// to the limit plus one byte so a file grown past the limit is caught.
func TestReadSized(t *testing.T) {
	doc := strings.Repeat("x", 4096)
	for _, c := range sizedCases(doc) {
		got, err := readSizedInto(nil, c.r, c.size, c.max)
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %d bytes, %v; want %d", c.name, len(got), err, len(c.want))
		}
	}
	got, _ := readSizedInto(nil, strings.NewReader(doc), 4096, 1<<20)
	if cap(got) != 4097 {
		t.Errorf("readSizedInto without a buffer, of a file of the size checked: a buffer of %d bytes, want 4097", cap(got))
	}
}

// TestReadSizedInto: a caller's buffer (Request.Buffer) with the room is read
// into, whatever it held before, for every case read without one; one too
// small is left alone and a new buffer read into instead.
func TestReadSizedInto(t *testing.T) {
	doc := strings.Repeat("y", 4096)
	for _, c := range sizedCases(doc) {
		buf := []byte(strings.Repeat("z", 8192))
		got, err := readSizedInto(buf, c.r, c.size, c.max)
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %d bytes, %v; want %d", c.name, len(got), err, len(c.want))
		}
		if int64(len(c.want)) <= 4097 && len(got) > 0 && &got[0] != &buf[0] {
			t.Errorf("%s: read into a new buffer, not the caller's", c.name)
		}
	}
	small := make([]byte, 0, 100)
	got, err := readSizedInto(small, strings.NewReader(doc), 4096, 1<<20)
	if err != nil || string(got) != doc || cap(got) != 4097 {
		t.Errorf("a buffer too small: got %d bytes (cap %d), %v; want a new buffer of 4097", len(got), cap(got), err)
	}
}
