package store

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/readproof/readproof/gitstore"
)

// CheckLooseObject checks git's own integrity of the loose object file of
// id, as `git fsck` does: the whole zlib stream decompresses and its
// Adler-32 checksum matches, nothing follows it, and the SHA-1 of the
// decompressed object is id (gitstore.CheckLooseObject). Reading an object
// through the repository stops at the end of its content and so never sees
// a flipped checksum byte. An object that is not loose (packed, or
// missing) gives nil; errors wrap gitstore.ErrCorrupt, or are I/O errors.
func (s *Store) CheckLooseObject(id gitstore.OID) error {
	return gitstore.CheckLooseObject(s.Path(), id)
}

// CheckPacks checks the trailing SHA-1 of every pack file and pack index
// of the store, as `git verify-pack` does first. It returns one error per
// damaged file (each wrapping gitstore.ErrCorrupt) and an I/O error apart.
func (s *Store) CheckPacks() ([]error, error) {
	names, err := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "*.pack"))
	if err != nil {
		return nil, err
	}
	idx, err := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "*.idx"))
	if err != nil {
		return nil, err
	}
	var bad []error
	for _, name := range append(names, idx...) {
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed by a concurrent gc
		}
		if err != nil {
			return bad, err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return bad, err
		}
		if fi.Size() < sha1.Size {
			bad = append(bad, fmt.Errorf("%s: %w: shorter than its checksum", filepath.Base(name), gitstore.ErrCorrupt))
			f.Close()
			continue
		}
		h := sha1.New()
		if _, err := io.CopyN(h, f, fi.Size()-sha1.Size); err != nil {
			f.Close()
			return bad, err
		}
		trailer := make([]byte, sha1.Size)
		_, err = io.ReadFull(f, trailer)
		f.Close()
		if err != nil {
			return bad, err
		}
		if !bytes.Equal(h.Sum(nil), trailer) {
			bad = append(bad, fmt.Errorf("%s: %w: its trailing checksum does not match its content", filepath.Base(name), gitstore.ErrCorrupt))
		}
	}
	return bad, nil
}
