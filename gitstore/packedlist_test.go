package gitstore

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzPackedRefsListing lists the packed refs under a prefix (Refs without
// loose refs: withPacked), whose names and ids are substrings of 64 KiB
// copies of the file since session 27, and compares them with the naive
// parse: every name once, sorted, the first line of a name counting.
func FuzzPackedRefsListing(f *testing.F) {
	f.Add([]byte("# pack-refs with: peeled fully-peeled sorted \n"+fuzzA+" refs/heads/main\n"+fuzzB+" refs/tags/v1\n^"+fuzzA+"\n"), "refs/")
	f.Add([]byte(fuzzB+" refs/heads/z\n"+fuzzA+" refs/heads/a\n^"+fuzzB+"\n"), "refs/heads/")
	f.Add([]byte(fuzzA+" refs/heads/a\n"+fuzzB+" refs/heads/a\n"), "refs/heads/a")
	f.Add([]byte("# pack-refs with: sorted \n"+fuzzA+" refs/heads/b\n"+fuzzB+" refs/heads/a\n"), "refs/")
	f.Fuzz(func(t *testing.T, data []byte, prefix string) {
		names, oids, sortedHeader, ok := naivePackedRefs(data)
		if !ok || !strings.HasPrefix(prefix, "refs/") || sortedHeader && !slices.IsSorted(names) {
			return
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "packed-refs"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := (&repo{path: dir}).withPacked(prefix, nil)
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		first := map[string]OID{}
		var want []string
		for i, n := range names {
			if _, seen := first[n]; !seen && strings.HasPrefix(n, prefix) {
				first[n] = oids[i]
				want = append(want, n)
			}
		}
		slices.Sort(want)
		if len(got) != len(want) {
			t.Fatalf("%q under %q: %v, want %q", data, prefix, got, want)
		}
		for i, r := range got {
			if r.Name != want[i] || r.OID != first[want[i]] {
				t.Fatalf("%q under %q: ref %d %v, want %s %s", data, prefix, i, r, want[i], first[want[i]])
			}
		}
	})
}

// TestPackedRefsListingChunks lists more than 64 KiB of packed refs, so the
// names come from several copies of the file.
func TestPackedRefsListingChunks(t *testing.T) {
	var b strings.Builder
	b.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
	var want []string
	for i := 0; i < 5000; i++ {
		name := "refs/tags/readproof/runs/run-" + strings.Repeat("0", 4-len(itoa(i))) + itoa(i)
		want = append(want, name)
		b.WriteString(fuzzA + " " + name + "\n")
		if i%7 == 0 {
			b.WriteString("^" + fuzzB + "\n")
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "packed-refs"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := (&repo{path: dir}).withPacked("refs/tags/readproof/runs/", nil)
	if err != nil || len(got) != len(want) {
		t.Fatalf("%d refs (%v), want %d", len(got), err, len(want))
	}
	// made once at the size of the prefix's lines (5000 records, 715
	// peeled lines), not grown by append
	if cap(got) != 5715 {
		t.Errorf("the listing's slice holds %d refs, want the 5715 lines of its prefix", cap(got))
	}
	for i, r := range got {
		if r.Name != want[i] || r.OID != fuzzA {
			t.Fatalf("ref %d: %v, want %s", i, r, want[i])
		}
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// TestPackedRefsListingLongLine lists a ref whose line is longer than the
// 64 KiB copied at a time (the copy is then the line), and a file whose
// header says sorted when it is not, where the end of the prefix's records
// that the binary search finds may come before a record the scan reads.
func TestPackedRefsListingLongLine(t *testing.T) {
	const hdr = "# pack-refs with: peeled fully-peeled sorted \n"
	long := "refs/tags/r/" + strings.Repeat("x", 70<<10)
	dir := t.TempDir()
	list := func(data, prefix string) []Ref {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "packed-refs"), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := (&repo{path: dir}).withPacked(prefix, nil)
		if err != nil {
			t.Fatalf("%q under %q: %v", data[:80], prefix, err)
		}
		return got
	}
	for _, prefix := range []string{"refs/", "refs/tags/r/", "refs/tags/r/x"} {
		data := hdr + fuzzA + " refs/tags/r/a\n" + fuzzB + " " + long + "\n^" + fuzzA + "\n" + fuzzA + " refs/tags/r/y\n"
		var want []Ref
		for _, r := range []Ref{{Name: "refs/tags/r/a", OID: fuzzA}, {Name: long, OID: fuzzB}, {Name: "refs/tags/r/y", OID: fuzzA}} {
			if strings.HasPrefix(r.Name, prefix) {
				want = append(want, r)
			}
		}
		if got := list(data, prefix); !slices.Equal(got, want) {
			t.Errorf("under %q: %d refs, want %d", prefix, len(got), len(want))
		}
	}
	// not sorted: what the scan finds is listed, in order, once
	records := []string{"refs/tags/r/z", "refs/tags/r/a", long, "refs/tags/r/b", "refs/tags/q"}
	data := hdr
	for _, name := range records {
		data += fuzzA + " " + name + "\n"
	}
	for _, prefix := range []string{"refs/", "refs/tags/r/", "refs/tags/r/a", "refs/tags/q"} {
		got := list(data, prefix)
		for i, r := range got {
			if !strings.HasPrefix(r.Name, prefix) || !slices.Contains(records, r.Name) || r.OID != fuzzA ||
				i > 0 && got[i-1].Name >= r.Name {
				t.Errorf("under %q: ref %d %.40q, not a record under it listed once in order", prefix, i, r.Name)
			}
		}
	}
}
