package gitstore

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"
)

// TestLargeBatchHoldsNoBytes (issue 14, memory): past packThreshold objects
// a write holds each object's place in the unnamed spill file, not its
// bytes, so a 10,000-document run no longer keeps every document in memory
// until its refs move. Before the fix every buffered object kept a copy of
// its data (up to 64 MiB). Reads of spilled objects still see them, no
// temporary file is visible while the batch is open, and the published
// pack is one git accepts.
func TestLargeBatchHoldsNoBytes(t *testing.T) {
	st := NewTestStore(t)
	s := st.(*repo)
	var ids []OID
	var docs [][]byte
	for i := 0; i < 3*packThreshold; i++ {
		doc := make([]byte, 4096+i)
		rand.Read(doc)
		id, err := s.PutBlob(doc)
		if err != nil {
			t.Fatal(err)
		}
		ids, docs = append(ids, id), append(docs, doc)
	}
	s.mu.Lock()
	held := 0
	for _, b := range s.buf {
		held += len(b.data)
	}
	spilling := s.spill != nil
	s.mu.Unlock()
	if !spilling || held != 0 {
		t.Fatalf("after %d objects: spilling %v, %d bytes held in memory; want a spill file and none", len(ids), spilling, held)
	}
	if left := tmpFiles(t, s.Path()); len(left) > 0 {
		t.Fatalf("the spill file has a name: %v", left)
	}
	for i, id := range ids {
		if got, err := s.Blob(id); err != nil || !bytes.Equal(got, docs[i]) {
			t.Fatalf("read of spilled blob %d: %v", i, err)
		}
	}
	entries := make([]TreeEntry, len(ids))
	for i, id := range ids {
		entries[i] = TreeEntry{Name: fmt.Sprintf("d%04d", i), Mode: ModeFile, OID: id}
	}
	tree, err := s.PutTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.PutCommit(Commit{Tree: tree, Author: testSig(), Committer: testSig(), Message: "spill\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(RefUpdate{Name: "refs/heads/spill", New: c}); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("%d packs, want 1", len(packs))
	}
	Fsck(t, s.Path())
	for i, id := range ids {
		if got := gitRaw(t, s.Path(), "cat-file", "blob", string(id)); !bytes.Equal(got, docs[i]) {
			t.Fatalf("git cat-file of packed blob %d differs", i)
		}
	}
	if left := tmpFiles(t, s.Path()); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}
