package gitstore

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// runsPack is a pack shaped like a store of n runs as bench/mkstore.go
// writes one (docs/scaling.md, "Session 20"): per run a tiny document, a
// manifest of some 300 bytes of JSON, the tree naming both, the run's
// commit and a journal commit, chained.
func runsPack(n int) []byte {
	var objs []packObject
	var journal plumbing.Hash
	for i := range n {
		blob := packObject{plumbing.BlobObject, fmt.Appendf(nil, "tiny document, version %d\n", i)}
		b := blob.id()
		man := packObject{plumbing.BlobObject, fmt.Appendf(nil,
			`{"version":1,"run_id":"r%05d","started_at":"2026-12-05T00:00:00Z","entries":[{"position":0,"uri":"readproof://bench/doc","snapshot":"%s","content_hash":"sha256:%064x","decision":"fetch"}]}`+"\n", i, b, i)}
		mb := man.id()
		tree := packObject{plumbing.TreeObject, slices.Concat([]byte("100644 doc\x00"), b[:], []byte("100644 manifest.json\x00"), mb[:])}
		tr := tree.id()
		manifest := packObject{plumbing.CommitObject, fmt.Appendf(nil,
			"tree %s\nauthor readproof <readproof@localhost> %d +0000\ncommitter readproof <readproof@localhost> %d +0000\n\nrun r%05d\n", tr, 1700000000+i, 1700000000+i, i)}
		m := manifest.id()
		parent := ""
		if i > 0 {
			parent = "parent " + journal.String() + "\n"
		}
		rec := packObject{plumbing.CommitObject, fmt.Appendf(nil,
			"tree %s\n%sparent %s\nauthor readproof <readproof@localhost> %d +0000\ncommitter readproof <readproof@localhost> %d +0000\n\nrecord run r%05d\n", tr, parent, m, 1700000000+i, 1700000000+i, i)}
		journal = rec.id()
		objs = append(objs, blob, man, tree, manifest, rec)
	}
	return testPack(objs...)
}

// BenchmarkIndexPackGo indexes and checks the copy of a store of 2,000
// runs (10,000 objects), as a clone from a path does: the one pass that
// replaced `git index-pack --strict`, with and without keeping the
// objects for the precheck.
func BenchmarkIndexPackGo(b *testing.B) {
	pack := runsPack(2000)
	if _, why := indexPackGo(context.Background(), pack); why != "" {
		b.Fatalf("the bench pack left to git: %s", why)
	}
	for _, keep := range []bool{false, true} {
		b.Run(fmt.Sprintf("keep=%v", keep), func(b *testing.B) {
			b.SetBytes(int64(len(pack)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, why := indexPackKeeping(context.Background(), pack, keep); why != "" {
					b.Fatal(why)
				}
			}
		})
	}
}

// BenchmarkIndexPackGoRefDeltasBackwards indexes a pack of 40,000 blobs,
// all but one REF_DELTAs each based on the next entry, the speed
// TestIndexPackGoRefDeltasBackwards guards by counting (one pass over
// the pack per delta took seconds).
func BenchmarkIndexPackGoRefDeltasBackwards(b *testing.B) {
	pack := refDeltasBackwards(40_000)
	b.SetBytes(int64(len(pack)))
	b.ReportAllocs()
	for b.Loop() {
		indexPackGo(context.Background(), pack)
	}
}
