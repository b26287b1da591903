package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
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

// TestCopiedObjectsIndexedWhileGitIndexes (review2): a copy git indexes
// without the Go index (a platform without mmap, as here a transport
// with an object directory of its own) closes Indexed before git runs,
// so the precheck of a clone reads the source while git indexes, as it
// did before the copy kept objects, instead of after.
func TestCopiedObjectsIndexedWhileGitIndexes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a shell script stands in for git")
	}
	t.Parallel()
	src := fastImportRepo(t, 2)
	_, tr := newTransport(t)
	tr.objects = filepath.Join(tr.dir, "objects")
	tmp := t.TempDir()
	started, release := filepath.Join(tmp, "started"), filepath.Join(tmp, "release")
	// git index-pack waits for the test (10 s at most) before it runs
	script := "#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = index-pack ]; then\n    : > " + started + "\n" +
		"    i=0; while [ ! -e " + release + " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done\n  fi\ndone\nexec " + tr.git + " \"$@\"\n"
	wrapper := filepath.Join(tmp, "git")
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	tr.git = wrapper
	kept := NewCopiedObjects()
	type result struct {
		copied bool
		err    error
	}
	done := make(chan result, 1)
	go func() {
		copied, err := tr.CopyLocalObjectsKeeping(context.Background(), src, kept)
		done <- result{copied, err}
	}()
	for i := 0; ; i++ {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if i == 1000 {
			t.Fatal("git index-pack did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var open bool
	select {
	case <-kept.Indexed():
	default:
		open = true
	}
	os.WriteFile(release, nil, 0o600)
	r := <-done
	if !r.copied || r.err != nil {
		t.Fatalf("copy: %v, %v", r.copied, r.err)
	}
	if open {
		t.Fatal("Indexed was still open while git indexed the copy: the precheck waits for git")
	}
}

// TestCopiedObjectsBounds (review2): what the Go index of a copy keeps
// for the precheck holds no blob over keptBlobMax, and at most keptMax
// bytes in all, however much of the pack would fit: a pack of 34 MiB of
// small blobs (a few hundred KiB compressed) keeps 32 MiB of them, in an
// arena of at most keptMax bytes, grown without allocating several times
// that. Not parallel: it counts the bytes allocated.
func TestCopiedObjectsBounds(t *testing.T) {
	big := packObject{plumbing.BlobObject, bytes.Repeat([]byte("a line of a large document\n"), keptBlobMax/27+1)}
	objs := []packObject{big}
	for i := range 34 << 20 / keptBlobMax {
		data := append(fmt.Appendf(nil, "blob %d\n", i), bytes.Repeat([]byte{'x'}, keptBlobMax-16)...)
		objs = append(objs, packObject{plumbing.BlobObject, data})
	}
	pack := testPack(objs...)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	idx, kept, why := indexPackKeeping(context.Background(), pack, true)
	runtime.ReadMemStats(&m1)
	if idx == nil {
		t.Fatalf("the pack was left to git: %s", why)
	}
	// the arena's chunks: keptMax, and what a chunk too small for the
	// next object leaves unused (under keptBlobMax each, a few chunks)
	if alloc := m1.TotalAlloc - m0.TotalAlloc; kept.reserved > keptMax+keptMax/8 || alloc > 4*keptMax {
		t.Errorf("the arena of a %d KiB pack holds %d MiB of objects in %d MiB, and indexing it allocated %d MiB; want at most %d MiB, and %d MiB", len(pack)>>10, kept.bytes>>20, kept.reserved>>20, alloc>>20, (keptMax+keptMax/8)>>20, 4*keptMax>>20)
	}
	c := NewCopiedObjects()
	c.m.Store(kept)
	if _, ok := c.get(big.id()); ok {
		t.Errorf("a blob of %d bytes was kept (at most %d)", len(big.data), keptBlobMax)
	}
	if c.Len() == 0 || kept.bytes > keptMax {
		t.Errorf("%d objects kept in %d bytes; want some, in at most %d", c.Len(), kept.bytes, keptMax)
	}
}

// TestCopiedObjectsFailedCopyStopsReads (review2): once the copy that
// fills a CopiedObjects has failed or been stopped (a clone interrupted
// while it copies), a source read with it answers with the copy's error
// instead of reading and inflating the source: the precheck a clone runs
// on it, whose result a failed copy discards, ends at once rather than
// after reading every manifest and journal commit (about a second at
// 20,000 runs, after Ctrl-C).
func TestCopiedObjectsFailedCopyStopsReads(t *testing.T) {
	t.Parallel()
	src := fastImportRepo(t, 3)
	git(t, src, "repack", "-adq")
	head := OID(git(t, src, "rev-parse", "refs/heads/main"))
	_, tr := newTransport(t)
	kept := NewCopiedObjects()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tr.CopyLocalObjectsKeeping(ctx, src, kept); !errors.Is(err, context.Canceled) {
		t.Fatalf("a canceled copy returned %v", err)
	}
	s, ok := OpenLocalSourceWith(src, kept)
	if !ok {
		t.Fatal("the source does not open")
	}
	defer s.Close()
	h, ok, err := NewReader(s)
	if !ok || err != nil {
		t.Fatalf("NewReader: %v %v", ok, err)
	}
	defer h.Close()
	for _, r := range []Store{s, h} {
		if _, err := r.Commit(head); !errors.Is(err, context.Canceled) {
			t.Fatalf("a read of the source after its copy was stopped: %v; want the copy's error", err)
		}
	}
}

// TestCopiedObjectsBoundsLargeCommits (review4): commits and trees are
// kept whatever their size (up to maxFastInflate), not only up to
// keptBlobMax as blobs are; a run of them each a little larger than what
// the arena's chunk has left must not leave each chunk's tail unused:
// the chunks stay within keptMax and a small tail each.
func TestCopiedObjectsBoundsLargeCommits(t *testing.T) {
	tree := packObject{plumbing.TreeObject, nil}
	objs := []packObject{tree}
	n := 0
	commit := func(size int) packObject {
		n++
		head := fmt.Appendf(nil, "tree %s\nauthor A <a@example.com> 0 +0000\ncommitter A <a@example.com> 0 +0000\n\ncommit %d\n", tree.id(), n)
		msg := bytes.Repeat([]byte("a"), max(size-len(head), 1)-1)
		return packObject{plumbing.CommitObject, append(append(head, msg...), '\n')}
	}
	// each a small commit, then one just over twice the one before
	for s := 64 << 10; s < maxFastInflate; s *= 2 {
		objs = append(objs, commit(200), commit(s+1))
	}
	for range 4 {
		objs = append(objs, commit(maxFastInflate))
	}
	pack := testPack(objs...)
	_, kept, why := indexPackKeeping(context.Background(), pack, true)
	if kept == nil {
		t.Fatalf("the pack was left to git: %s", why)
	}
	if kept.reserved > keptMax+keptMax/8 || kept.bytes > keptMax {
		t.Errorf("the arena of a %d KiB pack holds %d MiB of objects in %d MiB; want at most %d MiB of chunks", len(pack)>>10, kept.bytes>>20, kept.reserved>>20, (keptMax+keptMax/8)>>20)
	}
}
