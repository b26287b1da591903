package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
)

// syncTarget is one fsync: an open file (a written lock), an object file,
// or a directory whose entries changed.
type syncTarget struct {
	f    *os.File // synced as is; else path is opened for it
	path string
	dir  bool // a directory: synced with syncDir
	// goneOK: a path that no longer exists needs no sync (a concurrent git
	// gc packed the object, and synced the pack; pack-refs removed the
	// directory)
	goneOK bool
}

// syncTrace, when a test sets it, is told of every target fsyncEach is
// about to sync (from several goroutines at once).
var syncTrace func(path string, dir bool)

func (t syncTarget) sync() error {
	if syncTrace != nil {
		name := t.path
		if t.f != nil {
			name = t.f.Name()
		}
		syncTrace(name, t.dir)
	}
	var err error
	switch {
	case t.f != nil:
		return t.f.Sync()
	case t.dir:
		err = syncDir(t.path)
	default:
		err = fsyncPath(t.path)
	}
	if t.goneOK && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// syncWorkers is how many fsyncs fsyncEach has in flight at once.
const syncWorkers = 8

// fsyncEach makes every target durable. Nothing orders the targets among
// themselves (they all must be durable before the rename that follows), so
// their fsyncs are issued together, up to syncWorkers at a time: each
// fsync waits for the device to flush its cache, and a device (the block
// layer, a journal) serves fsyncs that wait together with one flush, where
// one after the other each waited for its own (a 1-document run made six
// such waits in a row). On a filesystem where fsync returns at once
// (tmpfs) the goroutines simply run one after the other. The error is that
// of the first target, in the order given, that failed.
func fsyncEach(ts []syncTarget) error {
	if len(ts) == 1 {
		return ts[0].sync()
	}
	errs := make([]error, len(ts))
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(ts) {
				return
			}
			errs[i] = ts[i].sync()
		}
	}
	var wg sync.WaitGroup
	for range min(len(ts), syncWorkers) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// objectTargets are the fsyncs that make pending object files (loose
// objects, packs and their indexes, relative slash-separated paths)
// durable: each file, its directory and the objects directory.
func (s *repo) objectTargets(pending []string) []syncTarget {
	if len(pending) == 0 {
		return nil
	}
	ts := make([]syncTarget, 0, 2*len(pending)+1)
	dirs := map[string]bool{"objects": true}
	for _, rel := range pending {
		ts = append(ts, syncTarget{path: filepath.Join(s.path, filepath.FromSlash(rel)), goneOK: true})
		dirs[path.Dir(rel)] = true
	}
	for _, d := range sortedKeys(dirs) {
		ts = append(ts, syncTarget{path: filepath.Join(s.path, filepath.FromSlash(d)), dir: true, goneOK: true})
	}
	return ts
}

// fsyncObjects fsyncs each pending object file, its directory and the
// objects directory.
func (s *repo) fsyncObjects(pending []string) error {
	return fsyncEach(s.objectTargets(pending))
}

// fsyncDirs makes renames and removals in dirs durable.
func (s *repo) fsyncDirs(dirs map[string]bool) error {
	if len(dirs) == 0 {
		return nil
	}
	ts := make([]syncTarget, 0, len(dirs))
	for _, d := range sortedKeys(dirs) {
		// git pack-refs may have moved the refs and removed the directory
		ts = append(ts, syncTarget{path: d, dir: true, goneOK: true})
	}
	return fsyncEach(ts)
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
