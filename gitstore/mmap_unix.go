//go:build unix

package gitstore

import (
	"os"

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

// canMap says packs are mapped rather than read with pread.
const canMap = true
