package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testsize"
)

// The error-injection tests make one system call of a command fail (a full
// disk, a used-up quota, an I/O error) instead of killing it there (the
// kill tests, process_killpoints_test.go), so the command's own cleanup
// runs, and check what a user may then expect: exit code 1 (the README's
// "the command failed (store, source, I/O, not found)"), a message that
// names the file and the cause and ends in a hint, no panic; no lock or
// temporary file left; `git fsck --strict` and `readproof verify` pass;
// and a failure that changed no ref leaves a store where the same command
// run again does what it would have done.
//
// A fault point is one write-side system call of a trace of the whole,
// unfailed command on a path under the store: an open that creates a
// file, a write, an fsync, a rename, a link, a mkdir or an unlink. Like a
// kill point it is named by its path (strace -P; strace -y gives the path
// of a write's or an fsync's file descriptor) and failed with when=1, the
// first such call on that path of a thread (see killPoints for why not
// the Nth call). Files with random names (tmp_obj_*, tmp_pack_*, a pull's
// readproof-fetch-*) and loose objects (their ids change with the time
// they record) are no fault points: gitstore's tests fail their writes
// (writeFault) and the disk-full tests cover them.

// errCalls are the system calls of a fault point, by kind.
var errCalls = map[string]string{
	"open":   "open,openat,creat",
	"write":  "write,pwrite64,writev",
	"fsync":  "fsync,fdatasync",
	"rename": "rename,renameat,renameat2",
	"link":   "link,linkat",
	"mkdir":  "mkdir,mkdirat",
	"unlink": "unlink,unlinkat",
}

// errErrnos are the errors each kind is failed with, and what the message
// must then say.
var errErrnos = map[string][]string{
	"open":   {"ENOSPC", "EDQUOT"},
	"write":  {"ENOSPC", "EIO"},
	"fsync":  {"EIO"},
	"rename": {"EIO"},
	"link":   {"ENOSPC"},
	"mkdir":  {"ENOSPC"},
	"unlink": {"EIO"},
}

var errnoText = map[string]string{
	"ENOSPC": "no space left on device",
	"EDQUOT": "disk quota exceeded",
	"EIO":    "input/output error",
}

// errPathRE matches a path argument: quoted, or a file descriptor's path
// as strace -y prints it (3</path>).
var errPathRE = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"|\b\d+<([^>]*)>`)

// errRandom matches the names no fault point can name (see above).
var errRandom = regexp.MustCompile(`(^|/)(tmp_[a-z_]*\d*[A-Za-z0-9]*|\.[^/]*\.tmp-\d+|\.tmp-[^/]*|\.readproof-key-\d+)$|(^|/)readproof-(fetch|probe)-[^/]*(/|$)|^objects/[0-9a-f]{2}(/|$)|^objects/pack/pack-`)

// errPoint is one system call of a traced command, to fail.
type errPoint struct {
	Kind string // a key of errCalls
	Path string // relative to the store
	abs  string
}

func (p errPoint) String() string { return p.Kind + " " + p.Path }

// errPoints runs readproof ARGS in dir with env under strace, unfailed,
// and returns the fault points under store in the order of their first
// call, each once.
func errPoints(t testing.TB, strace, dir string, env []string, store string, args ...string) []errPoint {
	t.Helper()
	log := filepath.Join(t.TempDir(), "strace.log")
	var calls []string
	for _, c := range errCalls {
		calls = append(calls, c)
	}
	cmd := exec.Command(strace, append([]string{"-f", "-y", "-o", log, "-e", "trace=" + strings.Join(calls, ","), "readproof"}, args...)...)
	var stderr bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stderr = dir, env, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("readproof %s, traced: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	trace, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return parseErrPoints(string(trace), store)
}

// parseErrPoints reads the fault points from trace (see errPoints).
func parseErrPoints(trace, store string) []errPoint {
	kindOf := map[string]string{}
	for k, cs := range errCalls {
		for _, c := range strings.Split(cs, ",") {
			kindOf[c] = k
		}
	}
	var points []errPoint
	seen := map[string]bool{}
	var calls []string
	for _, cs := range errCalls {
		calls = append(calls, cs)
	}
	for _, m := range straceCalls(trace, calls...) {
		kind := kindOf[m[2]]
		if kind == "" || (kind == "open" && !strings.Contains(m[3], "O_CREAT")) {
			continue
		}
		// A write's or an fsync's descriptor's path; else the first
		// quoted path, joined to the directory descriptor before it when
		// relative, as in unlinkat(3</store>, "x").
		var path, fd string
		for _, p := range errPathRE.FindAllStringSubmatch(m[3], -1) {
			if kind == "write" || kind == "fsync" {
				fd = p[2] // the file's descriptor (a write's data is quoted too)
				break
			}
			if p[2] != "" {
				if fd == "" {
					fd = p[2]
				}
				continue
			}
			if path = p[1]; !filepath.IsAbs(path) && fd != "" {
				path = filepath.Join(fd, path)
			}
			break
		}
		if path == "" {
			path = fd
		}
		rel, err := filepath.Rel(store, path)
		if path == "" || err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		rel = filepath.ToSlash(rel)
		if errRandom.MatchString(rel) || seen[kind+" "+rel] {
			continue
		}
		seen[kind+" "+rel] = true
		points = append(points, errPoint{Kind: kind, Path: rel, abs: path})
	}
	return points
}

// failAt runs readproof ARGS in dir with env under strace, with the first
// call of p's kind on its path (of each thread) failing with errno; it
// returns the exit code and stderr.
func failAt(t testing.TB, strace, dir string, env []string, p errPoint, errno string, args ...string) (int, string) {
	t.Helper()
	return failCalls(t, strace, dir, env, p.Kind, p.abs, errno+":when=1", args...)
}

// failCalls runs readproof ARGS in dir with env under strace, with the
// calls of kind on path (every path when "") failing as inject says
// ("ENOSPC:when=1"); it returns the exit code and stderr.
func failCalls(t testing.TB, strace, dir string, env []string, kind, path, inject string, args ...string) (int, string) {
	t.Helper()
	calls := errCalls[kind]
	sargs := []string{"-f", "-o", os.DevNull}
	if path != "" {
		sargs = append(sargs, "-P", path)
	}
	sargs = append(sargs, "-e", "trace="+calls, "-e", "inject="+calls+":error="+inject, "readproof")
	cmd := exec.Command(strace, append(sargs, args...)...)
	var stderr bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stderr = dir, env, &stderr
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// leftovers lists the lock and temporary files under store: *.lock, a
// pull's scratch directories, tmp_* object files.
func leftovers(t testing.TB, store string) []string {
	t.Helper()
	var left []string
	err := filepath.Walk(store, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		n := fi.Name()
		if strings.HasSuffix(n, ".lock") || strings.HasPrefix(n, "tmp_") || strings.HasPrefix(n, "readproof-fetch-") || strings.HasPrefix(n, "readproof-probe-") {
			rel, _ := filepath.Rel(store, path)
			left = append(left, filepath.ToSlash(rel))
			if fi.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// refNames lists the store's refs with their objects, but for a pull's
// tracking refs (refs/readproof-remotes/: a fetch may move them, and
// docs/sync.md says that is safe).
func refNames(t testing.TB, store string) string {
	t.Helper()
	var keep []string
	for _, l := range strings.Split(gitIn(t, store, "for-each-ref", "--format=%(objectname) %(refname)"), "\n") {
		if !strings.Contains(l, " refs/readproof-remotes/") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// checkFailed checks what a command failed at p with errno left: see the
// top of this file. It reports whether the failure changed a ref.
func checkFailed(t testing.TB, dir, store, at, errno string, code int, stderr, refsBefore string) (changed bool) {
	t.Helper()
	if code != 1 {
		t.Fatalf("%s: exit code %d, want 1 (the command failed)\n%s", at, code, stderr)
	}
	if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic:") {
		t.Fatalf("%s: a panic:\n%s", at, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	var msg string
	for _, l := range lines {
		if strings.HasPrefix(l, "readproof: error: ") {
			msg = l
		}
	}
	// git, run by readproof (a pull's fetch), says what it could not do
	// and not always why ("couldn't set 'refs/...'"), naming a ref or a
	// file: readproof quotes it (": exit N: ...").
	byGit := strings.Contains(msg, ": exit ")
	if msg == "" || !byGit && (!strings.Contains(strings.ToLower(msg), errnoText[errno]) || !strings.Contains(msg, store)) {
		t.Fatalf("%s: no message that names the store's file and %q:\n%s", at, errnoText[errno], stderr)
	}
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "readproof: hint: ") {
		t.Fatalf("%s: the message ends in no hint:\n%s", at, stderr)
	}
	if strings.Contains(last, "check the remote") {
		t.Fatalf("%s: the hint is about reaching a remote; the store's own file failed:\n%s", at, stderr)
	}
	if left := leftovers(t, store); len(left) > 0 {
		t.Fatalf("%s: left %q\n%s", at, left, stderr)
	}
	changed = refNames(t, store) != refsBefore
	if changed && strings.Contains(last, "nothing was recorded") {
		t.Fatalf("%s: the hint says nothing was recorded, but refs moved:\n%s", at, stderr)
	}
	checkKilled(t, dir, store, at)
	fsck(t, store)
	return changed
}

// errSweep fails readproof ARGS (run in dir on store, reset from base
// before each failure) at points, each with the errnos of its kind, and
// checks each failure (checkFailed); a failure that changed no ref is
// followed by the same command, which must succeed and leave the refs the
// unfailed command leaves (wholeRefs: their names). A command may succeed
// only where a lock's release fails or where tried (if not nil) says the
// command only tries the call. It returns the outcome of each point.
func errSweep(t *testing.T, strace, dir string, env []string, store, base string, points []errPoint, errnos map[string][]string, tried func(errPoint) bool, wholeRefs []string, args ...string) []string {
	t.Helper()
	reset := func() {
		t.Helper()
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
		copyStore(t, base, store)
	}
	var outcomes []string
	for _, p := range points {
		for _, errno := range errnos[p.Kind] {
			reset()
			before := refNames(t, store)
			at := fmt.Sprintf("readproof %s, %s failing with %s", args[0], p, errno)
			code, stderr := failAt(t, strace, dir, env, p, errno, args...)
			if code == 0 {
				// The failures a command ignores: a lock's release
				// (unlink) after its refs moved (the lock stays until
				// it is stale, docs/store-format.md), and what tried
				// says the command only tries.
				if (p.Kind != "unlink" || !strings.HasSuffix(p.Path, ".lock")) && (tried == nil || !tried(p)) {
					t.Fatalf("%s: the command succeeded", at)
				}
				checkKilled(t, dir, store, at)
				if got := refNameList(t, store); !slices.Equal(got, wholeRefs) {
					t.Fatalf("%s: succeeded, with refs\n%s\nwant, as after the unfailed command,\n%s", at, strings.Join(got, "\n"), strings.Join(wholeRefs, "\n"))
				}
				outcomes = append(outcomes, fmt.Sprintf("%s %s: ignored, left %q", p, errno, leftovers(t, store)))
				continue
			}
			if checkFailed(t, dir, store, at, errno, code, stderr, before) {
				outcomes = append(outcomes, fmt.Sprintf("%s %s: failed, some refs moved", p, errno))
				continue
			}
			if o, e, err := rp(t, dir, args...); err != nil {
				t.Fatalf("%s, then again: %v\n%s%s", at, err, o, e)
			}
			if got := refNameList(t, store); !slices.Equal(got, wholeRefs) {
				t.Fatalf("%s, then again: refs\n%s\nwant, as after the unfailed command,\n%s", at, strings.Join(got, "\n"), strings.Join(wholeRefs, "\n"))
			}
			outcomes = append(outcomes, fmt.Sprintf("%s %s: failed, nothing recorded; again: ok", p, errno))
		}
	}
	reset()
	return outcomes
}

// refNameList is the store's ref names.
func refNameList(t testing.TB, store string) []string {
	t.Helper()
	return strings.Split(gitIn(t, store, "for-each-ref", "--format=%(refname)"), "\n")
}

// TestFailedRun fails `readproof run --id` of one new document at the
// system calls that take, write, sync and move its refs (by default the
// run ref's lock created, written and renamed, and packed-refs.lock
// created; READPROOF_LONG_TESTS=1: every fault point, and a run of 40 new
// documents after `readproof gc`, whose resource refs go into a version
// of packed-refs), and checks each failure (errSweep).
func TestFailedRun(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	for _, c := range []struct {
		name string
		docs int
		gc   bool
	}{{"1 doc", 1, false}, {"40 docs after gc", 40, true}} {
		if c.gc && !testsize.Long() {
			continue
		}
		dir, uris, store, env := killProject(t, c.docs+1)
		mustRP(t, dir, "run", "--id", "r0", uris[0])
		if c.gc {
			mustRP(t, dir, "gc")
		}
		base := filepath.Join(t.TempDir(), "base")
		copyStore(t, store, base)
		args := append([]string{"run", "--id", "r1"}, uris[1:]...)
		points := errPoints(t, strace, dir, env, store, args...)
		all := points
		wholeRefs := refNameList(t, store)
		errnos := errErrnos
		if !testsize.Long() {
			errnos = map[string][]string{"open": {"EDQUOT"}, "write": {"ENOSPC"}, "rename": {"EIO"}}
			want := []errPoint{
				{Kind: "open", Path: "packed-refs.lock"},
				{Kind: "write", Path: "refs/tags/readproof/runs/r1.lock"},
				{Kind: "rename", Path: "refs/tags/readproof/runs/r1.lock"},
			}
			var picked []errPoint
			for _, w := range want {
				i := slices.IndexFunc(points, func(p errPoint) bool { return p.Kind == w.Kind && p.Path == w.Path })
				if i < 0 {
					t.Fatalf("%s: the run made no %s (fault points %q)", c.name, w, points)
				}
				picked = append(picked, points[i])
			}
			points = picked
		}
		outcomes := errSweep(t, strace, dir, env, store, base, points, errnos, nil, wholeRefs, args...)
		t.Logf("%s: %d fault points:\n\t%s", c.name, len(points), strings.Join(outcomes, "\n\t"))
		// The journal's move failing leaves the run committed and not
		// recorded on the journal: the same run again records it (and
		// refuses the committed run, saying so); verify then warns of
		// nothing.
		i := slices.IndexFunc(all, func(p errPoint) bool { return p.Kind == "rename" && p.Path == "refs/heads/main.lock" })
		if i < 0 {
			t.Fatalf("%s: the run made no rename of the journal (fault points %q)", c.name, all)
		}
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
		copyStore(t, base, store)
		at := fmt.Sprintf("%s: %s failing with EIO", c.name, all[i])
		if code, stderr := failAt(t, strace, dir, env, all[i], "EIO", args...); code != 1 {
			t.Fatalf("%s: exit code %d\n%s", at, code, stderr)
		}
		waitLocksStale(t, store, killStaleAge+50*time.Millisecond)
		cmd := exec.Command("readproof", args...)
		var o, e strings.Builder
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &o, &e
		if err := cmd.Run(); err == nil || !strings.Contains(e.String(), "run already committed as manifest") || !strings.Contains(e.String(), "added the record now") {
			t.Fatalf("%s, then again: %v\n%s%s; want the refusal that says the journal's record was added", at, err, o.String(), e.String())
		}
		checkJournalComplete(t, dir, at+", then again")
	}
}

// TestFailedKeyInit fails the creation of each key file (`receipts key
// init`, `probe key init`, `key init`) where it links the written key into
// place (a full disk) and at every fsync (an I/O error): each exits 1
// with a message that names the key and the cause and ends in a hint that
// fits (not "not a key file", not "create the key first"), leaves no file
// in the key's directory (no short or empty key that a later command would
// load), and the same command again creates a key that loads. Until
// session 14 such a failure was reported as "not a key file" with the
// cause as text only (errors.Is could not see ENOSPC), and the probe key's
// hint was "create the key first: readproof probe key init".
func TestFailedKeyInit(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	requireGit(t)
	if testing.Short() {
		t.Skip("slow")
	}
	for _, c := range []struct {
		cmd  []string
		file string   // the key file, under the config directory's readproof/
		also []string // files written after it, each a fault point too
		show []string // a command that loads the key
	}{
		{[]string{"receipts", "key", "init"}, "receipts.key", nil, nil}, // loads the key it wrote to print its id
		{[]string{"probe", "key", "init"}, "probe.key", nil, nil},
		{[]string{"key", "init"}, "evidence_ed25519", []string{"evidence_ed25519.pub"}, []string{"key", "show"}},
	} {
		name := strings.Join(c.cmd, " ")
		type fault struct{ kind, file, inject, text string }
		faults := []fault{{"link", c.file, "ENOSPC:when=1", "no space left on device"}, {"fsync", "", "EIO:when=1+", "input/output error"}}
		for _, f := range c.also {
			faults = append(faults, fault{"link", f, "ENOSPC:when=1", "no space left on device"})
		}
		for _, f := range faults {
			dir := t.TempDir()
			keys := filepath.Join(dir, "config", "readproof")
			if err := os.MkdirAll(keys, 0o700); err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "READPROOF_STORE=", "READPROOF_CONFIG=",
				"READPROOF_RECEIPTS_KEY=", "READPROOF_SIGNING_KEY=", "READPROOF_PROBE_KEY=")
			path := ""
			if f.file != "" {
				path = filepath.Join(keys, f.file)
			}
			at := fmt.Sprintf("%s, %s %s failing with %s", name, f.kind, f.file, f.inject)
			code, stderr := failCalls(t, strace, dir, env, f.kind, path, f.inject, c.cmd...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			switch {
			case code != 1:
				t.Fatalf("%s: exit code %d, want 1\n%s", at, code, stderr)
			case !strings.Contains(stderr, "readproof: error: ") || !strings.Contains(stderr, f.text) || !strings.Contains(stderr, filepath.Join(keys, c.file)):
				t.Fatalf("%s: no message that names the key and %q:\n%s", at, f.text, stderr)
			case strings.Contains(stderr, "not a key file") || strings.Contains(stderr, "create the key first"):
				t.Fatalf("%s: the message says the key is bad or missing, not that writing it failed:\n%s", at, stderr)
			case !strings.HasPrefix(last, "readproof: hint: "):
				t.Fatalf("%s: the message ends in no hint:\n%s", at, stderr)
			}
			if ents, err := os.ReadDir(keys); err != nil || len(ents) != 0 {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Fatalf("%s: left %q in the key directory (%v)", at, names, err)
			}
			cmd := exec.Command("readproof", c.cmd...)
			cmd.Dir, cmd.Env = dir, env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s, then again: %v\n%s", at, err, out)
			}
			if c.show != nil {
				cmd := exec.Command("readproof", c.show...)
				cmd.Dir, cmd.Env = dir, env
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s, then again and %s: %v\n%s", at, strings.Join(c.show, " "), err, out)
				}
			}
		}
	}
}

// TestFailedWriters is TestFailedRun for the other writers, with
// READPROOF_LONG_TESTS=1: `run mount` and `run commit` of an open
// run, `tag set`, `readproof gc` (its own writes: git gc's are git's) and
// `pull` from a path remote, each failed at every fault point of a trace
// of the whole command; by default pull alone, at one point.
func TestFailedWriters(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, dir string, uris []string) []string // the command's arguments
		tried func(errPoint) bool                                    // calls the command only tries
		keep  func(errPoint) bool                                    // the fault points (nil: all)
	}{
		{"mount", func(t *testing.T, dir string, uris []string) []string {
			mustRP(t, dir, "run", "start", "o1")
			return []string{"run", "mount", "o1", uris[1], uris[2]}
		}, nil, nil},
		{"commit", func(t *testing.T, dir string, uris []string) []string {
			mustRP(t, dir, "run", "start", "o1")
			mustRP(t, dir, "run", "mount", "o1", uris[1], uris[2])
			return []string{"run", "commit", "o1"}
		}, nil, nil},
		{"tag", func(t *testing.T, dir string, uris []string) []string {
			return []string{"tag", "set", uris[0], "prod"}
		}, nil, nil},
		{"gc", func(t *testing.T, dir string, uris []string) []string {
			mustRP(t, dir, "run", "--id", "r1", uris[1])
			return []string{"gc"}
		}, func(p errPoint) bool {
			// packing refs removes each loose file it packed under the
			// ref's own lock, only tried: without the lock or the
			// removal the loose file stays, with the value packed-refs
			// has too
			return (p.Kind == "open" || p.Kind == "unlink") && strings.HasPrefix(p.Path, "refs/") ||
				// maintenance's hold of git's gc.pid, only tried
				strings.HasPrefix(p.Path, "gc.pid")
		}, func(p errPoint) bool {
			// readproof's own writes (packing refs, maintenance's
			// gc.pid); git gc's are git's
			return strings.HasPrefix(p.Path, "refs/") || strings.HasPrefix(p.Path, "packed-refs") || strings.HasPrefix(p.Path, "gc.pid")
		}},
		{"pull", func(t *testing.T, dir string, uris []string) []string {
			remote, ruris := project(t, 3, 1024)
			for i, u := range ruris {
				mustRP(t, remote, "run", "--id", fmt.Sprintf("p%d", i), u)
			}
			mustRP(t, dir, "remote", "add", "b", filepath.Join(remote, ".readproof"))
			return []string{"pull", "b"}
		}, func(p errPoint) bool {
			// a failed fetch into the tracking refs (refs/readproof-
			// remotes/, through packed-refs) is tried again by git fetch
			return strings.HasPrefix(p.Path, "packed-refs") || strings.HasPrefix(p.Path, "refs/readproof-remotes/")
		}, nil},
	} {
		// By default only pull, at the first lock of a tracking ref it
		// takes (a full disk there was reported as a remote that could not
		// be reached until session 14).
		if !testsize.Long() && c.name != "pull" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			dir, uris, store, env := killProject(t, 3)
			mustRP(t, dir, "run", "--id", "r0", uris[0])
			args := c.setup(t, dir, uris)
			base := filepath.Join(t.TempDir(), "base")
			copyStore(t, store, base)
			points := errPoints(t, strace, dir, env, store, args...)
			if c.keep != nil {
				points = slices.DeleteFunc(points, func(p errPoint) bool { return !c.keep(p) })
			}
			errnos := errErrnos
			if !testsize.Long() {
				i := slices.IndexFunc(points, func(p errPoint) bool {
					return p.Kind == "open" && strings.HasPrefix(p.Path, "refs/readproof-remotes/") && strings.HasSuffix(p.Path, ".lock")
				})
				if i < 0 {
					t.Fatalf("the pull took no lock of a tracking ref (fault points %q)", points)
				}
				points, errnos = points[i:i+1], map[string][]string{"open": {"ENOSPC"}}
			}
			wholeRefs := refNameList(t, store)
			outcomes := errSweep(t, strace, dir, env, store, base, points, errnos, c.tried, wholeRefs, args...)
			t.Logf("%d fault points:\n\t%s", len(points), strings.Join(outcomes, "\n\t"))
		})
	}
}

// TestParseErrPoints: a write's or an fsync's point is its descriptor's
// path (not its quoted data), a relative path joins the directory
// descriptor before it, an open counts only with O_CREAT, each kind and
// path once, and random names, loose objects, packs, scratch directories
// and paths outside the store are no points.
func TestParseErrPoints(t *testing.T) {
	t.Parallel()
	const trace = `100 openat(AT_FDCWD</p>, "/s/refs/heads/a.lock", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0600) = 3</s/refs/heads/a.lock>
100 openat(AT_FDCWD</p>, "/s/packed-refs", O_RDONLY|O_CLOEXEC) = 4</s/packed-refs>
100 write(3</s/refs/heads/a.lock>, "/s/refs/heads/b\n", 16) = 16
101 write(3</s/refs/heads/a.lock>, "x", 1) = 1
100 fsync(3</s/refs/heads/a.lock>) = 0
100 openat(AT_FDCWD</p>, "/s/objects/pack/tmp_obj_123", O_RDWR|O_CREAT|O_EXCL, 0600) = 5</s/objects/pack/tmp_obj_123>
100 linkat(AT_FDCWD</p>, "/s/objects/pack/tmp_obj_123", AT_FDCWD</p>, "/s/objects/ab/cdef", 0) = 0
100 mkdirat(AT_FDCWD</p>, "/s/objects/ab", 0700) = 0
100 renameat(AT_FDCWD</p>, "/s/refs/heads/a.lock", AT_FDCWD</p>, "/s/refs/heads/a") = 0
102 unlinkat(6</s>, "readproof-fetch-9", AT_REMOVEDIR) = 0
102 mkdirat(AT_FDCWD</p>, "/s/readproof-fetch-9/refs", 0700) = 0
102 unlinkat(6</s>, "gc.pid", 0) = 0
100 write(7</s/objects/pack/pack-1.pack>, "PACK", 4) = 4
100 write(8</p/out.json>, "{}", 2) = 2
100 write(2<pipe:[1]>, "readproof: ok\n", 14) = 14
`
	var got []string
	for _, p := range parseErrPoints(trace, "/s") {
		got = append(got, p.String()+" @ "+p.abs)
	}
	want := []string{
		"open refs/heads/a.lock @ /s/refs/heads/a.lock",
		"write refs/heads/a.lock @ /s/refs/heads/a.lock",
		"fsync refs/heads/a.lock @ /s/refs/heads/a.lock",
		"rename refs/heads/a.lock @ /s/refs/heads/a.lock",
		"unlink gc.pid @ /s/gc.pid",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("fault points\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFailedClone fails `readproof clone` of a path remote at each fault
// point of a trace of the whole clone in the directory that holds the new
// store (its staging directory .copy.clone, where the store is made and
// verified, and the rename of that to the store's path), four of them by
// default (the staging directory's mkdir, the remote's config, the rename
// into place and the sync after it) and all with READPROOF_LONG_TESTS=1:
// each failure exits 1 with a message that names the file and the cause
// and ends in a hint, leaves nothing where the store was to be, and the
// clone again succeeds and verifies; a failure of the last sync, after the
// rename, leaves the verified store and says so. (Points under a scratch
// name the clone builds in, such as git's temporary files, are random and
// not failed here.)
func TestFailedClone(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	remote, uris, _, env := killProject(t, 3)
	for i, u := range uris {
		mustRP(t, remote, "run", "--id", fmt.Sprintf("p%d", i), u)
	}
	dir := t.TempDir()
	dest := filepath.Join(dir, "copy")
	args := []string{"clone", filepath.Join(remote, ".readproof"), dest}
	// The clone builds in its staging directory beside dest and renames it
	// to dest at the end: the fault points are every call on a path in
	// dir, which holds both.
	staging := filepath.Join(dir, ".copy.clone")
	points := errPoints(t, strace, dir, env, dir, args...)
	if len(points) == 0 {
		t.Fatal("the clone made no call in its directory that a fault can name")
	}
	errnos := errErrnos
	if !testsize.Long() {
		errnos = map[string][]string{"mkdir": {"ENOSPC"}, "open": {"EDQUOT"}, "rename": {"EIO"}, "fsync": {"EIO"}}
		var picked []errPoint
		for _, w := range []errPoint{{Kind: "mkdir", Path: ".copy.clone"}, {Kind: "open", Path: ".copy.clone/config.lock"},
			{Kind: "rename", Path: ".copy.clone"}, {Kind: "fsync", Path: "."}} {
			i := slices.IndexFunc(points, func(p errPoint) bool { return p.Kind == w.Kind && p.Path == w.Path })
			if i < 0 {
				t.Fatalf("the clone made no %s (fault points %q)", w, points)
			}
			picked = append(picked, points[i])
		}
		points = picked
	}
	check := func(at string) {
		t.Helper()
		checkRefs(t, dest)
		if o, e, err := rp(t, dir, "--store", dest, "verify"); err != nil {
			t.Fatalf("%s: verify: %v\n%s%s", at, err, o, e)
		}
	}
	var outcomes []string
	for _, p := range points {
		for _, errno := range errnos[p.Kind] {
			if err := os.RemoveAll(dest); err != nil {
				t.Fatal(err)
			}
			at := fmt.Sprintf("readproof clone, %s failing with %s", p, errno)
			code, stderr := failAt(t, strace, dir, env, p, errno, args...)
			if code == 0 {
				outcomes = append(outcomes, fmt.Sprintf("%s %s: ignored", p, errno))
				check(at)
				continue
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 1 || !strings.Contains(strings.ToLower(stderr), errnoText[errno]) || !(strings.Contains(stderr, dest) || strings.Contains(stderr, staging)) ||
				!strings.HasPrefix(lines[len(lines)-1], "readproof: hint: ") || strings.Contains(stderr, "goroutine ") {
				t.Fatalf("%s: exit code %d, want 1 with a message that names the file and %q and ends in a hint:\n%s", at, code, errnoText[errno], stderr)
			}
			ents, err := os.ReadDir(dir)
			if err == nil && len(ents) == 1 && ents[0].Name() == "copy" && strings.Contains(stderr, "hint: the verified store is at "+dest) {
				// The rename was done and only the sync of dir failed: the
				// store stays, and the hint says so.
				check(at)
				outcomes = append(outcomes, fmt.Sprintf("%s %s: failed after the rename, the verified store in place", p, errno))
				continue
			}
			if err != nil || len(ents) != 0 {
				t.Fatalf("%s: left %v (%v)", at, ents, err)
			}
			cmd := exec.Command("readproof", args...)
			cmd.Dir, cmd.Env = dir, env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s, then again: %v\n%s", at, err, out)
			}
			check(at + ", then again")
			outcomes = append(outcomes, fmt.Sprintf("%s %s: failed, nothing left; again: ok", p, errno))
		}
	}
	t.Logf("%d fault points:\n\t%s", len(points), strings.Join(outcomes, "\n\t"))
}

// TestFailedEvidenceExport fails `evidence export --out FILE` where it
// places the bundle (its temporary file beside FILE has a random name, so
// every call of the kind fails: the fsync, the rename; a write that fails
// takes the same path out): each
// failure exits 1 with a message that names FILE and the cause and ends
// in a hint, leaves no temporary file, and leaves FILE as it was (absent,
// or an earlier bundle unchanged); the export again writes the bundle.
func TestFailedEvidenceExport(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	dir, uris, _, env := killProject(t, 1)
	mustRP(t, dir, "run", "--id", "r0", uris[0])
	outDir := t.TempDir()
	out := filepath.Join(outDir, "ev.json")
	args := []string{"evidence", "export", "--out", out, "r0"}
	faults := []struct{ kind, inject, text string }{
		{"rename", "EIO:when=1+", "input/output error"},
		{"rename", "ENOSPC:when=1+", "no space left on device"},
		{"fsync", "EIO:when=1+", "input/output error"},
	}
	for _, earlier := range []bool{false, true} {
		for _, f := range faults {
			if err := os.RemoveAll(outDir); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(outDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if earlier {
				if err := os.WriteFile(out, []byte("earlier\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			at := fmt.Sprintf("evidence export, %s failing with %s (earlier file: %v)", f.kind, f.inject, earlier)
			code, stderr := failCalls(t, strace, dir, env, f.kind, "", f.inject, args...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 1 || !strings.Contains(stderr, f.text) || !strings.Contains(stderr, out) || !strings.HasPrefix(lines[len(lines)-1], "readproof: hint: ") {
				t.Fatalf("%s: exit code %d, want 1 with a message that names %s and %q and ends in a hint:\n%s", at, code, out, f.text, stderr)
			}
			ents, err := os.ReadDir(outDir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			want := []string(nil)
			if earlier {
				want = []string{"ev.json"}
				if b, _ := os.ReadFile(out); string(b) != "earlier\n" {
					t.Fatalf("%s: the earlier file now holds %q", at, b)
				}
			}
			if !slices.Equal(names, want) {
				t.Fatalf("%s: %s holds %q, want %q", at, outDir, names, want)
			}
			mustRP(t, dir, args...)
			if o, e, err := rp(t, dir, "evidence", "verify", out); err != nil {
				t.Fatalf("%s, then again: evidence verify: %v\n%s%s", at, err, o, e)
			}
		}
	}
}
