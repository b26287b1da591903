package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testsize"
)

// TestKilledInit kills `readproof init` at each point where it makes
// something in the project directory under the store's name
// (parseCloneKillPoints: the store, or beside it a name that starts with
// "."+its name), among those a second init makes too (a temporary
// directory's random name names no call of the next run). After each kill
// the store is missing or whole: a store whose journal has its root commit
// (refs/heads/main), which verify passes; then `readproof init` again
// makes the store (or, over a whole one, says it exists), and a run goes on
// the journal after that root commit, with nothing left beside the store
// (the temporary directory a killed init left is removed by the next init
// once older than the stale-lock age). Before session 14 the root commit was written after the store
// was renamed into place, and a kill in between left a store without
// `main` that init again called ready and whose first run started a
// journal with no root commit. By default init is killed where it renames
// the store into place and at the next point; READPROOF_LONG_TESTS=1 kills
// it at every point.
func TestKilledInit(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	dir, uris, store, env := killProject(t, 1)
	if err := os.RemoveAll(store); err != nil {
		t.Fatal(err)
	}
	trace := func() []killPoint {
		t.Helper()
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(t.TempDir(), "strace.log")
		cmd := exec.Command(strace, "-f", "-y", "-o", log, "-e", cloneKillTrace, "readproof", "init")
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("readproof init, traced: %v\n%s", err, out)
		}
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		return parseCloneKillPoints(string(data), store)
	}
	points := trace()
	again := map[string]bool{}
	for _, p := range trace() {
		again[p.Call] = true
	}
	points = slices.DeleteFunc(points, func(p killPoint) bool { return !again[p.Call] })
	onto := slices.IndexFunc(points, func(p killPoint) bool { return p.Kind == "rename" && p.Paths[0] == ".readproof" })
	if onto < 0 || onto == len(points)-1 {
		t.Fatalf("no rename onto the store, or no point after it, among the kill points %q", points)
	}
	if !testsize.Long() {
		// the rename onto the store, and the point after it (before
		// session 14, a store without its root commit)
		points = points[onto : onto+2]
	}
	root := func() string {
		out, _ := exec.Command("git", "--git-dir", store, "rev-list", "--first-parent", "--max-parents=0", "refs/heads/main").Output()
		return strings.TrimSpace(string(out))
	}
	var states []string
	for i, p := range points {
		where := fmt.Sprintf("killed at %s", p)
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{"-f", "-o", os.DevNull}, p.inject...), "readproof", "init")
		cmd := exec.Command(strace, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("%s: init was not killed (the point was read from a trace of the whole init)\n%s", where, out)
		}
		state, whole := dirState(t, store), false
		switch {
		case state == "missing":
		case root() != "":
			whole = true
			checkKilled(t, dir, store, where)
		default:
			t.Fatalf("%s: the store is neither missing nor whole, but a %s with refs %q", where, state, allRefsOf(store))
		}
		states = append(states, fmt.Sprintf("%s: %s", p, state))
		time.Sleep(killStaleAge + 50*time.Millisecond)
		again := exec.Command("readproof", "init")
		again.Dir, again.Env = dir, env
		var o, e strings.Builder
		again.Stdout, again.Stderr = &o, &e
		if err := again.Run(); whole != (err != nil) || (whole && !strings.Contains(e.String(), "already exists")) {
			t.Fatalf("%s (whole: %v), then init again: %v\n%s%s", where, whole, err, o.String(), e.String())
		}
		// what the killed init left beside the store (its temporary
		// directory) is gone: the init again removed it
		if left, _ := filepath.Glob(filepath.Join(dir, "..readproof.init-*")); len(left) > 0 {
			t.Fatalf("%s, then init again: left %q", where, left)
		}
		r := root()
		if r == "" {
			t.Fatalf("%s, then init again: no root commit on main", where)
		}
		id := fmt.Sprintf("k%d", i)
		mustRP(t, dir, "run", "--id", id, uris[0])
		if got := root(); got != r {
			t.Fatalf("%s, then init again and a run: the journal's root is %s, was %s", where, got, r)
		}
		checkKilled(t, dir, store, where)
	}
	t.Logf("killed init at %d points:\n\t%s", len(points), strings.Join(states, "\n\t"))
}
