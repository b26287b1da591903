//go:build !unix

package lockfile

import (
	"io/fs"
	"os"
)

// holdFlock takes no lock here: there is no flock.
func holdFlock(*os.File) (held, busy bool) { return false, false }

// lockHolder cannot tell here: a lock older than the stale age is taken
// for a killed process's, by age alone.
func lockHolder(string, fs.FileInfo) (holderState, func()) { return holderGone, func() {} }
