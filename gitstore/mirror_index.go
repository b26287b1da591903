package gitstore

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// storeReceived indexes the pack f (receivePack's file, in the mirror's
// directory dir) with go-git's parser and moves it, with the index, into
// dir's objects/pack, as go-git's packfile.UpdateObjectStorage does, but
// stopping once ctx is done: the parser reads the pack through a reader
// that looks at ctx on each read (go-git reads every object and every
// delta's base through it, each again per delta of a chain) and ctx is
// looked at between objects. UpdateObjectStorage took no context, so a
// source's timeout or Ctrl-C waited for the index of the whole pack,
// which for a pack of large deltas (each applied to its whole base) is
// minutes of CPU. On failure nothing is moved; the caller removes f.
func storeReceived(ctx context.Context, st *filesystem.Storage, dir string, f *os.File) error {
	idx := new(idxfile.Writer)
	p, err := packfile.NewParser(packfile.NewScanner(&ctxReadSeeker{ctx: ctx, r: f}), idx, ctxObserver{ctx})
	if err != nil {
		return err
	}
	sum, err := p.Parse()
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if err != nil {
		return err
	}
	index, err := idx.Index()
	if err != nil {
		return err
	}
	packDir := filepath.Join(dir, "objects", "pack")
	base := filepath.Join(packDir, "pack-"+sum.String())
	// the index first: go-git lists a pack by its .pack file, so an index
	// alone (a kill in between) is never read, and a pack is never listed
	// without its index
	if _, err := os.Lstat(base + ".idx"); os.IsNotExist(err) {
		tmp, err := os.CreateTemp(packDir, receivedIdxPrefix)
		if err != nil {
			return err
		}
		_, err = idxfile.NewEncoder(tmp).Encode(index)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chmod(tmp.Name(), 0o444)
		}
		if err == nil {
			err = os.Rename(tmp.Name(), base+".idx")
		}
		if err != nil {
			os.Remove(tmp.Name())
			return err
		}
	}
	if _, err := os.Lstat(base + ".pack"); os.IsNotExist(err) {
		if err := os.Chmod(f.Name(), 0o444); err != nil {
			return err
		}
		if err := os.Rename(f.Name(), base+".pack"); err != nil {
			return err
		}
	}
	st.Reindex()
	return nil
}

// ctxReadSeeker is r, failing with ctx's error on a read once ctx is done.
type ctxReadSeeker struct {
	ctx context.Context
	r   io.ReadSeeker
}

func (c *ctxReadSeeker) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func (c *ctxReadSeeker) Seek(off int64, whence int) (int64, error) {
	return c.r.Seek(off, whence)
}

// ctxObserver stops the parser between objects once ctx is done.
type ctxObserver struct{ ctx context.Context }

func (o ctxObserver) OnHeader(uint32) error { return o.ctx.Err() }
func (o ctxObserver) OnInflatedObjectHeader(plumbing.ObjectType, int64, int64) error {
	return o.ctx.Err()
}
func (o ctxObserver) OnInflatedObjectContent(plumbing.Hash, int64, uint32, []byte) error {
	return o.ctx.Err()
}
func (o ctxObserver) OnFooter(plumbing.Hash) error { return o.ctx.Err() }
