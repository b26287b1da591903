package gitstore

import (
	"bytes"
	"strings"
	"testing"
)

// TestReadExactlyReservesTheSize: a blob of more than the first 8 MiB
// reserved is read into a buffer of its size, not of the next power of
// two. Before, bytes.Buffer doubled it: an 11.6 MB manifest (a run of
// 20,000 entries) held 16 MiB, and reserved 24 MiB on the way, each time
// an MCP page read it.
func TestReadExactlyReservesTheSize(t *testing.T) {
	for _, n := range []int64{8<<20 + 1, 11_655_697, 16 << 20, 16<<20 + 1} {
		src := bytes.Repeat([]byte("0123456789abcdef"), int(n/16)+1)[:n]
		got, err := readExactly(bytes.NewReader(src), n)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("%d bytes: %d read, %v", n, len(got), err)
		}
		if int64(cap(got)) != n {
			t.Errorf("%d bytes read into a buffer of %d", n, cap(got))
		}
	}
	// Still as short, as long, as before.
	if _, err := readExactly(bytes.NewReader(make([]byte, 9<<20)), 10<<20); err == nil || !strings.Contains(err.Error(), "content is 9437184 bytes, its header says 10485760") {
		t.Errorf("short: %v", err)
	}
	if _, err := readExactly(bytes.NewReader(make([]byte, 9<<20+1)), 9<<20); err == nil || !strings.Contains(err.Error(), "longer than the 9437184 bytes") {
		t.Errorf("long: %v", err)
	}
}
