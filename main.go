// Command readproof records what AI agents read: stable identities,
// freshness policies, content-addressed snapshots and immutable manifests in
// a dedicated git repository, with diff, replay and verifiable evidence.
package main

import (
	"os"

	"github.com/readproof/readproof/internal/commands"
)

func main() {
	os.Exit(commands.Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
