package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestReadBlobsCheckLooseFanout: with CheckLoose, ReadBlobs looks for
// loose copies of packed blobs only in the fan-out directories present
// when it starts. A corrupt loose copy there is still reported with
// CheckLooseObject's error, whichever directory it is in and however many
// workers read, and the other blobs read as Blob reads them.
func TestReadBlobsCheckLooseFanout(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	var ids []OID
	for i := range packThreshold + 40 {
		ids = append(ids, putBlob(t, s, fmt.Sprintf("packed document %d\n", i)))
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	// A loose copy of one packed blob, corrupt (its last byte flipped), in
	// a fan-out directory made for it.
	bad := ids[len(ids)/2]
	var loose bytes.Buffer
	if err := writeZlib(&loose, plumbing.BlobObject, []byte(fmt.Sprintf("packed document %d\n", len(ids)/2))); err != nil {
		t.Fatal(err)
	}
	raw := loose.Bytes()
	raw[len(raw)-1] ^= 1
	dir := filepath.Join(s.Path(), "objects", string(bad[:2]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, string(bad[2:])), raw, 0o400); err != nil {
		t.Fatal(err)
	}
	want := CheckLooseObject(s.Path(), bad)
	if !errors.Is(want, ErrCorrupt) {
		t.Fatalf("CheckLooseObject: %v", want)
	}
	for _, workers := range []int{1, 3} {
		err := ReadBlobs(context.Background(), s, ids, BlobsOptions{Workers: workers, CheckLoose: true}, func(i int, data []byte, err error) error {
			if ids[i] == bad {
				if err == nil || err.Error() != want.Error() {
					t.Errorf("workers %d: corrupt loose copy: %v, want %v", workers, err, want)
				}
				return nil
			}
			if b, berr := s.Blob(ids[i]); err != nil || berr != nil || string(b) != string(data) {
				t.Errorf("workers %d: blob %s: %v (Blob: %v)", workers, ids[i], err, berr)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
