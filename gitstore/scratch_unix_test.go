//go:build unix

package gitstore

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKilledFetchViewIsSwept: a pull killed while its fetch view exists
// leaves the view inside the store, never in $TMPDIR (where nothing would
// ever remove it), and the next write's sweep removes it once it is older
// than the stale-lock age; a view whose process is alive (it holds the
// view's flock) is kept however old, and removed by its own cleanup.
func TestKilledFetchViewIsSwept(t *testing.T) {
	t.Parallel()
	s, tr := newTransport(t)
	scratch := t.TempDir() // the helper's TMPDIR
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GITSTORE_HELPER=fetchview", "GITSTORE_PATH="+s.Path(), "TMPDIR="+scratch)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err != nil {
		t.Fatalf("the helper printed no view: %v", err)
	}
	killed := strings.TrimSpace(line)
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Fatalf("a killed fetch left %s in TMPDIR, where no sweep finds it", left[0].Name())
	}
	if filepath.Dir(killed) != s.Path() || !strings.HasPrefix(filepath.Base(killed), fetchViewPrefix) {
		t.Fatalf("fetch view %s is not a %s* directory of the store %s", killed, fetchViewPrefix, s.Path())
	}
	if !exists(killed) {
		t.Fatalf("the killed helper's view %s is gone before any sweep: the test proves nothing", killed)
	}
	live, _, cleanup, err := tr.fetchView()
	if err != nil {
		t.Fatal(err)
	}
	// a probe's scratch repository a killed pull left (nobody holds its
	// flock) goes the same way
	probe := filepath.Join(s.Path(), probePrefix+"left")
	if err := os.MkdirAll(filepath.Join(probe, "objects"), 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, d := range []string{killed, live.dir, probe} {
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
	}
	w, err := OpenWithOptions(s.Path(), Options{StaleLockAge: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.PutBlob([]byte("the next write\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if exists(killed) {
		t.Errorf("the killed pull's fetch view %s survived the next write's sweep", killed)
	}
	if exists(probe) {
		t.Errorf("the killed pull's probe repository %s survived the next write's sweep", probe)
	}
	if !exists(live.dir) {
		t.Fatalf("the sweep removed the fetch view %s of a live process", live.dir)
	}
	cleanup()
	if exists(live.dir) {
		t.Errorf("fetch view %s left after its cleanup", live.dir)
	}
}

// TestFetchViewSweepKeepsYoungView: a view younger than the stale-lock age
// is kept even with its flock free (the moment between its creation and
// its lock).
func TestFetchViewSweepKeepsYoungView(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	young := filepath.Join(s.Path(), fetchViewPrefix+"young")
	if err := os.Mkdir(young, 0o700); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWithOptions(s.Path(), Options{StaleLockAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.PutBlob([]byte("a write\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if !exists(young) {
		t.Fatal("a fetch view younger than the stale-lock age was swept")
	}
}
