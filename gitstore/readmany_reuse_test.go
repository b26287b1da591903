package gitstore

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestReadBlobsReusesBuffers: with ReuseBuffers, blobs of one size, loose
// and packed, are read into a few buffers used again and again (at most
// one per place of the read-ahead ring), each blob's bytes intact while fn
// and OnRead have them; a caller that keeps data past fn sees it
// overwritten. Without ReuseBuffers every blob has a buffer of its own.
// Run with -race, it also says that no worker writes into a buffer fn is
// still reading.
func TestReadBlobsReusesBuffers(t *testing.T) {
	t.Parallel()
	const n = 300
	text := func(i int) string { return fmt.Sprintf("document %04d\n%s", i, strings.Repeat(fmt.Sprint(i%10), 2000)) }
	s := looseWrites(NewTestStore(t))
	var ids []OID
	for i := 0; i < n; i += packThreshold - 1 { // fewer than a flush packs
		ids = append(ids, putBlobs(t, s, min(packThreshold-1, n-i), func(j int) string { return text(i + j) })...)
	}
	if loose, _ := filepath.Glob(filepath.Join(s.Path(), "objects", "??", "*")); len(loose) != n {
		t.Fatalf("%d loose objects, want %d", len(loose), n)
	}
	for _, layout := range []string{"loose", "packed"} {
		if layout == "packed" {
			// One pack of them all (deltas between them), the loose copies gone.
			for _, args := range [][]string{{"pack-objects", "-q", filepath.Join(s.Path(), "objects", "pack", "pack")}, {"prune-packed"}} {
				cmd := GitCommand(t, s.Path(), args...)
				var in strings.Builder
				for _, id := range ids {
					in.WriteString(string(id) + "\n")
				}
				cmd.Stdin = strings.NewReader(in.String())
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %s: %v\n%s", args[0], err, out)
				}
			}
			if loose, _ := filepath.Glob(filepath.Join(s.Path(), "objects", "??", "*")); len(loose) > 0 {
				t.Fatalf("after repack: %d loose objects", len(loose))
			}
		}
		st, err := Open(s.Path())
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range []BlobsOptions{
			{Workers: 1}, {Workers: 2}, {Workers: 2, ContentChecked: true, CheckLoose: true}, {Workers: 4, Ahead: 8},
		} {
			for _, reuse := range []bool{false, true} {
				opts.ReuseBuffers = reuse
				opts.OnRead = func(i int, data []byte) {
					if string(data) != text(i) {
						t.Errorf("%s %+v: OnRead(%d): other bytes", layout, opts, i)
					}
				}
				buffers := map[string]bool{}
				kept := make([][]byte, n)
				err := ReadBlobs(context.Background(), st, ids, opts, func(i int, data []byte, err error) error {
					if err != nil {
						return err
					}
					runtime.Gosched() // the workers read on meanwhile
					if string(data) != text(i) {
						return fmt.Errorf("blob %d: other bytes while fn has them", i)
					}
					buffers[fmt.Sprintf("%p", data)] = true
					kept[i] = data
					return nil
				})
				if err != nil {
					t.Fatalf("%s %+v: %v", layout, opts, err)
				}
				places := max(opts.Ahead, 32*opts.Workers)
				switch {
				case !reuse && len(buffers) != n:
					t.Fatalf("%s %+v: %d blobs in %d buffers", layout, opts, n, len(buffers))
				case reuse && len(buffers) > places:
					t.Fatalf("%s %+v: %d blobs in %d buffers, want at most %d (one per place of the ring)", layout, opts, n, len(buffers), places)
				}
				changed := 0
				for i, d := range kept {
					if string(d) != text(i) {
						changed++
					}
				}
				if reuse != (changed > 0) {
					t.Fatalf("%s %+v: %d blobs kept past fn changed since", layout, opts, changed)
				}
			}
		}
		st.Close()
	}
}

// TestReadBlobsReuseGrows: with ReuseBuffers, blobs of growing and
// shrinking sizes, and one larger than reuseMax, are read whole; a blob
// too large to keep gets a buffer of its own and the next small one goes
// back to a kept buffer.
func TestReadBlobsReuseGrows(t *testing.T) {
	t.Parallel()
	sizes := []int{10, 100, 5000, 50, reuseMax + 1000, 20, 7000, 7000, 1}
	s := NewTestStore(t)
	text := func(i int) string { return fmt.Sprint(i) + strings.Repeat("x", sizes[i]) }
	ids := putBlobs(t, s, len(sizes), text)
	var large string
	var buffers []string
	err := ReadBlobs(context.Background(), s, ids, BlobsOptions{Workers: 1, ReuseBuffers: true}, func(i int, data []byte, err error) error {
		if err != nil {
			return err
		}
		if string(data) != text(i) {
			return fmt.Errorf("blob %d: %d bytes, want %d", i, len(data), len(text(i)))
		}
		p := fmt.Sprintf("%p", data)
		if sizes[i] > reuseMax {
			large = p
		}
		buffers = append(buffers, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if large == "" || large == buffers[len(buffers)-1] || buffers[0] != buffers[1] && buffers[1] == buffers[2] {
		t.Fatalf("buffers %v (the large blob's %s)", buffers, large)
	}
	if buffers[len(buffers)-1] != buffers[len(buffers)-2] {
		t.Fatalf("the last small blobs were not read into one kept buffer: %v", buffers)
	}
}
