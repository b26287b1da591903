package store

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// A replay that keeps every entry's bytes (`readproof replay`) reads them
// one after the other into one allocation made at the run's recorded size,
// not one allocation a blob: 1,000 blobs of 4 KiB were 1,000 allocations of
// fresh memory, each page faulted in on its own.
func TestReplayKeepsTheBytesInOneAllocation(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const n = 64
	var toml strings.Builder
	files := map[string]string{}
	var uris []string
	for i := range n {
		name := fmt.Sprintf("d%02d.md", i)
		fmt.Fprintf(&toml, "[[resource]]\nuri = \"readproof://slab/docs/%s\"\nsource = { type = \"filesystem\", path = %q }\n\n", name, name)
		files[name] = name + strings.Repeat(fmt.Sprint(i%10), 100*i) + "\n" // sizes 6 to 6,306 bytes
		uris = append(uris, "readproof://slab/docs/"+name)
	}
	f := newFixture(t, toml.String(), files)
	if _, _, err := f.s.RunOnce(context.Background(), "run-slab", uris); err != nil {
		t.Fatal(err)
	}
	res, err := f.s.ReplayContext(context.Background(), "run-slab", nil)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for i, e := range res.Entries {
		want := files[fmt.Sprintf("d%02d.md", i)]
		if string(e.Content) != want {
			t.Fatalf("entry %d holds other bytes (%.20q), want %.20q", i, e.Content, want)
		}
		all.WriteString(want)
		if i == 0 {
			continue
		}
		prev := res.Entries[i-1].Content
		end := uintptr(unsafe.Pointer(unsafe.SliceData(prev))) + uintptr(len(prev))
		if at := uintptr(unsafe.Pointer(unsafe.SliceData(e.Content))); at != end {
			t.Fatalf("entry %d's bytes are at %#x, not right after entry %d's (%#x): each blob read into memory of its own", i, at, i-1, end)
		}
	}
	var spans strings.Builder
	for _, b := range res.Spans() {
		spans.Write(b)
	}
	if spans.String() != all.String() {
		t.Fatalf("Spans: %d bytes, not the entries' %d one after the other", spans.Len(), all.Len())
	}
	if got := len(res.Spans()); got != 1 {
		t.Fatalf("Spans: %d pieces, want 1 (the entries' bytes lie one after the other)", got)
	}
	// Without kept bytes (--no-content), the pieces are the kept entries'.
	res, err = f.s.ReplayNoContentContext(context.Background(), "run-slab", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Spans(); len(got) != 0 {
		t.Fatalf("replay --no-content: Spans gives %d pieces, want none", len(got))
	}
}
