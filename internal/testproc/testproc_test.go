package testproc

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// An orphan (the shell that started it has exited) is still found: the
// test process adopted it.
func TestLeftoversFindsOrphans(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	if err := adoptOrphans(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	// sh prints $! as soon as it has forked: the child may not have
	// exec'd sleep yet (its command line is then sh's, or empty while it
	// is being replaced); wait until it has, as a left-over process would
	// have long before a test ends
	for i := 0; i < 500; i++ {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil || strings.HasPrefix(string(b), "sleep\x00") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	left, err := Leftovers()
	if err != nil {
		t.Fatal(err)
	}
	var found []Proc
	for _, p := range left {
		if p.PID == pid {
			found = append(found, p)
		}
	}
	kill(found)
	if len(found) != 1 || !strings.HasPrefix(found[0].Cmdline, "sleep 60") {
		t.Fatalf("orphan %d not listed: %+v", pid, left)
	}
	if left, _ := Leftovers(); len(left) != 0 {
		t.Fatalf("after kill: %+v", left)
	}
}

func TestMain(m *testing.M) { os.Exit(Run(m)) }

// MemoryScratch leaves an explicit TMPDIR alone; without one, on Linux with
// /dev/shm on tmpfs, it makes a fresh directory there.
func TestMemoryScratch(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	if dir, ok := MemoryScratch(); ok {
		os.RemoveAll(dir)
		t.Fatalf("TMPDIR set: MemoryScratch made %s", dir)
	}
	os.Unsetenv("TMPDIR") // t.Setenv restores it
	dir, ok := MemoryScratch()
	if !memoryFS(memoryDir) {
		if ok {
			t.Fatalf("no memory filesystem, yet MemoryScratch made %s", dir)
		}
		t.Skip("no memory filesystem here")
	}
	if !ok {
		t.Fatal("TMPDIR unset and /dev/shm is tmpfs: MemoryScratch made nothing")
	}
	defer os.RemoveAll(dir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 || !strings.HasPrefix(dir, memoryDir+"/readproof-test-") {
		t.Fatalf("MemoryScratch made %q (%v)", dir, err)
	}
}
