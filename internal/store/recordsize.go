package store

import "github.com/readproof/readproof/manifest"

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
