//go:build !linux

package main

import (
	"fmt"
	"os"
)

// peakRSSMain: the peak memory of a process tree is read from Linux's
// rusage only (process_bigobject_test.go).
func peakRSSMain() {
	fmt.Fprintln(os.Stderr, "peakrss: Linux only")
	os.Exit(2)
}
