//go:build !unix

package gitstore

import (
	"os"
	"time"
)

// mapFile reads the first size bytes of f (no mapping on this platform).
func mapFile(f *os.File, size int64) (data []byte, release func(), err error) {
	return readAllFile(f, size)
}

// mapFileOnce is mapFile (nothing is mapped, so nothing is trimmed).
func mapFileOnce(f *os.File, size int64, _ time.Duration) (data []byte, release func(), err error) {
	return mapFile(f, size)
}

// mapFileTrimmable is mapFile with a trim that does nothing (nothing is
// mapped).
func mapFileTrimmable(f *os.File, size int64) (data []byte, release, trim func(), err error) {
	data, release, err = mapFile(f, size)
	return data, release, func() {}, err
}

// canMap says packs are read with pread (mapFile would read them whole).
const canMap = false
