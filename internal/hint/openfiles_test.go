package hint_test

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/readproof/readproof/internal/hint"
)

// TestOpenFiles: a limit on open files met, however deep it is wrapped
// and whatever hint it carried, has the one hint that names the limit and
// how to raise it; any other error has none from it.
func TestOpenFiles(t *testing.T) {
	emfile := hint.With(fmt.Errorf("update refs: %w", &fs.PathError{Op: "open", Path: "/s/objects", Err: syscall.EMFILE}), "the file system failed (dmesg may say why)")
	h, ok := hint.OpenFiles(emfile)
	if !ok || !strings.Contains(h, "limit on open files (ulimit -n") || !strings.Contains(h, "ulimit -n 4096") {
		t.Errorf("EMFILE: %q, %v", h, ok)
	}
	h, ok = hint.OpenFiles(fmt.Errorf("read: %w", syscall.ENFILE))
	if !ok || !strings.Contains(h, "the system's table of open files is full") || !strings.Contains(h, "fs.file-max") {
		t.Errorf("ENFILE: %q, %v", h, ok)
	}
	for _, err := range []error{nil, errors.New("too many open files"), &fs.PathError{Op: "open", Path: "x", Err: syscall.ENOSPC}} {
		if h, ok := hint.OpenFiles(err); ok || h != "" {
			t.Errorf("%v: %q", err, h)
		}
	}
}

// TestOfSaysOpenFiles: Of, which every reader of hints asks (the CLI's
// hint line, the MCP server's errors), gives the open files' hint for an
// error that met the limit, in place of the one it carries.
func TestOfSaysOpenFiles(t *testing.T) {
	err := hint.With(fmt.Errorf("sync: %w", &fs.PathError{Op: "open", Path: "/s/objects", Err: syscall.EMFILE}), "the file system failed (dmesg may say why)")
	if h := hint.Of(err); !strings.Contains(h, "limit on open files") || strings.Contains(h, "dmesg") {
		t.Errorf("hint.Of = %q", h)
	}
	if h := hint.Of(hint.With(errors.New("x"), "do y")); h != "do y" {
		t.Errorf("hint.Of of another error = %q", h)
	}
}

// TestOpenFilesOfChild: a limit on open files a child met (git) has a
// hint that names the child and the shell's limit, not readproof's own
// value, which the child does not have; the system's limit met by a child
// has the system's hint.
func TestOpenFilesOfChild(t *testing.T) {
	err := fmt.Errorf("fetch: %w", &hint.ChildLimitError{Program: "git", Errno: syscall.EMFILE})
	h, ok := hint.OpenFiles(hint.With(err, "check the remote's URL"))
	if !ok || !strings.HasPrefix(h, "git, which readproof runs, met its limit on open files") || strings.Contains(h, "ulimit -n:") || !errors.Is(err, syscall.EMFILE) {
		t.Errorf("EMFILE of git: %q, %v", h, ok)
	}
	err = fmt.Errorf("fetch: %w", &hint.ChildLimitError{Program: "git", Errno: syscall.ENFILE})
	if h, ok := hint.OpenFiles(err); !ok || !strings.Contains(h, "the system's table of open files is full") {
		t.Errorf("ENFILE of git: %q, %v", h, ok)
	}
}

// TestSettled: a Settled hint is given as it is, also for an error that
// met the limit on open files (it says the limit itself, through
// OpenFilesThen, with another last step than running the command again);
// an outer hint.With does not undo it.
func TestSettled(t *testing.T) {
	emfile := fmt.Errorf("publish: %w", &fs.PathError{Op: "open", Path: "/p", Err: syscall.EMFILE})
	then, ok := hint.OpenFilesThen(emfile, "check it with readproof verify")
	if !ok || !strings.HasSuffix(then, ", then check it with readproof verify") || strings.Contains(then, "run the command again") {
		t.Fatalf("OpenFilesThen = %q, %v", then, ok)
	}
	err := hint.Settled(emfile, "the store is in place: "+then)
	if h := hint.Of(fmt.Errorf("clone: %w", err)); h != "the store is in place: "+then {
		t.Errorf("Of of a settled hint = %q", h)
	}
	if !errors.Is(err, syscall.EMFILE) || hint.Settled(nil, "x") != nil {
		t.Error("Settled hides its error, or makes one of nil")
	}
}
