package commands

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/readproof/readproof/internal/testproc"
)

// TestMain runs this test binary as the readproof CLI when it is started
// under the name readproof (readproofCmd in otel_test.go starts it through
// a symlink of that name), and otherwise runs the tests, failing the run if
// a test leaves a process behind.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "readproof" {
		os.Exit(Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(testproc.Run(m))
}
