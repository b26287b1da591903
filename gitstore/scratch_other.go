//go:build !unix

package gitstore

import (
	"os"
	"time"
)

// scratchStale is how old a fetch view must be before a sweep removes it
// here, where no flock tells whether its owner lives.
const scratchStale = 12 * time.Hour

// holdScratch: without flock, a view's owner is not told apart from a dead
// one; scratchAbandoned goes by age instead.
func holdScratch(string) (func(), error) { return func() {}, nil }

// scratchAbandoned reports a fetch view older than scratchStale as
// abandoned: no fetch takes that long.
func scratchAbandoned(_ string, mod time.Time) (func(), bool) {
	return func() {}, time.Since(mod) > scratchStale
}

// lockSameDir: without flock, the directory is taken for a killed clone's
// by its age alone (scratchAbandoned), as lstat saw it.
func lockSameDir(_ string, fi os.FileInfo) (release func(), cur os.FileInfo, ok bool) {
	release, ok = scratchAbandoned("", fi.ModTime())
	return release, fi, ok
}

// ownDir: no owner is compared here.
func ownDir(os.FileInfo) bool { return true }
