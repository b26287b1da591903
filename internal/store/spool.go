package store

import (
	"io"
	"os"
	"path/filepath"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/manifest"
)

// spoolFrom is the number of documents from which a single-shot run that
// does not hand back their content (RunOnceProgress, the CLI's `run --id`)
// spools its manifest entries to a file instead of holding them whole. A
// smaller run would pay more for the file than it saves.
const spoolFrom = 256

// entrySpool is a run's manifest.Spool over an unnamed scratch file in the
// store's objects/pack directory (on the store's file system, where the
// objects go anyway; named tmp_pack_* as gitstore's spill is, so its stale
// sweep and git's own remove a file a system that cannot unlink an open
// file leaves behind).
type entrySpool struct {
	f  *os.File
	sp *manifest.Spool
}

// newEntrySpool returns a spool, or nil when the scratch file cannot be
// made: the run then holds its entries whole, as a small run does, and any
// problem with the store is reported by the write that meets it.
func (s *Store) newEntrySpool() *entrySpool {
	f, err := os.CreateTemp(filepath.Join(s.Path(), "objects", "pack"), "tmp_pack_spool_")
	if err != nil {
		return nil
	}
	os.Remove(f.Name())
	return &entrySpool{f: f, sp: manifest.NewSpool(f)}
}

// blobStreamer is a store that takes a blob from a reader (gitstore's
// PutBlobFrom).
type blobStreamer interface {
	PutBlobFrom(size int64, r io.Reader) (gitstore.OID, error)
}

// put stores manifest.json of m (whose entries are the spooled ones,
// light), the bytes manifest.Encode would give, as a blob: streamed into a
// store that takes it so (the 6 MB of a 10,000-entry manifest are never
// held, and gitstore stores them uncompressed: every command that reads
// the run copies them instead of inflating them), else assembled in memory.
func (e *entrySpool) put(g gitstore.Store, m *manifest.Manifest) (gitstore.OID, error) {
	if err := e.sp.Flush(); err != nil {
		return "", err
	}
	src := io.NewSectionReader(e.f, 0, 1<<62)
	if bs, ok := g.(blobStreamer); ok {
		size, r, err := e.sp.Reader(m, src)
		if err != nil {
			return "", err
		}
		if err := checkManifestSize(m, size); err != nil {
			return "", err
		}
		return bs.PutBlobFrom(size, r)
	}
	data, err := e.sp.Encode(m, src)
	if err != nil {
		return "", err
	}
	if err := checkManifestSize(m, int64(len(data))); err != nil {
		return "", err
	}
	return g.PutBlob(data)
}

func (e *entrySpool) close() {
	if e != nil {
		e.f.Close()
		os.Remove(e.f.Name())
	}
}

// lightEntry keeps of e what the rest of a run reads: what
// manifest.Validate checks (position, URI, ref, snapshot, content hash,
// decision, size, file), which also places the document in the manifest
// tree and the journal view and gives the evidence leaf.
func lightEntry(e manifest.Entry) manifest.Entry {
	return manifest.Entry{Position: e.Position, URI: e.URI, Ref: e.Ref, Snapshot: e.Snapshot, ContentHash: e.ContentHash,
		Decision: e.Decision, Bytes: e.Bytes, File: e.File}
}
