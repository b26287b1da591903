//go:build !unix

package store

import "io/fs"

// allocatedBytes is fi's size: blocks are not known here.
func allocatedBytes(fi fs.FileInfo) int64 { return fi.Size() }
