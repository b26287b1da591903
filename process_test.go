package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testsize"
)

// These tests run the real readproof binary (the test binary installed on
// PATH by testscript.Main) as separate processes against one store.

func rp(t testing.TB, dir string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command("readproof", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func mustRP(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, errs, err := rp(t, dir, args...)
	if err != nil {
		t.Fatalf("readproof %s: %v\n%s", strings.Join(args, " "), err, errs)
	}
	return out
}

// project makes a directory with n documents declared as
// readproof://bench/docs/dNNNN, each size bytes, and an initialised store.
func project(t testing.TB, n, size int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	var toml strings.Builder
	toml.WriteString("version = 1\n")
	uris := make([]string, n)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("d%04d", i)
		body := bytes.Repeat([]byte(fmt.Sprintf("document %d line\n", i)), size/16+1)[:size]
		if err := os.WriteFile(filepath.Join(dir, "docs", name+".md"), body, 0o644); err != nil {
			t.Fatal(err)
		}
		uris[i] = "readproof://bench/docs/" + name
		fmt.Fprintf(&toml, "\n[[resource]]\nuri = %q\nsource = { type = \"filesystem\", path = \"docs/%s.md\" }\n", uris[i], name)
	}
	if err := os.WriteFile(filepath.Join(dir, "readproof.toml"), []byte(toml.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRP(t, dir, "init")
	return dir, uris
}

func fsck(t testing.TB, store string) {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", store, "fsck", "--strict", "--no-dangling").CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

type runJSON struct {
	RunID    string `json:"run_id"`
	Manifest string `json:"manifest"`
	Open     bool   `json:"open"`
}

func runs(t testing.TB, dir string) []runJSON {
	var out []runJSON
	if err := json.Unmarshal([]byte(mustRP(t, dir, "run", "list", "--json")), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestConcurrentRunsLoseNothing(t *testing.T) {
	t.Parallel()
	requireGit(t)
	dir, uris := project(t, 4, 512)
	const procs = 8
	each := testsize.Pick(t, 2, 4)
	var wg sync.WaitGroup
	errs := make(chan error, procs*each)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				// every process also rewrites a shared document so the
				// resource chains see concurrent observations
				_ = os.WriteFile(filepath.Join(dir, "docs", "d0000.md"), []byte(fmt.Sprintf("p%d i%d\n", p, i)), 0o644)
				args := append([]string{"run", "--id", fmt.Sprintf("p%d-r%d", p, i)}, uris...)
				if _, e, err := rp(t, dir, args...); err != nil {
					errs <- fmt.Errorf("%v: %s", err, e)
				}
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := runs(t, dir)
	if len(got) != procs*each {
		t.Fatalf("%d runs recorded, want %d", len(got), procs*each)
	}
	for _, r := range got {
		mustRP(t, dir, "replay", "--no-content", r.RunID)
	}
	// the journal reaches every manifest
	out, err := exec.Command("git", "--git-dir", filepath.Join(dir, ".readproof"), "rev-list", "--count", "--first-parent", "--grep=^record run ", "main").Output()
	if err != nil || strings.TrimSpace(string(out)) != fmt.Sprint(procs*each) {
		t.Fatalf("journal has %s commits, want %d (%v)", out, procs*each, err)
	}
	// every snapshot of the shared document that a run recorded is in its
	// history: concurrent observations lose nothing
	hist := mustRP(t, dir, "history", "--json", uris[0])
	var snaps []struct{ Snapshot string }
	if err := json.Unmarshal([]byte(hist), &snaps); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, s := range snaps {
		known[s.Snapshot] = true
	}
	// The manifests as committed, read in one git process (one `readproof
	// manifest` per run would start 16 more processes).
	var specs strings.Builder
	for _, r := range got {
		fmt.Fprintf(&specs, "%s:manifest.json\n", r.Manifest)
	}
	cat := exec.Command("git", "--git-dir", filepath.Join(dir, ".readproof"), "cat-file", "--batch")
	cat.Stdin = strings.NewReader(specs.String())
	batch, err := cat.Output()
	if err != nil {
		t.Fatalf("git cat-file --batch: %v", err)
	}
	for _, r := range got {
		// each object: "<oid> blob <size>\n<bytes>\n"
		head, rest, ok := bytes.Cut(batch, []byte("\n"))
		var oid, kind string
		var size int
		if n, _ := fmt.Sscanf(string(head), "%s %s %d", &oid, &kind, &size); !ok || n != 3 || kind != "blob" || len(rest) < size+1 {
			t.Fatalf("run %s: git cat-file --batch printed %q for its manifest.json", r.RunID, head)
		}
		var m struct{ Entries []struct{ Snapshot string } }
		if err := json.Unmarshal(rest[:size], &m); err != nil || len(m.Entries) == 0 {
			t.Fatalf("run %s: manifest.json: %v\n%s", r.RunID, err, rest[:size])
		}
		batch = rest[size+1:]
		if !known[m.Entries[0].Snapshot] {
			t.Fatalf("run %s read snapshot %s, missing from the history", r.RunID, m.Entries[0].Snapshot)
		}
	}
	fsck(t, filepath.Join(dir, ".readproof"))
}

func TestConcurrentMountsIntoOneRun(t *testing.T) {
	t.Parallel()
	requireGit(t)
	dir, uris := project(t, 8, 256)
	mustRP(t, dir, "run", "start", "shared")
	const procs = 8
	each := testsize.Pick(t, 2, 5)
	var wg sync.WaitGroup
	errs := make(chan error, procs*each)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, e, err := rp(t, dir, "run", "mount", "shared", uris[p]); err != nil {
					errs <- fmt.Errorf("%v: %s", err, e)
				}
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	mustRP(t, dir, "run", "commit", "shared")
	var m struct {
		Entries []struct {
			Position int
			URI      string
		}
	}
	if err := json.Unmarshal([]byte(mustRP(t, dir, "manifest", "--json", "shared")), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) != procs*each {
		t.Fatalf("%d entries, want %d", len(m.Entries), procs*each)
	}
	per := map[string]int{}
	for i, e := range m.Entries {
		if e.Position != i {
			t.Fatalf("entry %d has position %d", i, e.Position)
		}
		per[e.URI]++
	}
	for _, u := range uris {
		if per[u] != each {
			t.Fatalf("%s mounted %d times, want %d", u, per[u], each)
		}
	}
	mustRP(t, dir, "replay", "--no-content", "shared")
	fsck(t, filepath.Join(dir, ".readproof"))
}

// killStaleAge is the stale-lock age of the processes of a kill test: a
// lock a killed process left is taken over soon after. It can be short:
// the kill tests run one readproof at a time, and readproof takes its
// locks itself (no git child of a killed process holds one), so no live
// process ever holds a lock this old.
const killStaleAge = 100 * time.Millisecond

// killProject sets up a kill test (skipped under -short): a project of n
// documents, its store, and the environment for the processes killed, with
// the stale-lock age killStaleAge.
func killProject(t *testing.T, n int) (dir string, uris []string, store string, env []string) {
	t.Helper()
	requireGit(t)
	if testing.Short() {
		t.Skip("slow")
	}
	dir, uris = project(t, n, 1024)
	store = filepath.Join(dir, ".readproof")
	env = append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=", "READPROOF_STALE_LOCK_AGE="+killStaleAge.String())
	return dir, uris, store, env
}

// killWithin starts readproof ARGS in dir with env, kills it after a random
// wait of under maxMicros microseconds unless it has ended by then, and
// reports whether the kill landed (the process died of the signal rather
// than finishing first).
func killWithin(t testing.TB, dir string, env []string, rng *rand.Rand, maxMicros int, args ...string) bool {
	t.Helper()
	cmd := exec.Command("readproof", args...)
	cmd.Dir, cmd.Env = dir, env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	timer := time.NewTimer(time.Duration(rng.IntN(maxMicros)) * time.Microsecond)
	defer timer.Stop()
	select {
	case <-timer.C:
		_ = cmd.Process.Kill()
		<-exited
	case <-exited: // finished first: nothing to wait for
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

// waitLocksStale returns once no lock file under store is younger than
// age: the next process then takes over any lock a killed one left at
// once. It returns at once when no lock was left.
func waitLocksStale(t testing.TB, store string, age time.Duration) {
	t.Helper()
	for {
		var youngest time.Time
		err := filepath.WalkDir(store, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // removed while we walked
				}
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".lock") {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if fi.ModTime().After(youngest) {
				youngest = fi.ModTime()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		wait := time.Until(youngest.Add(age))
		if youngest.IsZero() || wait <= 0 {
			return
		}
		time.Sleep(wait)
	}
}

// TestKilledWriters kills real processes at random moments during mount and
// commit, then checks that every ref names a complete object graph, that
// every committed run replays and that the store still works.
func TestKilledWriters(t *testing.T) {
	t.Parallel()
	dir, uris, store, env := killProject(t, 200)
	mustRP(t, dir, "run", "start", "open-run")
	rng := rand.New(rand.NewPCG(1, 2))
	killed := 0
	rounds := testsize.Pick(t, 12, 30)
	for round := 0; round < rounds; round++ {
		var args []string
		switch round % 3 {
		case 0:
			args = append([]string{"run", "--id", fmt.Sprintf("k%d", round)}, uris...)
		case 1:
			args = append([]string{"run", "mount", "open-run"}, uris[:10]...)
		case 2:
			// with env too: a lock an earlier writer left when killed is
			// taken over after killStaleAge, not the default 10 s
			id := fmt.Sprintf("c%d", round)
			rpWith(t, dir, env, "run", "start", id)
			rpWith(t, dir, env, "run", "mount", id, uris[round%len(uris)])
			args = []string{"run", "commit", id}
		}
		if killWithin(t, dir, env, rng, 40_000, args...) {
			killed++
		}
		checkRefs(t, store)
	}
	t.Logf("killed %d of %d writers before they finished", killed, rounds)
	if killed == 0 {
		t.Fatal("no writer was killed mid-flight; the test proves nothing")
	}
	waitLocksStale(t, store, killStaleAge+50*time.Millisecond) // any lock a killed writer left is stale
	fsck(t, store)
	for _, r := range runs(t, dir) {
		if !r.Open {
			mustRP(t, dir, "replay", "--no-content", r.RunID)
		}
	}
	// the store still takes writes
	cmd := exec.Command("readproof", append([]string{"run", "--id", "after"}, uris...)...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run after kills: %v\n%s", err, out)
	}
	fsck(t, store)
}

// gitIn runs git on the repository gitDir and returns its output, trimmed;
// it fails the test when git fails.
func gitIn(t testing.TB, gitDir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// checkRefs asserts that every ref resolves to a commit whose history and
// trees are complete.
func checkRefs(t testing.TB, store string) {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", store, "for-each-ref", "--format=%(objectname) %(objecttype) %(refname)").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if f[1] != "commit" {
			t.Fatalf("ref %s points at a %s", f[2], f[1])
		}
	}
	if out, err := exec.Command("git", "--git-dir", store, "rev-list", "--objects", "--all", "--missing=print").Output(); err != nil {
		t.Fatalf("rev-list --objects --all: %v", err)
	} else {
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "?") {
				t.Fatalf("missing object %s reachable from a ref", l)
			}
		}
	}
}

func requireGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
}
