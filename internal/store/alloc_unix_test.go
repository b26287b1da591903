//go:build unix

package store

import (
	"io/fs"
	"syscall"
)

// allocatedBytes is what fi's file takes on disk (its blocks), or its size
// where the file system does not say.
func allocatedBytes(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}
