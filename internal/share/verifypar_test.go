package share

import (
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
)

// TestSnapshotFactsStillCompares: a snapshot read once for one manifest is
// not read again, but every later record of it is still compared with what
// its bytes hash to: a second manifest recording another hash or size for
// the same blob fails.
func TestSnapshotFactsStillCompares(t *testing.T) {
	t.Parallel()
	g := gitstore.NewTestStore(t)
	data := []byte("the document\n")
	id, err := g.PutBlob(data)
	if err != nil {
		t.Fatal(err)
	}
	f := &snapshotFacts{m: map[string]snapshotFact{}}
	if err := f.check(g, string(id), contentHash(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if len(f.m) != 1 {
		t.Fatalf("facts: %v", f.m)
	}
	if err := f.check(g, string(id), contentHash([]byte("other")), int64(len(data))); err == nil || !strings.Contains(err.Error(), "hashes to") {
		t.Errorf("wrong hash on the second record: %v", err)
	}
	if err := f.check(g, string(id), contentHash(data), 3); err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("wrong size on the second record: %v", err)
	}
	if err := f.check(g, strings.Repeat("1", 40), contentHash(data), -1); err == nil {
		t.Error("a missing snapshot passed")
	}
}
