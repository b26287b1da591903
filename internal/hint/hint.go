// Package hint attaches a suggestion for the user to an error without
// changing what the error matches: errors.Is and errors.As see through it.
// One hint is its own: a limit on open files met (OpenFiles).
// The CLI prints the message on one line and the hint on the next.
package hint

import (
	"errors"
	"fmt"
	"syscall"
)

type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Unwrap() error { return h.err }
func (h *hinted) Hint() string  { return h.hint }

// With returns err carrying hint. A nil err stays nil.
func With(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &hinted{err: err, hint: hint}
}

// settled is an error whose hint Of gives as it is (Settled).
type settled struct{ hinted }

// Settled returns err carrying hint, which Of gives as it is even when err
// met a limit on open files: for a hint that says that limit itself
// (OpenFilesThen) and what to do other than run the command again (a
// clone whose store is in place). A nil err stays nil.
func Settled(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &settled{hinted{err: err, hint: hint}}
}

// Of returns the outermost hint carried by err, or "". An err that is, or
// wraps, a limit on open files met has OpenFiles' hint instead, whatever
// it carries (but a Settled one): the CLI's hint line, the MCP server's
// tool errors and the JSON errors all say that limit, and no hint blames
// what failed to open.
func Of(err error) string {
	var s *settled
	if errors.As(err, &s) {
		return s.hint
	}
	if h, ok := OpenFiles(err); ok {
		return h
	}
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

// ChildLimitError is a limit on open files that a program readproof ran
// met (stock git, which said "Too many open files" as it failed): Errno is
// EMFILE or ENFILE, which errors.Is matches. A child's limit on open files
// is not readproof's: Go raises its own soft limit to the hard one at
// start and gives a child the limit it was started with (os/exec), the
// shell's ulimit -n, so OpenFiles names no value for it.
type ChildLimitError struct {
	Program string
	Errno   syscall.Errno
}

func (e *ChildLimitError) Error() string { return e.Program + ": " + e.Errno.Error() }

// Is lets errors.Is match Errno.
func (e *ChildLimitError) Is(target error) bool { return target == e.Errno }

// OpenFiles is the hint for err when it is, or wraps, a limit on open
// files met: a program readproof ran met its own (ChildLimitError), or
// this process's (EMFILE, `ulimit -n`), named with its value where it can
// be read, or the whole system's (ENFILE); ok is false for any other
// error. The error it replaces, if any, blamed what failed to
// open (a file system, a source, the store), which is not at fault.
func OpenFiles(err error) (h string, ok bool) {
	return OpenFilesThen(err, "run the command again")
}

// OpenFilesThen is OpenFiles with then as its last step instead of "run
// the command again": for a command whose work is in place but for a step
// that met the limit, which it must not do again.
func OpenFilesThen(err error, then string) (h string, ok bool) {
	var child *ChildLimitError
	if errors.As(err, &child) && child.Errno == syscall.EMFILE {
		return fmt.Sprintf("%s, which readproof runs, met its limit on open files, not a fault of the store or the remote: it has the limit of the shell that started readproof (ulimit -n), not the higher one readproof sets for itself; raise it in that shell (ulimit -n 4096; for a service, LimitNOFILE=4096 in its unit), then %s", child.Program, then), true
	}
	switch {
	case errors.Is(err, syscall.EMFILE):
		limit := "ulimit -n"
		if n, ok := openFilesLimit(); ok {
			limit = fmt.Sprintf("ulimit -n: %d", n)
		}
		return fmt.Sprintf("readproof met this process's limit on open files (%s), not a fault of what it opened: raise it in the shell that runs readproof (ulimit -n 4096; for a service, LimitNOFILE=4096 in its unit), then %s", limit, then), true
	case errors.Is(err, syscall.ENFILE):
		return "the system's table of open files is full (all processes together; fs.file-max on Linux, kern.maxfiles on macOS), not a fault of what readproof opened: close programs that hold many files, or raise the limit (sysctl -w fs.file-max=N as root), then " + then, true
	}
	return "", false
}
