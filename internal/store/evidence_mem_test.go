package store

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestVerifyEvidenceDropsReplayedBlobs: evidence verify's replay needs
// only each blob's hash; the blobs themselves (10,000 of 4 KiB were 40
// MB of verify's peak RSS) are not held until the replay ends. Measured
// where the replay reports its end (the progress call done == total):
// after a collection, the heap holds less than half of the blobs' bytes
// more than before the verify. Not parallel: the heap is the process's.
func TestVerifyEvidenceDropsReplayedBlobs(t *testing.T) {
	const n, size = 32, 128 << 10
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
	_, data := exportStatement(t, f.s, "run-mem", false)
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
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
