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

// A document over 8 MiB (the largest a pack entry is decoded in place
// without a buffer given) is read into its place in the one allocation too:
// it was read into memory of its own, and the place made (and faulted in)
// for it was left unused, so a replay of a 60 MB document took 200 MB
// resident rather than 142 MB.
func TestReplayReadsALargeDocumentIntoItsPlace(t *testing.T) {
	large := strings.Repeat("a large document, read in place.\n", 9<<20/33) // 9 MiB
	toml := "[defaults]\nmax_bytes = \"64MiB\"\n\n"
	files := map[string]string{"a.md": "first\n", "large.md": large, "z.md": "last\n"}
	var uris []string
	for _, name := range []string{"a.md", "large.md", "z.md"} {
		toml += fmt.Sprintf("[[resource]]\nuri = \"readproof://slab/docs/%s\"\nsource = { type = \"filesystem\", path = %q }\n\n", name, name)
		uris = append(uris, "readproof://slab/docs/"+name)
	}
	f := newFixture(t, toml, files)
	if _, _, err := f.s.RunOnce(context.Background(), "run-large", uris); err != nil {
		t.Fatal(err)
	}
	res, err := f.s.ReplayContext(context.Background(), "run-large", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Entries[1].Content); got != large {
		t.Fatalf("the large entry holds %d other bytes, want its %d", len(got), len(large))
	}
	for i := 1; i < len(res.Entries); i++ {
		prev, e := res.Entries[i-1].Content, res.Entries[i].Content
		end := uintptr(unsafe.Pointer(unsafe.SliceData(prev))) + uintptr(len(prev))
		if at := uintptr(unsafe.Pointer(unsafe.SliceData(e))); at != end {
			t.Fatalf("entry %d (%d bytes) is at %#x, not right after entry %d's (%#x): read into memory of its own, its place in the allocation unused", i, len(e), at, i-1, end)
		}
	}
	if got := len(res.Spans()); got != 1 {
		t.Fatalf("Spans: %d pieces, want 1", got)
	}
}
