package adapters_test

import (
	"os"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/testproc"
)

// TestMain fails the run when a test leaves a process behind (a git daemon
// still listening, for one), and removes the template repository the git
// fixtures copy.
func TestMain(m *testing.M) {
	// the tests' ~/.ssh/config is under a HOME of their own
	gitstore.SSHHomeFromEnvForTest()
	code := testproc.Run(m)
	gitTemplate.remove()
	os.Exit(code)
}
