package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/readproof/readproof/internal/hint"
)

// ErrFetchTooLarge: a remote sent one fetch (of a pull, a clone, or the
// read of a remote's main) more than the transport's bound
// (TransportOptions.MaxFetchBytes). Stock git 2.39 has no bound of its own
// on what a fetch receives: a hostile or broken remote could fill the
// disk. Git was stopped, its temporary pack removed and no ref written.
var ErrFetchTooLarge = errors.New("the remote sent more than the fetch size limit")

// DefaultMaxFetchBytes bounds one fetch when TransportOptions sets no
// MaxFetchBytes: 4 GiB, four times the largest pack a git source may
// send by default and more than any store's history readproof has seen.
const DefaultMaxFetchBytes = 4 << 30

// MaxFetchFlag names the option of pull and clone that sets
// TransportOptions.MaxFetchBytes; the limit's hint names it.
const MaxFetchFlag = "--max-fetch-bytes"

// fetchWatchEvery is how often a fetch's incoming pack is measured: at
// 1 GB/s a fetch passes the bound by at most some 20 MB before git is
// stopped.
const fetchWatchEvery = 20 * time.Millisecond

// fetchUnpackLimit makes git keep every fetched pack as the pack it
// received (index-pack), never unpacking a small one into loose objects:
// all the remote sends then lands in one temporary file,
// objects/pack/tmp_pack_XXXXXX, whose size boundedFetch watches. With
// git's default (100 objects), a pack of fewer objects went to
// unpack-objects, which writes each object, however large, to a loose
// file of its own.
const fetchUnpackLimit = "fetch.unpackLimit=1"

// transferUnpackLimit goes with fetchUnpackLimit: git 2.39 reads
// transfer.unpackLimit first when it is set, so a user's
// transfer.unpackLimit (in ~/.gitconfig) had a fetch of fewer objects
// unpacked into loose files, which boundedFetch does not measure.
const transferUnpackLimit = "transfer.unpackLimit=1"

// maxFetch is the transport's bound on one fetch.
func (t *Transport) maxFetch() int64 {
	if t.opts.MaxFetchBytes > 0 {
		return t.opts.MaxFetchBytes
	}
	return DefaultMaxFetchBytes
}

// boundedFetch runs fetch, a git fetch into the repository gitDir (whose
// objects/pack the pack arrives in), with a context that is
// cancelled, stopping git, once git's new temporary files in
// objects/pack (the pack it receives) come to more than limit bytes.
// Then, and when the disk or the file size limit was met, the temporary
// files git left are removed; git writes no ref before its pack is
// complete, so none moved. remote names the remote in the error.
func boundedFetch(ctx context.Context, gitDir string, remote func(context.Context) string, limit int64, fetch func(context.Context) error) error {
	before := incomingFiles(gitDir, nil)
	packsBefore := packFiles(gitDir)
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var over atomic.Int64 // the size seen past limit
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(fetchWatchEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if n := tempBytes(gitDir, before); n > limit {
				over.Store(n)
				cancel()
				return
			}
		}
	}()
	err := fetch(fctx)
	close(done)
	<-stopped
	if err == nil && over.Load() == 0 {
		// a pack that arrived whole between two looks is measured now:
		// the same remote is refused however fast it sends (FetchObjects
		// removes it with the fetch's own object directory; a fetch into
		// the store itself, Fetch, leaves it unreachable for gc to prune)
		if n := newPackBytes(gitDir, packsBefore); n > limit {
			return hint.With(fmt.Errorf("%w (%s): %d bytes arrived from %s", ErrFetchTooLarge, sizeText(limit), n, remote(ctx)),
				"no run, resource, tag or journal ref moved; a store's history is rarely this large, so check the remote; if you trust it, raise the limit: "+MaxFetchFlag+" "+sizeText(limit*2))
		}
		return nil
	}
	if n := over.Load(); n > 0 && ctx.Err() == nil {
		removeTemps(gitDir, before)
		return hint.With(fmt.Errorf("%w (%s): git was stopped once %d bytes had arrived from %s", ErrFetchTooLarge, sizeText(limit), n, remote(ctx)),
			"no run, resource, tag or journal ref moved and the part received was removed; a store's history is rarely this large, so check the remote; if you trust it, raise the limit: "+MaxFetchFlag+" "+sizeText(limit*2))
	}
	if err != nil {
		err = packSizeLimited(err, gitDir, before)
	}
	if err != nil && (OutOfSpace(err) || FileSizeLimited(err)) {
		removeTemps(gitDir, before)
	}
	return err
}

// packSizeLimited is err, of a fetch that failed, marked as the file size
// limit's (FileSizeLimited: git's words for SIGXFSZ) when a temporary file git left in gitDir's
// objects/pack (one not in before) reached that limit: index-pack, which
// writes the pack, was then killed by SIGXFSZ, and git fetch, reading
// index-pack's answer for the pack it keeps (fetch.unpackLimit=1), says
// only "fetch-pack: invalid index-pack output".
func packSizeLimited(err error, gitDir string, before map[string]bool) error {
	limit, ok := fileSizeLimit()
	if !ok || FileSizeLimited(err) {
		return err
	}
	for f := range gitTempFiles(gitDir, before) {
		if fi, serr := os.Lstat(f); serr == nil && fi.Size() >= limit {
			return fmt.Errorf("%w: git's index-pack died of signal 25 (SIGXFSZ): the pack it wrote reached the file size limit of %d bytes", err, limit)
		}
	}
	return err
}

// incomingFiles lists the files a fetch writes into gitDir's objects/pack
// before they are whole and not in skip: git's temporary files
// (gitTempFiles) and the packs git http-fetch downloads, named
// pack-HASH.pack.temp. A protocol v2 remote may answer a fetch with the
// URLs of packs (packfile-uris) whether or not git asked for them, and
// git 2.39 downloads each, so what such a remote sends does not all come
// through index-pack's tmp_pack_XXXXXX.
//
// One read of the directory gives both, as it is read every
// fetchWatchEvery while git runs.
func incomingFiles(gitDir string, skip map[string]bool) map[string]bool {
	dir := filepath.Join(gitDir, "objects", "pack")
	entries, _ := readDir(dir)
	out := map[string]bool{}
	for _, e := range entries {
		n := e.Name()
		incoming := isGitTemp(n) || isPackDownload(n)
		if !incoming || e.IsDir() {
			continue
		}
		if f := filepath.Join(dir, n); !skip[f] {
			out[f] = true
		}
	}
	return out
}

// tempBytes is the size of the files a fetch is writing into gitDir's
// objects/pack (incomingFiles) that are not in skip.
func tempBytes(gitDir string, skip map[string]bool) int64 {
	var n int64
	for f := range incomingFiles(gitDir, skip) {
		if fi, err := os.Lstat(f); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// packFiles lists the packs (pack-*.pack) in gitDir's objects/pack.
func packFiles(gitDir string) map[string]bool {
	entries, _ := readDir(filepath.Join(gitDir, "objects", "pack"))
	out := map[string]bool{}
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, "pack-") && strings.HasSuffix(n, ".pack") {
			out[n] = true
		}
	}
	return out
}

// newPackBytes is the size of the packs in gitDir's objects/pack that are
// not in before.
func newPackBytes(gitDir string, before map[string]bool) int64 {
	var n int64
	for name := range packFiles(gitDir) {
		if before[name] {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(gitDir, "objects", "pack", name)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// removeTemps removes the files a fetch was writing into gitDir's
// objects/pack (incomingFiles) that are not in skip.
func removeTemps(gitDir string, skip map[string]bool) {
	for f := range incomingFiles(gitDir, skip) {
		os.Remove(f)
	}
}

// sizeText writes n bytes as the option takes it: in GiB, MiB or KiB when
// one divides it exactly, else in bytes.
func sizeText(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.m && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// shownRemote names remote, a configured remote's name or a URL, for an
// error: a name with the URL git fetches from, a URL redacted.
func (t *Transport) shownRemote(remote string) func(context.Context) string {
	return func(ctx context.Context) string {
		if CheckRemoteName(remote) == nil {
			if url, err := t.RemoteFetchURL(ctx, remote); err == nil {
				return remote + " (" + RedactURL(url) + ")"
			}
		}
		return RedactURL(remote)
	}
}

// fetchIncoming makes t, a fetch view (fetchView), write the objects git
// fetches into objects/ inside the view, a directory of this fetch's own,
// and read the store's objects (the view's object directory until now)
// beside it as an alternate: git then skips what the store holds and checks
// that what arrived is connected to it, and the fetch bound (boundedFetch
// on the view) measures only this git's files. adoptIncoming moves what
// arrived into the store.
func (t *Transport) fetchIncoming() error {
	incoming := filepath.Join(t.dir, "objects")
	if err := os.MkdirAll(filepath.Join(incoming, "pack"), 0o700); err != nil {
		return err
	}
	t.objects, t.alternates = incoming, t.objects
	return nil
}

// adoptIncoming moves what a fetch wrote into the object directory
// incoming (fetchIncoming) into the store's, objects: each pack's .pack
// (and .rev) first and its .idx last, since git finds a pack by its index,
// each file flushed to disk first and the directories after, so the
// objects are durable in the store before any ref names them. Loose
// objects, which git writes none of with fetch.unpackLimit=1, are moved
// the same way. A file the store holds already under that name (the same
// pack, named by its content) is left as it is.
func adoptIncoming(incoming, objects string) error {
	packDir := filepath.Join(incoming, "pack")
	entries, err := readDir(packDir)
	if err != nil {
		return err
	}
	var packs []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, "pack-") && strings.HasSuffix(n, ".idx") && !e.IsDir() {
			packs = append(packs, strings.TrimSuffix(n, ".idx"))
		}
	}
	dest := filepath.Join(objects, "pack")
	moved := false
	for _, p := range packs {
		for _, ext := range []string{".pack", ".rev", ".idx"} {
			from := filepath.Join(packDir, p+ext)
			if _, err := os.Lstat(from); errors.Is(err, os.ErrNotExist) && ext == ".rev" {
				continue
			}
			ok, err := moveIn(from, filepath.Join(dest, p+ext))
			if err != nil {
				return err
			}
			moved = moved || ok
		}
	}
	// loose objects: objects/xx/yyyy
	dirs, err := readDir(incoming)
	if err != nil {
		return err
	}
	var looseDirs []string
	for _, d := range dirs {
		if n := d.Name(); len(n) != 2 || !d.IsDir() || !isHexOID(n+strings.Repeat("0", 38)) {
			continue
		}
		files, err := readDir(filepath.Join(incoming, d.Name()))
		if err != nil {
			return err
		}
		if len(files) == 0 {
			continue
		}
		to := filepath.Join(objects, d.Name())
		if err := os.MkdirAll(to, 0o755); err != nil {
			return err
		}
		for _, f := range files {
			if _, err := moveIn(filepath.Join(incoming, d.Name(), f.Name()), filepath.Join(to, f.Name())); err != nil {
				return err
			}
		}
		looseDirs = append(looseDirs, to)
	}
	if moved {
		if err := syncDir(dest); err != nil {
			return err
		}
	}
	for _, d := range looseDirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// moveIn renames from to to, from flushed to disk first, unless to exists
// already; it reports whether it renamed. When the store's objects/ is on
// another file system than the store (a link to another disk), where no
// rename reaches, from is copied beside to and that copy renamed.
func moveIn(from, to string) (bool, error) {
	if _, err := os.Lstat(to); err == nil {
		return false, nil
	}
	if err := fsyncPath(from); err != nil {
		return false, err
	}
	err := os.Rename(from, to)
	if errors.Is(err, syscall.EXDEV) {
		err = copyIn(from, to)
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// copyIn copies from into a temporary file in the store's objects/pack
// (tmp_pack_*; for a loose object, tmp_obj_* in objects/), where what a
// killed copy leaves goes with the stale temporary files (sweepStale),
// flushes it to disk, and renames it to to.
func copyIn(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	dir, prefix := filepath.Dir(to), "tmp_pack_"
	if filepath.Base(dir) != "pack" {
		dir, prefix = filepath.Dir(dir), "tmp_obj_"
	}
	tmp, err := os.CreateTemp(dir, prefix)
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, src)
	if err == nil {
		err = tmp.Chmod(fi.Mode().Perm())
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = renameFile(tmp.Name(), to)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
