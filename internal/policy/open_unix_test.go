//go:build unix

package policy

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/readproof/readproof/adapters/sourcespec"
	"github.com/readproof/readproof/internal/fspath"
)

// readers are the ways a policy file is read, each through Open.
func readers(t *testing.T) map[string]func(path string) error {
	home := t.TempDir()
	return map[string]func(string) error{
		"Load": func(path string) error { _, err := Load(path); return err },
		"LoadCached": func(path string) error {
			_, _, err := loadCached(path, Cache{Path: filepath.Join(home, CacheFile), Build: "b", Key: keyOf(userKey)}, 0)
			return err
		},
		"AppendResource": func(path string) error {
			return AppendResource(path, Resource{URI: mustURI(t, "readproof://demo/doc"),
				Source: sourcespec.Spec{Type: "filesystem", Path: "doc.md"}, Freshness: Freshness{Strategy: RequireFresh}})
		},
		"Check": Check,
	}
}

// TestOpenRefusesNamedPipe: a named pipe where the policy file is looked
// for is refused at its open, from what the open file is, without waiting
// for a writer (O_NONBLOCK), and nothing a writer sends is read. No writer
// comes: an open that waits for one is seen asleep in the kernel's wait
// for the pipe's other end (a thread of this process in
// wait_for_partner, /proc/self/task/*/wchan), which fails the test; a
// writer is then let in, which sends a valid policy, and the reader must
// still refuse the pipe. No deadline: each reader either returns or is
// seen waiting.
func TestOpenRefusesNamedPipe(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	if !wchanShowsPipeWait(t) {
		t.Skip("no /proc/self/task/*/wchan here that names an open's wait for a named pipe's writer")
	}
	for name, read := range readers(t) {
		path := filepath.Join(t.TempDir(), DefaultFileName)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Skip("no named pipes here:", err)
		}
		done := make(chan error, 1)
		go func() { done <- read(path) }()
		var err error
	wait:
		for {
			select {
			case err = <-done:
				break wait
			default:
			}
			if openWaits() {
				t.Errorf("%s of a named pipe waited at its open for a writer", name)
				// let it go: a writer that sends a valid policy
				w, werr := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
				if werr != nil {
					t.Fatal(werr)
				}
				w.WriteString("version = 1\n")
				w.Close()
				err = <-done
				break
			}
			runtime.Gosched()
		}
		var ke *fspath.KindError
		if !errors.As(err, &ke) || !errors.Is(err, fspath.ErrNotRegular) || !strings.Contains(err.Error(), path+" is a named pipe, not a regular file") {
			t.Errorf("%s of a named pipe: %v, want it refused as a named pipe", name, err)
		}
	}
}

// openWaits reports whether a thread of this process sleeps in an open of
// a named pipe, waiting for its other end.
func openWaits() bool {
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		if w, err := os.ReadFile("/proc/self/task/" + task.Name() + "/wchan"); err == nil && strings.Contains(string(w), "wait_for_partner") {
			return true
		}
	}
	return false
}

// TestOpenReadsHandedPipe: a pipe this process holds, named by its
// descriptor (--config /dev/stdin, a shell's <(...)), is read as the
// policy it carries.
func TestOpenReadsHandedPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.WriteString("version = 1\n[defaults]\npolicy = \"allow_stale\"\nmax_age = \"1h\"\n")
		w.Close()
	}()
	path := "/dev/fd/" + strconv.Itoa(int(r.Fd()))
	if _, err := os.Stat(path); err != nil {
		t.Skip("no /dev/fd here:", err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s), a pipe handed to us: %v", path, err)
	}
	if f.Defaults.Policy != AllowStale {
		t.Fatalf("Load(%s) read %+v", path, f.Defaults)
	}
}

// TestOpenBoundsSize: a policy file over MaxFileBytes is refused before
// any of it is parsed, by every reader, naming the file and the bound; a
// pipe is read to the bound and no further.
func TestOpenBoundsSize(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for name, read := range readers(t) {
		path := filepath.Join(t.TempDir(), DefaultFileName)
		if err := os.WriteFile(path, []byte("version = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, MaxFileBytes+1); err != nil { // sparse: nothing written
			t.Fatal(err)
		}
		err := read(path)
		var pe *Error
		if !errors.As(err, &pe) || pe.File != path || !strings.Contains(pe.Msg, "more than 16 MiB") || !strings.Contains(pe.Hint, "at most 16 MiB") {
			t.Errorf("%s of a file of MaxFileBytes+1: %v, want it refused naming the bound", name, err)
		}
		if err := os.Truncate(path, MaxFileBytes); err != nil {
			t.Fatal(err)
		}
		if err := read(path); errors.As(err, &pe) && strings.Contains(pe.Msg, "more than") {
			t.Errorf("%s of a file of MaxFileBytes: %v, refused as too large", name, err)
		}
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	wrote := make(chan int64, 1)
	go func() {
		chunk := make([]byte, 1<<20)
		var n int64
		for n <= 2*MaxFileBytes {
			k, err := w.Write(chunk)
			n += int64(k)
			if err != nil {
				break
			}
		}
		w.Close()
		wrote <- n
	}()
	path := "/dev/fd/" + strconv.Itoa(int(r.Fd()))
	_, err = Load(path)
	r.Close() // ends the writer
	var pe *Error
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "is more than 16 MiB, the most") {
		t.Errorf("Load of a pipe sending more than MaxFileBytes: %v", err)
	}
	if n := <-wrote; n > MaxFileBytes+2<<20 {
		t.Errorf("%d bytes were taken from the pipe, more than the bound and the pipe's buffer", n)
	}
}
