package gitstore

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testsize"
)

// cancelAfter is a writer that cancels its context once it has been
// given at bytes, and counts what it is given after that.
type cancelAfter struct {
	cancel    context.CancelFunc
	at, n     int64
	cancelled bool
	after     int64
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	if w.cancelled {
		w.after += int64(len(p))
	}
	w.n += int64(len(p))
	if !w.cancelled && w.n >= w.at {
		w.cancelled = true
		w.cancel()
	}
	return len(p), nil
}

// TestCopySeveralPacksCancel: Ctrl-C while the copy of a source with
// several packs (or loose objects: writeTo's stream, not the lone pack's
// copyFileCtx) is inside a large pack, or a large loose object, stops it
// within a chunk, as the lone pack's copy does (TestCopyLonePackCancel);
// it used to look at the context only between packs and between loose
// objects, so the rest of a pack of any size was copied first. A copy so
// stopped leaves nothing in the target's objects/pack.
func TestCopySeveralPacksCancel(t *testing.T) {
	t.Parallel()
	size := testsize.Pick(t, 4<<20, 256<<20)
	big := make([]byte, size) // incompressible: the pack and the loose file are as large
	rand.Read(big)

	// a large pack and a small one
	packed := NewTestStore(t)
	c := commitBig(t, packed, big)
	git(t, packed.Path(), "repack", "-adq")
	c2 := mkCommit(t, packed, "small", c)
	mustUpdate(t, packed, RefUpdate{Name: "refs/heads/main", Old: c, New: c2})
	git(t, packed.Path(), "repack", "-dq") // the new objects in a pack of their own
	// a large loose object (stock git's), streamed into the copy's pack
	loose := NewTestStore(t)
	gitHashObjects(t, loose.Path(), []string{string(big)})

	for name, s := range map[string]Store{"a large pack of two": packed, "a large loose object": loose} {
		src, ok, err := openCopySource(filepath.Join(s.Path(), "objects"))
		if err != nil || !ok {
			t.Fatalf("%s: open the source: %v, %v", name, ok, err)
		}
		if len(src.packs) == 1 && len(src.loose) == 0 {
			src.close()
			t.Fatalf("%s: the source is one pack, which copyFileCtx copies", name)
		}
		ctx, cancel := context.WithCancel(context.Background())
		w := &cancelAfter{cancel: cancel, at: 256 << 10}
		err = src.writeTo(ctx, w)
		cancel()
		src.close()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: writeTo cancelled after %d bytes: %v, want context.Canceled", name, w.at, err)
		}
		t.Logf("%s: %d bytes written after the cancel", name, w.after)
		// at most the chunk under way when the context ended, and the
		// buffer it fills
		if w.after > copyChunk+256<<10 {
			t.Errorf("%s: writeTo wrote %d bytes after the cancel (of %d)", name, w.after, size)
		}

		// the clone's copy: stopped as its meter starts, nothing left
		ctx, cancel = context.WithCancel(context.Background())
		meter := &cancelOnReceiving{cancel: cancel}
		dst := NewTestStore(t)
		tr, err := NewTransport(dst.Path(), TransportOptions{Progress: meter})
		if err != nil {
			cancel()
			t.Skip(err)
		}
		copied, err := tr.CopyLocalObjects(ctx, s.Path())
		returned := time.Now()
		cancel()
		meter.mu.Lock()
		got, at := meter.got.String(), meter.at
		meter.mu.Unlock()
		if at.IsZero() {
			t.Fatalf("%s: the copy never started its meter (copied %v, %v): %q", name, copied, err, got)
		}
		if !errors.Is(err, context.Canceled) || strings.Contains(got, "Receiving objects: 100%") {
			t.Errorf("%s: copy cancelled as it started: copied %v, err %v, meter %q; want context.Canceled before the end", name, copied, err, got)
		}
		// A cancellation test: the copy stopped because of the cancel
		// (context.Canceled, the meter short of 100%); the wall bound is
		// wide, for loaded machines.
		if d := returned.Sub(at); d > 30*time.Second {
			t.Errorf("%s: the copy returned %v after the cancel", name, d)
		}
		left, _ := os.ReadDir(filepath.Join(dst.Path(), "objects", "pack"))
		for _, f := range left {
			t.Errorf("%s: left in the target: objects/pack/%s", name, f.Name())
		}
	}
}
