//go:build !unix

package gitstore

// fileSizeLimit: no file size limit is read here.
func fileSizeLimit() (int64, bool) { return 0, false }
