package gitstore

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
)

// TestLongReadGivesPackPagesBack: a read of every object of a pack much
// larger than the trim bound keeps about that bound of the pack mapped,
// not the whole pack (docs/scaling.md, session 31: `receipts list` of a
// session of 100,000 receipts ended with every page of its 110 MB pack in
// its resident set). Each object is still read right.
func TestLongReadGivesPackPagesBack(t *testing.T) {
	t.Parallel()
	// a pack of about 8 MB
	r, ids, contents := blobPack(t, 1000)
	const bound = 1 << 20
	p := r.st.packs[0]
	p.trimAfter = bound
	size := len(p.mapped)
	if size < 7<<20 {
		t.Fatalf("the pack is %d bytes, want over 7 MB for the test to mean something", size)
	}
	peak := 0
	for i, id := range ids {
		got, err := r.Blob(id)
		if err != nil || string(got) != contents[i] {
			t.Fatalf("blob %d: %d bytes, %v", i, len(got), err)
		}
		if i%50 == 49 {
			peak = max(peak, mappedRSS(t, p.mapped)<<10)
		}
	}
	// the bound counted, and what a read maps around what it reads
	// (64 KB an entry, a few entries between two samples)
	if peak > 3*bound {
		t.Errorf("at most %d bytes of the %d-byte pack were resident at once, want at most %d", peak, size, 3*bound)
	}
}

// TestSmallPackNeverTrimmed: a pack and index no larger together than the
// trim bound are never trimmed, however much is read from them (a replay
// of 1,000 documents trimmed its 5 MB pack: faults for nothing); one
// larger than the bound is.
func TestSmallPackNeverTrimmed(t *testing.T) {
	t.Parallel()
	// a pack of about 1.6 MB
	r, ids, contents := blobPack(t, 200)
	p := r.st.packs[0]
	files := int64(len(p.idx)) + p.packSize
	// each pass counts about 200 x 88 KB, 17 MB: past the bound each time
	readAll := func() {
		for range 3 {
			for i, id := range ids {
				got, err := r.Blob(id)
				if err != nil || string(got) != contents[i] {
					t.Fatalf("blob %d: %d bytes, %v", i, len(got), err)
				}
			}
		}
	}
	p.trimAfter = files
	readAll()
	if n := p.trims.Load(); n != 0 {
		t.Errorf("a pack and index of %d bytes with a bound of %d were trimmed %d times, want never", files, p.trimAfter, n)
	}
	p.trimAfter = files - 1
	readAll()
	if n := p.trims.Load(); n == 0 {
		t.Errorf("a pack and index of %d bytes with a bound of %d were never trimmed", files, p.trimAfter)
	}
}

// blobPack makes a bare repository whose one pack holds n incompressible
// blobs of 8 KB, each named by a tag, and opens it: the store, its pack
// opened, listed and mapped, the blobs' ids and their contents.
func blobPack(t *testing.T, n int) (*repo, []OID, []string) {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "--bare", "-q")
	contents := make([]string, n)
	for i := range contents {
		b := make([]byte, 8<<10)
		rand.Read(b)
		contents[i] = string(b)
	}
	ids := gitHashObjects(t, dir, contents)
	var refs strings.Builder
	for i, id := range ids {
		fmt.Fprintf(&refs, "create refs/tags/b%d %s\n", i, id)
	}
	cmd := GitCommand(t, dir, "update-ref", "--stdin")
	cmd.Stdin = strings.NewReader(refs.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git update-ref --stdin: %v\n%s", err, out)
	}
	git(t, dir, "repack", "-adq")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r := s.(*repo)
	if _, err := r.Blob(ids[0]); err != nil { // the pack opened and listed
		t.Fatal(err)
	}
	if len(r.st.packs) != 1 || r.st.packs[0].mapped == nil {
		t.Fatalf("want one mapped pack, have %d", len(r.st.packs))
	}
	return r, ids, contents
}
