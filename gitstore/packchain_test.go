package gitstore

import (
	"bytes"
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// copyAll is a delta of a base of size bytes that makes the same bytes:
// copy instructions of at most 16 MiB each (git's limit on one).
func copyAll(size int) []byte {
	d := append(varint(uint64(size)), varint(uint64(size))...)
	for off := 0; off < size; {
		n := min(size-off, 1<<24-1)
		d = append(d, 0x80|0x0f|0x70,
			byte(off), byte(off>>8), byte(off>>16), byte(off>>24),
			byte(n), byte(n>>8), byte(n>>16))
		off += n
	}
	return d
}

// chainPack is a pack of a whole blob of size zeros and n OFS_DELTAs that
// each make it again: each of the previous entry when chained (a chain
// n deep), each of the blob otherwise.
func chainPack(size, n int, chained bool) []byte {
	entries := [][]byte{packEntry(3, size, nil, make([]byte, size))}
	starts := []int{12}
	at := 12 + len(entries[0])
	d := copyAll(size)
	for range n {
		base := starts[0]
		if chained {
			base = starts[len(starts)-1]
		}
		e := packEntry(6, len(d), ofsBack(int64(at-base)), d)
		entries = append(entries, e)
		starts = append(starts, at)
		at += len(e)
	}
	return packOf(entries...)
}

// TestScanPackBoundsDeltaChains: go-git rebuilds a delta's whole chain
// to make it, holding every level at once, so a chain of deltas of large
// objects is bounded by what the chain makes, from each delta's header:
// under a bound of 4.5 times the object, a chain of 8 deltas of a 1 MiB
// blob is refused at its fourth delta (pack entry 4: five levels of 1
// MiB), naming the entry and the bound; 8 deltas of the blob itself (two
// levels each) pass under the same bound. Before, the chain passed: each
// delta was counted with its base alone.
func TestScanPackBoundsDeltaChains(t *testing.T) {
	const size = 1 << 20
	const chain = 9 * size / 2
	b := packBounds{object: size, bytes: 1 << 30, objects: 100}
	err := scanPackChained(bytes.NewReader(chainPack(size, 8, true)), b, chain)
	if !errors.Is(err, ErrDeltaChainTooLarge) || !strings.Contains(err.Error(), "pack entry 4 ") || !strings.Contains(err.Error(), "4718592-byte limit") {
		t.Fatalf("a chain of 8 deltas of 1 MiB under a 4.5 MiB chain bound: got %v, want ErrDeltaChainTooLarge at pack entry 4", err)
	}
	if err := scanPackChained(bytes.NewReader(chainPack(size, 8, false)), b, chain); err != nil {
		t.Fatalf("8 deltas of one 1 MiB blob under a 4.5 MiB chain bound: %v, want them passed", err)
	}
	// no chain bound: the chain passes
	if err := scanPackChained(bytes.NewReader(chainPack(size, 8, true)), b, 0); err != nil {
		t.Fatal(err)
	}
}

// A REF_DELTA names its base by id, which the scan does not compute: it
// is counted with the longest chain of an earlier entry that makes its
// base's size, so a chain of REF_DELTAs is bounded as one of OFS_DELTAs.
func TestScanPackBoundsRefDeltaChains(t *testing.T) {
	const size = 1 << 20
	d := copyAll(size)
	entries := [][]byte{packEntry(3, size, nil, make([]byte, size))}
	for i := range 8 {
		var id [20]byte
		id[0] = byte(i + 1) // any id: the scan reads the base's size from the delta
		entries = append(entries, packEntry(7, len(d), id[:], d))
	}
	err := scanPackChained(bytes.NewReader(packOf(entries...)), packBounds{object: size, bytes: 1 << 30, objects: 100}, 9*size/2)
	if !errors.Is(err, ErrDeltaChainTooLarge) || !strings.Contains(err.Error(), "pack entry 4 ") {
		t.Fatalf("a chain of 8 REF_DELTAs of 1 MiB under a 4.5 MiB chain bound: got %v, want ErrDeltaChainTooLarge at pack entry 4", err)
	}
}

func TestMirrorChainBoundDefaults(t *testing.T) {
	for _, c := range []struct {
		opts MirrorOptions
		want int64
	}{
		{MirrorOptions{}, 512 << 20},
		{MirrorOptions{MaxObjectBytes: 1 << 30}, 2 << 30},
		{MirrorOptions{MaxObjectBytes: 1 << 62}, 1<<63 - 1},
		{MirrorOptions{MaxChainBytes: 4096}, 4096},
	} {
		if got := mirrorChainBound(c.opts, mirrorPackBounds(c.opts)); got != c.want {
			t.Errorf("chain bound of %+v = %d, want %d", c.opts, got, c.want)
		}
	}
}

// TestMirrorRefusesLongDeltaChain: a fetch of a history of 40 versions of
// 64 KiB files, which git packs as chains of deltas, is refused under a
// chain bound of 512 KiB (eight levels) with ErrDeltaChainTooLarge naming
// the bound, before go-git indexes anything, and leaves no pack; under
// the default bound it fetches (TestMirrorRefusesPackMakingTooMuch). The
// hostile case, a chain of 8 deltas of a 97 MiB blob of zeros (a 99 KB
// pack) under max_bytes of 256 MiB, took go-git 37 to 47 s and 2.1 to
// 2.4 GB of memory to index; refused, 0.2 to 0.5 s and 13 MB.
func TestMirrorRefusesLongDeltaChain(t *testing.T) {
	up := churn(t, 40, 8, 64<<10)
	m, err := OpenMirror(t.TempDir(), up, MirrorOptions{MaxObjectBytes: 128 << 10, MaxPackBytes: 64 << 20, MaxChainBytes: 512 << 10})
	if err != nil {
		t.Fatal(err)
	}
	err = m.Fetch(context.Background())
	if !errors.Is(err, ErrDeltaChainTooLarge) || !strings.Contains(err.Error(), "over the 524288-byte limit") {
		t.Fatalf("Fetch = %v, want ErrDeltaChainTooLarge naming the 524288-byte limit", err)
	}
	noPack(t, m)
}

// TestScanPackBoundsForwardRefDelta: a hostile pack names, by id, a base
// that comes after its delta (git never writes one): R, a whole blob of
// 1 MiB of zeros; X, a REF_DELTA on D's id; D, an OFS_DELTA on R. go-git
// resolves X through D and R, holding three objects of 1 MiB, but the
// scan counted X's base as a whole object (two levels), so the pack
// passed a chain bound of 2.5 MiB. A base no earlier entry makes is now
// counted with a whole object of the object bound under it; go-git does
// store the pack, so the chain is real.
func TestScanPackBoundsForwardRefDelta(t *testing.T) {
	const size = 1 << 20
	delta := func(src, dst int, add byte) []byte {
		d := append(varint(uint64(src)), varint(uint64(dst))...)
		d = append(d, 0x80|0x0f|0x70, 0, 0, 0, 0, byte(src), byte(src>>8), byte(src>>16))
		return append(d, 1, add)
	}
	dBody := append(make([]byte, size), 'a')
	dID := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(dBody))), dBody...))
	r := packEntry(3, size, nil, make([]byte, size))
	dx := delta(size+1, size+2, 'x')
	x := packEntry(7, len(dx), dID[:], dx)
	dd := delta(size, size+1, 'a')
	d := packEntry(6, len(dd), ofsBack(int64(len(r)+len(x))), dd)
	pack := packOf(r, x, d)
	b := packBounds{object: size + 2, bytes: 1 << 30, objects: 100}
	err := scanPackChained(bytes.NewReader(pack), b, 5*size/2)
	if !errors.Is(err, ErrDeltaChainTooLarge) || !strings.Contains(err.Error(), "pack entry 1 ") {
		t.Fatalf("a REF_DELTA on a later delta of a 1 MiB blob under a 2.5 MiB chain bound: got %v, want ErrDeltaChainTooLarge at pack entry 1", err)
	}
	if err := scanPackChained(bytes.NewReader(pack), b, 4*size); err != nil {
		t.Fatalf("the same pack under a 4 MiB chain bound: %v", err)
	}
	// go-git resolves it: X is stored, made through D and R
	dir := filepath.Join(t.TempDir(), "mirror")
	if err := initMirror(dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(dir, receivedPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(pack); err != nil {
		t.Fatal(err)
	}
	f.Seek(0, 0)
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	defer st.Close()
	if err := storeReceived(context.Background(), st, dir, f); err != nil {
		t.Fatalf("go-git refused the pack: %v", err)
	}
	xBody := append(dBody, 'x')
	xID := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(xBody))), xBody...))
	if o, err := st.EncodedObject(plumbing.AnyObject, plumbing.Hash(xID)); err != nil || o.Size() != size+2 {
		t.Fatalf("X as go-git stored it: %v", err)
	}
}
