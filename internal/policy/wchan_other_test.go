//go:build unix && !linux

package policy

import "testing"

// wchanShowsPipeWait is false here: only Linux has /proc/self/task/*/wchan
// (wchan_linux_test.go).
func wchanShowsPipeWait(*testing.T) bool { return false }
