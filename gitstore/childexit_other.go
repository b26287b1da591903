//go:build !linux

package gitstore

import "os/exec"

// endsWithUs does nothing here (childexit_linux.go: Linux kills a git
// whose readproof ended).
func endsWithUs(*exec.Cmd) {}

// killsItsChildren leaves a cancelled cmd to exec, which kills it alone
// (childexit_linux.go).
func killsItsChildren(*exec.Cmd) {}
