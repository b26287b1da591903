package gitstore

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/internal/testsize"
)

// fillDeltaRepo writes blobs that git stores as deltas of each other (a
// document edited a little at a time, one large enough for copies of 64 KiB
// and more), trees and commits naming them, and sets main to the last.
func fillDeltaRepo(t *testing.T, s Store) {
	t.Helper()
	rng := rand.New(rand.NewSource(1))
	doc := make([]byte, 140<<10) // one edit apart: the untouched side of it (>= 70 KiB) is a full 64 KiB copy
	for i := range doc {
		doc[i] = "abcdefghij \n"[rng.Intn(12)]
	}
	var parent []OID
	for i := 0; i < 15; i++ {
		at := rng.Intn(len(doc) - 100)
		copy(doc[at:], fmt.Sprintf("edit %d", i))
		small := fmt.Sprintf("version %d\n%s", i, strings.Repeat("the same line\n", 50))
		b1, _ := s.PutBlob(doc)
		b2, _ := s.PutBlob([]byte(small))
		tree, err := s.PutTree([]TreeEntry{{Name: "big", Mode: ModeFile, OID: b1}, {Name: "small", Mode: ModeFile, OID: b2}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.PutCommit(Commit{Tree: tree, Parents: parent, Author: testSig(), Committer: testSig(), Message: fmt.Sprintf("c%d\n", i)})
		if err != nil {
			t.Fatal(err)
		}
		old := OID("")
		if len(parent) > 0 {
			old = parent[0]
		}
		mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", Old: old, New: c})
		parent = []OID{c}
	}
}

// checkAllObjects reads every object git lists through a fresh Store and
// compares type and content with git cat-file.
func checkAllObjects(t *testing.T, dir string) int {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := strings.Fields(git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))
	cmd := GitCommand(t, dir, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(bytes.NewReader(out))
	for _, id := range ids {
		var gotID, kind string
		var size int
		if _, err := fmt.Fscanf(r, "%s %s %d\n", &gotID, &kind, &size); err != nil || gotID != id {
			t.Fatalf("cat-file output for %s: %v", id, err)
		}
		want := make([]byte, size+1) // the content and a newline
		if _, err := io.ReadFull(r, want); err != nil {
			t.Fatal(err)
		}
		want = want[:size]
		k, data, err := s.RawObject(OID(id))
		if err != nil {
			t.Fatalf("RawObject(%s): %v", id, err)
		}
		if k != kind || !bytes.Equal(data, want) {
			t.Fatalf("RawObject(%s) = %s of %d bytes, git says %s of %d bytes", id, k, len(data), kind, size)
		}
	}
	return len(ids)
}

// packKinds counts the entry kinds of the store's packs (git verify-pack).
func packKinds(t *testing.T, dir string) (deltas int) {
	t.Helper()
	idx, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
	for _, f := range idx {
		out := git(t, dir, "verify-pack", "-v", f)
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) >= 7 && isHexOID(f[0]) {
				deltas++ // a line with a depth and a base is a delta
			}
		}
	}
	return deltas
}

// Regression test for issue 14 ("Flat after gc"): objects are read from
// packs by our own index lookup and delta resolution; every object of a
// repacked store (offset deltas, deltas by id, index versions 1 and 2, long
// chains) reads back exactly as git reads it.
func TestPackedObjectsMatchGit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		config [][2]string
		repack []string
	}{
		{"ofs-delta", nil, []string{"repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50"}},
		{"ref-delta", [][2]string{{"repack.useDeltaBaseOffset", "false"}}, []string{"repack", "-a", "-d", "-f", "-q", "--depth=50", "--window=50"}},
		{"index-v1", [][2]string{{"pack.indexVersion", "1"}}, []string{"repack", "-a", "-d", "-f", "-q"}},
		{"gc-aggressive", nil, []string{"gc", "--aggressive", "--prune=now", "--quiet"}},
	}
	// The four cases repack the same store: it is filled once and copied
	// for each.
	tmpl := NewTestStore(t)
	fillDeltaRepo(t, tmpl)
	tmpl.Close()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "store")
			if err := testproc.CopyTree(tmpl.Path(), dir); err != nil {
				t.Fatalf("copy the filled store: %v", err)
			}
			for _, kv := range c.config {
				git(t, dir, "config", kv[0], kv[1])
			}
			git(t, dir, c.repack...)
			git(t, dir, "prune", "--expire=now")
			if deltas := packKinds(t, dir); deltas < 10 {
				t.Fatalf("the repacked store holds %d deltas: the test reads no delta chains", deltas)
			}
			if loose := git(t, dir, "count-objects"); !strings.HasPrefix(loose, "0 objects") {
				t.Fatalf("objects left loose: %s", loose)
			}
			if n := checkAllObjects(t, dir); n < 45 {
				t.Fatalf("only %d objects read", n)
			}
		})
	}
}

// writeSyntheticIndex writes a version 2 pack index naming n random ids
// (an empty pack file behind it: a reader skips an index whose pack is
// gone, as git does) and returns one of them.
func writeSyntheticIndex(t testing.TB, dir string, n int) plumbing.Hash {
	t.Helper()
	rng := rand.New(rand.NewSource(int64(n)))
	ids := make([]plumbing.Hash, n)
	for i := range ids {
		rng.Read(ids[i][:])
	}
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	var b bytes.Buffer
	b.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fan [256]uint32
	for _, h := range ids {
		fan[h[0]]++
	}
	total := uint32(0)
	for i := range fan {
		total += fan[i]
		binary.Write(&b, binary.BigEndian, total)
	}
	for _, h := range ids {
		b.Write(h[:])
	}
	b.Write(make([]byte, 4*n)) // CRCs
	for i := range ids {
		binary.Write(&b, binary.BigEndian, uint32(12+i))
	}
	b.Write(make([]byte, 20))
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	name := fmt.Sprintf("pack-%x", sum)
	if err := os.WriteFile(filepath.Join(dir, "objects", "pack", name+".idx"), b.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "objects", "pack", name+".pack"), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	return ids[n/2]
}

// allocatedBy returns the bytes f allocates.
func allocatedBy(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// Regression test for issue 14 ("Flat after gc"): opening a store and
// looking up an object or a ref costs the same whatever the size of the
// pack index and of packed-refs. go-git's index decoder allocated tens of
// bytes per indexed object on first lookup, and packed-refs was read whole.
func TestLookupsDoNotLoadWholeIndexes(t *testing.T) {
	// 50,000 ids and refs by default: a 1.4 MB index and 3 MB of
	// packed-refs, either of them well past the 512 KiB a lookup may
	// allocate; READPROOF_LONG_TESTS=1 uses 200,000 (5.6 MB and 12 MB).
	n := testsize.Pick(t, 50_000, 200_000)
	s := NewTestStore(t)
	dir := s.Path()
	c := mkCommit(t, s, "one")
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: c})
	s.Close()
	present := writeSyntheticIndex(t, dir, n)
	var refs bytes.Buffer
	refs.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&refs, "%s refs/tags/readproof/runs/r%07d\n", c, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "packed-refs"), refs.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var lookupErr error
	used := allocatedBy(func() {
		st, err := Open(dir)
		if err != nil {
			lookupErr = err
			return
		}
		defer st.Close()
		if ok, err := st.Has(OID(present.String())); !ok || err != nil {
			lookupErr = fmt.Errorf("Has(indexed id) = %v, %v", ok, err)
			return
		}
		if ok, err := st.Has(OID(strings.Repeat("ab", 20))); ok || err != nil {
			lookupErr = fmt.Errorf("Has(unknown id) = %v, %v", ok, err)
			return
		}
		if got, err := st.Ref(fmt.Sprintf("refs/tags/readproof/runs/r%07d", n*5/8)); got != c || err != nil {
			lookupErr = fmt.Errorf("Ref = %s, %v", got, err)
			return
		}
		if _, err := st.Commit(c); err != nil {
			lookupErr = err
		}
	})
	if lookupErr != nil {
		t.Fatal(lookupErr)
	}
	// A lookup may allocate a few KiB of its own.
	t.Logf("open + 3 lookups allocated %d bytes", used)
	if used > 512<<10 {
		t.Errorf("open + 3 lookups allocated %d bytes with %d indexed objects and %d packed refs: lookups load whole files", used, n, n)
	}
}

// A damaged index is skipped (as git skips it); damaged pack data (a delta
// that does not fit its base, bad zlib) reads as ErrCorrupt, never as wrong
// content.
func TestDamagedPacks(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	dir := s.Path()
	fillDeltaRepo(t, s)
	s.Close()
	git(t, dir, "repack", "-a", "-d", "-f", "-q", "--depth=50")
	git(t, dir, "prune", "--expire=now")
	head := OID(git(t, dir, "rev-parse", "main"))
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("%d packs", len(packs))
	}
	pack := packs[0]
	orig, _ := os.ReadFile(pack)
	os.Chmod(pack, 0o644)

	// Flipped bytes in the middle of the pack's data.
	bad := bytes.Clone(orig)
	for i := len(bad) / 3; i < len(bad)/3+64; i++ {
		bad[i] ^= 0x5a
	}
	os.WriteFile(pack, bad, 0o644)
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var corrupt int
	for _, id := range strings.Fields(git(t, dir, "rev-list", "--objects", "--no-object-names", "main")) {
		_, _, err := s2.RawObject(OID(id))
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("RawObject(%s) on a damaged pack = %v, want ErrCorrupt", id, err)
		}
		if err != nil {
			corrupt++
		}
	}
	s2.Close()
	if corrupt == 0 {
		t.Error("no object read as corrupt from a damaged pack")
	}
	// A truncated index: the pack is not seen at all.
	os.WriteFile(pack, orig, 0o644)
	idx := strings.TrimSuffix(pack, ".pack") + ".idx"
	os.Chmod(idx, 0o644)
	data, _ := os.ReadFile(idx)
	os.WriteFile(idx, data[:len(data)/2], 0o644)
	if _, err := reopenCommit(t, dir, head); !errors.Is(err, ErrNotFound) {
		t.Errorf("Commit with a truncated index = %v, want ErrNotFound", err)
	}
}

func reopenCommit(t *testing.T, dir string, id OID) (Commit, error) {
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.Commit(id)
}

// objects/info/alternates is followed, as git follows it (a clone made
// with --shared or --reference).
func TestAlternates(t *testing.T) {
	t.Parallel()
	src := NewTestStore(t)
	c := mkCommit(t, src, "shared")
	mustUpdate(t, src, RefUpdate{Name: "refs/heads/main", New: c})
	src.Close()
	git(t, src.Path(), "repack", "-a", "-d", "-q")
	w := reopen(t, src.Path())
	loose := mkCommit(t, w, "loose in the alternate")
	mustSync(t, w)
	dst := filepath.Join(t.TempDir(), "dst.git")
	cmd := GitCommand(t, "", "clone", "--quiet", "--bare", "--shared", src.Path(), dst)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git clone --shared: %v\n%s", err, out)
	}
	s := reopen(t, dst)
	for _, id := range []OID{c, loose} {
		if ok, err := s.Has(id); !ok || err != nil {
			t.Errorf("Has(%s) through alternates = %v, %v", id, ok, err)
		}
		if _, err := s.Commit(id); err != nil {
			t.Errorf("Commit(%s) through alternates: %v", id, err)
		}
	}
}

func reopen(t *testing.T, dir string) Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// FuzzPackRead feeds arbitrary index and pack bytes to the lookup and the
// entry reader: they may fail, never panic or loop.
func FuzzPackRead(f *testing.F) {
	f.Add([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}, []byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01"), byte(0))
	f.Add(make([]byte, 1024+24+40), []byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01\x65\x78\x9c\x03\x00\x00\x00\x00\x01"), byte(7))
	f.Fuzz(func(t *testing.T, idx, pack []byte, first byte) {
		p := &packFile{name: "fuzz", idx: idx}
		if p.checkIndex() != nil {
			return
		}
		p.pack, p.packSize = bytes.NewReader(pack), int64(len(pack))
		var h plumbing.Hash
		h[0] = first
		d := &odb{scanned: true}
		for i := 0; i < p.count && i < 8; i++ {
			at := idxHeader + fanout + i*20
			if p.version == 1 {
				at = fanout + 4 + i*24
			}
			copy(h[:], p.idx[at:at+20])
			off, ok, err := p.find(h)
			if err != nil || !ok {
				continue
			}
			d.readPackedAt(p, off, 0)
		}
		p.find(h)
	})
}

// FuzzApplyDelta: any delta either applies within its declared sizes or
// fails.
func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("hello world"), []byte{11, 5, 0x91, 0, 5})
	f.Add([]byte("abc"), []byte{3, 6, 3, 'x', 'y', 'z', 0x90, 3})
	f.Add([]byte(""), []byte{0, 0x80, 0x80, 0x04, 0x80})
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := applyDelta(base, delta)
		if err != nil {
			return
		}
		_, rest, _ := deltaSize(delta)
		if want, _, ok := deltaSize(rest); !ok || uint64(len(out)) != want {
			t.Fatalf("applied delta gave %d bytes, header says %d", len(out), want)
		}
	})
}
