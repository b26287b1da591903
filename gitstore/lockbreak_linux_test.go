package gitstore

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests in this file stop a writer (SIGSTOP) at the worst moment of a
// ref update, after its last check that its lock is still its own and
// before it renames the lock into place (beforeRename), and let another
// writer find that lock old. Before session 28 the other writer took the
// lock as left by a crashed process (it was older than the stale-lock
// age): it broke it and took a fresh one, and the stopped writer, once
// continued, renamed the other's lock file into place and reported an
// update that never landed.

// child is a helper process whose stdout lines arrive on lines.
type child struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr bytes.Buffer
	out    []string // every line read so far
}

func startChild(t *testing.T, role string, env ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^$"), lines: make(chan string, 1024)}
	c.cmd.Env = append(os.Environ(), append([]string{"GITSTORE_HELPER=" + role}, env...)...)
	c.cmd.Stderr = &c.stderr
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			c.cmd.Process.Kill()
			c.cmd.Wait()
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c
}

// next is the child's next line, "" once its stdout is closed.
func (c *child) next(t *testing.T) string {
	t.Helper()
	select {
	case line, ok := <-c.lines:
		if ok {
			c.out = append(c.out, line)
		}
		return line
	case <-time.After(60 * time.Second):
		t.Fatalf("helper %d said nothing for a minute; stderr:\n%s", c.cmd.Process.Pid, c.stderr.String())
		return ""
	}
}

// stopped waits until the child is stopped (state T in /proc).
func (c *child) stopped(t *testing.T) {
	t.Helper()
	stat := filepath.Join("/proc", strconv.Itoa(c.cmd.Process.Pid), "stat")
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatal(err)
		}
		// pid (comm) state ...: comm may hold spaces, not ")"
		if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 0 && f[0] == "T" {
			return
		}
	}
	t.Fatalf("helper %d did not stop", c.cmd.Process.Pid)
}

func (c *child) resume(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// finish reads the rest of the child's output and waits for its exit.
func (c *child) finish(t *testing.T) error {
	t.Helper()
	for c.next(t) != "" {
	}
	return c.cmd.Wait()
}

func (c *child) ok() []OID { return okIDs(strings.Join(c.out, "\n")) }

// checkLanded fails unless every update the children reported is in the
// first-parent chain of ref, and git fsck --strict passes.
func checkLanded(t *testing.T, s Store, ref string, children ...*child) {
	t.Helper()
	tip, err := s.Ref(ref)
	if err != nil {
		t.Fatal(err)
	}
	chain := chainSet(t, s, tip)
	for _, c := range children {
		for _, id := range c.ok() {
			if !chain[id] {
				t.Errorf("helper %d reported its update %s, which is not in %s (tip %s): the update was lost", c.cmd.Process.Pid, id, ref, tip)
			}
		}
	}
	Fsck(t, s.Path())
}

// TestStoppedWriterKeepsItsLock: a writer stopped, lock held, for longer
// than the stale-lock age keeps its lock, and its update lands once it is
// continued; the writer that found the lock waits and fails with
// ErrLocked, saying that a live process holds it.
func TestStoppedWriterKeepsItsLock(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	s := NewTestStore(t)
	const ref = "refs/heads/chain"
	mustUpdate(t, s, RefUpdate{Name: ref, New: mkCommit(t, s, "root")})
	env := []string{"GITSTORE_PATH=" + s.Path(), "GITSTORE_REF=" + ref, "GITSTORE_PAUSE=1"}

	a := startChild(t, "oneupdate", env...)
	lock, ok := strings.CutPrefix(a.next(t), "paused ")
	if !ok {
		t.Fatalf("writer did not reach its rename: %v\n%s", a.out, a.stderr.String())
	}
	a.stopped(t)
	held, err := os.Lstat(lock)
	if err != nil {
		t.Fatal(err)
	}
	ageLocks(t, s.Path(), time.Hour) // as if it had been stopped an hour

	// b gives up after half a second, or (the defect) breaks a's lock,
	// takes its own and stops before its own rename.
	b := startChild(t, "oneupdate", append(env, "GITSTORE_STALE=1s", "GITSTORE_TIMEOUT=500ms")...)
	bPaused := strings.HasPrefix(b.next(t), "paused ")
	if bPaused {
		b.stopped(t)
	}
	if now, err := os.Lstat(lock); err != nil || !os.SameFile(now, held) {
		t.Errorf("the stopped writer's lock %s was taken from it (%v)", lock, err)
	}
	a.resume(t)
	if err := a.finish(t); err != nil || len(a.ok()) != 1 {
		t.Errorf("the stopped writer, continued: %v, output %q\n%s", err, a.out, a.stderr.String())
	}
	if bPaused {
		b.resume(t)
	}
	berr := b.finish(t)
	if len(b.ok()) != 0 || berr == nil {
		t.Errorf("the other writer succeeded (%q) while the stopped one held the lock", b.out)
	}
	if msg := b.stderr.String(); !strings.Contains(msg, "locked") || !strings.Contains(msg, "by a live process") || strings.Contains(msg, "rm ") {
		t.Errorf("the other writer's error:\n%s\nwant ErrLocked saying a live process holds the lock, offering no rm", msg)
	}
	checkLanded(t, s, ref, a, b)
	assertNoLocks(t, s.Path())
}

// TestKilledWriterLockRecovered: a writer killed while it holds a ref lock
// leaves the lock file; the next writer takes it over once it is older
// than the stale-lock age (here 1 s), with no rm.
func TestKilledWriterLockRecovered(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	s := NewTestStore(t)
	const ref = "refs/heads/chain"
	mustUpdate(t, s, RefUpdate{Name: ref, New: mkCommit(t, s, "root")})
	env := []string{"GITSTORE_PATH=" + s.Path(), "GITSTORE_REF=" + ref}

	a := startChild(t, "oneupdate", append(env, "GITSTORE_PAUSE=1")...)
	lock, ok := strings.CutPrefix(a.next(t), "paused ")
	if !ok {
		t.Fatalf("writer did not reach its rename: %v\n%s", a.out, a.stderr.String())
	}
	a.stopped(t)
	a.cmd.Process.Kill()
	a.finish(t)
	if _, err := os.Lstat(lock); err != nil {
		t.Fatalf("the killed writer left no lock (%v): the test proves nothing", err)
	}
	b := startChild(t, "oneupdate", append(env, "GITSTORE_STALE=1s", "GITSTORE_TIMEOUT=10s")...)
	if err := b.finish(t); err != nil || len(b.ok()) != 1 {
		t.Fatalf("the next writer after a killed one: %v, output %q\n%s", err, b.out, b.stderr.String())
	}
	if tip, _ := s.Ref(ref); tip != b.ok()[0] {
		t.Errorf("%s is %s, want the next writer's %s", ref, tip, b.ok()[0])
	}
	checkLanded(t, s, ref, b)
	assertNoLocks(t, s.Path())
}

// TestStoppedWritersLoseNothing: two writers append to one ref at once,
// with a stale-lock age of 100 ms. One stops before each of its renames;
// while it is stopped another writer starts an append and finds its lock
// held, and the stopped one is continued four stale-lock ages later.
// Every append reports (retried on a conflict), and every reported one is
// in the chain.
func TestStoppedWritersLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	s := NewTestStore(t)
	const ref = "refs/heads/chain"
	mustUpdate(t, s, RefUpdate{Name: ref, New: mkCommit(t, s, "root")})
	const stale = 100 * time.Millisecond
	env := []string{"GITSTORE_PATH=" + s.Path(), "GITSTORE_REF=" + ref, "GITSTORE_STALE=" + stale.String()}
	const stops = 5
	a := startChild(t, "pausingappend", append(env, "GITSTORE_PAUSE=1", "GITSTORE_N="+strconv.Itoa(stops))...)
	all := []*child{a}
	for line := a.next(t); line != ""; line = a.next(t) {
		if !strings.HasPrefix(line, "paused ") {
			continue
		}
		a.stopped(t)
		b := startChild(t, "pausingappend", append(env, "GITSTORE_N=1")...)
		all = append(all, b)
		// b waits for the lock, or (the defect) has broken it already
		for l := b.next(t); l != "" && !strings.HasPrefix(l, "waiting "); l = b.next(t) {
		}
		time.Sleep(4 * stale)
		a.resume(t)
	}
	if err := a.cmd.Wait(); err != nil {
		t.Errorf("the writer that stops: %v\n%s", err, a.stderr.String())
	}
	// each other writer is done once the stopping one is: it may have
	// waited for the lock through several of its stops
	for _, b := range all[1:] {
		if err := b.finish(t); err != nil {
			t.Errorf("another writer: %v\n%s", err, b.stderr.String())
		}
	}
	if len(all) != stops+1 {
		t.Errorf("the writer stopped %d times, want %d", len(all)-1, stops)
	}
	reported := 0
	for _, c := range all {
		reported += len(c.ok())
	}
	if want := 2 * stops; reported != want {
		t.Errorf("%d appends reported, want %d", reported, want)
	}
	checkLanded(t, s, ref, all...)
	if got := git(t, s.Path(), "rev-list", "--count", ref); got != strconv.Itoa(reported+1) {
		t.Errorf("git rev-list --count %s = %s, want the %d appends and the root", ref, got, reported)
	}
	assertNoLocks(t, s.Path())
}

// TestGitBesideStoppedWriter: stock git, run beside a readproof stopped
// with a ref lock held (and flocked), neither waits on the flock nor takes
// the lock: git update-ref of that ref fails at once ("File exists"), as
// beside any held lock, and touches nothing; git pack-refs and git gc run
// to the end and leave the lock alone. The stopped writer, continued,
// lands its update.
func TestGitBesideStoppedWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	s := NewTestStore(t)
	const ref = "refs/heads/chain"
	root := mkCommit(t, s, "root")
	mustUpdate(t, s, RefUpdate{Name: ref, New: root}, RefUpdate{Name: "refs/heads/other", New: root})
	a := startChild(t, "oneupdate", "GITSTORE_PATH="+s.Path(), "GITSTORE_REF="+ref, "GITSTORE_PAUSE=1")
	lock, ok := strings.CutPrefix(a.next(t), "paused ")
	if !ok {
		t.Fatalf("writer did not reach its rename: %v\n%s", a.out, a.stderr.String())
	}
	a.stopped(t)
	ageLocks(t, s.Path(), time.Hour)
	held := mustLstat(t, lock)

	other := mkCommit(t, s, "git's", root)
	cmd := GitCommand(t, s.Path(), "update-ref", ref, string(other), string(root))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "File exists") {
		t.Errorf("git update-ref of a ref whose lock a stopped readproof holds: %v\n%s\nwant it refused: the lock exists", err, out)
	}
	git(t, s.Path(), "pack-refs", "--all")
	git(t, s.Path(), "gc", "--quiet")
	if now, err := os.Lstat(lock); err != nil || !os.SameFile(now, held) || !now.ModTime().Equal(held.ModTime()) {
		t.Errorf("stock git moved the stopped writer's lock %s (%v)", lock, err)
	}
	a.resume(t)
	if err := a.finish(t); err != nil || len(a.ok()) != 1 {
		t.Fatalf("the stopped writer, continued: %v, output %q\n%s", err, a.out, a.stderr.String())
	}
	if tip, _ := s.Ref(ref); tip != a.ok()[0] {
		t.Errorf("%s is %s, want the continued writer's %s", ref, tip, a.ok()[0])
	}
	checkLanded(t, s, ref, a)
	assertNoLocks(t, s.Path())
}

// TestStoppedBeforeItsFlock: a writer stopped between the create of its
// ref lock and its flock, for longer than the stale-lock age, loses the
// lock to a second writer, which stops in turn before its rename. The
// first, continued, finds its file gone from the path once it has the
// flock and waits for the second's lock (before the check it took the
// second's lock file for its own and renamed it into place, reporting its
// own update, which never landed). Once the second is continued, every
// update reported is in the chain.
func TestStoppedBeforeItsFlock(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	s := NewTestStore(t)
	const ref = "refs/heads/chain"
	mustUpdate(t, s, RefUpdate{Name: ref, New: mkCommit(t, s, "root")})
	env := []string{"GITSTORE_PATH=" + s.Path(), "GITSTORE_REF=" + ref}
	a := startChild(t, "oneupdate", append(env, "GITSTORE_STOPCREATE=1")...)
	lock, ok := strings.CutPrefix(a.next(t), "created ")
	if !ok || !strings.HasSuffix(lock, "chain.lock") {
		t.Fatalf("writer did not stop after its create: %v\n%s", a.out, a.stderr.String())
	}
	a.stopped(t)
	ageLocks(t, s.Path(), time.Hour)
	b := startChild(t, "oneupdate", append(env, "GITSTORE_PAUSE=1", "GITSTORE_STALE=1s")...)
	if !strings.HasPrefix(b.next(t), "paused ") {
		t.Fatalf("the second writer did not take the lock over: %v\n%s", b.out, b.stderr.String())
	}
	b.stopped(t)
	a.resume(t)
	// a waits for b's lock (or, the defect, renames it into place and
	// exits): give it a moment to do either
	exited := make(chan struct{})
	go func() {
		for l := range a.lines {
			a.out = append(a.out, l)
		}
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(2 * time.Second):
	}
	b.resume(t)
	<-exited
	a.cmd.Wait()
	if err := b.finish(t); err != nil || len(b.ok()) != 1 {
		t.Errorf("the second writer: %v, output %q\n%s", err, b.out, b.stderr.String())
	}
	checkLanded(t, s, ref, a, b)
	assertNoLocks(t, s.Path())
}
