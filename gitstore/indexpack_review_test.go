package gitstore

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	githash "github.com/go-git/go-git/v5/plumbing/hash"
)

// rawEntry is one pack entry as a test writes it: the type and size of
// its header, the bytes after it (an OFS_DELTA's distance back, a
// REF_DELTA's base id) and its content deflated.
func rawEntry(t plumbing.ObjectType, size int, extra, content []byte) []byte {
	b := append(packHeader(t, size), extra...)
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	zw.Write(content)
	zw.Close()
	return append(b, z.Bytes()...)
}

// storedEntry is rawEntry with its content in one stored block (at most
// 64 KiB), cheap to write by the thousand.
func storedEntry(t plumbing.ObjectType, size int, extra, content []byte) []byte {
	b := append(packHeader(t, size), extra...)
	n := len(content)
	b = append(b, 0x78, 0x01, 1, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
	b = append(b, content...)
	return binary.BigEndian.AppendUint32(b, adler32.Checksum(content))
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

// TestIndexPackGoDeltaShort: a delta of fewer than four bytes (git's
// DELTA_SIZE_MIN: patch_delta refuses it, "failed to apply delta"), which
// can only say "an empty object", is left to git.
func TestIndexPackGoDeltaShort(t *testing.T) {
	t.Parallel()
	blob, tree, _ := canonicalObjects()
	bl := rawEntry(plumbing.BlobObject, len(blob.data), nil, blob.data)
	big := bytes.Repeat([]byte("y"), 129)
	eb := rawEntry(plumbing.BlobObject, len(big), nil, big)
	et := rawEntry(plumbing.TreeObject, len(tree.data), nil, tree.data)
	for name, p := range map[string][]byte{
		"an empty blob in two bytes":   rawPack(bl, rawEntry(plumbing.OFSDeltaObject, 2, ofsBack(int64(len(bl))), []byte{6, 0})),
		"an empty blob in three bytes": rawPack(eb, rawEntry(plumbing.OFSDeltaObject, 3, ofsBack(int64(len(eb))), []byte{0x81, 1, 0})),
		"an empty tree in two bytes":   rawPack(bl, et, rawEntry(plumbing.OFSDeltaObject, 2, ofsBack(int64(len(et))), []byte{byte(len(tree.data)), 0})),
	} {
		if why := checkAgainstGit(t, p); why == "" {
			t.Errorf("%s: indexPackGo took the pack; want it left to git", name)
		}
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
	_, why := indexPackGo(context.Background(), pack)
	runtime.ReadMemStats(&m1)
	if why == "" {
		t.Fatal("indexPackGo took a delta of 32 MiB")
	}
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 8<<20 {
		t.Fatalf("indexPackGo allocated %d MiB for a %d-byte pack (%s); want the delta left to git unapplied", a>>20, len(pack), why)
	}
}

// TestIndexPackGoRefDeltasBackwards: REF_DELTAs each based on the next
// entry (a chain written backwards, which git resolves in one pass from
// each base) cost indexPackGo work linear in the pack, not one pass over
// the pack per delta. The guard counts work, not time: the entries
// resolveDeltas looks at over a chain 4 times as long are at most 4
// times as many (one pass per delta was 16 times).
// BenchmarkIndexPackGoRefDeltasBackwards times it.
func TestIndexPackGoRefDeltasBackwards(t *testing.T) {
	t.Parallel()
	// a short chain is taken, with git's index
	if why := checkAgainstGit(t, refDeltasBackwards(3)); why != "" {
		t.Fatalf("two REF_DELTAs before their bases were left to git: %s", why)
	}
	var visits [2]int
	for k, n := range []int{2_000, 8_000} {
		x := &packIndexer{ctx: context.Background(), pack: refDeltasBackwards(n), hash: githash.New(githash.CryptoType)}
		why := x.run()
		if why != "" && why != "delta bases after their deltas" {
			t.Fatalf("%d REF_DELTAs written backwards: %q, want them indexed or left to git as bases after their deltas", n-1, why)
		}
		visits[k] = x.deltaVisits
		t.Logf("%d REF_DELTAs written backwards: %d entries looked at, %q", n-1, visits[k], why)
	}
	if visits[0] == 0 || visits[1] > 4*visits[0] {
		t.Errorf("entries looked at to resolve a chain of REF_DELTAs written backwards: %d at 2,000, %d at 8,000; want at most 4 times as many", visits[0], visits[1])
	}
}

// refDeltasBackwards is a pack of n blobs, n-1 of them REF_DELTAs each
// based on the next entry, the last the whole first blob.
func refDeltasBackwards(n int) []byte {
	blob := func(i int) packObject {
		return packObject{plumbing.BlobObject, []byte{byte(i), byte(i >> 8), byte(i >> 16)}}
	}
	entries := make([][]byte, 0, n)
	for i := n - 1; i >= 1; i-- {
		id := blob(i - 1).id()
		delta := []byte{3, 3, 3, byte(i), byte(i >> 8), byte(i >> 16)}
		entries = append(entries, storedEntry(plumbing.REFDeltaObject, len(delta), id[:], delta))
	}
	entries = append(entries, storedEntry(plumbing.BlobObject, 3, nil, blob(0).data))
	return rawPack(entries...)
}

// TestIndexPackGoCountClaim: the object count of a pack's header is a
// claim; what indexPackGo allocates follows the entries it finds, not
// the count (a 1 MiB pack claiming half a million objects, its first
// entry of no type).
func TestIndexPackGoCountClaim(t *testing.T) {
	p := make([]byte, 12+1<<20+20)
	copy(p, "PACK\x00\x00\x00\x02")
	binary.BigEndian.PutUint32(p[8:], uint32(len(p)/2-20))
	fixTrailer(p)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, why := indexPackGo(context.Background(), p)
	runtime.ReadMemStats(&m1)
	if why == "" {
		t.Fatal("indexPackGo took a pack of zeros")
	}
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 4<<20 {
		t.Fatalf("indexPackGo allocated %d MiB for a %d KiB pack claiming %d objects (%s); want what its entries need", a>>20, len(p)>>10, binary.BigEndian.Uint32(p[8:]), why)
	}
}

// TestCopyLocalObjectsCanceled: a copy whose context is canceled (the
// clone refused the source, or was interrupted) stops and leaves
// nothing, on the path indexed in Go too (a source of one pack, copied
// as its file), as it stops git's index-pack by killing it. Indexing in
// Go inflates and hashes every object: a hostile pack of 645 KiB holds
// 512 MiB of content (1.3 s of a core), a pack of 1 GiB half an hour's.
func TestCopyLocalObjectsCanceled(t *testing.T) {
	t.Parallel()
	src := fastImportRepo(t, 4)
	git(t, src, "repack", "-a", "-d", "-q") // one pack, no loose object
	_, tr := newTransport(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	copied, err := tr.CopyLocalObjects(ctx, src)
	left, _ := filepath.Glob(filepath.Join(tr.dir, "objects", "pack", "*"))
	if !errors.Is(err, context.Canceled) || len(left) != 0 {
		t.Fatalf("a canceled copy returned %v, %v and left %q; want context.Canceled and nothing", copied, err, left)
	}
}

// TestIndexPackGoEdges: corner cases of the pack format and of git's
// fsck that git index-pack --strict takes are taken with git's index, or
// left to git; the ones git refuses are left to git.
func TestIndexPackGoEdges(t *testing.T) {
	t.Parallel()
	blob, tree, commit := canonicalObjects()
	big := bytes.Repeat([]byte("0123456789abcdef"), 4097) // 64 KiB and 16 bytes
	eb := rawEntry(plumbing.BlobObject, len(big), nil, big)
	et := rawEntry(plumbing.TreeObject, len(tree.data), nil, tree.data)
	bl := rawEntry(plumbing.BlobObject, len(blob.data), nil, blob.data)
	ofs := func(base, delta []byte) []byte {
		return rawEntry(plumbing.OFSDeltaObject, len(delta), ofsBack(int64(len(base))), delta)
	}
	tl := byte(len(tree.data))
	ident := "A U Thor <a@example.com> 1700000000 +0000"
	// blob: its header's size 6 written in two bytes, the second zero
	long := append([]byte{0x36 | 0x80, 0x00}, rawEntry(plumbing.BlobObject, 6, nil, blob.data)[1:]...)
	taken := map[string][]byte{
		"no object":         rawPack(),
		"size written long": rawPack(long),
		// copy size 0 is 64 KiB: the whole base but its last 16 bytes,
		// then "x"
		"copy of size 0": rawPack(eb, ofs(eb, []byte{0x90, 0x80, 0x04, 0x81, 0x80, 0x04, 0x80, 1, 'x'})),
		// a tree made from another: "100644 b" naming the same blob
		"delta of a tree":            rawPack(bl, et, ofs(et, []byte{tl, 29, 9, '1', '0', '0', '6', '4', '4', ' ', 'b', 0, 0x91, tl - 20, 20})),
		"time zones +2400 and -0000": testPack(blob, tree, commitWith("tree TREE\nauthor A <a@b> 1 +2400\ncommitter A <a@b> 0 -0000\n\n")),
		"largest date taken":         testPack(blob, tree, commitWith("tree TREE\nauthor A <a@b> 9999999999 +9999\ncommitter "+ident+"\n\n")),
		"empty tree":                 testPack(packObject{plumbing.TreeObject, nil}),
		"names of every character":   testPack(blob, treeOf("100644 +", "100644 ,", "100644 -", "100644 .a", "100644 =", "100644 @", "100644 _")),
	}
	for name, p := range taken {
		if why := checkAgainstGit(t, p); why != "" {
			t.Errorf("%s: left to git: %s", name, why)
		}
	}
	refused := map[string][]byte{
		"size one short":     rawPack(rawEntry(plumbing.BlobObject, 5, nil, blob.data)),
		"size one long":      rawPack(rawEntry(plumbing.BlobObject, 7, nil, blob.data)),
		"delta result short": rawPack(eb, ofs(eb, []byte{0x90, 0x80, 0x04, 0x82, 0x80, 0x04, 0x80, 1, 'x'})),
		"copy past the base": rawPack(bl, ofs(bl, []byte{6, 7, 0x90, 7})),
		"copy from past it":  rawPack(bl, ofs(bl, []byte{6, 1, 0x91, 6, 1})),
		"delta opcode 0":     rawPack(bl, ofs(bl, []byte{6, 6, 0x90, 6, 0})),
		"committer first":    testPack(blob, tree, commitWith("tree TREE\ncommitter "+ident+"\nauthor "+ident+"\n\nm\n")),
		"tree naming a commit as a blob": testPack(blob, tree, commit, func() packObject {
			id := commit.id()
			return packObject{plumbing.TreeObject, append([]byte("100644 c\x00"), id[:]...)}
		}()),
	}
	for name, p := range refused {
		if why := checkAgainstGit(t, p); why == "" {
			t.Errorf("%s: taken; want it left to git", name)
		}
		if _, err := gitIndexPack(t, p); err == nil {
			t.Errorf("%s: git index-pack --strict takes it (the case is wrong)", name)
		}
	}
}

// FuzzIndexPackGoEntries reaches what FuzzIndexPackGo, which fuzzes one
// whole object's content, cannot: after the canonical blob, tree and
// commit, one more entry whose bytes are fuzzed at the pack level. mode
// 0: a whole object of type aux&3+1 whose zlib stream (and so its
// declared size, the stream's inflated length or aux) is data as it is;
// 1: an OFS_DELTA of the blob, tree or commit (aux%3) whose delta is
// data; 2: the same as a REF_DELTA; 3: data is the whole pack, trailer
// fixed. It fails when indexPackGo takes a pack git index-pack --strict
// refuses, or writes another index.
func FuzzIndexPackGoEntries(f *testing.F) {
	blob, tree, commit := canonicalObjects()
	zl := func(level int, b []byte) []byte {
		var z bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&z, level)
		zw.Write(b)
		zw.Close()
		return z.Bytes()
	}
	text := []byte(strings.Repeat("the same line again and again\n", 20) + "end\n")
	f.Add(byte(0), byte(2), zl(zlib.NoCompression, text))
	f.Add(byte(0), byte(2), zl(zlib.BestSpeed, text))
	f.Add(byte(0), byte(2), zl(zlib.BestCompression, text))
	f.Add(byte(0), byte(2), zl(zlib.HuffmanOnly, text))
	f.Add(byte(0), byte(2), storedEntry(plumbing.BlobObject, 3, nil, []byte("abc"))[1:])
	f.Add(byte(1), byte(0), []byte{6, 12, 0x90, 6, 0x90, 6})
	f.Add(byte(1), byte(0), []byte{6, 8, 0x91, 1, 5, 3, 'a', 'b', 'c'})
	f.Add(byte(2), byte(0), []byte{6, 7, 0x90, 6, 1, '!'})
	// the base's size with a bit past 64 (git: "size_t overflow")
	f.Add(byte(1), byte(0), []byte{0x86, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 12, 0x90, 6, 0x90, 6})
	f.Add(byte(1), byte(1), []byte{byte(len(tree.data)), 29, 9, '1', '0', '0', '6', '4', '4', ' ', 'b', 0, 0x91, byte(len(tree.data) - 20), 20})
	cl := len(commit.data)
	f.Add(byte(1), byte(2), []byte{byte(cl | 0x80), byte(cl >> 7), byte((cl - 1) | 0x80), byte((cl - 1) >> 7), 0xb0, byte(cl - 9), 0, 1, 'n', 0x91, byte(cl - 7), 7})
	f.Add(byte(3), byte(0), testPack(blob, tree, commit))
	f.Fuzz(func(t *testing.T, mode, aux byte, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		bases := []packObject{blob, tree, commit}
		entries := make([][]byte, 3, 4)
		for i, o := range bases {
			entries[i] = rawEntry(o.t, len(o.data), nil, o.data)
		}
		var pack []byte
		switch mode {
		case 0:
			// the size declared: what the stream inflates to, or aux
			size := int(aux)
			if r, err := zlib.NewReader(bytes.NewReader(data)); err == nil {
				if b, err := io.ReadAll(io.LimitReader(r, 1<<20)); err == nil && aux < 128 {
					size = len(b)
				}
			}
			t := plumbing.ObjectType(aux&3 + 1)
			pack = rawPack(append(entries, append(packHeader(t, size), data...))...)
		case 1, 2:
			var z bytes.Buffer
			zw := zlib.NewWriter(&z)
			zw.Write(data)
			zw.Close()
			b := int(aux) % 3
			var e []byte
			if mode == 1 {
				back := 0
				for _, x := range entries[b:] {
					back += len(x)
				}
				e = append(packHeader(plumbing.OFSDeltaObject, len(data)), ofsBack(int64(back))...)
			} else {
				id := bases[b].id()
				e = append(packHeader(plumbing.REFDeltaObject, len(data)), id[:]...)
			}
			pack = rawPack(append(entries, append(e, z.Bytes()...))...)
		case 3:
			if len(data) < 32 {
				return
			}
			pack = fixTrailer(bytes.Clone(data))
		default:
			return
		}
		checkAgainstGit(t, pack)
	})
}
