package gitstore

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/readproof/readproof/internal/hint"
)

// TestGitErrorUnwrapsCause: a git command that could not start because
// the limit on open files was met (its pipes, its fork) matches ErrGit and
// its cause, so the command's hint names the limit; one git ran and that
// failed still matches ErrGit alone (its exit status is not seen).
func TestGitErrorUnwrapsCause(t *testing.T) {
	ge := &GitError{Args: []string{"fetch"}, ExitCode: -1, Err: os.NewSyscallError("pipe2", syscall.EMFILE)}
	err := fmt.Errorf("remote origin: %w", ge)
	if !errors.Is(err, ErrGit) || !errors.Is(err, syscall.EMFILE) {
		t.Errorf("errors.Is(%v): ErrGit %v, EMFILE %v; want both", err, errors.Is(err, ErrGit), errors.Is(err, syscall.EMFILE))
	}
	if h, ok := hint.OpenFiles(err); !ok || h != hint.Of(err) {
		t.Errorf("hint of %v: %q, %v", err, hint.Of(err), ok)
	}
	exit := &GitError{Args: []string{"fetch"}, ExitCode: 128, Err: &exec.ExitError{ProcessState: &os.ProcessState{}}}
	var ee *exec.ExitError
	if !errors.Is(exit, ErrGit) || errors.Is(exit, syscall.EMFILE) || errors.As(exit, &ee) {
		t.Errorf("a git that ran and failed: ErrGit %v, EMFILE %v, exit status seen %v", errors.Is(exit, ErrGit), errors.Is(exit, syscall.EMFILE), ee != nil)
	}
	if !errors.Is(&GitError{Args: []string{"fetch"}}, ErrGit) {
		t.Error("a GitError without a cause does not match ErrGit")
	}
}
