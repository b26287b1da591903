package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testsize"
)

// TestKilledRenames kills `readproof conflicts rename` at every rename and
// unlink it makes (strace delivers SIGKILL on entry to the Nth such system
// call, N = 1, 2, ... until the command finishes), for a plain rename, one
// that promotes a waiting conflicting manifest and one of a conflicting
// manifest (--manifest), with loose and with packed refs. After every kill
// `readproof verify` passes, every ref names a complete object graph, and
// when the kill left the rename undone, half done, or done but for the
// promoted manifest's conflict ref, running it again completes it, says what
// the whole rename says and leaves no conflict ref beside r1's manifest
// (docs/store-format.md, "Writing: crash and concurrency safety"). The two
// defects it found: a kill after the new run ref left a ref naming a
// manifest of another run id with no recorded rename (verify reported it
// broken) until the journal's record was published first, and the rename
// again after the last kill refused ("run id already names another
// manifest") until planRename learned to finish it (promotionLeft). By
// default each kind of rename runs with one ref storage (loose, packed,
// loose: both are covered); READPROOF_LONG_TESTS=1 runs all six pairs.
func TestKilledRenames(t *testing.T) {
	t.Parallel()
	requireGit(t)
	if testing.Short() {
		t.Skip("slow")
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("needs strace (it delivers the SIGKILL at each system call)")
	}
	if out, err := exec.Command(strace, "-f", "-o", os.DevNull, "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here: %v\n%s", err, out)
	}
	dir, uris := project(t, 2, 256)
	store := filepath.Join(dir, ".readproof")
	env := append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=", "READPROOF_STALE_LOCK_AGE="+killStaleAge.String())
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"--git-dir", store}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// Run r1 committed twice: m1, then (its ref deleted) m2, with m1 kept
	// as a conflict ref under r1, as a pull leaves a run id with two
	// manifests.
	mustRP(t, dir, append([]string{"run", "--id", "r1"}, uris...)...)
	m1 := git("rev-parse", "refs/tags/readproof/runs/r1")
	plain := filepath.Join(t.TempDir(), "plain")
	copyStore(t, store, plain)
	git("update-ref", "-d", "refs/tags/readproof/runs/r1")
	time.Sleep(10 * time.Millisecond) // another created_at, so another manifest
	mustRP(t, dir, append([]string{"run", "--id", "r1"}, uris[:1]...)...)
	m2 := git("rev-parse", "refs/tags/readproof/runs/r1")
	if m1 == m2 {
		t.Fatal("the second run r1 has the first one's manifest")
	}
	git("update-ref", "refs/tags/readproof/conflicts/runs/r1/"+m1, m1)
	conflicted := filepath.Join(t.TempDir(), "conflicted")
	copyStore(t, store, conflicted)

	cases := []struct {
		name   string
		base   string
		args   []string
		r1, r2 string // the run refs once renamed ("" absent)
	}{
		{"own", plain, []string{"conflicts", "rename", "r1", "r2"}, "", m1},
		{"promote", conflicted, []string{"conflicts", "rename", "r1", "r2"}, m1, m2},
		{"manifest", conflicted, []string{"conflicts", "rename", "r1", "r2", "--manifest", m1}, m2, m1},
	}
	runRef := func(id string) string {
		out, err := exec.Command("git", "--git-dir", store, "rev-parse", "-q", "--verify", "refs/tags/readproof/runs/"+id).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	// left is the conflict ref r1/<r1's manifest>, if one is left: a rename
	// killed after the old name moved onto the promoted manifest and before
	// that manifest's conflict ref went leaves it.
	left := func() string {
		m := runRef("r1")
		if m == "" {
			return ""
		}
		return git("for-each-ref", "--format=%(refname)", "refs/tags/readproof/conflicts/runs/r1/"+m)
	}
	// rename runs the case's command unkilled and returns its stdout.
	rename := func(c string, args []string) string {
		t.Helper()
		var stdout, stderr strings.Builder
		cmd := exec.Command("readproof", args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s%s", c, err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	points, half, left1 := 0, 0, 0
	for i, c := range cases {
		// what the whole rename says, which the rename again after a kill
		// says too
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
		copyStore(t, c.base, store)
		whole := rename(c.name+", unkilled", c.args)
		for _, packed := range []bool{false, true} {
			if !testsize.Long() && packed != (i%2 == 1) {
				continue
			}
			name := fmt.Sprintf("%s packed=%v", c.name, packed)
			for n := 1; ; n++ {
				if err := os.RemoveAll(store); err != nil {
					t.Fatal(err)
				}
				copyStore(t, c.base, store)
				if packed {
					git("pack-refs", "--all", "--prune")
				}
				before1, before2 := runRef("r1"), runRef("r2")
				args := append([]string{"-f", "-o", os.DevNull, "-e", "trace=rename,renameat,renameat2,unlink,unlinkat",
					"-e", fmt.Sprintf("inject=rename,renameat,renameat2,unlink,unlinkat:signal=KILL:when=%d", n), "readproof"}, c.args...)
				cmd := exec.Command(strace, args...)
				cmd.Dir, cmd.Env = dir, env
				out, err := cmd.CombinedOutput()
				// strace ends by the signal that ended readproof
				ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
				killed := (ws.Signaled() && ws.Signal() == syscall.SIGKILL) || ws.ExitStatus() == 128+int(syscall.SIGKILL)
				if err != nil && !killed {
					t.Fatalf("%s, kill at call %d: %v\n%s", name, n, err, out)
				}
				checkRefs(t, store)
				if o, e, err := rp(t, dir, "verify"); err != nil {
					t.Fatalf("%s, killed at rename/unlink %d: verify: %v\n%s%s", name, n, err, o, e)
				}
				got1, got2 := runRef("r1"), runRef("r2")
				if killed {
					points++
					if (got1 != before1 || got2 != before2) && (got1 != c.r1 || got2 != c.r2) {
						half++
					}
					l := left()
					if l != "" {
						left1++
					}
					if got1 != c.r1 || got2 != c.r2 || l != "" {
						// undone, half done, or done but for a conflict ref
						// left: the same command completes it and says what
						// the whole rename says
						waitLocksStale(t, store, killStaleAge+50*time.Millisecond)
						if out := rename(fmt.Sprintf("%s, killed at %d (r1 %q, r2 %q, left %q): the rename again", name, n, got1, got2, l), c.args); out != whole {
							t.Fatalf("%s, killed at %d: the rename again says\n%s\nthe whole rename\n%s", name, n, out, whole)
						}
						mustRP(t, dir, "verify")
					}
				}
				if got1, got2 := runRef("r1"), runRef("r2"); got1 != c.r1 || got2 != c.r2 {
					t.Fatalf("%s, killed at %d: r1 %q and r2 %q, want %q and %q", name, n, got1, got2, c.r1, c.r2)
				}
				if l := left(); l != "" {
					t.Fatalf("%s, killed at %d: conflict ref %s left beside run r1", name, n, l)
				}
				var list struct {
					Runs []json.RawMessage `json:"runs"`
				}
				if err := json.Unmarshal([]byte(mustRP(t, dir, "--json", "conflicts", "list")), &list); err != nil || len(list.Runs) != 0 {
					t.Fatalf("%s, killed at %d: conflicts left: %s (%v)", name, n, list.Runs, err)
				}
				if !killed {
					break
				}
			}
		}
	}
	t.Logf("killed renames at %d points; %d left them half done, %d a conflict ref beside r1", points, half, left1)
	if half == 0 {
		t.Fatal("no kill left a rename half done; the test proves nothing")
	}
	if left1 == 0 {
		t.Fatal("no kill left the promoted manifest's conflict ref; the rename again after it is untested")
	}
	fsck(t, store)
}

// copyStore copies the store directory from to a new directory to (cp -a:
// modes kept).
func copyStore(t testing.TB, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", from, to, err, out)
	}
}
