//go:build !linux

package gitstore

// stopBeforeRename cannot stop the process here (no tgkill); the tests
// that use it run on Linux only.
func stopBeforeRename(string) {}

// stopAfterCreate cannot stop the process here either.
func stopAfterCreate(string) { afterCreate = nil }
