package store

import (
	"github.com/readproof/readproof/adapters/sourcespec"
	"github.com/readproof/readproof/manifest"
)

// MaxSnapshotBytes is the largest snapshot readproof stores: a source
// reads at most max_bytes of a document, and any max_bytes counts as at
// most sourcespec.MaxMaxBytes (2^61). That is no bound on memory: a
// snapshot whose record gives no size (a tag move's) is hashed as a stream
// (gitstore's BlobTo), and one whose header states more than this was not
// written by readproof and is refused unread.
const MaxSnapshotBytes = sourcespec.MaxMaxBytes

// MaxRecordBytes is the largest observation.json, tag.json, run.json,
// resource.json or receipt readproof reads (16 MiB): each is a few hundred
// bytes, and the largest field a source can fill, an http source's revision
// (its ETag), is bounded by Go's limit on a response's headers (10 MiB).
// Like manifest.MaxBytes, the size is read from the object's header before
// its content is inflated (gitstore's BlobAtMost), so a remote's record
// padded to gigabytes costs a pull or verify nothing but the refusal
// (docs/store-format.md, "Record sizes").
const MaxRecordBytes = 16 << 20

// MaxBytesOf is the largest file named name (the last element of its path
// in a record commit's tree) readproof reads: manifest.MaxBytes for a
// manifest and for a run's verdicts (a record per delivered document, as a
// manifest has an entry per document), MaxRecordBytes for every other
// record.
func MaxBytesOf(name string) int64 {
	switch name {
	case "manifest.json", verdictsFile:
		return manifest.MaxBytes
	}
	return MaxRecordBytes
}
