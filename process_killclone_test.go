package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/internal/testsize"
)

// A clone is killed at the calls by which it makes files in the target's
// directory (parseCloneKillPoints): the directories and files it creates, the
// renames, unlinks and fsyncs there, and its first open of each file
// there, which after the refs are written is where verification starts
// reading them. Each point is named by its kind and a path, and strace
// kills at the first call of that kind on that path (-P PATH, when=1), so
// a point is only the first such call; calls in objects/ (git's temporary
// packs, a random name) and in a fetch's scratch directory are left out,
// as are the calls of git processes (a kill there is git failing, which
// the clone reports, not readproof killed).

// cloneKillTrace is the strace filter of a clone's kill points.
const cloneKillTrace = "trace=execve,mkdir,mkdirat,openat,rename,renameat,renameat2,unlink,unlinkat,fsync,fdatasync"

// cloneKillKinds are the system calls of each kind of kill point.
var cloneKillKinds = map[string]string{
	"mkdir":  "mkdir,mkdirat",
	"open":   "openat",
	"rename": "rename,renameat,renameat2",
	"unlink": "unlink,unlinkat",
	"fsync":  "fsync,fdatasync",
}

// cloneFdRE matches the path strace -y prints for an fsync's descriptor.
var cloneFdRE = regexp.MustCompile(`^\d+<([^>]*)>`)

// parseCloneKillPoints reads the kill points of a clone into target from
// trace (strace -f -y with cloneKillTrace): the first call of each kind on
// each path in the target's directory that is the target, a directory or
// file beside it whose name starts with "."+its name (what the clone makes
// there before the store is in place), something under either, or the
// directory itself; each named by that path relative to the directory.
func parseCloneKillPoints(trace, target string) []killPoint {
	parent, base := filepath.Dir(target), filepath.Base(target)
	inArea := func(p string) (string, bool) {
		if p == parent {
			return ".", true
		}
		rel, err := filepath.Rel(parent, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			return "", false
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if parts[0] != base && !strings.HasPrefix(parts[0], "."+base) {
			return "", false
		}
		if len(parts) > 1 && (parts[1] == "objects" || strings.HasPrefix(parts[1], "readproof-fetch-") || strings.HasPrefix(parts[1], "readproof-probe-")) {
			return "", false
		}
		return rel, true
	}
	git := map[string]bool{} // threads that ran another program
	first := true
	seen := map[string]bool{} // kind and path
	var points []killPoint
	calls := []string{"execve"}
	for _, cs := range cloneKillKinds {
		calls = append(calls, cs)
	}
	for _, m := range straceCalls(trace, calls...) {
		tid, call, args := m[1], m[2], m[3]
		if call == "execve" {
			if !first {
				git[tid] = true
			}
			first = false
			continue
		}
		kind := ""
		for k, calls := range cloneKillKinds {
			if slices.Contains(strings.Split(calls, ","), call) {
				kind = k
			}
		}
		var paths []string
		if kind == "fsync" {
			if f := cloneFdRE.FindStringSubmatch(args); f != nil {
				paths = append(paths, f[1])
			}
		} else {
			for _, p := range killPathRE.FindAllStringSubmatch(args, -1) {
				paths = append(paths, p[1])
			}
		}
		// One point a call, named by its last path that no earlier call
		// of its kind worked on (a rename's target: packed-refs, not the
		// lock renamed onto it; the store, not the staging directory).
		name, named := "", ""
		for _, p := range paths {
			rel, ok := inArea(p)
			if !ok || seen[kind+" "+p] {
				continue
			}
			seen[kind+" "+p] = true
			name, named = rel, p
		}
		if named == "" || git[tid] {
			continue
		}
		points = append(points, killPoint{Call: kind + " " + filepath.ToSlash(name), Kind: kind, Paths: []string{name},
			inject: []string{"-e", "trace=" + cloneKillKinds[kind], "-P", named, "-e", "inject=" + cloneKillKinds[kind] + ":signal=KILL:when=1"}})
	}
	return points
}

// cloneTrace runs `readproof clone SRC TARGET` in dir under strace,
// unkilled, and returns its kill points.
func cloneTrace(t testing.TB, strace, dir string, env []string, src, target string) []killPoint {
	t.Helper()
	log := filepath.Join(t.TempDir(), "strace.log")
	cmd := exec.Command(strace, "-f", "-y", "-o", log, "-e", cloneKillTrace, "readproof", "clone", src, target)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("readproof clone %s %s, traced: %v\n%s", src, target, err, out)
	}
	trace, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return parseCloneKillPoints(string(trace), target)
}

// cloneKillAt runs `readproof clone SRC TARGET` in dir under strace,
// killed at p, and reports whether it was killed. A clone that fails
// otherwise fails the test unless refused is set (a remote whose content
// fails verification): then it must exit 3.
func cloneKillAt(t testing.TB, strace, dir string, env []string, p killPoint, refused bool, src, target string) (killed bool) {
	t.Helper()
	args := append(append([]string{"-f", "-o", os.DevNull}, p.inject...), "readproof", "clone", src, target)
	cmd := exec.Command(strace, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	killed = (ws.Signaled() && ws.Signal() == syscall.SIGKILL) || ws.ExitStatus() == 128+int(syscall.SIGKILL)
	if err != nil && !killed && (!refused || cmd.ProcessState.ExitCode() != 3) {
		t.Fatalf("readproof clone, to be killed at %s: %v\n%s", p, err, out)
	}
	return killed
}

// dirState says what is at path: "missing", "empty dir MODE", or a
// listing of what it holds.
func dirState(t testing.TB, path string) string {
	t.Helper()
	fi, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return "missing"
	}
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() {
		return "a " + fi.Mode().Type().String()
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		return fmt.Sprintf("empty dir %o", fi.Mode().Perm())
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return "dir of " + strings.Join(names, " ")
}

// allRefsOf lists every ref of the repository at gitDir with what it
// names ("" when git finds no refs or no repository there).
func allRefsOf(gitDir string) string {
	out, _ := exec.Command("git", "--git-dir", gitDir, "for-each-ref", "--format=%(objectname) %(refname)").Output()
	return strings.TrimSpace(string(out))
}

// leftBeside lists what is in target's directory besides target.
func leftBeside(t testing.TB, target string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(target))
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		if e.Name() != filepath.Base(target) {
			left = append(left, e.Name())
		}
	}
	return left
}

// TestKilledClone kills `readproof clone` of a store of three runs at each
// point where it makes something in the target's directory
// (parseCloneKillPoints), from a path and (READPROOF_LONG_TESTS=1) from `git
// daemon` on 127.0.0.1, into a missing directory and into an empty one the
// user made (mode 750). After each kill the target is as it was (missing,
// or the same empty directory, its mode kept) or the whole clone: a store
// with the refs an unkilled clone leaves, which verify passes
// (docs/sync.md: nothing is readable as a store until verification has
// passed). Then the same clone again succeeds, with the unkilled clone's
// refs and nothing left beside the target (what the killed clone left
// there is its own and stale), or, when the kill left the whole clone,
// refuses to clone over it. A remote whose content fails verification,
// killed once verification has begun, leaves nothing either, and the clone
// again is refused with nothing left. By default the clone from a path into
// a missing directory is killed where it writes the refs (before session 14
// that left a store without refs at the target, which a clone again
// refused), and the refused clone into an empty directory where
// verification first reads them back (that left the forged store at the
// target, unverified); READPROOF_LONG_TESTS=1 kills every clone at every
// point, from the daemon too.
func TestKilledClone(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	srcDir, uris, src, env := killProject(t, 3)
	for i, u := range uris {
		mustRP(t, srcDir, "run", "--id", fmt.Sprintf("r%d", i), u)
	}
	// forged: a copy of the store whose run r0 names a manifest that
	// records a content hash its snapshot does not have.
	forged := filepath.Join(t.TempDir(), "forged.git")
	copyStore(t, src, forged)
	forgeManifest(t, forged, "refs/tags/readproof/runs/r0")

	type remote struct{ name, url string }
	remotes := []remote{{"path", src}}
	if testsize.Long() {
		served := t.TempDir()
		copyStore(t, src, filepath.Join(served, "src.git"))
		remotes = append(remotes, remote{"daemon", serveGit(t, served) + "/src.git"})
	}
	work := t.TempDir() // where the clones run: no readproof.toml
	kills, left := 0, 0
	// One target for every case (each starts from a fresh directory that
	// holds it): by default the points traced for the first case serve
	// the others.
	target := filepath.Join(t.TempDir(), "into", "store")
	var points []killPoint
	var want string
	for _, r := range remotes {
		for _, given := range []bool{false, true} {
			for _, forge := range []bool{false, true} {
				if forge && (!given || r.name != "path") {
					continue
				}
				if !testsize.Long() && (given && !forge) {
					continue
				}
				name := fmt.Sprintf("from %s, into %s", r.name, map[bool]string{false: "a missing directory", true: "an empty directory"}[given])
				url := r.url
				if forge {
					name, url = name+", forged", forged
				}
				reset := func() {
					t.Helper()
					if err := os.RemoveAll(filepath.Dir(target)); err != nil {
						t.Fatal(err)
					}
					if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
						t.Fatal(err)
					}
					if given {
						if err := os.Mkdir(target, 0o750); err != nil {
							t.Fatal(err)
						}
						if err := os.Chmod(target, 0o750); err != nil {
							t.Fatal(err)
						}
					}
				}
				was := "missing"
				if given {
					was = "empty dir 750"
				}
				// The whole clone, traced (from the real store, a forged
				// clone is refused after the refs are written): its kill
				// points, and its refs.
				if points == nil || testsize.Long() {
					reset()
					points = cloneTrace(t, strace, work, env, r.url, target)
					w := allRefsOf(target)
					if !strings.Contains(w, "refs/tags/readproof/runs/r2") || (want != "" && w != want) {
						t.Fatalf("%s: the unkilled clone has refs\n%s\nwant those of the runs, as every unkilled clone\n%s", name, w, want)
					}
					want = w
				}
				if testsize.Long() {
					// Only the points a second clone makes too: a path
					// with a random part names no call of the next run.
					reset()
					again := map[string]bool{}
					for _, p := range cloneTrace(t, strace, work, env, r.url, target) {
						again[p.Call] = true
					}
					points = slices.DeleteFunc(points, func(p killPoint) bool { return !again[p.Call] })
				}
				// refsWrite is where the refs go in (the rename onto
				// packed-refs), verifying the first file opened after it,
				// where verification reads them back (packed-refs, or, from
				// the daemon, whose fetch had git open packed-refs first,
				// the loose journal ref the store is asked for).
				refsWrite := slices.IndexFunc(points, func(p killPoint) bool {
					return p.Kind == "rename" && filepath.Base(p.Paths[0]) == "packed-refs"
				})
				verifying := -1
				if refsWrite >= 0 {
					verifying = slices.IndexFunc(points[refsWrite:], func(p killPoint) bool { return p.Kind == "open" })
				}
				if verifying < 0 {
					t.Fatalf("%s: no rename onto packed-refs, or no open after it, among the kill points:\n%q", name, points)
				}
				verifying += refsWrite
				var at []killPoint
				switch {
				case testsize.Long() && forge:
					// a forged clone ends in verification
					at = points[:verifying+1]
				case testsize.Long():
					at = points
				case forge || given:
					at = []killPoint{points[verifying]}
				default:
					at = []killPoint{points[refsWrite]}
				}
				var states []string
				for _, p := range at {
					where := fmt.Sprintf("%s, killed at %s", name, p)
					reset()
					if !cloneKillAt(t, strace, work, env, p, forge, url, target) {
						t.Fatalf("%s: not killed (the point was read from a trace of the whole clone)", where)
					}
					kills++
					state := dirState(t, target)
					whole := false
					switch {
					case state == was:
					case !forge && allRefsOf(target) == want:
						whole = true
						if o, e, err := rp(t, work, "--store", target, "verify"); err != nil || !strings.Contains(o, "store ok") {
							t.Fatalf("%s: the store left fails verify: %v\n%s%s", where, err, o, e)
						}
					default:
						refs := allRefsOf(target)
						t.Fatalf("%s: the target holds neither what it held before (%s) nor the whole clone, but a %s, with %d refs (%d of them as the unkilled clone of the real store has them, of its %d)",
							where, was, state, countLines(refs), sharedLines(refs, want), countLines(want))
					}
					if l := leftBeside(t, target); len(l) > 0 {
						left++
						states = append(states, fmt.Sprintf("%s: left %q beside the target", p, l))
					} else {
						states = append(states, fmt.Sprintf("%s: whole=%v", p, whole))
					}
					// The same clone again, once what the killed one left
					// is stale.
					time.Sleep(killStaleAge + 50*time.Millisecond)
					var o, e strings.Builder
					cmd := exec.Command("readproof", "clone", url, target)
					cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = work, env, &o, &e
					err := cmd.Run()
					switch {
					case whole:
						if err == nil || !strings.Contains(e.String(), "pull into it instead") {
							t.Fatalf("%s: clone over the whole clone: %v\n%s%s", where, err, o.String(), e.String())
						}
					case forge:
						if exitCode(err) != 3 {
							t.Fatalf("%s: clone of the forged remote again: %v, want exit 3\n%s%s", where, err, o.String(), e.String())
						}
						if s := dirState(t, target); s != was {
							t.Fatalf("%s, then refused again: the target is a %s, was %s", where, s, was)
						}
					default:
						if err != nil {
							t.Fatalf("%s: the clone again: %v\n%s%s", where, err, o.String(), e.String())
						}
						if got := allRefsOf(target); got != want {
							t.Fatalf("%s: the clone again has refs\n%s\nthe unkilled clone\n%s", where, got, want)
						}
					}
					if l := leftBeside(t, target); len(l) > 0 {
						t.Fatalf("%s, then cloned again: %q left beside the target", where, l)
					}
				}
				t.Logf("%s: killed at %d points (%d traced):\n\t%s", name, len(at), len(points), strings.Join(states, "\n\t"))
			}
		}
	}
	t.Logf("killed clones %d times; %d left something beside the target", kills, left)
}

// sharedLines counts the lines of a that b has too.
func sharedLines(a, b string) int {
	n := 0
	for _, l := range strings.Split(a, "\n") {
		if l != "" && slices.Contains(strings.Split(b, "\n"), l) {
			n++
		}
	}
	return n
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// forgeManifest rewrites the manifest of the commit ref names in the
// repository gitDir so that its first entry records a content hash of other
// bytes, commits that tree with the same message and moves ref to it: a
// run a clone's verification refuses.
func forgeManifest(t testing.TB, gitDir, ref string) {
	t.Helper()
	data := gitIn(t, gitDir, "cat-file", "blob", ref+":manifest.json")
	re := regexp.MustCompile(`"sha256:[0-9a-f]{64}"`)
	loc := re.FindStringIndex(data)
	if loc == nil {
		t.Fatalf("no content hash in the manifest of %s:\n%s", ref, data)
	}
	forgedHash := `"sha256:` + strings.Repeat("0", 64) + `"`
	data = data[:loc[0]] + forgedHash + data[loc[1]:] + "\n"
	cmd := exec.Command("git", "--git-dir", gitDir, "hash-object", "-w", "--stdin")
	cmd.Stdin = strings.NewReader(data)
	blob, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var tree strings.Builder
	for _, line := range strings.Split(gitIn(t, gitDir, "ls-tree", ref+"^{tree}"), "\n") {
		if strings.HasSuffix(line, "\tmanifest.json") {
			line = "100644 blob " + strings.TrimSpace(string(blob)) + "\tmanifest.json"
		}
		tree.WriteString(line + "\n")
	}
	cmd = exec.Command("git", "--git-dir", gitDir, "mktree")
	cmd.Stdin = strings.NewReader(tree.String())
	treeID, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	msg := gitIn(t, gitDir, "log", "-1", "--format=%B", ref)
	cmd = exec.Command("git", "--git-dir", gitDir, "commit-tree", strings.TrimSpace(string(treeID)), "-m", msg)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=readproof", "GIT_AUTHOR_EMAIL=readproof@localhost", "GIT_COMMITTER_NAME=readproof", "GIT_COMMITTER_EMAIL=readproof@localhost")
	commit, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, gitDir, "update-ref", ref, strings.TrimSpace(string(commit)))
}

// serveGit serves the repositories under base over git:// on 127.0.0.1
// for the rest of the test and returns git://127.0.0.1:PORT.
func serveGit(t testing.TB, base string) string {
	t.Helper()
	d, err := testproc.StartFrontedDaemonOnFreePort(func(port int) *exec.Cmd {
		return exec.Command("git", "daemon", "--verbose", "--reuseaddr", "--base-path="+base, "--export-all",
			"--listen=127.0.0.1", "--port="+strconv.Itoa(port), base)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return fmt.Sprintf("git://127.0.0.1:%d", d.Port())
}
