package gitstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/internal/testsize"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Tests in this file re-execute the test binary as helper processes
// (GITSTORE_HELPER=<role>), so locks and renames race across real processes.

func TestMain(m *testing.M) {
	if role := os.Getenv("GITSTORE_HELPER"); role != "" {
		if err := runHelper(role); err != nil {
			fmt.Fprintf(os.Stderr, "helper %s: %v\n", role, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The git the code under test runs reads no system or user
	// configuration, as the git of the tests (gitEnv) does not: set once
	// here, not per test with t.Setenv (newTransport did), which kept every
	// test that opens a Transport from running in parallel. A test about
	// those files points GIT_CONFIG_GLOBAL elsewhere with t.Setenv.
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	// the tests' ~/.ssh/config is under a HOME of their own (t.Setenv),
	// not the passwd entry's home ssh reads (TestSSHHomeIsPasswdEntrys)
	SSHHomeFromEnvForTest()
	os.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	code := testproc.Run(m)
	removeTemplates()
	os.Exit(code)
}

func runHelper(role string) error {
	path := os.Getenv("GITSTORE_PATH")
	ref := os.Getenv("GITSTORE_REF")
	n, _ := strconv.Atoi(os.Getenv("GITSTORE_N"))
	stale, _ := time.ParseDuration(os.Getenv("GITSTORE_STALE"))
	switch role {
	case "append":
		return helperAppend(path, ref, n, Options{StaleLockAge: stale}, false)
	case "heavyappend":
		return helperAppend(path, ref, n, Options{StaleLockAge: stale}, true)
	case "crash":
		return helperAppend(path, ref, 1<<30, Options{StaleLockAge: stale}, true)
	case "gitappend":
		return helperGitAppend(path, ref, n)
	case "reader":
		return helperReader(path, ref, os.Getenv("GITSTORE_STOP"))
	case "fetchview":
		return helperFetchView(path)
	case "oneupdate":
		timeout, _ := time.ParseDuration(os.Getenv("GITSTORE_TIMEOUT"))
		if os.Getenv("GITSTORE_STOPCREATE") != "" {
			afterCreate = stopAfterCreate
		}
		return helperOneUpdate(path, ref, Options{StaleLockAge: stale, LockTimeout: timeout}, os.Getenv("GITSTORE_PAUSE") != "")
	case "pausingappend":
		if os.Getenv("GITSTORE_PAUSE") != "" {
			beforeRename = stopBeforeRename
		}
		// says when it waits for a lock another process holds
		waiting := func(w LockWaitInfo) { fmt.Println("waiting", w.Path) }
		return helperAppend(path, ref, n, Options{StaleLockAge: stale, LockWait: waiting, LockWaitNotice: 10 * time.Millisecond}, false)
	}
	return fmt.Errorf("unknown helper role %q", role)
}

// helperAppend appends n commits to ref, each with the current tip as parent,
// by compare-and-swap, retrying on conflict. It prints "ok <id>" per append.
// With heavy set, each commit carries a fresh blob and tree, and a side ref
// is created and deleted in the same transaction.
func helperAppend(path, ref string, n int, opts Options, heavy bool) error {
	s, err := OpenWithOptions(path, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	empty, err := s.PutTree(nil)
	if err != nil {
		return err
	}
	pid := os.Getpid()
	side := ""
	for i, attempt := 0, 0; i < n; attempt++ {
		tip, err := s.Ref(ref)
		if err != nil {
			return err
		}
		tree := empty
		if heavy {
			blob, err := s.PutBlob([]byte(fmt.Sprintf("pid %d append %d attempt %d\n%s", pid, i, attempt, strings.Repeat("x", rand.IntN(8192)))))
			if err != nil {
				return err
			}
			if tree, err = s.PutTree([]TreeEntry{{Name: "data", Mode: ModeFile, OID: blob}}); err != nil {
				return err
			}
		}
		c, err := s.PutCommit(Commit{Tree: tree, Parents: []OID{tip}, Author: testSig(), Committer: testSig(),
			Message: fmt.Sprintf("pid %d append %d attempt %d\n", pid, i, attempt)})
		if err != nil {
			return err
		}
		ups := []RefUpdate{{Name: ref, Old: tip, New: c}}
		nextSide := side
		if heavy {
			if side != "" {
				ups = append(ups, RefUpdate{Name: side, Old: c0(s, side)})
				nextSide = ""
			} else {
				nextSide = fmt.Sprintf("refs/heads/side/%d-%d", pid, i)
				ups = append(ups, RefUpdate{Name: nextSide, New: c})
			}
		}
		err = s.Update(ups...)
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrLocked) {
			continue // ErrLocked: our lock outlived the short stale age and was broken
		}
		if err != nil {
			return err
		}
		side = nextSide
		fmt.Fprintln(out, "ok", c)
		if heavy {
			out.Flush()
		}
		i++
	}
	return nil
}

// c0 reads a ref's value, "" when absent.
func c0(s Store, name string) OID {
	id, _ := s.Ref(name)
	return id
}

// helperGitAppend appends n commits with stock git commit-tree and
// update-ref <ref> <new> <old>, retrying when git refuses.
func helperGitAppend(path, ref string, n int) error {
	git, err := exec.LookPath("git")
	if err != nil {
		return err
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(git, append([]string{"--git-dir=" + path}, args...)...)
		cmd.Env = gitEnv()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %v: %w: %s", args, err, stderr.String())
		}
		return strings.TrimSpace(string(out)), nil
	}
	for i, failures := 0, 0; i < n; {
		tip, err := run("rev-parse", "--verify", ref)
		if err != nil {
			return err
		}
		c, err := run("commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-p", tip, "-m", fmt.Sprintf("git append %d", i))
		if err != nil {
			return err
		}
		if _, err := run("update-ref", ref, c, tip); err != nil {
			if failures++; failures > 10000 {
				return err
			}
			continue
		}
		fmt.Println("ok", c)
		i++
	}
	return nil
}

// helperReader pauses readerPause after each readerBurst reads (a sleep
// lasts a millisecond or more on a loaded machine).
const (
	readerBurst = 16
	readerPause = 50 * time.Microsecond
)

// helperReader reads ref in a loop until the stop file exists; any error,
// ErrNotFound included, fails it. It pauses after every readerBurst reads:
// a reader that never paused took a CPU for the whole test (50,000 to
// 250,000 reads over about 100 appends, on a machine with two) from the
// appenders whose races it watches; paused, it still reads each value of
// the ref about a hundred times, in bursts of back-to-back reads.
func helperReader(path, ref, stop string) error {
	s, err := Open(path)
	if err != nil {
		return err
	}
	defer s.Close()
	reads := 0
	for i := 0; ; i++ {
		if i%64 == 0 && exists(stop) {
			break
		}
		id, err := s.Ref(ref)
		if err != nil {
			return fmt.Errorf("read %d: %w", reads, err)
		}
		if !isHexOID(string(id)) {
			return fmt.Errorf("read %d: bad value %q", reads, id)
		}
		reads++
		if reads%readerBurst == 0 {
			time.Sleep(readerPause)
		}
	}
	fmt.Println("reads", reads)
	return nil
}

// helper starts the test binary in a helper role.
func helper(t *testing.T, role string, env ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"GITSTORE_HELPER=" + role}, env...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stdout, &stderr
}

func okIDs(out string) []OID {
	var ids []OID
	for _, line := range strings.Split(out, "\n") {
		if id, ok := strings.CutPrefix(line, "ok "); ok {
			ids = append(ids, OID(id))
		}
	}
	return ids
}

// chainSet walks first parents from tip and returns every commit id.
func chainSet(t *testing.T, s Store, tip OID) map[OID]bool {
	t.Helper()
	seen := map[OID]bool{}
	for id := tip; id != ""; {
		if seen[id] {
			t.Fatalf("cycle at %s", id)
		}
		seen[id] = true
		c, err := s.Commit(id)
		if err != nil {
			t.Fatalf("commit %s of the chain: %v", id, err)
		}
		tr, err := s.Tree(c.Tree)
		if err != nil {
			t.Fatalf("tree of %s: %v", id, err)
		}
		for _, e := range tr {
			if _, err := s.Blob(e.OID); err != nil {
				t.Fatalf("blob of %s: %v", id, err)
			}
		}
		id = ""
		if len(c.Parents) > 0 {
			id = c.Parents[0]
		}
	}
	return seen
}

func TestConcurrentAppendsAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	s := NewTestStore(t)
	const ref = "refs/heads/chain"
	root := mkCommit(t, s, "root")
	mustUpdate(t, s, RefUpdate{Name: ref, New: root})
	env := []string{"GITSTORE_PATH=" + s.Path(), "GITSTORE_REF=" + ref}
	stop := filepath.Join(t.TempDir(), "stop")

	reader, readerOut, readerErr := helper(t, "reader", append(env, "GITSTORE_STOP="+stop)...)
	const procs = 8
	each, gitAppends := testsize.Pick(t, 12, 50), testsize.Pick(t, 8, 25)
	type proc struct {
		cmd         *exec.Cmd
		out, errOut *bytes.Buffer
	}
	var ps []proc
	for i := 0; i < procs; i++ {
		cmd, out, errOut := helper(t, "append", append(env, "GITSTORE_N="+strconv.Itoa(each))...)
		ps = append(ps, proc{cmd, out, errOut})
	}
	gcmd, gout, gerr := helper(t, "gitappend", append(env, "GITSTORE_N="+strconv.Itoa(gitAppends))...)
	ps = append(ps, proc{gcmd, gout, gerr})

	var appended []OID
	for i, p := range ps {
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("appender %d: %v\n%s", i, err, p.errOut.String())
		}
		appended = append(appended, okIDs(p.out.String())...)
	}
	os.WriteFile(stop, nil, 0o666)
	if err := reader.Wait(); err != nil {
		t.Errorf("reader: %v\n%s", err, readerErr.String())
	}
	t.Logf("reader: %s; %d appends", strings.TrimSpace(readerOut.String()), len(appended))
	if want := procs*each + gitAppends; len(appended) != want {
		t.Errorf("%d successful appends reported, want %d", len(appended), want)
	}

	tip, err := s.Ref(ref)
	if err != nil {
		t.Fatal(err)
	}
	chain := chainSet(t, s, tip)
	if len(chain) != len(appended)+1 {
		t.Errorf("chain has %d commits, want %d appends + root", len(chain), len(appended))
	}
	for _, id := range appended {
		if !chain[id] {
			t.Errorf("append %s was lost", id)
		}
	}
	if got := git(t, s.Path(), "rev-list", "--count", ref); got != strconv.Itoa(len(appended)+1) {
		t.Errorf("git rev-list --count = %s", got)
	}
	assertNoLocks(t, s.Path())
	Fsck(t, s.Path())
}

func TestCrashDuringAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	s := NewTestStore(t)
	const ref = "refs/heads/chain"
	mustUpdate(t, s, RefUpdate{Name: ref, New: mkCommit(t, s, "root")})
	env := []string{"GITSTORE_PATH=" + s.Path(), "GITSTORE_REF=" + ref, "GITSTORE_STALE=1s"}
	total := 0
	rounds := testsize.Pick(t, 3, 6)
	for round := 0; round < rounds; round++ {
		// Two writers, so one is often killed while the other waits on its
		// locks. Each is killed at a random moment after its first append.
		type writer struct {
			cmd   *exec.Cmd
			lines chan string
			n     int
		}
		var ws []*writer
		for w := 0; w < 2; w++ {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), append([]string{"GITSTORE_HELPER=crash"}, env...)...)
			cmd.Stderr = os.Stderr
			// Its own process group, killed whole below: a git the writer
			// started (auto maintenance's repack) dies with it, as in a
			// crash, instead of running on into the fsck at the end, which
			// then lists a pack whose index that repack is removing
			// ("packfile ... index not opened"; seen with the store on
			// tmpfs, where the writers reach maintenance more often).
			testproc.OwnGroup(cmd)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			wr := &writer{cmd: cmd, lines: make(chan string, 1<<16)}
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					wr.lines <- sc.Text()
				}
				close(wr.lines)
			}()
			ws = append(ws, wr)
		}
		for _, wr := range ws {
			select {
			case line, ok := <-wr.lines:
				if ok && strings.HasPrefix(line, "ok ") {
					wr.n++
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("round %d: a writer made no progress in 20s", round)
			}
		}
		for _, wr := range ws {
			time.Sleep(time.Duration(rand.IntN(150)) * time.Millisecond)
			testproc.KillGroup(wr.cmd)
		}
		for i, wr := range ws {
			for line := range wr.lines {
				if strings.HasPrefix(line, "ok ") {
					wr.n++
				}
			}
			err := wr.cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("round %d: helper exited with %v, want killed", round, err)
			}
			if st, ok := ee.Sys().(syscall.WaitStatus); !ok || !st.Signaled() {
				t.Fatalf("round %d: helper %d failed on its own: %v", round, i, err)
			}
			total += wr.n
		}
		// The crash was long ago: the next round's writers find the ref
		// locks the killed ones held stale at once (and break them, as
		// lockFile does), not after GITSTORE_STALE of waiting each round.
		ageLocks(t, s.Path(), time.Hour)
		tip, err := s.Ref(ref)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		chain := chainSet(t, s, tip)
		if len(chain) < total+1 {
			t.Fatalf("round %d: chain has %d commits, but %d appends were reported", round, len(chain), total)
		}
		checkNoEmptyRefs(t, s.Path())
		// Every side ref names a readable commit.
		sides, err := s.Refs("refs/heads/side/")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range sides {
			if _, err := s.Commit(r.OID); err != nil {
				t.Fatalf("round %d: side ref %s: %v", round, r.Name, err)
			}
		}
	}
	t.Logf("%d appends survived 6 rounds of SIGKILL", total)
	git(t, s.Path(), "rev-list", "--objects", "--all")
	Fsck(t, s.Path())
}

// ageLocks sets the modification time of every lock Update takes (a ref's
// and packed-refs') back by age.
func ageLocks(t *testing.T, gitDir string, age time.Duration) {
	t.Helper()
	old := time.Now().Add(-age)
	var locks []string
	filepath.WalkDir(filepath.Join(gitDir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			locks = append(locks, p)
		}
		return nil
	})
	for _, p := range append(locks, filepath.Join(gitDir, "packed-refs.lock")) {
		if err := os.Chtimes(p, old, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

// checkNoEmptyRefs fails on any empty file under refs/ that is not a lock.
func checkNoEmptyRefs(t *testing.T, gitDir string) {
	t.Helper()
	filepath.WalkDir(filepath.Join(gitDir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		data, _ := io.ReadAll(f)
		if _, _, perr := parseLooseRef(data); perr != nil {
			t.Errorf("broken ref file %s: %q", p, data)
		}
		return nil
	})
}
