//go:build !unix

package lockfile

import (
	"io/fs"
	"os"
)

// HoldFlock takes no lock here: there is no flock.
func HoldFlock(*os.File) (held, busy bool) { return false, false }

// FlockHolder cannot tell here: a lock older than the stale age is taken
// for a killed process's, by age alone.
func FlockHolder(string, fs.FileInfo) (HolderState, func()) { return HolderGone, func() {} }
