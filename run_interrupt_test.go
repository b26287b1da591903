//go:build unix

package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGINTDuringRunSaysInterrupted (session 17): Ctrl-C (or SIGTERM)
// while `run --id` reads its documents blamed the document being read:
//
//	readproof: error: readproof://k/d118: reading docs/d118.md: cancelled (context canceled)
//
// with no hint, though the document was fine and nothing was recorded
// (the run's one store commit comes after every read). It now says the
// run was interrupted, and that nothing of it was recorded. The signal
// goes while an HTTP source holds the read open.
func TestSIGINTDuringRunSaysInterrupted(t *testing.T) {
	t.Parallel()
	requireGit(t)
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	dir := t.TempDir()
	toml := "version = 1\n[network]\nallow_cidrs = [\"127.0.0.1/32\"]\n\n[[resource]]\nuri = \"readproof://web/slow\"\npolicy = \"require_fresh\"\nsource = { type = \"http\", url = \"" + srv.URL + "/slow\" }\n"
	if err := os.WriteFile(filepath.Join(dir, "readproof.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRP(t, dir, "init")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command("readproof", "run", "--id", "r1", "readproof://web/slow")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-arrived:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the source was never asked for the document\n%s", errb.String())
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Errorf("%v during run --id: %v, exit %d, want 130\n%s", sig, err, code, errb.String())
		}
		msg := errb.String()
		if !strings.Contains(msg, "readproof: error: run --id r1: interrupted") || !strings.Contains(msg, "readproof: hint: nothing of the run was recorded") {
			t.Errorf("%v during run --id: stderr does not say the run was interrupted and nothing recorded:\n%s", sig, msg)
		}
		if out.Len() > 0 {
			t.Errorf("%v during run --id: stdout %q, want nothing", sig, out.String())
		}
	}
	if o, _, _ := rp(t, dir, "run", "list"); strings.Contains(o, "r1") {
		t.Errorf("an interrupted run was recorded:\n%s", o)
	}
}

// TestSIGINTDuringPullAndClone (session 17): Ctrl-C while pull or clone
// waited on the remote exited 130, but with the hints of a remote that
// cannot be reached ("check the remote's URL …") or of damaged objects
// ("check the repository's objects, then clone again"). They now say
// the command was interrupted and what to run again. The remote is an
// HTTP server that never answers.
func TestSIGINTDuringPullAndClone(t *testing.T) {
	t.Parallel()
	requireGit(t)
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		// held until the signal has gone (100 ms after the request came),
		// then refused: git's remote helper, which holds readproof's
		// pipes after git is killed, then exits too
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
		}
		http.Error(w, "closed", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	dir := t.TempDir()
	mustRP(t, dir, "init")
	mustRP(t, dir, "remote", "add", "origin", srv.URL+"/shared.git")
	for _, tc := range []struct {
		args []string
		hint string
	}{
		{[]string{"pull", "origin"}, "readproof: hint: interrupted: run `readproof pull origin` again"},
		{[]string{"clone", srv.URL + "/shared.git", "copy"}, "readproof: hint: interrupted: nothing was made at copy"},
	} {
		cmd := exec.Command("readproof", tc.args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=")
		// a file, not a pipe: git's remote helper, whose request the
		// server holds, keeps a pipe open after readproof has exited
		errf, err := os.CreateTemp(t.TempDir(), "stderr")
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = errf
		errb := &fileText{f: errf}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-arrived: // a request of the command before, left over
		default:
		}
		select {
		case <-arrived:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("readproof %s never asked the remote\n%s", strings.Join(tc.args, " "), errb.String())
		}
		time.Sleep(100 * time.Millisecond) // git is waiting on the answer
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Errorf("SIGINT during %s: exit %d, want 130\n%s", strings.Join(tc.args, " "), code, errb.String())
		}
		if msg := errb.String(); !strings.Contains(msg, tc.hint) || strings.Contains(msg, "check the remote") {
			t.Errorf("SIGINT during %s: want the hint %q\n%s", strings.Join(tc.args, " "), tc.hint, msg)
		}
	}
}

// fileText reads back what a command wrote to f.
type fileText struct{ f *os.File }

func (ft *fileText) String() string {
	b, _ := os.ReadFile(ft.f.Name())
	return string(b)
}
