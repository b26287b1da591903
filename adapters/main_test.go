package adapters_test

import (
	"os"
	"testing"

	"github.com/readproof/readproof/internal/testproc"
)

// TestMain fails the run when a test leaves a process behind (a git daemon
// still listening, for one).
func TestMain(m *testing.M) { os.Exit(testproc.Run(m)) }
