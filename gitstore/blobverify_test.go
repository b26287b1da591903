package gitstore

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBlobVerifyingMatchesBlob (issue 14, reading a manifest): BlobVerifying
// gives Blob's bytes, and for a blob whose content no longer matches its id
// (large: checked on a goroutine; small: at once) its check gives Blob's
// error; a tree's id gives Blob's error at once; check may be called twice.
func TestBlobVerifyingMatchesBlob(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	big := strings.Repeat("a large manifest line\n", verifyAsideFrom/20)
	docs := []string{big, "small\n", big + "x", "other small\n"}
	var ids []OID
	for _, d := range docs {
		id, err := s.PutBlob([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	tree, err := s.PutTree([]TreeEntry{{Name: "a", Mode: ModeFile, OID: ids[1]}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	if _, err := os.Stat(filepath.Join(path, "objects", string(ids[0][:2]), string(ids[0][2:]))); err != nil {
		t.Skipf("blobs are not loose here: %v", err)
	}
	bv := s.(interface {
		BlobVerifying(OID) ([]byte, func() error, error)
	})
	for i, id := range ids[:2] {
		data, check, err := bv.BlobVerifying(id)
		if err != nil || check() != nil || check() != nil || string(data) != docs[i] {
			t.Fatalf("blob %d: %d bytes, %v", i, len(data), err)
		}
	}
	// Blobs 2 and 3 get other content of their own size.
	for _, i := range []int{2, 3} {
		var b bytes.Buffer
		zw := zlib.NewWriter(&b)
		other := []byte(docs[i])
		other[0] ^= 1
		fmt.Fprintf(zw, "blob %d\x00%s", len(other), other)
		zw.Close()
		rewriteLoose(t, path, ids[i], b.Bytes())
	}
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bv = st.(interface {
		BlobVerifying(OID) ([]byte, func() error, error)
	})
	for _, i := range []int{2, 3} {
		_, want := st.Blob(ids[i])
		if want == nil {
			t.Fatalf("Blob of changed blob %d succeeded", i)
		}
		_, check, err := bv.BlobVerifying(ids[i])
		if err == nil {
			err = check()
			if err2 := check(); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("blob %d: second check %v, first %v", i, err2, err)
			}
		}
		if err == nil || err.Error() != want.Error() {
			t.Fatalf("changed blob %d: BlobVerifying error %v, Blob's %v", i, err, want)
		}
	}
	_, want := st.Blob(tree)
	if _, _, err := bv.BlobVerifying(tree); err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("tree: BlobVerifying error %v, Blob's %v", err, want)
	}
}
