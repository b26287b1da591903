package share

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// forgeTagMoveTo writes on the remote shared, below no one's eyes, a move
// of demo/doc@prod to the blob of size zero bytes that keeps the content
// hash the tip records (a tag move records no size), and returns the
// blob's id.
func forgeTagMoveTo(t *testing.T, shared string, size int) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "zeros")
	if err := os.WriteFile(f, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	blob := git(t, shared, "hash-object", "-w", "--", f)
	os.Remove(f)
	ref := store.TagsPrefix + "demo/doc/prod"
	tip := git(t, shared, "rev-parse", ref)
	var tj map[string]any
	if err := json.Unmarshal([]byte(git(t, shared, "cat-file", "blob", tip+":tag.json")), &tj); err != nil {
		t.Fatal(err)
	}
	if tj["content_hash"] == nil || tj["snapshot"] == nil {
		t.Fatalf("tag.json has no snapshot and content hash: %v", tj)
	}
	tj["snapshot"] = blob
	data, err := json.MarshalIndent(tj, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	tjBlob := strings.TrimSpace(gitOut(t, shared, string(data)+"\n", "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(gitOut(t, shared, fmt.Sprintf("100644 blob %s\tcontent\n100644 blob %s\ttag.json\n", blob, tjBlob), "mktree"))
	move := strings.TrimSpace(gitOut(t, shared, fmt.Sprintf("tree %s\nparent %s\nauthor readproof <readproof@localhost> 1796458739 +0000\ncommitter readproof <readproof@localhost> 1796458739 +0000\n\ntag demo/doc@prod\n", tree, tip), "hash-object", "-t", "commit", "-w", "--stdin"))
	git(t, shared, "update-ref", ref, move, tip)
	return blob
}

// TestPullRefusesTagMoveToHugeBlob: a remote's tag move naming 64 MiB of
// zeros (64 KiB on the wire) under the content hash of the real document
// is refused by its hash, and the pull hashes the blob as a stream: it
// allocates a small part of the blob's size (before session 24 it read
// the blob whole, 64 MiB and more, to hash it).
func TestPullRefusesTagMoveToHugeBlob(t *testing.T) {
	const size = 64 << 20
	ctx := context.Background()
	shared, _, alice := pulledDoc(t, true)
	blob := forgeTagMoveTo(t, shared, size)

	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	_, err := Pull(ctx, alice.s, "origin", Options{})
	runtime.ReadMemStats(&m1)
	want := fmt.Sprintf("snapshot %s hashes to sha256:", blob)
	if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), want) {
		t.Fatalf("pull of a tag move to %d bytes of zeros: %v, want ErrUnverified saying %q", size, err, want)
	}
	if n := m1.TotalAlloc - m0.TotalAlloc; n > size/4 {
		t.Fatalf("pull of a tag move to a blob of %d bytes allocated %d bytes: the blob was read whole", size, n)
	} else {
		t.Logf("pull allocated %d bytes for a tag move to %d bytes", n, size)
	}
	if got, err := alice.s.Git().Ref(store.TagsPrefix + "demo/doc/prod"); err != nil || string(got) == git(t, shared, "rev-parse", store.TagsPrefix+"demo/doc/prod") {
		t.Fatalf("the refused move was adopted: %s, %v", got, err)
	}
}

// wholeReadRefused is a store that fails a test when the blob huge is
// read whole (Blob, BlobAtMost, RawObject): what a verification reads of
// it must come through BlobTo.
type wholeReadRefused struct {
	gitstore.Store
	t    *testing.T
	huge gitstore.OID
}

func (w wholeReadRefused) Blob(id gitstore.OID) ([]byte, error) {
	if id == w.huge {
		w.t.Errorf("Blob(%s): the large snapshot was read whole", id)
	}
	return w.Store.Blob(id)
}

func (w wholeReadRefused) BlobAtMost(id gitstore.OID, max int64) ([]byte, error) {
	if id == w.huge {
		w.t.Errorf("BlobAtMost(%s, %d): the large snapshot was read whole", id, max)
	}
	return w.Store.BlobAtMost(id, max)
}

func (w wholeReadRefused) RawObject(id gitstore.OID) (string, []byte, error) {
	if id == w.huge {
		w.t.Errorf("RawObject(%s): the large snapshot was read whole", id)
	}
	return w.Store.RawObject(id)
}

// TestTagMoveSnapshotStreamed: checkTag hashes a tag move's snapshot
// through BlobTo, never reading it whole, whether it matches the record or
// not; a snapshot that matches passes.
func TestTagMoveSnapshotStreamed(t *testing.T) {
	p := newProject(t, map[string]string{"doc": strings.Repeat("a long document\n", 1<<17)}) // 2 MiB
	p.run(t, "first", "doc")
	st := p.tag(t, "doc", "prod")
	g := wholeReadRefused{Store: p.s.Git(), t: t, huge: gitstore.OID(st.Snapshot)}
	if err := checkTag(g, gitstore.OID(st.Commit), nil); err != nil {
		t.Fatalf("check of a true tag move: %v", err)
	}
	path := p.path()
	blob := forgeTagMoveTo(t, path, 8<<20)
	tip := git(t, path, "rev-parse", store.TagsPrefix+"demo/doc/prod")
	g.huge = gitstore.OID(blob)
	err := checkTag(g, gitstore.OID(tip), nil)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("snapshot %s hashes to", blob)) {
		t.Fatalf("check of a move to other bytes: %v, want its hash refused", err)
	}
}

// TestGuardRefusesHugeObjectUnread: a guarded remote's hook reads the
// pushed objects through git cat-file; a run ref pushed naming a blob of
// 64 MiB and one byte of zeros is refused by the size git names for it
// (cat-file --batch-check), not inflated into the hook to find its type
// (before session 24 the hook's size check passed every object).
func TestGuardRefusesHugeObjectUnread(t *testing.T) {
	t.Parallel()
	dir := guardedRemote(t, t.TempDir(), "shared.git")
	a := newProject(t, map[string]string{"a": "alpha\n"})
	addRemote(t, a, "origin", dir)
	a.run(t, "r1", "a")
	mustPush(t, a, "origin")
	f := filepath.Join(t.TempDir(), "zeros")
	if err := os.WriteFile(f, make([]byte, maxCommitBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	blob := git(t, a.path(), "hash-object", "-w", "--", f)
	out := pushRefused(t, a.path(), dir, blob+":"+store.RunsPrefix+"huge")
	if want := fmt.Sprintf("%d bytes, more than the %d allowed", maxCommitBytes+1, maxCommitBytes); !strings.Contains(out, want) {
		t.Fatalf("push of a run ref naming %d bytes of zeros: want it refused saying %q:\n%s", maxCommitBytes+1, want, out)
	}
}
