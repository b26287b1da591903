package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// The crash tests kill readproof at the renames and unlinks by which a
// transaction moves refs (strace delivers the SIGKILL on entry to the
// call, before it takes effect).
//
// Each kill point is one call of a trace of the whole, unkilled command,
// named by a path that call alone works on among the calls of its kind
// (renames or unlinks), and killed with `strace -P PATH -e inject=KIND:
// signal=KILL:when=1`. Not the Nth call (inject when=N): strace counts the
// calls it injects into per system call and per thread, and Go moves a
// goroutine between threads, so the Nth call of a thread is not the same
// call from one run to the next, and N = 1, 2, ... skips calls (with rename
// A, unlink B, rename C on one thread, when=1 kills at A, when=2 at C, and
// "A done, B not" never happens). For the same reason a path that two calls
// of a kind work on cannot name the second by when=2, even when one
// goroutine makes both (it may make them on two threads): killPoints fails
// the test when a call has no path of its own, rather than leave that point
// out. Two calls of different kinds may share a path (a lock file unlinked
// here, renamed there): -P with the kind's calls alone still names one.

// killCalls are the system calls a kill point is one of, by kind.
var killCalls = map[string]string{
	"rename": "rename,renameat,renameat2",
	"unlink": "unlink,unlinkat",
}

// killTrace is the strace filter of every kill point's kind.
const killTrace = "trace=rename,renameat,renameat2,unlink,unlinkat"

// killPoint is one rename or unlink of a traced command.
type killPoint struct {
	Call   string   // the call as traced, with paths relative to the store
	Kind   string   // rename or unlink
	Paths  []string // its paths, relative to the store
	inject []string // strace's arguments that kill the command there
}

func (p killPoint) String() string { return p.Call }

// killNth is the Nth rename or unlink of a thread, objects included (what
// the crash tests killed at before session 13; see above for what it
// misses).
func killNth(n int) killPoint {
	return killPoint{
		Call:   fmt.Sprintf("rename or unlink %d of a thread", n),
		inject: []string{"-e", fmt.Sprintf("inject=rename,renameat,renameat2,unlink,unlinkat:signal=KILL:when=%d", n)},
	}
}

// requireStrace returns strace's path, or skips the test when strace is
// missing or cannot trace here.
func requireStrace(t testing.TB) string {
	t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("needs strace (it delivers the SIGKILL at each system call)")
	}
	if out, err := exec.Command(strace, "-f", "-o", os.DevNull, "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here: %v\n%s", err, out)
	}
	return strace
}

// straceCallRE matches a call as strace -f prints its entry: thread id,
// system call and its arguments (entry only: `<unfinished ...>` may
// follow).
var straceCallRE = regexp.MustCompile(`(?m)^(\d+)\s+([a-z0-9_]+)\((.*)$`)

// straceCalls returns the matches of straceCallRE in trace (m[1] the
// thread, m[2] the call, m[3] its arguments) whose call is one of calls,
// each a comma-separated list as strace's trace= takes. The kill, clone
// kill and fault point parsers all read their traces through it.
func straceCalls(trace string, calls ...string) [][]string {
	want := map[string]bool{}
	for _, cs := range calls {
		for _, c := range strings.Split(cs, ",") {
			want[c] = true
		}
	}
	var out [][]string
	for _, m := range straceCallRE.FindAllStringSubmatch(trace, -1) {
		if want[m[2]] {
			out = append(out, m)
		}
	}
	return out
}

// killPathRE matches a path argument as strace prints it (in full: -s does
// not shorten paths).
var killPathRE = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)

// killPoints runs readproof ARGS in dir with env under strace, unkilled,
// and returns its stdout and the renames and unlinks it made in store, in
// the order it made them, each with a path it alone works on. Only the
// calls of ref moves count (refMove): not those on object files (under
// objects/: tmp_obj_*, tmp_pack_*, tmp_idx_*, random names, written before
// any ref moves), nor on a pull's or clone's scratch git directory
// (readproof-fetch-*, a random name, removed by its own calls), nor
// maintenance's, nor those outside the store.
// It fails the test when the command fails or a call has no path of its
// own.
func killPoints(t testing.TB, strace, dir string, env []string, store string, args ...string) ([]killPoint, string) {
	t.Helper()
	return tracePoints(t, strace, dir, env, store, true, args...)
}

// killMovePoints is killPoints without the lock releases (unlinks of lock
// files, which change no ref), for a command that releases a lock twice,
// as `run abort` of a packed open run does (each of its two transactions
// takes packed-refs.lock): no path names the second release alone, and
// killed there or at the first, the refs are as the next point leaves
// them, with the lock left.
func killMovePoints(t testing.TB, strace, dir string, env []string, store string, args ...string) ([]killPoint, string) {
	t.Helper()
	return tracePoints(t, strace, dir, env, store, false, args...)
}

func tracePoints(t testing.TB, strace, dir string, env []string, store string, releases bool, args ...string) ([]killPoint, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "strace.log")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(strace, append([]string{"-f", "-o", log, "-e", killTrace, "readproof"}, args...)...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("readproof %s, traced: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	trace, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	points, err := parseKillPoints(string(trace), store, releases)
	if err != nil {
		t.Fatalf("readproof %s: %v\n%s", strings.Join(args, " "), err, trace)
	}
	return points, stdout.String()
}

// parseKillPoints reads the kill points from trace, strace -f's output of
// a command's renames and unlinks (see killPoints); without releases, the
// unlinks of lock files are left out before the points are named.
func parseKillPoints(trace, store string, releases bool) ([]killPoint, error) {
	type call struct {
		kind  string
		paths []string
	}
	var calls []call
	uses := map[string]int{} // kind and path: how many calls
	for _, m := range straceCalls(trace, killCalls["rename"], killCalls["unlink"]) {
		c := call{kind: "unlink"}
		if strings.HasPrefix(m[2], "rename") {
			c.kind = "rename"
		}
		for _, p := range killPathRE.FindAllStringSubmatch(m[3], -1) {
			c.paths = append(c.paths, p[1])
		}
		if len(c.paths) == 0 {
			return nil, fmt.Errorf("cannot read the paths of %q in the trace", m[0])
		}
		if !releases && c.kind == "unlink" && strings.HasSuffix(c.paths[0], ".lock") {
			continue
		}
		for _, p := range c.paths {
			uses[c.kind+" "+p]++
		}
		calls = append(calls, c)
	}
	var points []killPoint
	for _, c := range calls {
		rel, err := filepath.Rel(store, c.paths[0])
		if err != nil || !refMove(filepath.ToSlash(rel)) {
			continue
		}
		name, rels := c.kind, []string(nil)
		for _, p := range c.paths {
			r, _ := filepath.Rel(store, p)
			name += " " + r
			rels = append(rels, r)
		}
		own := ""
		for _, p := range c.paths {
			if uses[c.kind+" "+p] == 1 {
				own = p
				break
			}
		}
		if own == "" {
			return nil, fmt.Errorf("no path names %s alone among the %ss, so strace cannot kill it there (see killPoints)", name, c.kind)
		}
		points = append(points, killPoint{Call: name, Kind: c.kind, Paths: rels,
			inject: []string{"-P", own, "-e", "inject=" + killCalls[c.kind] + ":signal=KILL:when=1"}})
	}
	return points, nil
}

// refMove reports whether rel, a path relative to the store, is one a
// ref transaction renames or unlinks: a loose ref or its lock (under refs/)
// or packed-refs, its lock or a version of it (packed-refs.N.lock). Not
// the object files, and not what maintenance or the stale-lock sweep may
// or may not do in a given run (gc.pid.lock, a stale lock at the top):
// a point must be there in every run of the same command.
func refMove(rel string) bool {
	return strings.HasPrefix(rel, "refs/") || rel == "packed-refs" || strings.HasPrefix(rel, "packed-refs.")
}

// killAt runs readproof ARGS in dir with env under strace, killed at p,
// and reports whether it was killed (rather than finishing first). It
// fails the test when the command fails otherwise.
func killAt(t testing.TB, strace, dir string, env []string, p killPoint, args ...string) (killed bool) {
	t.Helper()
	sargs := append(append([]string{"-f", "-o", os.DevNull, "-e", killTrace}, p.inject...), "readproof")
	cmd := exec.Command(strace, append(sargs, args...)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	// strace ends by the signal that ended readproof
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	killed = (ws.Signaled() && ws.Signal() == syscall.SIGKILL) || ws.ExitStatus() == 128+int(syscall.SIGKILL)
	if err != nil && !killed {
		t.Fatalf("readproof %s, to be killed at %s: %v\n%s", strings.Join(args, " "), p, err, out)
	}
	return killed
}

// checkKilled checks the store a killed command left: every ref names a
// complete object graph (checkRefs) and `readproof verify` in dir passes.
// at names the kill in a failure.
func checkKilled(t testing.TB, dir, store, at string) {
	t.Helper()
	checkRefs(t, store)
	if o, e, err := rp(t, dir, "verify"); err != nil {
		t.Fatalf("%s: verify: %v\n%s%s", at, err, o, e)
	}
}

// TestParseKillPoints: each rename or unlink of a ref gets a path that no
// other call of its kind works on (a second version of packed-refs is named
// by its own lock; a lock both unlinked and renamed is named by its path,
// with the kind's calls alone), object files, a pull's scratch git
// directory, maintenance's gc.pid and paths outside the store are no kill
// points, a call strace printed in two parts counts once, and a call with
// no path of its own fails rather than being left out (without lock
// releases, a lock released twice is left out; a ref unlinked twice still
// fails).
func TestParseKillPoints(t *testing.T) {
	t.Parallel()
	const trace = `100 unlinkat(AT_FDCWD, "/s/objects/pack/tmp_obj_1", 0) = 0
102 renameat(AT_FDCWD, "/s/gc.pid.lock", AT_FDCWD, "/s/gc.pid") = 0
102 unlinkat(AT_FDCWD, "/s/gc.pid", 0) = 0
100 renameat(AT_FDCWD, "/s/refs/heads/main.lock", AT_FDCWD, "/s/refs/heads/main") = 0
101 unlinkat(AT_FDCWD, "/elsewhere/packed-refs.lock", 0) = 0
100 renameat(AT_FDCWD, "/s/packed-refs.1.lock", AT_FDCWD, "/s/packed-refs" <unfinished ...>
101 unlinkat(AT_FDCWD, "/s/refs/tags/a.lock", 0) = 0
100 <... renameat resumed>) = 0
100 --- SIGURG {si_signo=SIGURG, si_code=SI_TKILL, si_pid=1, si_uid=0} ---
101 renameat(AT_FDCWD, "/s/refs/tags/a.lock", AT_FDCWD, "/s/refs/tags/a") = 0
101 renameat(AT_FDCWD, "/s/packed-refs.lock", AT_FDCWD, "/s/packed-refs") = 0
101 unlink("/s/refs/tags/b") = -1 ENOENT (No such file or directory)
102 unlinkat(AT_FDCWD, "/s/readproof-fetch-123", 0) = -1 EISDIR (Is a directory)
102 unlinkat(AT_FDCWD, "/s/readproof-fetch-123", AT_REMOVEDIR) = 0
102 unlinkat(AT_FDCWD, "/s/readproof-fetch-123/packed-refs", 0) = 0
100 +++ exited with 0 +++
`
	points, err := parseKillPoints(trace, "/s", true)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range points {
		got = append(got, p.Call+" @ "+strings.Join(p.inject, " "))
	}
	want := []string{
		"rename refs/heads/main.lock refs/heads/main @ -P /s/refs/heads/main.lock -e inject=rename,renameat,renameat2:signal=KILL:when=1",
		"rename packed-refs.1.lock packed-refs @ -P /s/packed-refs.1.lock -e inject=rename,renameat,renameat2:signal=KILL:when=1",
		"unlink refs/tags/a.lock @ -P /s/refs/tags/a.lock -e inject=unlink,unlinkat:signal=KILL:when=1",
		"rename refs/tags/a.lock refs/tags/a @ -P /s/refs/tags/a.lock -e inject=rename,renameat,renameat2:signal=KILL:when=1",
		"rename packed-refs.lock packed-refs @ -P /s/packed-refs.lock -e inject=rename,renameat,renameat2:signal=KILL:when=1",
		"unlink refs/tags/b @ -P /s/refs/tags/b -e inject=unlink,unlinkat:signal=KILL:when=1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("kill points\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	const twice = `100 unlinkat(AT_FDCWD, "/s/refs/tags/a.lock", 0) = 0
100 unlinkat(AT_FDCWD, "/s/refs/tags/a.lock", 0) = 0
`
	if points, err := parseKillPoints(twice, "/s", true); err == nil {
		t.Fatalf("a path unlinked twice gave kill points %q, want an error", points)
	}
	// Without the lock releases, a lock released twice is no kill point;
	// a ref unlinked twice still has no path of its own.
	const released = `100 renameat(AT_FDCWD, "/s/refs/heads/a.lock", AT_FDCWD, "/s/refs/heads/a") = 0
100 unlinkat(AT_FDCWD, "/s/packed-refs.lock", 0) = 0
100 unlinkat(AT_FDCWD, "/s/refs/heads/b", 0) = 0
101 unlinkat(AT_FDCWD, "/s/packed-refs.lock", 0) = 0
`
	if _, err := parseKillPoints(released, "/s", true); err == nil {
		t.Fatal("a lock released twice gave kill points, want an error")
	}
	points, err = parseKillPoints(released, "/s", false)
	got = got[:0]
	for _, p := range points {
		got = append(got, p.Call)
	}
	if err != nil || strings.Join(got, ", ") != "rename refs/heads/a.lock refs/heads/a, unlink refs/heads/b" {
		t.Fatalf("without releases: kill points %q (%v), want the rename of a and the unlink of b", got, err)
	}
	if points, err := parseKillPoints(twice+strings.ReplaceAll(twice, ".lock", ""), "/s", false); err == nil {
		t.Fatalf("a ref unlinked twice gave kill points %q without releases, want an error", points)
	}
}
