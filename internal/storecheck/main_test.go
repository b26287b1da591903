package storecheck_test

import (
	"os"
	"testing"

	"github.com/readproof/readproof/internal/testproc"
)

// TestMain fails the run if a test leaves a process behind, and puts the
// tests' files on a memory filesystem when TMPDIR is unset (testproc.Run);
// then it removes the store healthy copies.
func TestMain(m *testing.M) {
	code := testproc.Run(m)
	if healthyTemplate.dir != "" {
		os.RemoveAll(healthyTemplate.dir)
	}
	os.Exit(code)
}
