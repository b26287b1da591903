package store

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// memRun is a store holding run-mem: n documents of size bytes, each
// its own blob.
func memRun(t *testing.T, n, size int) *fixture {
	var toml strings.Builder
	files := map[string]string{}
	var uris []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("d%02d.md", i)
		fmt.Fprintf(&toml, "[[resource]]\nuri = \"readproof://mem/docs/%s\"\nsource = { type = \"filesystem\", path = %q }\n\n", name, name)
		files[name] = fmt.Sprintf("%s%0*d\n", name, size-len(name)-1, i)
		uris = append(uris, "readproof://mem/docs/"+name)
	}
	f := newFixture(t, toml.String(), files)
	if _, _, err := f.s.RunOnce(context.Background(), "run-mem", uris); err != nil {
		t.Fatal(err)
	}
	return f
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestVerifyEvidenceDropsReplayedBlobs: evidence verify's replay needs
// only each blob's hash; the blobs themselves (10,000 of 4 KiB were 40
// MB of verify's peak RSS) are not held until the replay ends. Measured
// where the replay reports its end (the progress call done == total):
// after a collection, the heap holds less than half of the blobs' bytes
// more than before the verify. Not parallel: the heap is the process's.
func TestVerifyEvidenceDropsReplayedBlobs(t *testing.T) {
	const n, size = 32, 128 << 10
	f := memRun(t, n, size)
	_, data := exportStatement(t, f.s, "run-mem", false)
	heap := liveHeap
	var before, atEnd uint64
	progress := func(done, total int) {
		if done == total {
			atEnd = heap()
		}
	}
	before = heap()
	rep, err := f.s.VerifyEvidence(data, EvidenceVerifyOptions{Progress: progress})
	if err != nil || !rep.OK() {
		t.Fatalf("%v\n%s", err, rep.Listing())
	}
	if atEnd == 0 {
		t.Fatal("the replay never reported its end")
	}
	t.Logf("heap before %d, at the replay's end %d", before, atEnd)
	if atEnd > before && atEnd-before > n*size/2 {
		t.Fatalf("at the replay's end the heap held %d bytes more than before the verify: the %d blobs of %d bytes are kept",
			atEnd-before, n, size)
	}
}

// TestExportEvidenceWithoutContentDropsReplayedBlobs: an export without
// content replays the run for its replay result (hashes only), so it keeps
// no blob's bytes past its hash: a run of one 1 MiB document mounted 200
// times held 233 MB at the replay's end over MCP.
func TestExportEvidenceWithoutContentDropsReplayedBlobs(t *testing.T) {
	const n, size = 32, 128 << 10
	f := memRun(t, n, size)
	var atEnd uint64
	before := liveHeap()
	data, _, err := f.s.ExportEvidence("run-mem", EvidenceOptions{ExporterVersion: "test", Progress: func(done, total int) {
		if done == total {
			atEnd = liveHeap()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if atEnd == 0 {
		t.Fatal("the replay never reported its end")
	}
	t.Logf("heap before %d, at the replay's end %d, bundle %d bytes", before, atEnd, len(data))
	if atEnd > before && atEnd-before > n*size/2 {
		t.Fatalf("at the replay's end the heap held %d bytes more than before the export: the %d blobs of %d bytes are kept",
			atEnd-before, n, size)
	}
}
