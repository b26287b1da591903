package gitstore

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A source repository holding one large object (here 4 MiB of zeros, 4 KiB
// packed) is refused while its pack arrives, before go-git inflates the
// object whole in memory to index the pack: a git source's 1.2 MB pack of a
// 1,000 MB blob took `get` to 1.05 GB, whichever file the resource named.
// Before the guard the fetch succeeded and allocated the object's size.
func TestMirrorRefusesObjectOverLimit(t *testing.T) {
	up := upstream(t)
	f, err := os.Create(filepath.Join(up, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	mirrorGit(t, up, "add", "big.bin")
	mirrorGit(t, up, "commit", "-q", "-m", "big")

	cache := t.TempDir()
	m, err := OpenMirror(cache, up, MirrorOptions{MaxObjectBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err = m.Fetch(context.Background())
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrObjectTooLarge) {
		t.Fatalf("Fetch = %v, want ErrObjectTooLarge", err)
	}
	for _, want := range []string{"4194304 bytes", "1048576-byte limit"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 3<<20 {
		t.Errorf("the refused fetch allocated %d bytes: the object was inflated in memory", got)
	}
	// Nothing of the refused pack is adopted: no ref, so no file resolves.
	if _, _, _, err := m.ResolveFile("", "doc.md", 1<<20); !errors.Is(err, ErrUnknownRef) {
		t.Errorf("ResolveFile after a refused fetch = %v, want ErrUnknownRef", err)
	}
	packs, _ := filepath.Glob(filepath.Join(m.Dir(), "objects", "pack", "*"))
	for _, p := range packs {
		if !strings.HasSuffix(p, ".keep") {
			t.Errorf("a refused fetch left %s", p)
		}
	}

	// Under a bound that admits it, the same repository fetches, and the
	// small file beside the large one resolves.
	m2 := fetched(t, t.TempDir(), up)
	if got, _, _, err := m2.ResolveFile("", "doc.md", 1<<20); err != nil || string(got) != "v1\n" {
		t.Fatalf("ResolveFile = %q, %v", got, err)
	}
}

// packEntry encodes one pack entry: header, base (for a REF_DELTA), zlib
// of data.
func packEntry(typ byte, size int, base []byte, data []byte) []byte {
	var b bytes.Buffer
	c := typ<<4 | byte(size&15)
	size >>= 4
	for size > 0 {
		b.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	b.WriteByte(c)
	b.Write(base)
	zw := zlib.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

func packOf(entries ...[]byte) []byte {
	var b bytes.Buffer
	b.WriteString("PACK")
	binary.Write(&b, binary.BigEndian, uint32(2))
	binary.Write(&b, binary.BigEndian, uint32(len(entries)))
	for _, e := range entries {
		b.Write(e)
	}
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

func varint(v uint64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

func TestScanPackSizes(t *testing.T) {
	blob := []byte("hello\n")
	base := packEntry(3, len(blob), nil, blob)
	// A delta of 10 bytes whose result is 1 GiB: one copy of the base, as
	// the header says, is all it needs to claim.
	bigDelta := append(append(varint(uint64(len(blob))), varint(1<<30)...), 0x90, 6)
	name := sha1.Sum([]byte("blob 6\x00hello\n"))
	smallDelta := append(append(varint(uint64(len(blob))), varint(6)...), 0x90, 6)
	for _, tc := range []struct {
		name string
		pack []byte
		want error
		say  string
	}{
		{"one blob", packOf(base), nil, ""},
		{"ref delta within the bound", packOf(base, packEntry(7, len(smallDelta), name[:], smallDelta)), nil, ""},
		{"ofs delta within the bound", packOf(base, packEntry(6, len(smallDelta), []byte{byte(len(base))}, smallDelta)), nil, ""},
		{"blob over the bound", packOf(packEntry(3, 2000, nil, make([]byte, 2000))), ErrObjectTooLarge, "an object of 2000 bytes"},
		{"ref delta making an object over the bound", packOf(base, packEntry(7, len(bigDelta), name[:], bigDelta)), ErrObjectTooLarge, "a delta that makes an object of 1073741824 bytes"},
		{"ofs delta making an object over the bound", packOf(base, packEntry(6, len(bigDelta), []byte{byte(len(base))}, bigDelta)), ErrObjectTooLarge, "makes an object of 1073741824"},
		{"header claiming less than the stream holds", packOf(packEntry(3, 10, nil, make([]byte, 500))), errPackCorrupt, "holds more than its 10 bytes"},
		{"header claiming over the bound, stream small", packOf(packEntry(3, 5000, nil, blob)), ErrObjectTooLarge, "5000 bytes"},
		{"not a pack", []byte("PACX\x00\x00\x00\x02\x00\x00\x00\x00"), errPackCorrupt, "signature"},
		{"version 4", []byte("PACK\x00\x00\x00\x04\x00\x00\x00\x00"), errPackCorrupt, "version 4"},
		{"type 5", packOf(packEntry(5, 1, nil, []byte{0})), errPackCorrupt, "type 5"},
		{"cut short", packOf(base)[:20], errPackCorrupt, "pack entry 0"},
		{"no entries", []byte("PACK\x00\x00\x00\x02\x00\x00"), io.ErrUnexpectedEOF, "pack header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := scanPackSizes(bytes.NewReader(tc.pack), 1024)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("scanPackSizes = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.say) {
				t.Fatalf("scanPackSizes = %v, want %v saying %q", err, tc.want, tc.say)
			}
		})
	}
}

// receivePack keeps the stream byte for byte, and leaves no file when it
// refuses.
func TestReceivePack(t *testing.T) {
	dir := t.TempDir()
	ok := append(packOf(packEntry(3, 6, nil, []byte("hello\n"))), "trailing"...)
	f, err := receivePack(dir, bytes.NewReader(ok), 1024)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, ok) {
		t.Fatalf("the received file holds %d bytes (%v); want the %d sent", len(got), err, len(ok))
	}
	os.Remove(f.Name())

	big := packOf(packEntry(3, 4096, nil, make([]byte, 4096)))
	if _, err := receivePack(dir, bytes.NewReader(big), 1024); !errors.Is(err, ErrObjectTooLarge) {
		t.Fatalf("receivePack of a pack over the bound = %v, want ErrObjectTooLarge", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("a refused pack left %v", left)
	}
}

func FuzzScanPackSizes(f *testing.F) {
	blob := []byte("hello\n")
	base := packEntry(3, len(blob), nil, blob)
	d := append(append(varint(6), varint(6)...), 0x90, 6)
	f.Add(packOf(base))
	f.Add(packOf(base, packEntry(6, len(d), []byte{byte(len(base))}, d)))
	f.Add(packOf(packEntry(3, 10, nil, make([]byte, 500))))
	f.Fuzz(func(t *testing.T, pack []byte) {
		// Whatever the bytes: an answer, no panic, and a refusal only
		// for a size the stream states.
		err := scanPackSizes(bytes.NewReader(pack), 1024)
		if err != nil && !errors.Is(err, ErrObjectTooLarge) && !errors.Is(err, errPackCorrupt) &&
			!errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(err.Error(), "zlib") && !strings.Contains(err.Error(), "flate") {
			t.Fatalf("unexpected error kind: %v", err)
		}
	})
}

// endless is a stream that never ends (up to a cap, after which it fails,
// so a test of a reader that does not stop ends anyway), counting what was
// read of it.
type endless struct{ n, cap int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.n >= e.cap {
		return 0, errors.New("endless stream: cap reached")
	}
	n := int64(len(p))
	if n > e.cap-e.n {
		n = e.cap - e.n
	}
	clear(p[:n])
	e.n += n
	return int(n), nil
}

// TestReceivePackBoundsTrailer: what a remote sends after the pack's
// checksum is bounded: a hostile server that follows a valid pack with an
// endless stream had every byte of it spooled to the cache's disk until
// the fetch timed out.
func TestReceivePackBoundsTrailer(t *testing.T) {
	dir := t.TempDir()
	tail := &endless{cap: 32 << 20}
	_, err := receivePack(dir, io.MultiReader(bytes.NewReader(packOf(packEntry(3, 6, nil, []byte("hello\n")))), tail), 1024)
	if err == nil {
		t.Fatal("receivePack of a pack followed by an endless stream succeeded")
	}
	if tail.n > maxPackTrailer+64<<10 {
		t.Errorf("read %d bytes after the pack (%v); want at most about %d", tail.n, err, maxPackTrailer)
	}
	if !strings.Contains(err.Error(), "after the pack") {
		t.Errorf("error %q does not say what was refused", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("a refused pack left %v", left)
	}
}
