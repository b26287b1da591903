package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testsize"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestKilledAborts kills `run abort` and `run reopen` at random moments
// (issue 15): every ref still names a complete object graph, the run keeps
// at least one ref, readproof reports each run as exactly one of open or
// aborted, with all its entries, and the next command on the run leaves it
// exactly one ref (a killed process can leave two: docs/store-format.md,
// "Aborted run").
func TestKilledAborts(t *testing.T) {
	t.Parallel()
	dir, uris, store, env := killProject(t, 20)
	rng := rand.New(rand.NewPCG(3, 4))
	killed, half := 0, 0
	rounds := testsize.Pick(t, 6, 30)
	// The kill comes at a random moment within the time the last
	// uninterrupted abort took (the one ending each round), so a faster
	// machine or store still sees processes killed mid-flight; while none
	// was, up to three times as many rounds more are run.
	window := 25 * time.Millisecond
	for round := 0; round < rounds || (killed == 0 && round < 4*rounds); round++ {
		id := fmt.Sprintf("a%d", round)
		mustRP(t, dir, "run", "start", id)
		mustRP(t, dir, append([]string{"run", "mount", id}, uris[:5]...)...)
		verb := "abort"
		if round%2 == 1 {
			mustRP(t, dir, "run", "abort", id)
			verb = "reopen"
		}
		if killWithin(t, dir, env, rng, int(window.Microseconds()), "run", verb, id) {
			killed++
		}
		checkRefs(t, store)
		refs := func() (open, aborted int) {
			return refCount(t, store, "refs/heads/readproof/open/"+id), refCount(t, store, "refs/heads/readproof/aborted/"+id+"/")
		}
		open, aborted := refs()
		if open+aborted == 0 {
			t.Fatalf("round %d (%s killed): no ref left for %s", round, verb, id)
		}
		state := listedState(t, dir, id)
		if open+aborted == 2 || (open == 1 && state == "aborted") {
			half++ // a half-done abort or reopen
		}
		if state == "aborted" {
			rpWith(t, dir, env, "run", "reopen", id)
			if open, aborted := refs(); open != 1 || aborted != 0 {
				t.Fatalf("round %d (%s killed): after reopen %d open and %d aborted refs for %s, want 1 and 0", round, verb, open, aborted, id)
			}
		}
		if got := listedState(t, dir, id); got != "open" {
			t.Fatalf("round %d (%s killed, then %s): run %s is %s, want open", round, verb, state, id, got)
		}
		var st struct {
			Entries []json.RawMessage `json:"entries"`
		}
		if err := json.Unmarshal([]byte(mustRP(t, dir, "--json", "run", "show", id)), &st); err != nil || len(st.Entries) != 5 {
			t.Fatalf("round %d: run %s has %d entries (%v), want 5", round, id, len(st.Entries), err)
		}
		began := time.Now()
		rpWith(t, dir, env, "run", "abort", id)
		window = max(time.Since(began), time.Millisecond)
		if open, aborted := refs(); open != 0 || aborted != 1 {
			t.Fatalf("round %d (%s killed): after abort %d open and %d aborted refs for %s, want 0 and 1", round, verb, open, aborted, id)
		}
		if got := listedState(t, dir, id); got != "aborted" {
			t.Fatalf("round %d: run %s is %s after abort, want aborted", round, id, got)
		}
	}
	t.Logf("killed %d of the aborts/reopens before they finished; %d left them half done", killed, half)
	if killed == 0 {
		t.Fatal("no process was killed mid-flight; the test proves nothing")
	}
	mustRP(t, dir, "verify")
	fsck(t, store)
}

// listedState is the state `run list` gives run id: open, aborted or
// committed; it fails the test unless the run is listed exactly once.
func listedState(t testing.TB, dir, id string) string {
	t.Helper()
	var list []struct {
		RunID   string `json:"run_id"`
		Open    bool   `json:"open"`
		Aborted bool   `json:"aborted"`
	}
	if err := json.Unmarshal([]byte(mustRP(t, dir, "--json", "run", "list")), &list); err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, r := range list {
		if r.RunID != id {
			continue
		}
		switch {
		case r.Open:
			states = append(states, "open")
		case r.Aborted:
			states = append(states, "aborted")
		default:
			states = append(states, "committed")
		}
	}
	if len(states) != 1 {
		t.Fatalf("run list shows run %s as %v, want one state", id, states)
	}
	return states[0]
}

// refCount counts the refs under prefix (or the one ref named).
func refCount(t testing.TB, store, prefix string) int {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", store, "for-each-ref", "--format=%(refname)", prefix).Output()
	if err != nil {
		t.Fatal(err)
	}
	return len(strings.Fields(string(out)))
}

// rpWith runs readproof with env (a short stale-lock age, so a lock left by
// a killed process is taken over at once) and fails the test on an error.
func rpWith(t testing.TB, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("readproof", args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("readproof %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// halfDoneCmd leaves run RUN with the refs that a process killed half way
// through `run abort` (after it moved the open ref onto its abort commit)
// or `run reopen` (after it created the open ref, before it deleted the
// aborted one) leaves, with stock git: `halfdone GITDIR abort|reopen RUN`
// (docs/store-format.md, "Half-done transitions").
func halfDoneCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 || (args[1] != "abort" && args[1] != "reopen") {
		ts.Fatalf("usage: halfdone GITDIR abort|reopen RUN")
	}
	gitDir, run := ts.MkAbs(args[0]), args[2]
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=readproof", "GIT_AUTHOR_EMAIL=readproof@localhost",
			"GIT_COMMITTER_NAME=readproof", "GIT_COMMITTER_EMAIL=readproof@localhost")
		out, err := cmd.Output()
		ts.Check(err)
		return strings.TrimSpace(string(out))
	}
	open := "refs/heads/readproof/open/" + run
	if args[1] == "abort" {
		tip := git("rev-parse", open)
		git("update-ref", open, git("commit-tree", tip+"^{tree}", "-p", tip, "-m", "abort run "+run), tip)
		return
	}
	aborted := strings.Fields(git("for-each-ref", "--format=%(objectname)", "refs/heads/readproof/aborted/"+run+"/"))
	if len(aborted) != 1 {
		ts.Fatalf("halfdone: run %s has %d aborted refs, want 1", run, len(aborted))
	}
	git("update-ref", open, git("commit-tree", aborted[0]+"^{tree}", "-p", aborted[0], "-m", "reopen run "+run), "")
}
