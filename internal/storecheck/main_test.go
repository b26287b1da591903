package storecheck_test

import (
	"os"
	"testing"

	"github.com/readproof/readproof/internal/testproc"
)

// TestMain fails the run if a test leaves a process behind, and puts the
// tests' files on a memory filesystem when TMPDIR is unset (testproc.Run).
func TestMain(m *testing.M) { os.Exit(testproc.Run(m)) }
