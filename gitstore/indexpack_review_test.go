package gitstore

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"runtime"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// rawEntry is one pack entry as a test writes it: the type and size of
// its header, the bytes after it (an OFS_DELTA's distance back, a
// REF_DELTA's base id) and its content deflated.
func rawEntry(t plumbing.ObjectType, size int, extra, content []byte) []byte {
	var b bytes.Buffer
	b.Write(packHeader(t, size))
	b.Write(extra)
	zw, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	zw.Write(content)
	zw.Close()
	return b.Bytes()
}

// ofsBack encodes an OFS_DELTA's distance back to its base as git does.
func ofsBack(back int64) []byte {
	b := []byte{byte(back & 0x7f)}
	for back >>= 7; back > 0; back >>= 7 {
		back--
		b = append([]byte{0x80 | byte(back&0x7f)}, b...)
	}
	return b
}

// rawPack is a version 2 pack of entries, with its checksum.
func rawPack(entries ...[]byte) []byte {
	hdr := packFileHeader(len(entries))
	p := hdr[:]
	for _, e := range entries {
		p = append(p, e...)
	}
	sum := sha1.Sum(p)
	return append(p, sum[:]...)
}

// deltaPack is a pack of a blob and an OFS_DELTA of it.
func deltaPack(base, delta []byte) []byte {
	e1 := rawEntry(plumbing.BlobObject, len(base), nil, base)
	return rawPack(e1, rawEntry(plumbing.OFSDeltaObject, len(delta), ofsBack(int64(len(e1))), delta))
}

// TestIndexPackGoDeltaSizeOverflow: a delta whose base or result size is
// written with a bit past 64 (git's st_left_shift dies: "size_t
// overflow") is left to git, which refuses it.
func TestIndexPackGoDeltaSizeOverflow(t *testing.T) {
	t.Parallel()
	base := []byte("hello\n")
	// 6 and 12 in ten bytes, the tenth with a bit at 64
	six := []byte{0x86, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}
	twelve := append([]byte{0x8c}, six[1:]...)
	copies := []byte{0x90, 6, 0x90, 6} // "hello\nhello\n"
	for name, delta := range map[string][]byte{
		"base size":   append(append(bytes.Clone(six), 12), copies...),
		"result size": append(append([]byte{6}, twelve...), copies...),
	} {
		if why := checkAgainstGit(t, deltaPack(base, delta)); why == "" {
			t.Errorf("%s: indexPackGo took the pack; want it left to git", name)
		}
	}
	// the same sizes written as git writes them: taken
	if why := checkAgainstGit(t, deltaPack(base, append([]byte{6, 12}, copies...))); why != "" {
		t.Fatalf("a canonical delta was left to git: %s", why)
	}
}

// TestIndexPackGoDeltaBomb: a delta claiming a result larger than
// indexPackGo takes (a 64 KiB base copied over and over: one byte of the
// delta per 64 KiB) is left to git before it is applied, not built to
// see that it is too large.
func TestIndexPackGoDeltaBomb(t *testing.T) {
	base := bytes.Repeat([]byte("x"), 1<<16)
	const copies = 512                                        // 32 MiB
	delta := []byte{0x80, 0x80, 0x04, 0x80, 0x80, 0x80, 0x10} // 64 KiB, 32 MiB
	delta = append(delta, bytes.Repeat([]byte{0x80}, copies)...)
	pack := deltaPack(base, delta)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, why := indexPackGo(pack)
	runtime.ReadMemStats(&m1)
	if why == "" {
		t.Fatal("indexPackGo took a delta of 32 MiB")
	}
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 8<<20 {
		t.Fatalf("indexPackGo allocated %d MiB for a %d-byte pack (%s); want the delta left to git unapplied", a>>20, len(pack), why)
	}
}
