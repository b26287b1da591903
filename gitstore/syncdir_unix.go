//go:build !windows

package gitstore

// syncDir fsyncs a directory, making the entries created, renamed or removed
// in it durable.
func syncDir(dir string) error { return fsyncPath(dir) }
