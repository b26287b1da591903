//go:build !memprofile

package main

import (
	"fmt"
	"os"
)

// writeMemProfile, in a binary built without `-tags memprofile`, says how to
// get the allocation profile. Such a binary does not link runtime.MemProfile,
// so the linker turns the runtime's allocation sampling off before the first
// package initialisation: with it linked, every process walks the stack of
// an allocation about every 512 KiB, about 1% of a one-document `run --id`
// or `get` (docs/startup.md, session 7).
func writeMemProfile(string) {
	fmt.Fprintln(os.Stderr, "readproof: warning: READPROOF_MEMPROFILE: this binary has no allocation profile; build it with `go build -tags memprofile .`")
}
