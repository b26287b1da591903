package gitstore

import (
	"errors"
	"syscall"
	"testing"
)

// TestGitLimit: git's own "Too many open files" is its limit on open
// files met (EMFILE; "in system": ENFILE), which GitError unwraps to; the
// server's ("remote:") is not this machine's.
func TestGitLimit(t *testing.T) {
	for text, want := range map[string]error{
		"error: cannot create standard output pipe for 'git' upload-pack: Too many open files\nfatal: unable to fork": syscall.EMFILE,
		"fatal: could not open '.git/objects/pack/tmp_pack_x' for reading: Too many open files in system":             syscall.ENFILE,
		"remote: fatal: Too many open files\nfatal: the remote end hung up unexpectedly":                              nil,
		"fatal: repository not found": nil,
	} {
		err := gitLimit(text)
		ge := &GitError{Args: []string{"fetch"}, ExitCode: 128, limit: err}
		if want == nil {
			if err != nil || errors.Is(ge, syscall.EMFILE) {
				t.Errorf("%q: %v", text, err)
			}
			continue
		}
		if !errors.Is(err, want) || !errors.Is(ge, want) || !errors.Is(ge, ErrGit) {
			t.Errorf("%q: %v, want %v", text, err, want)
		}
	}
}
