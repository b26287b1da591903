package gitstore

import (
	"context"
	"testing"
	"unsafe"

	githash "github.com/go-git/go-git/v5/plumbing/hash"
)

// TestIndexPackGoLinksClaim (review2): the room run reserves for the
// links of a pack's trees and commits follows what its entries hold, not
// the object count its header claims: a pack of zeros claiming as many
// objects as its size allows (half its bytes) is refused at its first
// entry, before it has named any link.
func TestIndexPackGoLinksClaim(t *testing.T) {
	t.Parallel()
	pack := make([]byte, 1<<20)
	hdr := packFileHeader(0)
	copy(pack, hdr[:])
	n := (len(pack) - 20) / 2
	pack[8], pack[9], pack[10], pack[11] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	pack = fixTrailer(pack)
	x := &packIndexer{ctx: context.Background(), pack: pack, hash: githash.New(githash.CryptoType)}
	why := x.run()
	if why == "" {
		t.Fatal("a pack of zeros was taken")
	}
	if got := cap(x.links) * int(unsafe.Sizeof(packLink{})); got > 1<<20 {
		t.Fatalf("run reserved %d KiB for the links of a %d KiB pack claiming %d objects (refused: %s); want what its entries name", got>>10, len(pack)>>10, n, why)
	}
}
