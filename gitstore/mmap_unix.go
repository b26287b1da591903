//go:build unix

package gitstore

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// mapFile maps the first size bytes of f read-only. The mapping outlives
// f's descriptor and a rename or removal of the file (git replaces pack
// indexes and packed-refs by rename, never in place); release unmaps it.
func mapFile(f *os.File, size int64) (data []byte, release func(), err error) {
	if size == 0 {
		return nil, func() {}, nil
	}
	if int64(int(size)) != size {
		return readAllFile(f, size)
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		// Some filesystems cannot map: read the file instead.
		return readAllFile(f, size)
	}
	return data, func() { unix.Munmap(data) }, nil
}

// mapFileOnce is mapFile for a file read about once, front to back (the
// copy's pack while it is indexed): while it is mapped, its pages are
// dropped from the process's resident set every period (madvise
// MADV_DONTNEED), so the peak RSS of reading it is what was read in a
// period, not the whole file. The pages stay in the page cache; a page
// read again is mapped again, a minor fault. The mapping is read-only and
// private, so it never holds a page of its own that dropping would lose;
// a file read into memory instead (mapFile's fallback) is never dropped.
// release stops the trimming, then unmaps.
func mapFileOnce(f *os.File, size int64, period time.Duration) (data []byte, release func(), err error) {
	if size == 0 || int64(int(size)) != size {
		return mapFile(f, size)
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		return readAllFile(f, size)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				unix.Madvise(data, unix.MADV_DONTNEED)
			}
		}
	})
	return data, func() {
		close(stop)
		wg.Wait() // no madvise after the unmap
		unix.Munmap(data)
	}, nil
}

// mapFileTrimmable is mapFile that also returns trim, which gives the
// mapping's pages back (madvise MADV_DONTNEED), as mapFileOnce does on a
// timer: a pack and its index read through a long walk (every commit,
// tree and receipt of a session's chain) would otherwise end with every
// page of both in the process's resident set. The pages stay in the page
// cache; one read again is mapped again, a minor fault. A file read into
// memory (mapFile's fallback) is never trimmed, and trim after release
// does nothing (the address range may be the heap's by then).
func mapFileTrimmable(f *os.File, size int64) (data []byte, release, trim func(), err error) {
	if size == 0 || int64(int(size)) != size {
		data, release, err = mapFile(f, size)
		return data, release, func() {}, err
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		data, release, err = readAllFile(f, size)
		return data, release, func() {}, err
	}
	var mu sync.Mutex
	released := false
	release = func() {
		mu.Lock()
		defer mu.Unlock()
		if !released {
			released = true
			unix.Munmap(data)
		}
	}
	trim = func() {
		mu.Lock()
		defer mu.Unlock()
		if !released {
			unix.Madvise(data, unix.MADV_DONTNEED)
		}
	}
	return data, release, trim, nil
}

// canMap says packs are mapped rather than read with pread.
const canMap = true
