package gitstore

import (
	"runtime"
	"strings"
	"testing"
)

// TestEncodeCommitAllocation (issue 14, go-git encoding overhead): a commit
// is encoded straight into the buffer that becomes its content. Before, go-git
// wrote it into a MemoryObject that was then copied out through a buffer of
// its size that grew twice over: about five times the commit in garbage.
func TestEncodeCommitAllocation(t *testing.T) {
	msg := strings.Repeat("a line of a long commit message\n", 1<<15) // 1 MiB
	c := Commit{Tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", Author: testSig(), Committer: testSig(), Message: msg}
	data, err := encodeCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), msg) || !strings.HasPrefix(string(data), "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n") {
		t.Fatalf("encoded commit:\n%.200s", data)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = 4
	for i := 0; i < n; i++ {
		if _, err := encodeCommit(c); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 3*uint64(len(data)) {
		t.Fatalf("encoding a %d-byte commit allocated %d bytes, want at most 3x", len(data), per)
	}
}
