//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMirrorWaitShownOnATerminal (session 23): a read of a git source
// whose mirror another readproof was fetching (a large repository takes
// minutes) waited for the mirror's lock without a word, for as long as the
// other fetch took. After the notice every lock wait has, it now says on a
// terminal which mirror it waits for and how to find the holder.
func TestMirrorWaitShownOnATerminal(t *testing.T) {
	requireGit(t)
	t.Parallel()
	dir := t.TempDir()
	repo := filepath.Join(dir, "docs")
	proj := filepath.Join(dir, "proj")
	for _, d := range []string{repo, proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "pricing.md"), []byte("price 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "docs"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	toml := "version = 1\n\n[sources]\nroots = [\"..\"]\ncache_dir = \"cache\"\n\n[[resource]]\nuri = \"readproof://demo/pricing\"\npolicy = \"require_fresh\"\nsource = { type = \"git\", url = \"../docs\", path = \"pricing.md\", ref = \"main\" }\n"
	if err := os.WriteFile(filepath.Join(proj, "readproof.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRP(t, proj, "init")
	mustRP(t, proj, "get", "readproof://demo/pricing") // makes the mirror and its lock file
	locks, _ := filepath.Glob(filepath.Join(proj, "cache", "*.lock"))
	if len(locks) != 1 {
		t.Fatalf("mirror lock files: %v, want one", locks)
	}
	// another readproof fetching: an exclusive flock on the mirror's lock
	f, err := os.OpenFile(locks[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	held := true
	release := func() {
		if held {
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			held = false
		}
	}
	defer release()
	want := "readproof: waiting for " + locks[0]
	cmd, out := startOnPty(t, proj, nil, want, "get", "readproof://demo/pricing")
	select {
	case <-out.seen:
	case <-time.After(3 * time.Second):
		t.Errorf("get waiting 3s for a held git mirror lock: the terminal shows:\n%s\nwant a line %q", out.String(), want)
	}
	release()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("get once the mirror is free: %v\n%s", err, out.String())
	}
	<-out.done
	if got := out.String(); !strings.Contains(got, want) || !strings.Contains(got, "until it is done") {
		t.Errorf("the terminal's line:\n%s\nwant %q... until it is done", got, want)
	}
}
