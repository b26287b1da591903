package storecheck_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
)

// TestReadDataHugeSnapshotBounded: `verify --read-data` of a store holding
// a snapshot of 48 MiB re-hashes it as a stream: the check allocates a
// small part of the snapshot's size (before session 24 it read the blob
// whole, twice: once as a blob of the walk, once as a snapshot). And a run
// ref naming a blob of 64 MiB and one byte of zeros where a commit belongs is reported
// broken from the blob's header, unread.
func TestReadDataHugeSnapshotBounded(t *testing.T) {
	const size = 48 << 20
	const huge = 64<<20 + 1                                              // one byte over a commit's bound
	body := strings.Repeat("a line of a very long document.\n", size/32) // 32 bytes
	p := newProject(t, map[string]string{"big.md": body}, "[defaults]\nmax_bytes = \"64MiB\"")
	p.run(t, "run-a", uriOf("big.md"))
	body = ""

	measure := func() (*storecheck.Report, uint64) {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		rep := p.check(t, storecheck.Options{ReadData: true})
		runtime.ReadMemStats(&m1)
		return rep, m1.TotalAlloc - m0.TotalAlloc
	}
	rep, alloc := measure()
	if len(rep.Problems) != 0 || rep.Counts.RehashedBytes < size {
		t.Fatalf("verify --read-data of a healthy store: %d bytes re-hashed, problems:\n%s", rep.Counts.RehashedBytes, problems(rep))
	}
	if alloc > size/4 {
		t.Fatalf("verify --read-data of a store with a snapshot of %d bytes allocated %d bytes: the snapshot was read whole", size, alloc)
	}
	t.Logf("verify --read-data allocated %d bytes for a snapshot of %d", alloc, size)

	f := filepath.Join(t.TempDir(), "zeros")
	if err := os.WriteFile(f, make([]byte, huge), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := gitstore.GitCommand(t, p.storePath(), "hash-object", "-w", "--", f).Output()
	if err != nil {
		t.Fatal(err)
	}
	zeros := strings.TrimSpace(string(out))
	if out, err := gitstore.GitCommand(t, p.storePath(), "update-ref", store.RunsPrefix+"zeros", zeros).CombinedOutput(); err != nil {
		t.Fatalf("update-ref: %v: %s", err, out)
	}
	p.reopen(t, store.Options{})
	rep, alloc = measure()
	if got := find(rep, storecheck.Broken, zeros, "commit is larger than readproof writes it", "more than"); len(got) != 1 || strings.HasPrefix(got[0].Message, " ") {
		t.Fatalf("a run ref naming %d bytes of zeros: want it broken by its size, problems:\n%s", huge, problems(rep))
	}
	if alloc > size/4 {
		t.Fatalf("verify --read-data of a run ref naming a blob of %d bytes allocated %d bytes: it was read whole", huge, alloc)
	}
}
