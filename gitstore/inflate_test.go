package gitstore

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/base64"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"testing"
)

// zlibOf compresses data at level.
func zlibOf(t testing.TB, data []byte, level int) []byte {
	var b bytes.Buffer
	w, err := zlib.NewWriterLevel(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// inflateSamples are documents of the shapes a store holds: base64 text,
// prose, random bytes, repetitive runs, nothing, one byte.
func inflateSamples() [][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	rnd := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	var prose bytes.Buffer
	words := []string{"refund", "policy", "within", "30", "days", "the", "customer", "may", "\n", "deploy", "node"}
	for prose.Len() < 70000 {
		prose.WriteString(words[r.IntN(len(words))] + " ")
	}
	b64 := []byte(base64.StdEncoding.EncodeToString(rnd(3024)))
	return [][]byte{
		nil, {'x'}, b64, prose.Bytes(), rnd(5000), rnd(100000),
		bytes.Repeat([]byte("ab"), 40000), bytes.Repeat([]byte{0}, 300000),
	}
}

// TestInflateMatchesZlib: the in-place decoder decodes every level's
// output of compress/zlib to the same bytes.
func TestInflateMatchesZlib(t *testing.T) {
	t.Parallel()
	var f inflater
	for i, data := range inflateSamples() {
		for _, level := range []int{flate.NoCompression, flate.BestSpeed, 2, 5, flate.DefaultCompression, flate.BestCompression, flate.HuffmanOnly} {
			z := zlibOf(t, data, level)
			got, ok := f.inflateZlibSized(z, int64(len(data)))
			if !ok || !bytes.Equal(got, data) {
				t.Fatalf("sample %d level %d: ok %v, %d bytes, want %d", i, level, ok, len(got), len(data))
			}
			// A size that is not the stream's is refused.
			if _, ok := f.inflateZlibSized(z, int64(len(data))+1); ok {
				t.Fatalf("sample %d level %d: accepted a size one too large", i, level)
			}
			if len(data) > 0 {
				if _, ok := f.inflateZlibSized(z, int64(len(data))-1); ok {
					t.Fatalf("sample %d level %d: accepted a size one too small", i, level)
				}
				// Cut short: refused.
				if _, ok := f.inflateZlibSized(z[:len(z)-5], int64(len(data))); ok {
					t.Fatalf("sample %d level %d: accepted a truncated stream", i, level)
				}
			}
		}
	}
}

// longCodes is a zlib stream (level 6) whose literal and distance codes
// are longer than the first-level tables (skewed bytes, matches late), so
// decoding it leaves second-level tables behind in an inflater.
func longCodes(t testing.TB) (z, data []byte) {
	r := rand.New(rand.NewPCG(7, 8))
	for len(data) < 12000 {
		k := bits.TrailingZeros64(^r.Uint64()) // byte k*7 with probability 2^-(k+1)
		data = append(data, byte(k*7))
		if len(data) > 6000 && r.IntN(50) == 0 {
			n, off := 3+r.IntN(20), 1+r.IntN(len(data)-1)
			data = append(data, data[len(data)-off:][:min(n, off)]...)
		}
	}
	return zlibOf(t, data, flate.DefaultCompression), data
}

// TestInflateReused: an inflater that decoded a stream with second-level
// tables, and then every other sample, decodes each one as a new one does
// (build overwrites its tables without clearing them).
func TestInflateReused(t *testing.T) {
	t.Parallel()
	lz, ldata := longCodes(t)
	var dirty inflater
	if got, ok := dirty.inflateZlibSized(lz, int64(len(ldata))); !ok || !bytes.Equal(got, ldata) {
		t.Fatalf("long codes: ok %v", ok)
	}
	if len(dirty.lit.sub) == 0 || len(dirty.dist.sub) == 0 {
		t.Fatalf("long codes: second-level tables %d, %d: the sample no longer has codes past the first level", len(dirty.lit.sub), len(dirty.dist.sub))
	}
	commit, tree := smallObjects()
	for i, data := range append(inflateSamples(), commit, tree, ldata) {
		for _, level := range []int{flate.BestSpeed, flate.DefaultCompression, flate.HuffmanOnly} {
			z := zlibOf(t, data, level)
			var fresh inflater
			want, ok1 := fresh.inflateZlibSized(z, int64(len(data)))
			got, ok2 := dirty.inflateZlibSized(z, int64(len(data)))
			if !ok1 || !ok2 || !bytes.Equal(got, want) || !bytes.Equal(got, data) {
				t.Fatalf("sample %d level %d: fresh %v, reused %v, equal %v", i, level, ok1, ok2, bytes.Equal(got, data))
			}
			if _, ok := dirty.inflateZlibSized(lz, int64(len(ldata))); !ok {
				t.Fatal("long codes refused after a sample")
			}
		}
	}
}

// TestBuildOneBitCode: the one code of length 1 (a block with a single
// distance) leaves the other half of the table empty, so codes refuses the
// unused code, even in tables that held a complete code before.
func TestBuildOneBitCode(t *testing.T) {
	var h huffTable
	var full [32]uint8 // the fixed distance code
	for i := range full {
		full[i] = 5
	}
	if !h.build(full[:], nil, distBits, false) {
		t.Fatal("a complete code refused")
	}
	if !h.build([]uint8{0, 0, 1}, nil, distBits, false) {
		t.Fatal("the one-bit code refused")
	}
	for i, e := range h.primary {
		if want := uint32(2<<16 | 1); i&1 == 0 && e != want || i&1 == 1 && e != 0 {
			t.Fatalf("entry %d: %#x after the one-bit code", i, e)
		}
	}
}

// refInflate is what the pack reader did before: compress/zlib, exactly
// size bytes and nothing more (readExactly).
func refInflate(src []byte, size int64) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	return readExactly(zr, size)
}

// FuzzInflate: whatever the in-place decoder accepts, compress/zlib
// decodes to the same bytes, so falling back to it on a refusal gives the
// same results and errors as before.
func FuzzInflate(f *testing.F) {
	for _, data := range inflateSamples() {
		if len(data) > 6000 {
			data = data[:6000]
		}
		for _, level := range []int{0, 1, 6, 9, -2} {
			var b bytes.Buffer
			w, _ := zlib.NewWriterLevel(&b, level)
			w.Write(data)
			w.Close()
			f.Add(b.Bytes(), uint16(len(data)))
		}
	}
	lz, ldata := longCodes(f)
	f.Fuzz(func(t *testing.T, src []byte, size uint16) {
		var fi inflater
		got, ok := fi.inflateZlibSized(src, int64(size))
		// An inflater whose tables hold another stream's codes (first- and
		// second-level) decodes and refuses the same.
		var dirty inflater
		dirty.inflateZlibSized(lz, int64(len(ldata)))
		if got2, ok2 := dirty.inflateZlibSized(src, int64(size)); ok2 != ok || !bytes.Equal(got2, got) {
			t.Fatalf("reused inflater: ok %v, %q; a new one: ok %v, %q", ok2, got2, ok, got)
		}
		if !ok {
			return
		}
		want, err := refInflate(src, int64(size))
		if err != nil {
			t.Fatalf("accepted a stream compress/zlib refuses: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("decoded %q, compress/zlib %q", got, want)
		}
	})
}

func BenchmarkInflate(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	var zs [][]byte
	var sizes []int64
	for range 100 {
		raw := make([]byte, 3024)
		for i := range raw {
			raw[i] = byte(r.Uint32())
		}
		doc := []byte(base64.StdEncoding.EncodeToString(raw))
		zs = append(zs, zlibOf(b, doc, flate.DefaultCompression))
		sizes = append(sizes, int64(len(doc)))
	}
	b.Run("fast", func(b *testing.B) {
		var f inflater
		for b.Loop() {
			for i, z := range zs {
				if _, ok := f.inflateZlibSized(z, sizes[i]); !ok {
					b.Fatal("refused")
				}
			}
		}
	})
	b.Run("zlib", func(b *testing.B) {
		var zr zlibReader
		for b.Loop() {
			for i, z := range zs {
				zr.reset(bytes.NewReader(z))
				if _, err := readExactly(zr.r, sizes[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	_ = io.EOF
}

// looseOf is a loose object file of data at level: zlib("blob N\0" data).
func looseOf(t testing.TB, data []byte, level int) []byte {
	return zlibOf(t, append([]byte("blob "+strconv.Itoa(len(data))+"\x00"), data...), level)
}

// decodeBoth reads raw as a loose object with the in-place decoder first
// and with compress/zlib alone, and fails unless both give the same type,
// content and errors.
func decodeBoth(t *testing.T, raw []byte, whole bool) {
	t.Helper()
	fast, ref := newODB("objects"), newODB("objects") // decodeLoose reads no file
	ref.zlibOnly = true
	t1, d1, s1, e1 := fast.decodeLoose("obj", raw, whole)
	t2, d2, s2, e2 := ref.decodeLoose("obj", raw, whole)
	if t1 != t2 || !bytes.Equal(d1, d2) || fmt.Sprint(s1) != fmt.Sprint(s2) || fmt.Sprint(e1) != fmt.Sprint(e2) {
		t.Fatalf("in place: %v %d bytes %v %v; compress/zlib: %v %d bytes %v %v", t1, len(d1), s1, e1, t2, len(d2), s2, e2)
	}
}

// TestInflateLoose: loose objects decode in place to what compress/zlib
// gives, and whatever is wrong with one (a flipped checksum byte, bytes
// after the stream, a cut, a bad header) is reported in the same words.
func TestInflateLoose(t *testing.T) {
	t.Parallel()
	var f inflater
	for i, data := range inflateSamples() {
		for _, level := range []int{flate.NoCompression, flate.BestSpeed, flate.DefaultCompression, flate.HuffmanOnly} {
			raw := looseOf(t, data, level)
			head, got, ok := f.inflateLoose(raw, true)
			if !ok || !bytes.Equal(got, data) || string(head) != "blob "+strconv.Itoa(len(data)) {
				t.Fatalf("sample %d level %d: ok %v, %q, %d bytes", i, level, ok, head, len(got))
			}
			for _, whole := range []bool{false, true} {
				decodeBoth(t, raw, whole)
				flipped := bytes.Clone(raw)
				flipped[len(flipped)-1] ^= 1
				decodeBoth(t, flipped, whole)
				decodeBoth(t, append(bytes.Clone(raw), 0), whole)
				decodeBoth(t, raw[:len(raw)-6], whole)
			}
			if _, _, ok := f.inflateLoose(append(bytes.Clone(raw), 0), true); ok {
				t.Fatalf("sample %d level %d: a byte after the stream passed", i, level)
			}
		}
	}
	for _, raw := range [][]byte{
		zlibOf(t, []byte("blob 3\x00abcd"), 6),      // longer than its header
		zlibOf(t, []byte("blob 5\x00abcd"), 6),      // shorter
		zlibOf(t, []byte("blob x\x00abcd"), 6),      // bad size
		zlibOf(t, []byte("blub 4\x00abcd"), 6),      // bad type
		zlibOf(t, bytes.Repeat([]byte("a"), 80), 6), // no header end
		{0x78},
	} {
		for _, whole := range []bool{false, true} {
			decodeBoth(t, raw, whole)
		}
	}
}

// FuzzInflateLoose: a loose object file gives the same type, content and
// errors with the in-place decoder as with compress/zlib alone.
func FuzzInflateLoose(f *testing.F) {
	for _, data := range inflateSamples() {
		if len(data) > 3000 {
			data = data[:3000]
		}
		for _, level := range []int{0, 1, 6, -2} {
			var b bytes.Buffer
			w, _ := zlib.NewWriterLevel(&b, level)
			w.Write(append([]byte("blob "+strconv.Itoa(len(data))+"\x00"), data...))
			w.Close()
			f.Add(b.Bytes(), true)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, whole bool) {
		decodeBoth(t, raw, whole)
	})
}

// smallObjects are a commit and a tree of the sizes a store holds (a few
// hundred bytes: hex ids, names, binary ids), the objects whose per-stream
// cost (building a block's decoding tables) dominates their decoding.
func smallObjects() (commit, tree []byte) {
	r := rand.New(rand.NewPCG(5, 6))
	hex := func() string {
		var b [20]byte
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return fmt.Sprintf("%x", b)
	}
	commit = []byte("tree " + hex() + "\nparent " + hex() +
		"\nauthor readproof <readproof@localhost> 1764892800 +0000\ncommitter readproof <readproof@localhost> 1764892800 +0000\n\nrun run-0042: 3 documents\n\nReadproof-Run: run-0042\nReadproof-Agent: ci\n")
	var t bytes.Buffer
	for i := range 12 {
		fmt.Fprintf(&t, "100644 doc-%04d.md\x00", i)
		for range 20 {
			t.WriteByte(byte(r.Uint32()))
		}
	}
	return commit, t.Bytes()
}

// BenchmarkInflateSmall decodes a commit- and a tree-sized zlib stream as
// readproof writes them (BestSpeed) and as git does (the default level).
func BenchmarkInflateSmall(b *testing.B) {
	commit, tree := smallObjects()
	for _, obj := range []struct {
		name string
		data []byte
	}{{"commit", commit}, {"tree", tree}} {
		for _, level := range []int{flate.BestSpeed, flate.DefaultCompression} {
			z := zlibOf(b, obj.data, level)
			b.Run(fmt.Sprintf("%s/level%d", obj.name, level), func(b *testing.B) {
				var f inflater
				b.SetBytes(int64(len(obj.data)))
				for b.Loop() {
					if _, ok := f.inflateZlibSized(z, int64(len(obj.data))); !ok {
						b.Fatal("refused")
					}
				}
			})
		}
	}
}
