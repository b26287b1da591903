package store

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/readproof/readproof/gitstore"
)

// rewriteLooseBlob replaces the loose object file of id with raw.
func rewriteLooseBlob(t *testing.T, storePath, id string, raw []byte) {
	t.Helper()
	if err := gitstore.UnpackForTest(storePath); err != nil { // a small write makes a small pack
		t.Fatal(err)
	}
	file := filepath.Join(storePath, "objects", id[:2], id[2:])
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, raw, 0o444); err != nil {
		t.Fatal(err)
	}
}

// TestReplayCorruptObjectSameError: replay reads the blobs in parallel and
// checks them by the manifest's SHA-256 instead of recomputing git's
// SHA-1; a blob whose content was changed is still reported with the error
// reading it gives (content does not match its id), and a flipped zlib
// checksum byte with CheckLooseObject's error.
func TestReplayCorruptObjectSameError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": v1, "policies/cached.md": "c\n"})
	m, _, err := f.s.RunOnce(context.Background(), "r1", []string{"readproof://demo/policies/refunds", "readproof://demo/policies/cached"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := f.s.Replay("r1"); err != nil || res.Matched != 2 {
		t.Fatalf("replay: %v", err)
	}
	snap := m.Entries[0].Snapshot
	if err := gitstore.UnpackForTest(f.s.Path()); err != nil { // a small write makes a small pack
		t.Fatal(err)
	}
	f.reopen(t, Options{}) // the handle had the packs mapped
	file := filepath.Join(f.s.Path(), "objects", snap[:2], snap[2:])
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}

	// Other bytes of the same length under the snapshot's name.
	other := bytes.Clone([]byte(v1))
	other[0] ^= 1
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write([]byte("blob " + strconv.Itoa(len(other)) + "\x00"))
	zw.Write(other)
	zw.Close()
	rewriteLooseBlob(t, f.s.Path(), snap, b.Bytes())
	_, blobErr := f.s.git.Blob(gitstore.OID(snap))
	if !errors.Is(blobErr, gitstore.ErrCorrupt) {
		t.Fatalf("Blob of a changed object: %v", blobErr)
	}
	res, err := f.s.Replay("r1")
	if !errors.Is(err, ErrMismatch) || res.Matched != 1 || res.Entries[0].Error != blobErr.Error() || res.Entries[0].Content != nil {
		t.Fatalf("replay of a changed object: %v, entry %+v, want error %q", err, res.Entries[0], blobErr)
	}

	// The right content, its zlib checksum flipped.
	flipped := bytes.Clone(orig)
	flipped[len(flipped)-1] ^= 1
	rewriteLooseBlob(t, f.s.Path(), snap, flipped)
	checkErr := f.s.CheckLooseObject(gitstore.OID(snap))
	if !errors.Is(checkErr, gitstore.ErrCorrupt) {
		t.Fatalf("CheckLooseObject of a flipped checksum: %v", checkErr)
	}
	res, err = f.s.Replay("r1")
	if !errors.Is(err, ErrMismatch) || res.Entries[0].Error != checkErr.Error() || !res.Entries[1].Match {
		t.Fatalf("replay of a flipped checksum: %v, entries %+v, want error %q", err, res.Entries, checkErr)
	}

	// Restored: it replays again.
	rewriteLooseBlob(t, f.s.Path(), snap, orig)
	if res, err := f.s.Replay("r1"); err != nil || !res.AllMatch || string(res.Entries[0].Content) != v1 {
		t.Fatalf("replay after restore: %v", err)
	}
}
