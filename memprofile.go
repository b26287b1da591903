//go:build memprofile

package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// writeMemProfile writes the allocation profile of this one command to path
// (READPROOF_MEMPROFILE=FILE; `go tool pprof -sample_index=alloc_space
// readproof FILE`): a debugging aid like READPROOF_CPUPROFILE, not a
// feature. It reports a failure as a warning. Only a binary built with
// `-tags memprofile` has it (memprofile_off.go says why).
func writeMemProfile(path string) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "readproof: warning: READPROOF_MEMPROFILE: %v\n", err)
	}
}
