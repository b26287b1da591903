package store

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// snapshotReads serves one snapshot and records the bound of each read of
// it; a read without a bound is counted apart.
type snapshotReads struct {
	gitstore.Reader
	id        gitstore.OID
	content   []byte
	bounds    []int64
	unbounded int
}

func (r *snapshotReads) Blob(id gitstore.OID) ([]byte, error) {
	r.unbounded++
	return r.BlobAtMost(id, int64(len(r.content)))
}

func (r *snapshotReads) BlobAtMost(id gitstore.OID, most int64) ([]byte, error) {
	r.bounds = append(r.bounds, most)
	if id != r.id {
		return nil, gitstore.ErrNotFound
	}
	if int64(len(r.content)) > most {
		return nil, fmt.Errorf("blob %s: %w", id, gitstore.ErrTooLarge)
	}
	return bytes.Clone(r.content), nil
}

// TestMountedWithReadsAtMostTheEntrysBytes: mountedWith reads an entry's
// snapshot up to the size the entry records (a pull judges snapshots a
// remote sent), not past it: a snapshot one byte larger than its entry
// says is not read, so the entry does not count as mounted with the key,
// though its content hash and delivered hash would both match. The same
// snapshot at its recorded size is read and counts. Before session 31 no
// test could tell a bounded read from an unbounded one.
func TestMountedWithReadsAtMostTheEntrysBytes(t *testing.T) {
	t.Parallel()
	keys, err := probe.NewRandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	content := []byte("Products can be refunded within 30 days.\n")
	hash := contentHash(content)
	session, err := probe.ContentSession("r1", 0, hash)
	if err != nil {
		t.Fatal(err)
	}
	out, err := keys.Deliver(content, probe.Issued{Session: session, Bucket: 1000, Length: 16})
	if err != nil {
		t.Fatal(err)
	}
	snapshot := gitstore.OID("0123456789abcdef0123456789abcdef01234567")
	entry := func(recorded int64) *manifest.Manifest {
		return &manifest.Manifest{RunID: "r1", Entries: []manifest.Entry{{Position: 0, URI: "readproof://demo/policy", Snapshot: string(snapshot),
			ContentHash: hash, Bytes: recorded,
			Probe: &manifest.Probe{Bucket: 1000, Length: 16, DeliveredHash: contentHash(out), DeliveredSize: int64(len(out)), Session: manifest.ProbeSessionContent}}}}
	}
	n := int64(len(content))
	for _, tc := range []struct {
		recorded int64
		want     bool
	}{{n, true}, {n - 1, false}} {
		objs := &snapshotReads{id: snapshot, content: content}
		got := mountedWith(objs, keys, entry(tc.recorded), 0, map[int]bool{})
		if got != tc.want {
			t.Errorf("entry recording %d bytes of a %d-byte snapshot: mounted with the key %v, want %v", tc.recorded, n, got, tc.want)
		}
		if objs.unbounded != 0 || len(objs.bounds) != 1 || objs.bounds[0] != tc.recorded {
			t.Errorf("entry recording %d bytes: snapshot read with bounds %v and %d unbounded reads, want one read of at most %d bytes", tc.recorded, objs.bounds, objs.unbounded, tc.recorded)
		}
	}
}
