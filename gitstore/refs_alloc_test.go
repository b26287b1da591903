package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefsPackedAllocation (issue 14, a pull at 10^5 runs): listing packed
// refs makes each ref's name and id and nothing else per ref. Before session
// 19 every line's id was also copied into a string only to check that it
// is hex: 10^5 garbage strings per listing, and a pull lists the run refs
// of both sides.
func TestRefsPackedAllocation(t *testing.T) {
	s, err := Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 1000
	var sb strings.Builder
	sb.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "%040x refs/tags/readproof/runs/run-%06d\n", i+1, i)
	}
	if err := os.WriteFile(filepath.Join(s.Path(), "packed-refs"), []byte(sb.String()), 0o666); err != nil {
		t.Fatal(err)
	}
	var refs []Ref
	allocs := testing.AllocsPerRun(3, func() {
		if refs, err = s.Refs("refs/tags/readproof/runs/"); err != nil {
			t.Fatal(err)
		}
	})
	if len(refs) != n || refs[n-1].OID != OID(fmt.Sprintf("%040x", n)) {
		t.Fatalf("listed %d refs, last %v", len(refs), refs[len(refs)-1])
	}
	// one string per ref (its name and id), the slice's growth and the walk of the
	// (missing) loose directory
	if most := n + 100; allocs > float64(most) {
		t.Fatalf("listing %d packed refs made %.0f allocations, want at most %d", n, allocs, most)
	}
}

func TestIsHexOIDBytes(t *testing.T) {
	for _, c := range []struct {
		id   string
		want bool
	}{
		{strings.Repeat("0", 40), true}, {"0123456789abcdef0123456789abcdef01234567", true},
		{strings.Repeat("a", 39), false}, {strings.Repeat("a", 41), false},
		{strings.Repeat("a", 39) + "A", false}, {strings.Repeat("a", 39) + "g", false},
		{strings.Repeat("a", 39) + "/", false}, {strings.Repeat("a", 39) + ":", false},
		{strings.Repeat("a", 39) + "`", false}, {strings.Repeat("a", 39) + "\xff", false},
	} {
		if got := isHexOIDBytes([]byte(c.id)); got != c.want || got != isHexOID(c.id) {
			t.Errorf("isHexOIDBytes(%q) = %v, want %v", c.id, got, c.want)
		}
	}
}
