package store

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestReplayReusesBuffersOnlyWhereNothingIsKept: the replays whose
// callers keep the blobs' bytes (`replay`, an export with content) hand
// out bytes that stay theirs: every entry's content is its document after
// the whole replay, which it would not be if ReadBlobs had read it into a
// buffer used again for a later blob (ReuseBuffers); the replay behind
// evidence verify, which keeps nothing, and the one behind `replay
// --no-content` read into reused buffers and allocate less than half the
// bytes they read. Not parallel: it sets
// GOMAXPROCS (two workers, a ring of 64 places for 256 blobs) and counts
// the process's allocations.
func TestReplayReusesBuffersOnlyWhereNothingIsKept(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const n, size = 256, 16 << 10
	var toml strings.Builder
	files := map[string]string{}
	var uris []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("d%03d.md", i)
		fmt.Fprintf(&toml, "[[resource]]\nuri = \"readproof://reuse/docs/%s\"\nsource = { type = \"filesystem\", path = %q }\n\n", name, name)
		files[name] = fmt.Sprintf("%s%s\n", name, strings.Repeat(fmt.Sprint(i%10), size-len(name)-1))
		uris = append(uris, "readproof://reuse/docs/"+name)
	}
	f := newFixture(t, toml.String(), files)
	m, _, err := f.s.RunOnce(context.Background(), "run-reuse", uris)
	if err != nil {
		t.Fatal(err)
	}
	want := func(i int) string { return files[fmt.Sprintf("d%03d.md", i)] }

	res, err := f.s.Replay("run-reuse")
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range res.Entries {
		if string(e.Content) != want(i) {
			t.Fatalf("replay: entry %d holds other bytes after the replay (%.20q): a reused buffer was kept", i, e.Content)
		}
	}
	in, err := f.s.EvidenceInput("run-reuse", EvidenceOptions{WithContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range in.Entries {
		if string(e.Content) != want(i) {
			t.Fatalf("export --with-content: entry %d holds other bytes after the replay (%.20q): a reused buffer was kept", i, e.Content)
		}
	}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := f.s.ReplayHashes(m.ID)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range got {
		if e.Err != nil || e.ContentHash != m.Entries[i].ContentHash {
			t.Fatalf("ReplayHashes: entry %d: %s %v", i, e.ContentHash, e.Err)
		}
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("the replay behind evidence verify allocated %d bytes for %d blobs of %d", alloc, n, size)
	if alloc > n*size/2 {
		t.Fatalf("the replay behind evidence verify allocated %d bytes for %d blobs of %d bytes: each blob read into a buffer of its own", alloc, n, size)
	}

	// `replay --no-content` and `--json`: no entry here has a probe
	// record, so none keeps its bytes (probe.txtar: a probed one does).
	runtime.ReadMemStats(&before)
	res, err = f.s.ReplayNoContentContext(context.Background(), "run-reuse", nil)
	runtime.ReadMemStats(&after)
	if err != nil || !res.AllMatch || res.Matched != n {
		t.Fatalf("ReplayNoContentContext: %v, %d of %d match", err, res.Matched, n)
	}
	for i, e := range res.Entries {
		if e.Content != nil {
			t.Fatalf("replay --no-content: entry %d keeps its bytes", i)
		}
	}
	alloc = after.TotalAlloc - before.TotalAlloc
	t.Logf("replay --no-content allocated %d bytes for %d blobs of %d", alloc, n, size)
	if alloc > n*size/2 {
		t.Fatalf("replay --no-content allocated %d bytes for %d blobs of %d bytes: each blob read into a buffer of its own", alloc, n, size)
	}
}
