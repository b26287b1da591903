// Command readproof records what AI agents read: stable identities,
// freshness policies, content-addressed snapshots and immutable manifests in
// a dedicated git repository, with diff, replay and verifiable evidence.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/readproof/readproof/internal/commands"
)

func main() {
	os.Exit(run())
}

func run() int {
	// READPROOF_CPUPROFILE=FILE writes a CPU profile of this one command to
	// FILE (`go tool pprof readproof FILE`): a debugging aid for measuring
	// the CLI as a user runs it (bench/README.md), not a feature.
	if path := os.Getenv("READPROOF_CPUPROFILE"); path != "" {
		if stop, err := startCPUProfile(path); err != nil {
			fmt.Fprintf(os.Stderr, "readproof: warning: READPROOF_CPUPROFILE: %v\n", err)
		} else {
			defer stop()
		}
	}
	if path := os.Getenv("READPROOF_MEMPROFILE"); path != "" {
		defer writeMemProfile(path)
	}
	return commands.Main(os.Args, os.Stdin, os.Stdout, os.Stderr)
}

func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
