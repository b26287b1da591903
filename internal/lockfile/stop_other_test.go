//go:build !linux

package lockfile_test

// stopSelf cannot stop the process here; the tests that use it run on
// Linux only.
func stopSelf(string) {}
