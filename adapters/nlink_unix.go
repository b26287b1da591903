//go:build unix

package adapters

import (
	"io/fs"
	"syscall"
)

// linkCount is the number of names (hard links) of the file st describes,
// and whether the platform says.
func linkCount(st fs.FileInfo) (uint64, bool) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Nlink), true
	}
	return 0, false
}
