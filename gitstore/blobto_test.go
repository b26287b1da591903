package gitstore

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/readproof/readproof/internal/hint"
)

// blobToBytes is BlobTo into a buffer.
func blobToBytes(s Reader, id OID, max int64) ([]byte, error) {
	var buf bytes.Buffer
	n, err := s.BlobTo(id, max, &buf)
	if err == nil && n != int64(buf.Len()) {
		return nil, fmt.Errorf("BlobTo returned %d, wrote %d bytes", n, buf.Len())
	}
	return buf.Bytes(), err
}

// versions returns n versions of a text of about size bytes, each an edit
// of the one before, so that git stores them as deltas of each other.
func versions(n, size int) []string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "line %d of a document that an agent read, %x\n", i, i*i*2654435761)
	}
	base := b.String()
	out := make([]string, n)
	for i := range out {
		cut := len(base) * (i + 1) / (n + 1)
		out[i] = base[:cut] + fmt.Sprintf("an edit in version %d\n", i) + base[cut:] + strings.Repeat("tail\n", i)
		base = out[i]
	}
	return out
}

// deltaCount is the number of deltified objects `git verify-pack -v` lists
// in the store's packs.
func deltaCount(t *testing.T, dir string) int {
	t.Helper()
	idx, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
	n := 0
	for _, f := range idx {
		for _, line := range strings.Split(git(t, dir, "verify-pack", "-v", f), "\n") {
			// "<id> blob <size> <packed> <offset> <depth> <base>"
			if f := strings.Fields(line); len(f) == 7 && isHexOID(f[0]) {
				n++
			}
		}
	}
	return n
}

// TestBlobToMatchesBlob: BlobTo writes the bytes Blob returns, and returns
// their count, for loose objects, packed ones, OFS_DELTA and REF_DELTA
// entries (stock git packs them: gc, repack -adf), and with every delta
// base streamed to a temporary file instead of held.
func TestBlobToMatchesBlob(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, dir, "--quiet", "--bare")
	contents := append([]string{"", "x", "a small blob\n"}, versions(6, 300<<10)...)
	contents = append(contents, versions(3, 40<<10)...)
	ids := gitHashObjects(t, dir, contents)
	for i, id := range ids {
		git(t, dir, "update-ref", fmt.Sprintf("refs/tags/b%d", i), string(id))
	}
	check := func(stage string, spillAll bool) {
		t.Helper()
		check1(t, dir, ids, contents, stage, 0, 0)
		check1(t, dir, ids, contents, stage+", streamed", -1, 0)
		if spillAll {
			check1(t, dir, ids, contents, stage+", streamed, bases spilled", -1, -1)
		}
	}
	check("loose", false)
	git(t, dir, "gc", "--quiet")
	if deltaCount(t, dir) == 0 {
		t.Fatal("git gc stored no delta: the test reads none")
	}
	check("gc", false)
	git(t, dir, "repack", "-adfq", "--depth=50", "--window=50")
	check("repack -adf", true)
	git(t, dir, "-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq")
	if deltaCount(t, dir) == 0 {
		t.Fatal("git repack stored no REF_DELTA: the test reads none")
	}
	check("REF_DELTA", true)
}

// check1 compares BlobTo with Blob for each of ids, with wholeUpTo and
// baseUpTo set on the store (-1: every object streamed, every delta base
// spilled to a file, which it then checks happened).
func check1(t *testing.T, dir string, ids []OID, contents []string, stage string, wholeUpTo, baseUpTo int64) {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.(*repo)
	r.wholeUpTo, r.baseUpTo = wholeUpTo, baseUpTo
	for i, id := range ids {
		want, err := s.Blob(id)
		if err != nil {
			t.Fatalf("%s: Blob %d: %v", stage, i, err)
		}
		got, err := blobToBytes(s, id, -1)
		if err != nil || !bytes.Equal(got, want) || string(got) != contents[i] {
			t.Errorf("%s: BlobTo %d = %d bytes, %v; want the %d bytes Blob returns", stage, i, len(got), err, len(want))
		}
		if _, err := blobToBytes(s, id, int64(len(want))); err != nil {
			t.Errorf("%s: BlobTo %d with max its size: %v", stage, i, err)
		}
	}
	if baseUpTo < 0 && r.basesSpilled == 0 {
		t.Errorf("%s: no delta base went through a temporary file", stage)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "tmp_pack_base_*")); len(left) > 0 {
		t.Errorf("%s: temporary files left: %v", stage, left)
	}
}

// TestBlobToRefusals: what BlobTo refuses, it refuses before writing a
// byte (a blob over max: ErrTooLarge from its header, also a delta's
// result; an object that is no blob; a missing one), and a corrupt object
// is reported as ErrCorrupt: content that does not hash to its id (loose,
// packed), a pack entry shorter than its header, a delta copying outside
// its base.
func TestBlobToRefusals(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, dir, "--quiet", "--bare")
	ids := gitHashObjects(t, dir, []string{"twelve bytes"})
	tree := OID(git(t, dir, "mktree", "--missing")) // the empty tree, written

	// loose: the bytes of "hello" under the id of "hellO"
	flipped := OID(objectHash(plumbing.BlobObject, []byte("hellO")).String())
	p := filepath.Join(dir, "objects", string(flipped[:2]), string(flipped[2:]))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, zlibBytes(t, []byte("blob 5\x00hello")), 0o444); err != nil {
		t.Fatal(err)
	}
	// packed: a blob under another's id, an entry holding 5 of the 9
	// bytes its header states, a base and a delta copying past its end,
	// and a delta of a few bytes that makes 100 MiB
	wrongID := objectHash(plumbing.BlobObject, []byte("other"))
	shortID := objectHash(plumbing.BlobObject, []byte("shortened"))
	baseID := objectHash(plumbing.BlobObject, []byte("base"))
	badDeltaID := plumbing.NewHash(strings.Repeat("cf", 20))
	hugeID := plumbing.NewHash(strings.Repeat("d0", 20))
	wrong := append(packHeader(plumbing.BlobObject, 5), zlibBytes(t, []byte("third"))...)
	short := append(packHeader(plumbing.BlobObject, 9), zlibBytes(t, []byte("short"))...)
	base := append(packHeader(plumbing.BlobObject, 4), zlibBytes(t, []byte("base"))...)
	baseOff := 12 + len(wrong) + len(short)
	deltaEntry := func(body []byte, at int) []byte {
		return append(append(packHeader(plumbing.OFSDeltaObject, len(body)), ofsBack(int64(at-baseOff))...), zlibBytes(t, body)...)
	}
	badOff := baseOff + len(base)
	bad := deltaEntry([]byte{4, 8, 0x91, 2, 8}, badOff) // copy 8 bytes from offset 2 of a 4-byte base
	huge := deltaEntry([]byte{4, 0x80, 0x80, 0x80, 0x32, 3, 'a', 'b', 'c'}, badOff+len(bad))
	writeOnePack(t, dir, []plumbing.Hash{wrongID, shortID, baseID, badDeltaID, hugeID}, [][]byte{wrong, short, base, bad, huge})

	for _, whole := range []int64{0, -1} {
		t.Run(fmt.Sprintf("whole up to %d", whole), func(t *testing.T) {
			blobToRefusals(t, dir, whole, ids[0], tree, flipped, wrongID, shortID, badDeltaID, hugeID)
		})
	}
}

func blobToRefusals(t *testing.T, dir string, whole int64, small, tree, flipped OID, wrongID, shortID, badDeltaID, hugeID plumbing.Hash) {
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.(*repo).wholeUpTo = whole
	ids := []OID{small}
	refused := []struct {
		what string
		id   OID
		max  int64
		want error
	}{
		{"a blob over max", ids[0], 11, ErrTooLarge},
		{"a delta whose result is over max", OID(hugeID.String()), 64 << 20, ErrTooLarge},
		{"a tree", tree, -1, ErrNotFound},
		{"a missing object", OID(strings.Repeat("e1", 20)), -1, ErrNotFound},
	}
	for _, c := range refused {
		var buf bytes.Buffer
		n, err := s.BlobTo(c.id, c.max, &buf)
		if !errors.Is(err, c.want) || n != 0 || buf.Len() != 0 {
			t.Errorf("%s: BlobTo = %d, %v, wrote %d bytes; want %v before any byte", c.what, n, err, buf.Len(), c.want)
		}
	}
	corrupt := map[string]OID{
		"loose, content not its id":  flipped,
		"packed, content not its id": OID(wrongID.String()),
		"packed, shorter than said":  OID(shortID.String()),
		"delta copying past a base":  OID(badDeltaID.String()),
	}
	for what, id := range corrupt {
		if _, err := blobToBytes(s, id, -1); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: BlobTo = %v, want ErrCorrupt", what, err)
		}
		if _, err := s.Blob(id); err == nil {
			t.Errorf("%s: Blob passed it", what)
		}
	}
	// the store reads on after each refusal
	if got, err := blobToBytes(s, ids[0], -1); err != nil || string(got) != "twelve bytes" {
		t.Errorf("BlobTo after the refusals = %q, %v", got, err)
	}
	// a writer's error is the writer's
	errFull := errors.New("full")
	if _, err := s.BlobTo(ids[0], -1, failingWriter{errFull}); !errors.Is(err, errFull) {
		t.Errorf("BlobTo into a failing writer = %v, want its error", err)
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestBlobToBoundedMemory: BlobTo of a 64 MiB blob of zeros (a few KiB
// compressed) allocates a small fraction of it, loose, packed, and as a
// delta of a few bytes that repeats a 64 KiB base 1024 times; Blob of
// the same blob allocates all of it.
func TestBlobToBoundedMemory(t *testing.T) {
	const size = 64 << 20
	dir := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, dir, "--quiet", "--bare")
	f := filepath.Join(t.TempDir(), "zeros")
	if err := os.WriteFile(f, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	zeros := OID(git(t, dir, "hash-object", "-w", "--", f))
	os.Remove(f)

	// a 64 KiB base, and a delta of 1024 copies of all of it
	baseData := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	body := append([]byte{0x80, 0x80, 0x04}, 0x80, 0x80, 0x80, 0x20) // base 65536, result 64 MiB
	body = append(body, bytes.Repeat([]byte{0x80}, 1024)...)         // copy 0x10000 bytes from 0
	sha := sha1.New()
	sha.Write(appendObjectHeader(nil, plumbing.BlobObject, size))
	for range 1024 {
		sha.Write(baseData)
	}
	var repeatID plumbing.Hash
	copy(repeatID[:], sha.Sum(nil))
	base := append(packHeader(plumbing.BlobObject, len(baseData)), zlibBytes(t, baseData)...)
	delta := append(append(packHeader(plumbing.OFSDeltaObject, len(body)), ofsBack(int64(len(base)))...), zlibBytes(t, body)...)
	writeOnePack(t, dir, []plumbing.Hash{objectHash(plumbing.BlobObject, baseData), repeatID}, [][]byte{base, delta})

	measure := func(what string, id OID, size int64) {
		t.Helper()
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		h := sha1.New()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		n, err := s.BlobTo(id, -1, h)
		runtime.ReadMemStats(&after)
		if err != nil || n != size {
			t.Fatalf("%s: BlobTo = %d, %v", what, n, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(size/16) {
			t.Errorf("%s: BlobTo of %d bytes allocated %d bytes, want under %d", what, size, alloc, size/16)
		} else {
			t.Logf("%s: BlobTo of %d bytes allocated %d bytes", what, size, alloc)
		}
		runtime.ReadMemStats(&before)
		data, err := s.Blob(id)
		runtime.ReadMemStats(&after)
		if err != nil || int64(len(data)) != size {
			t.Fatalf("%s: Blob = %d bytes, %v", what, len(data), err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc < uint64(size) {
			t.Errorf("%s: Blob allocated %d bytes: the measure does not see a whole read", what, alloc)
		}
	}
	measure("loose", zeros, size)
	measure("delta repeating its base", OID(repeatID.String()), size)
	git(t, dir, "update-ref", "refs/tags/zeros", string(zeros))
	git(t, dir, "repack", "-adq")
	if fi, _ := filepath.Glob(filepath.Join(dir, "objects", string(zeros[:2]), "*")); len(fi) > 0 {
		t.Fatal("repack left the blob loose")
	}
	measure("packed", zeros, size)

	// a REF_DELTA, in a pack of its own, on the packed zeros: 1024 copies
	// of 64 KiB of them and one byte more; its base, over
	// streamBaseInMemory, goes through a temporary file
	body = append([]byte{0x80, 0x80, 0x80, 0x20, 0x81, 0x80, 0x80, 0x20}, bytes.Repeat([]byte{0x80}, 1024)...)
	body = append(body, 1, 'x')
	sha = sha1.New()
	sha.Write(appendObjectHeader(nil, plumbing.BlobObject, size+1))
	zero := make([]byte, 1<<20)
	for range size >> 20 {
		sha.Write(zero)
	}
	sha.Write([]byte("x"))
	var onMoreID plumbing.Hash
	copy(onMoreID[:], sha.Sum(nil))
	zerosHash := plumbing.NewHash(string(zeros))
	refDelta := append(append(packHeader(plumbing.REFDeltaObject, len(body)), zerosHash[:]...), zlibBytes(t, body)...)
	writeOnePack(t, dir, []plumbing.Hash{onMoreID}, [][]byte{refDelta})
	measure("delta on a 64 MiB base", OID(onMoreID.String()), size+1)
}

// TestBlobToCatFile: the cat-file view streams what the store's own
// reader streams, and refuses as it does.
func TestBlobToCatFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, dir, "--quiet", "--bare")
	contents := versions(3, 100<<10)
	ids := gitHashObjects(t, dir, contents)
	tree := OID(git(t, dir, "mktree", "--missing"))
	r, err := OpenGitReader(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, id := range ids {
		if got, err := blobToBytes(r, id, -1); err != nil || string(got) != contents[i] {
			t.Errorf("BlobTo %d = %d bytes, %v", i, len(got), err)
		}
	}
	if _, err := r.BlobTo(ids[0], 10, io.Discard); !errors.Is(err, ErrTooLarge) {
		t.Errorf("BlobTo over max = %v, want ErrTooLarge", err)
	}
	if _, err := r.BlobTo(tree, -1, io.Discard); !errors.Is(err, ErrNotFound) {
		t.Errorf("BlobTo of a tree = %v, want ErrNotFound", err)
	}
	if _, err := r.BlobTo(ids[1], -1, failingWriter{io.ErrClosedPipe}); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("BlobTo into a failing writer = %v", err)
	}
	// the answers stay in step after a refusal and a failed writer
	if got, err := blobToBytes(r, ids[2], -1); err != nil || string(got) != contents[2] {
		t.Errorf("BlobTo after refusals = %d bytes, %v", len(got), err)
	}
}

// FuzzStreamDelta: a delta applied as a stream (streamDelta, its base in
// memory and in a file, copied through a buffer of 7 bytes) gives what
// applyDelta gives, and fails where it fails.
func FuzzStreamDelta(f *testing.F) {
	f.Add([]byte("hello world"), []byte{11, 5, 0x91, 0, 5})
	f.Add([]byte("abc"), []byte{3, 6, 3, 'x', 'y', 'z', 0x90, 3})
	f.Add([]byte(""), []byte{0, 0x80, 0x80, 0x04, 0x80})
	f.Add([]byte("0123456789"), []byte{10, 12, 0x91, 2, 8, 4, 'a', 'b', 'c', 'd'})
	f.Add([]byte("0123456789"), []byte{10, 4, 0x91, 2, 4, 0x91, 0, 1})
	f.Add([]byte("0123456789"), []byte{10, 4, 0x91, 2, 4, 0})
	file, err := os.Create(filepath.Join(f.TempDir(), "base"))
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		_, rest, ok := deltaSize(delta)
		size, _, ok2 := deltaSize(rest)
		if !ok || !ok2 || size > 1<<22 {
			return // refused by its header before streaming, or too large to compare
		}
		want, werr := applyDelta(base, delta)
		if err := file.Truncate(0); err != nil {
			t.Fatal(err)
		}
		if _, err := file.WriteAt(base, 0); err != nil {
			t.Fatal(err)
		}
		for _, b := range []*deltaBase{{size: int64(len(base)), data: base}, {size: int64(len(base)), f: file}} {
			var out bytes.Buffer
			err := streamDelta(&out, b, bufio.NewReaderSize(bytes.NewReader(delta), 16), int64(size), make([]byte, 7))
			if (err == nil) != (werr == nil) || err == nil && !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("base in a file %v: streamDelta = %q, %v; applyDelta = %q, %v", b.f != nil, out.Bytes(), err, want, werr)
			}
		}
	})
}

// TestCheckObjectSizeCatFile: CheckObjectSize of the cat-file view (a
// hook's) refuses an object over max by the size git names, and passes
// one within it and a missing one, as it does for a store.
func TestCheckObjectSizeCatFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, dir, "--quiet", "--bare")
	ids := gitHashObjects(t, dir, []string{"twelve bytes"})
	r, err := OpenGitReader(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := CheckObjectSize(r, ids[0], 11); !errors.Is(err, ErrTooLarge) {
		t.Errorf("CheckObjectSize over max = %v, want ErrTooLarge", err)
	}
	for _, c := range []struct {
		id  OID
		max int64
	}{{ids[0], 12}, {OID(strings.Repeat("e1", 20)), 0}} {
		if err := CheckObjectSize(r, c.id, c.max); err != nil {
			t.Errorf("CheckObjectSize(%s, %d) = %v, want nil", c.id, c.max, err)
		}
	}
	if got, err := blobToBytes(r, ids[0], -1); err != nil || string(got) != "twelve bytes" {
		t.Errorf("BlobTo after the size checks = %q, %v", got, err)
	}
}

// TestBlobToDeltaOwnBase: a REF_DELTA that a hostile pack makes its own
// base, its sizes over what BlobTo holds in memory, is refused as corrupt
// at the bound on delta chains, having made no temporary file and
// allocated a few MiB: a spilled base's file and buffer are made once the
// base below it is read, not on the way down the chain (each of the
// 10,000 links made a file and a 64 KiB buffer).
func TestBlobToDeltaOwnBase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, dir, "--quiet", "--bare")
	self := plumbing.NewHash(strings.Repeat("5e", 20))
	// base 32 MiB, result 32 MiB, then a copy of 64 KiB from 0
	body := []byte{0x80, 0x80, 0x80, 0x10, 0x80, 0x80, 0x80, 0x10, 0x80}
	entry := append(append(packHeader(plumbing.REFDeltaObject, len(body)), self[:]...), zlibBytes(t, body)...)
	writeOnePack(t, dir, []plumbing.Hash{self}, [][]byte{entry})
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n, err := s.BlobTo(OID(self.String()), -1, io.Discard)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) || n != 0 {
		t.Errorf("BlobTo of a delta on itself = %d, %v; want ErrCorrupt", n, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("BlobTo of a delta on itself allocated %d bytes, want under 8 MiB", alloc)
	}
	if spilled := s.(*repo).basesSpilled; spilled != 0 {
		t.Errorf("BlobTo of a delta on itself made %d temporary files, want none", spilled)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "tmp_pack_base_*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestBlobToSpillFails: a delta base whose temporary file cannot be
// written (a full disk) fails BlobTo with the file system's error and a
// hint naming the full file system, and leaves no file behind.
func TestBlobToSpillFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, dir, "--quiet", "--bare")
	ids := gitHashObjects(t, dir, versions(3, 40<<10))
	for i, id := range ids {
		git(t, dir, "update-ref", fmt.Sprintf("refs/tags/b%d", i), string(id))
	}
	git(t, dir, "repack", "-adfq")
	if deltaCount(t, dir) == 0 {
		t.Fatal("git repack stored no delta: the test reads none")
	}
	writeFault = func(string) error { return syscall.ENOSPC }
	t.Cleanup(func() { writeFault = nil })
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.(*repo).wholeUpTo, s.(*repo).baseUpTo = -1, -1 // every base spilled
	failed := 0
	for i, id := range ids {
		_, err := blobToBytes(s, id, -1)
		if err == nil {
			continue
		}
		failed++
		if h := hint.Of(err); !errors.Is(err, syscall.ENOSPC) || !strings.Contains(h, filepath.Join(dir, "objects", "pack")+" is full") {
			t.Errorf("BlobTo %d, its base's file on a full disk: %v (hint %q); want ENOSPC and a hint naming objects/pack's file system", i, err, h)
		}
	}
	if failed == 0 {
		t.Error("every BlobTo passed with its delta base's file on a full disk")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "tmp_pack_base_*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestBlobToSmallResultOnHugeBase: a delta whose result is small, on a base
// far larger than BlobTo holds in memory (64 MiB of zeros, which compress to
// almost nothing: what a hostile remote sends), is streamed, its base
// spilled, not read whole with its base: BlobTo allocates far less than
// the base, and still gives the result.
func TestBlobToSmallResultOnHugeBase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, dir, "--quiet", "--bare")
	zeros := make([]byte, 64<<20)
	baseID := plumbing.ComputeHash(plumbing.BlobObject, zeros)
	result := []byte("small tail")
	resultID := plumbing.ComputeHash(plumbing.BlobObject, result)
	// base size 64 MiB, result size 10, then an insert of the 10 bytes
	body := append([]byte{0x80, 0x80, 0x80, 0x20, byte(len(result)), byte(len(result))}, result...)
	base := append(packHeader(plumbing.BlobObject, len(zeros)), zlibBytes(t, zeros)...)
	delta := append(append(packHeader(plumbing.REFDeltaObject, len(body)), baseID[:]...), zlibBytes(t, body)...)
	zeros = nil
	writeOnePack(t, dir, []plumbing.Hash{baseID, resultID}, [][]byte{base, delta})
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got bytes.Buffer
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n, err := s.BlobTo(OID(resultID.String()), -1, &got)
	runtime.ReadMemStats(&after)
	if err != nil || n != int64(len(result)) || got.String() != string(result) {
		t.Fatalf("BlobTo = %d, %q, %v; want %q", n, got.String(), err, result)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("BlobTo of a 10-byte result on a 64 MiB base allocated %d bytes, want under 8 MiB", alloc)
	}
}

// TestBlobToReadsEachHeaderOnce: BlobTo of a delta whose bases are all
// spilled to temporary files (the path taken for bases over 16 MiB) reads
// the header of each entry along its chain once: the size read to decide
// whether a base fits in memory is the one the spill then uses.
func TestBlobToReadsEachHeaderOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, dir, "--quiet", "--bare")
	contents := versions(8, 100<<10)
	ids := gitHashObjects(t, dir, contents)
	for i, id := range ids {
		git(t, dir, "update-ref", fmt.Sprintf("refs/tags/b%d", i), string(id))
	}
	git(t, dir, "repack", "-adfq", "--depth=50", "--window=50")
	// each blob's chain length, from `git verify-pack -v`: "<id> blob
	// <size> <packed> <offset>" and, for a delta, "<depth> <base>"
	chain := map[OID]int64{}
	idx, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
	for _, line := range strings.Split(git(t, dir, "verify-pack", "-v", idx[0]), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 5 && isHexOID(f[0]):
			chain[OID(f[0])] = 1
		case len(f) == 7 && isHexOID(f[0]):
			depth, err := strconv.ParseInt(f[5], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			chain[OID(f[0])] = depth + 1
		}
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.(*repo)
	r.wholeUpTo, r.baseUpTo = -1, -1 // every object streamed, every base spilled
	deepest := int64(0)
	for i, id := range ids {
		if _, err := r.Blob(id); err != nil { // the pack opened and listed
			t.Fatal(err)
		}
		r.st.cache = baseCache{} // nothing read from the cache
		for _, p := range r.st.packs {
			p.headerReads.Store(0)
		}
		got, err := blobToBytes(s, id, -1)
		if err != nil || string(got) != contents[i] {
			t.Fatalf("BlobTo %d: %d bytes, %v", i, len(got), err)
		}
		var reads int64
		for _, p := range r.st.packs {
			reads += p.headerReads.Load()
		}
		if want := chain[id]; want == 0 || reads != want {
			t.Errorf("BlobTo %d (a chain of %d entries) read %d entry headers, want one each", i, want, reads)
		}
		deepest = max(deepest, chain[id])
	}
	if deepest < 3 || r.basesSpilled == 0 {
		t.Fatalf("the longest chain has %d entries, %d bases spilled: the test reads no spilled chain", deepest, r.basesSpilled)
	}
}
