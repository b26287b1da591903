package gitstore

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
)

// readAll is ReadBlobs collected: each blob's bytes and error text, and
// the order fn saw them in.
func readAll(t *testing.T, g Reader, ids []OID, opts BlobsOptions) ([][]byte, []string) {
	t.Helper()
	data := make([][]byte, len(ids))
	errs := make([]string, len(ids))
	next := 0
	err := ReadBlobs(context.Background(), g, ids, opts, func(i int, b []byte, err error) error {
		if i != next {
			t.Fatalf("fn got blob %d, want %d", i, next)
		}
		next++
		data[i] = b
		if opts.ReuseBuffers {
			data[i] = bytes.Clone(b) // b is valid only during this call
		}
		if err != nil {
			errs[i] = err.Error()
			if b != nil {
				t.Fatalf("blob %d: bytes with error %v", i, err)
			}
		}
		return nil
	})
	if err != nil || next != len(ids) {
		t.Fatalf("ReadBlobs: %v after %d of %d", err, next, len(ids))
	}
	return data, errs
}

// TestReadBlobsMatchesBlob: for blobs packed (with deltas) and loose,
// trees and commits, a missing id and a malformed one, ReadBlobs gives
// every id Blob's bytes and Blob's error, in order, whatever the number of
// workers, the read-ahead and the options.
func TestReadBlobsMatchesBlob(t *testing.T) {
	t.Parallel()
	path, objects := directFixture(t)
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []OID
	for id := range objects {
		ids = append(ids, OID(id))
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	ids = append(ids, OID(strings.Repeat("ab", 20)), "not-an-id", ids[3], ids[3])
	rand.New(rand.NewPCG(5, 6)).Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	want := make([][]byte, len(ids))
	wantErr := make([]string, len(ids))
	blobs := 0
	for i, id := range ids {
		want[i], err = st.Blob(id)
		if err != nil {
			wantErr[i] = err.Error()
			want[i] = nil
		} else {
			blobs++
		}
	}
	if blobs < 20 || blobs == len(ids) {
		t.Fatalf("fixture: %d blobs of %d ids", blobs, len(ids))
	}
	for _, opts := range []BlobsOptions{
		{Workers: 1}, {Workers: 2}, {Workers: 4, Ahead: 1}, {Workers: 3, Ahead: 5},
		{ContentChecked: true}, {CheckLoose: true, Workers: 2}, {Workers: 100},
		{ReuseBuffers: true, Workers: 1}, {ReuseBuffers: true, Workers: 2, Ahead: 4},
		{ReuseBuffers: true, Workers: 3, ContentChecked: true, CheckLoose: true},
	} {
		var onRead atomic.Int64
		opts.OnRead = func(i int, data []byte) {
			if !bytes.Equal(data, want[i]) {
				t.Errorf("OnRead(%d): other bytes", i)
			}
			onRead.Add(1)
		}
		got, gotErr := readAll(t, st, ids, opts)
		for i := range ids {
			if !bytes.Equal(got[i], want[i]) || gotErr[i] != wantErr[i] {
				t.Fatalf("%+v: %s: %d bytes %q, Blob gives %d bytes %q", opts, ids[i], len(got[i]), gotErr[i], len(want[i]), wantErr[i])
			}
		}
		if onRead.Load() != int64(blobs) {
			t.Fatalf("%+v: OnRead called %d times for %d blobs", opts, onRead.Load(), blobs)
		}
	}
	// A Reader that is not a repository is read through its Blob.
	gr, err := OpenGitReader(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer gr.Close()
	got, _ := readAll(t, gr, ids, BlobsOptions{})
	for i := range ids {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("git reader: %s: other bytes", ids[i])
		}
	}
}

// rewriteLoose replaces the loose object file of id with raw.
func rewriteLoose(t *testing.T, path string, id OID, raw []byte) {
	t.Helper()
	file := filepath.Join(path, "objects", string(id[:2]), string(id[2:]))
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, raw, 0o444); err != nil {
		t.Fatal(err)
	}
}

// TestReadBlobsCorrupt: a loose blob whose content was changed (a valid
// zlib stream of other bytes) is Blob's error; with ContentChecked its
// bytes come back and VerifyBlob gives that same error. A flipped zlib
// checksum byte reads fine, and with CheckLoose is CheckLooseObject's
// error.
func TestReadBlobsCorrupt(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	ids := putBlobs(t, s, 40, func(i int) string { return fmt.Sprintf("document %d\n%s", i, strings.Repeat("text ", i*50)) })
	path := s.Path()
	if _, err := os.Stat(filepath.Join(path, "objects", string(ids[0][:2]), string(ids[0][2:]))); err != nil {
		t.Skipf("blobs are not loose here: %v", err)
	}
	changed, flipped, both := ids[7], ids[23], ids[31]
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	io.WriteString(zw, "blob 11\x00document 8\n")
	zw.Close()
	rewriteLoose(t, path, changed, b.Bytes())
	raw, err := os.ReadFile(filepath.Join(path, "objects", string(flipped[:2]), string(flipped[2:])))
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 1
	rewriteLoose(t, path, flipped, raw)
	// A content byte changed in a stored (uncompressed) stream: other
	// content, and a checksum that no longer matches.
	blob31, err := s.Blob(both)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	zs, _ := zlib.NewWriterLevel(&b, zlib.NoCompression)
	io.WriteString(zs, "blob "+fmt.Sprint(len(blob31))+"\x00")
	zs.Write(blob31)
	zs.Close()
	stored := b.Bytes()
	stored[len(stored)-20] ^= 1 // in the content, before the empty final block and the checksum
	rewriteLoose(t, path, both, stored)

	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, blobErr := st.Blob(changed)
	if !errors.Is(blobErr, ErrCorrupt) {
		t.Fatalf("Blob of a changed object: %v", blobErr)
	}
	_, looseErr := st.Blob(flipped)
	if looseErr != nil {
		t.Fatalf("Blob of a flipped checksum: %v", looseErr)
	}
	checkErr := CheckLooseObject(path, flipped)
	if !errors.Is(checkErr, ErrCorrupt) {
		t.Fatalf("CheckLooseObject of a flipped checksum: %v", checkErr)
	}
	_, bothErr := st.Blob(both)
	if !errors.Is(bothErr, ErrCorrupt) {
		t.Fatalf("Blob of a changed stored object: %v", bothErr)
	}
	for _, workers := range []int{1, 2} {
		_, errs := readAll(t, st, ids, BlobsOptions{Workers: workers})
		if errs[7] != blobErr.Error() || errs[23] != "" {
			t.Fatalf("workers %d: errors %q, %q", workers, errs[7], errs[23])
		}
		data, errs := readAll(t, st, ids, BlobsOptions{Workers: workers, ContentChecked: true, CheckLoose: true})
		if errs[7] != "" || string(data[7]) != "document 8\n" {
			t.Fatalf("workers %d ContentChecked: %q %q", workers, data[7], errs[7])
		}
		if err := VerifyBlob(changed, data[7]); err == nil || err.Error() != blobErr.Error() {
			t.Fatalf("VerifyBlob = %v, want %v", err, blobErr)
		}
		if errs[23] != checkErr.Error() {
			t.Fatalf("workers %d CheckLoose: %q, want %q", workers, errs[23], checkErr)
		}
		if errs[31] != bothErr.Error() {
			t.Fatalf("workers %d changed and checksum wrong: %q, want Blob's %q", workers, errs[31], bothErr)
		}
		for i, d := range data {
			if i != 7 && i != 23 && i != 31 {
				if err := VerifyBlob(ids[i], d); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestReadBlobsStops: ReadBlobs returns fn's error at once, and ctx's
// when it ends, with no worker left running.
func TestReadBlobsStops(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	ids := putBlobs(t, s, 300, func(i int) string { return fmt.Sprint("blob ", i) })
	stop := errors.New("enough")
	calls := 0
	err := ReadBlobs(context.Background(), s, ids, BlobsOptions{Workers: 2}, func(i int, _ []byte, _ error) error {
		calls++
		if i == 10 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 11 {
		t.Fatalf("ReadBlobs = %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	err = ReadBlobs(ctx, s, ids, BlobsOptions{Workers: 2}, func(i int, _ []byte, _ error) error {
		calls++
		if i == 5 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls != 6 {
		t.Fatalf("ReadBlobs after cancel = %v after %d calls", err, calls)
	}
}

// TestReadBlobsUnflushed: blobs written through the store and not flushed
// yet are read, in order, like the others.
func TestReadBlobsUnflushed(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	var ids []OID
	var want []string
	for i := range 50 {
		w := fmt.Sprint("unflushed ", i)
		id, err := s.PutBlob([]byte(w))
		if err != nil {
			t.Fatal(err)
		}
		ids, want = append(ids, id), append(want, w)
	}
	data, errs := readAll(t, s, ids, BlobsOptions{Workers: 2, ContentChecked: true, CheckLoose: true})
	for i := range ids {
		if string(data[i]) != want[i] || errs[i] != "" {
			t.Fatalf("blob %d: %q %q", i, data[i], errs[i])
		}
	}
}

// putBlobs stores n blobs, the i-th holding text(i), syncs them and
// returns their ids in order.
func putBlobs(t *testing.T, s Store, n int, text func(i int) string) []OID {
	t.Helper()
	ids := make([]OID, 0, n)
	for i := range n {
		id, err := s.PutBlob([]byte(text(i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	return ids
}
