package lockfile_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/lockfile"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/internal/text"
)

// childEnv makes the test binary a contender for a lock (TestTwoProcesses):
// its value is the directory holding the lock and the counter it guards.
const childEnv = "READPROOF_LOCKFILE_TEST_CHILD"

// holdEnv makes the test binary a holder of the lock file it names
// (TestStoppedHolderKeepsItsLock): it takes the lock, says "held", and
// releases it once its stdin is closed.
const holdEnv = "READPROOF_LOCKFILE_TEST_HOLD"

func hold(lock string) error {
	o := wide
	if os.Getenv(holdEnv+"_STOP") != "" {
		// stopped between its create and its flock; once continued, it
		// waits a little and fails
		lockfile.AfterCreate(stopSelf)
		o.Timeout, o.StaleAge = 300*time.Millisecond, time.Second
	}
	l, err := lockfile.Acquire(lock, o)
	if err != nil {
		return err
	}
	fmt.Println("held")
	io.Copy(io.Discard, os.Stdin)
	return l.Release()
}

// TestMain runs a contender when asked, and otherwise the tests, failing
// the run if a test leaves a process behind (testproc.Run).
func TestMain(m *testing.M) {
	if lock := os.Getenv(holdEnv); lock != "" {
		if err := hold(lock); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if dir := os.Getenv(childEnv); dir != "" {
		rounds, _ := strconv.Atoi(os.Getenv(childEnv + "_ROUNDS"))
		for { // start with the other contender
			if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if err := contend(dir, rounds, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testproc.Run(m))
}

// wide is a wait long enough that no test here reaches it unless the lock
// is wrong: the tests assert what happens, never how long it takes.
var wide = lockfile.Options{Timeout: time.Minute, StaleAge: time.Hour, Holder: "another test", Task: "counting"}

// contend takes dir/counter.lock rounds times and, holding it, adds one to
// dir/counter by reading and rewriting it: an update lost to a second
// holder shows in the final count. It also appends its process id to
// dir/log. inside, when set, counts the holders of this process.
func contend(dir string, rounds int, inside *atomic.Int32) error {
	counter := filepath.Join(dir, "counter")
	for range rounds {
		l, err := lockfile.Acquire(counter+".lock", wide)
		if err != nil {
			return err
		}
		if inside != nil {
			if n := inside.Add(1); n != 1 {
				return fmt.Errorf("%d holders of one lock at once", n)
			}
		}
		data, err := os.ReadFile(counter)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		n, _ := strconv.Atoi(string(data))
		runtime.Gosched() // give a second holder, if there were one, its turn
		if err := os.WriteFile(counter, []byte(strconv.Itoa(n+1)), 0o600); err != nil {
			return err
		}
		log, err := os.OpenFile(filepath.Join(dir, "log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		fmt.Fprintln(log, os.Getpid())
		if err := log.Close(); err != nil {
			return err
		}
		if inside != nil {
			inside.Add(-1)
		}
		if err := l.Release(); err != nil {
			return err
		}
		// work outside the lock, as a process between two commands: the
		// other contender, waking, finds the lock free
		time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
	}
	return nil
}

func count(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "counter"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(string(data))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOneHolderAtATime: goroutines, each opening the lock file for itself,
// contend for one lock many times; never two hold it at once, no update is
// lost, and no lock file is left behind.
func TestOneHolderAtATime(t *testing.T) {
	dir := t.TempDir()
	const workers, rounds = 4, 300
	var inside atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() { errs <- contend(dir, rounds, &inside) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, dir); n != workers*rounds {
		t.Errorf("counter %d after %d locked increments", n, workers*rounds)
	}
	leftovers(t, dir, "counter", "log")
}

// TestTwoProcesses: two processes (this test binary, run again as a
// contender) take one lock in turn many times; no update is lost.
func TestTwoProcesses(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	const procs, rounds = 2, 300
	cmds := make([]*exec.Cmd, procs)
	outs := make([]strings.Builder, procs)
	for i := range cmds {
		cmds[i] = exec.Command(exe, "-test.run=^$")
		cmds[i].Env = append(os.Environ(), childEnv+"="+dir, childEnv+"_ROUNDS="+strconv.Itoa(rounds))
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("contender %d: %v\n%s", i, err, outs[i].String())
		}
	}
	if n := count(t, dir); n != procs*rounds {
		t.Errorf("counter %d after %d locked increments by %d processes", n, procs*rounds, procs)
	}
	data, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	turns := 0
	lines := strings.Fields(string(data))
	for i := 1; i < len(lines); i++ {
		if lines[i] != lines[i-1] {
			turns++
		}
	}
	if turns < 2 {
		t.Fatalf("the contenders took the lock in %d turns: they never contended, and the test proves nothing", turns+1)
	}
	t.Logf("%d increments in %d turns", len(lines), turns+1)
	leftovers(t, dir, "counter", "go", "log")
}

// TestStaleLockTakenOverByOne: a lock left by a killed process (its time
// an hour back) is judged stale by several waiters at once (each waits, once
// it has, for all the others to have judged it too); exactly one of them gets
// in, and holding the lock keeps the others out until they give up. Round
// after round, as the race is won differently each time.
func TestStaleLockTakenOverByOne(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "f.lock")
	const waiters, rounds = 6, 30
	for round := range rounds {
		if err := os.WriteFile(lock, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(lock, old, old); err != nil {
			t.Fatal(err)
		}
		// Every waiter judges the lock stale before any takes it over: none
		// can take it over before all have arrived, so each finds it there.
		var lineUp sync.WaitGroup
		lineUp.Add(waiters)
		start := make(chan struct{})
		var wg sync.WaitGroup
		held := make(chan *lockfile.Lock, waiters)
		errs := make(chan error, waiters)
		for range waiters {
			wg.Go(func() {
				var once sync.Once
				o := lockfile.WithJudged(lockfile.Options{Timeout: 20 * time.Millisecond, StaleAge: time.Minute}, func() {
					once.Do(func() { lineUp.Done(); lineUp.Wait() })
				})
				<-start
				l, err := lockfile.Acquire(lock, o)
				if err != nil {
					errs <- err
					return
				}
				held <- l // kept until every waiter is done
			})
		}
		close(start)
		wg.Wait()
		close(held)
		close(errs)
		for err := range errs {
			if !errors.Is(err, lockfile.ErrLocked) {
				t.Fatalf("round %d: a waiter failed with %v, want ErrLocked", round, err)
			}
		}
		var got []*lockfile.Lock
		for l := range held {
			got = append(got, l)
		}
		if len(got) != 1 {
			t.Fatalf("round %d: %d of %d waiters hold the lock taken over from a killed process, want exactly one", round, len(got), waiters)
		}
		if err := got[0].Release(); err != nil {
			t.Fatal(err)
		}
		leftovers(t, dir)
	}
}

// TestStaleBreakLock: a waiter killed while it took over a stale lock
// leaves its break lock; neither is then taken over (removing an old break
// lock could remove a live one another waiter had just made, and both would
// get in), and the timeout's error says so, with the rm of both, quoted for
// a shell; both files are left as they were.
func TestStaleBreakLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "it's here")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "readproof.toml.lock")
	brk := filepath.Join(dir, "readproof.toml.break.lock")
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{lock, brk} {
		if err := os.WriteFile(name, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(name, old, old); err != nil {
			t.Fatal(err)
		}
	}
	_, err := lockfile.Acquire(lock, lockfile.Options{Timeout: 50 * time.Millisecond, StaleAge: time.Minute})
	var h interface{ Hint() string }
	if !errors.Is(err, lockfile.ErrLocked) || !errors.As(err, &h) || !strings.Contains(h.Hint(), "rm "+text.ShellArg(brk)+" "+text.ShellArg(lock)) {
		t.Fatalf("a stale lock and a stale break lock: %v, want ErrLocked with a hint removing both", err)
	}
	for _, name := range []string{lock, brk} {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("%s: %v, want it left in place", name, err)
		}
	}
}

// TestHeldLockTimesOut: a lock that never frees ends the wait with
// ErrLocked, an error naming the lock file and a hint with the command
// that removes it, quoted for a shell; the lock is left as it was.
func TestHeldLockTimesOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "it's my dir")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "readproof.toml.lock")
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(lock)
	if err != nil {
		t.Fatal(err)
	}
	o := lockfile.Options{Timeout: 30 * time.Millisecond, StaleAge: time.Hour, Holder: "another readproof", Task: "changing the policy file"}
	quoted := text.ShellArg(lock)
	if quoted == lock {
		t.Fatalf("the test's path %s needs no quoting: it proves nothing", lock)
	}
	for name, take := range map[string]func() error{
		"Acquire": func() error { _, err := lockfile.Acquire(lock, o); return err },
		"Probe":   func() error { return lockfile.Probe(lock, o) },
	} {
		err := take()
		if !errors.Is(err, lockfile.ErrLocked) {
			t.Fatalf("%s of a held lock: %v, want ErrLocked", name, err)
		}
		if !strings.Contains(err.Error(), lock) {
			t.Errorf("%s: error %q does not name the lock file", name, err)
		}
		h := hint.Of(err)
		if !strings.HasSuffix(h, "rm "+quoted) || !strings.HasPrefix(h, "another readproof is changing the policy file: ") {
			t.Errorf("%s: hint %q, want who holds it and the command that removes it, ending in rm %s", name, h, quoted)
		}
	}
	after, err := os.Stat(lock)
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("the held lock was touched: %v", err)
	}
}

// TestReadOnlyDirectory: a lock file whose directory takes no new files (a
// read-only file system as root, no write permission otherwise) fails at
// once with an error naming the lock file and a hint, whether the lock is
// free or left stale by a killed process: it is not waited for until the
// deadline, which only another process's lock deserves.
func TestReadOnlyDirectory(t *testing.T) {
	var dir string
	var readOnly func()
	if os.Geteuid() == 0 { // permission bits do not stop root
		dir = testproc.SmallTmpfs(t, "1m")
		readOnly = func() {
			if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
				t.Skipf("cannot remount the tmpfs read-only: %v: %s", err, out)
			}
		}
	} else {
		dir = t.TempDir()
		readOnly = func() {
			if err := os.Chmod(dir, 0o555); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
		}
	}
	free, stale := filepath.Join(dir, "a.lock"), filepath.Join(dir, "b.lock")
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	readOnly()
	o := lockfile.Options{Timeout: 10 * time.Second, StaleAge: time.Minute}
	for _, lock := range []string{free, stale} {
		_, err := lockfile.Acquire(lock, o)
		if err == nil || errors.Is(err, lockfile.ErrLocked) {
			t.Fatalf("lock %s in a read-only directory: %v, want a failure at once, not a wait", lock, err)
		}
		if !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) {
			t.Errorf("lock %s in a read-only directory: %v, want the cause kept (permission denied or read-only file system)", lock, err)
		}
		if !strings.Contains(err.Error(), lock) || hint.Of(err) == "" {
			t.Errorf("error %q, hint %q: want the lock file named and a hint", err, hint.Of(err))
		}
	}
}

// TestReleaseKeepsAnotherHoldersLock: a lock held past the stale age and
// taken over is not removed by its first holder's Release.
func TestReleaseKeepsAnotherHoldersLock(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "f.lock")
	l, err := lockfile.Acquire(lock, wide)
	if err != nil {
		t.Fatal(err)
	}
	// the takeover: removed as stale, taken again by another process
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(lock, later, later); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("Release removed the lock another process took over: %v", err)
	}
}

// TestProbe: a probe of a free lock leaves nothing behind, and a stale
// lock counts as free and stays for the writer to take over.
func TestProbe(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "HEAD.lock")
	if err := lockfile.Probe(lock, wide); err != nil {
		t.Fatal(err)
	}
	leftovers(t, dir)
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	if err := lockfile.Probe(lock, wide); err != nil {
		t.Fatalf("probe of a stale lock: %v", err)
	}
	leftovers(t, dir, "HEAD.lock")
}

// leftovers fails the test if dir holds files other than want.
func leftovers(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s holds %v, want %v", dir, got, want)
	}
}

// TestOwnerAcquire: an owner's lock is FILE.lock, held by "another
// readproof" doing the owner's task; its timings apply where the caller's
// are unset (a lock that old is taken over, the timeout named is the
// owner's) and give way to the caller's; a held lock's error starts with
// the owner's words and matches both its error and ErrLocked; any other
// failure starts with the owner's other words.
func TestOwnerAcquire(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "policy.toml")
	errHeld := errors.New("the policy is locked")
	owner := lockfile.Owner{Timeout: 20 * time.Millisecond, StaleAge: time.Hour, Task: "changing the policy",
		Locked: errHeld, Failed: "lock the policy"}
	held, err := owner.Acquire(file, lockfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file + ".lock"); err != nil {
		t.Fatalf("the owner's lock is not FILE.lock: %v", err)
	}
	_, err = owner.Acquire(file, lockfile.Options{})
	if !errors.Is(err, lockfile.ErrLocked) || !errors.Is(err, errHeld) {
		t.Fatalf("a held owner's lock: %v, want both ErrLocked and the owner's error", err)
	}
	// held by this live process (its flock): never taken over, no rm
	if want := "the policy is locked: " + file + ".lock is still held after 20ms by a live process (it holds the lock's flock), maybe stopped"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if h := hint.Of(err); !strings.HasPrefix(h, "another readproof is changing the policy, or is stopped ") || strings.Contains(h, "rm ") {
		t.Errorf("hint %q, want the owner's holder and task, and no rm", h)
	}
	// the caller's timeout, where set, is the one named
	if _, err := owner.Acquire(file, lockfile.Options{Timeout: 30 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "after 30ms") {
		t.Errorf("with the caller's timeout: %v, want it named", err)
	}
	// a lock a killed process left (nobody holds its flock): the owner's
	// stale age is named
	held.Release()
	if err := os.WriteFile(file+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = owner.Acquire(file, lockfile.Options{})
	if h := hint.Of(err); !strings.HasPrefix(h, "another readproof is changing the policy: ") || !strings.Contains(h, "older than 1h0m0s") {
		t.Errorf("hint %q, want the owner's holder, task and stale age", h)
	}
	// the caller's stale age, where set, takes the lock over
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(file+".lock", old, old); err != nil {
		t.Fatal(err)
	}
	l, err := owner.Acquire(file, lockfile.Options{StaleAge: time.Second})
	if err != nil {
		t.Fatalf("a lock older than the caller's stale age: %v, want it taken over", err)
	}
	l.Release()
	// any other failure: the owner's other words first
	_, err = owner.Acquire(filepath.Join(dir, "no such dir", "policy.toml"), lockfile.Options{})
	if err == nil || errors.Is(err, lockfile.ErrLocked) || !strings.HasPrefix(err.Error(), "lock the policy: ") {
		t.Errorf("a lock that cannot be created: %v, want it to start %q", err, "lock the policy: ")
	}
}
