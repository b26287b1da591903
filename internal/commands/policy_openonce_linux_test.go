package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestPolicyOpenedOnce (session 31, opsmall): a command opens the policy
// file --config names once. It was opened by the check of what it is (a
// regular file, not a named pipe or a device) and again to be read, so
// the file read could be another than the file judged; resource add
// opened it a third time, under its lock, to append. The opens of the file
// are counted by the kernel (inotify's IN_OPEN on the file).
func TestPolicyOpenedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, st := filepath.Join(dir, "readproof.toml"), filepath.Join(dir, ".readproof")
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("a document\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	main := func(args ...string) {
		t.Helper()
		var out, errb bytes.Buffer
		args = append([]string{"readproof", "--config", cfg, "--store", st}, args...)
		if code := Main(args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errb.String())
		}
	}
	main("init")
	for _, args := range [][]string{
		{"resource", "add", "readproof://t/a", "--source-type", "filesystem", "--path", "a.md"},
		{"resource", "list"},
		{"get", "readproof://t/a"},
	} {
		if n := opensOf(t, cfg, func() { main(args...) }); n != 1 {
			t.Errorf("readproof %s: the policy file was opened %d times, want once", strings.Join(args, " "), n)
		}
	}
}

// opensOf is how many times the file at path was opened while do ran.
func opensOf(t *testing.T, path string, do func()) int {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skip("inotify:", err)
	}
	defer syscall.Close(fd)
	// reads and closes watched too, and the file's directory: inotify
	// merges an event with the one before it in the queue when they are
	// the same, and two opens in a row would count as one (an open, then
	// another while the first is held, with no read between them, did:
	// init's two opens of a --config file counted as one). The directory's
	// event for each open comes between the file's; only the file's count.
	if _, err := syscall.InotifyAddWatch(fd, filepath.Dir(path), syscall.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	wd, err := syscall.InotifyAddWatch(fd, path, syscall.IN_OPEN|syscall.IN_ACCESS|syscall.IN_CLOSE)
	if err != nil {
		t.Fatal(err)
	}
	do()
	n := 0
	buf := make([]byte, 64<<10)
	for {
		k, err := syscall.Read(fd, buf)
		if err == syscall.EAGAIN || k <= 0 {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= k; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			if ev.Wd == int32(wd) && ev.Mask&syscall.IN_OPEN != 0 {
				n++
			}
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
	}
}
