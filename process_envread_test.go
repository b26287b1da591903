package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnvironmentIsNotDamage: a check that the system would not let read
// the store (every open of its packs failing with EMFILE, the limit on
// open files met; every read of them failing with EIO) could not check
// (exit 4), and says so: no command reports the store broken or an object
// corrupt (exit 3, "run git fsck") for what its environment did. Before,
// the failed open of a pack became a corrupt object: verify said "store is
// broken: 7 problems" of a sound store, and its hint sent the user to
// restore the objects from a backup.
func TestEnvironmentIsNotDamage(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	dir, uris, store, env := killProject(t, 3)
	mustRP(t, dir, append([]string{"run", "--id", "r0"}, uris...)...)
	mustRP(t, dir, "gc")
	packs, _ := filepath.Glob(filepath.Join(store, "objects", "pack", "*.pack"))
	if len(packs) == 0 {
		t.Fatal("gc left no pack")
	}
	for _, c := range []struct{ call, errno string }{{"openat", "EMFILE"}, {"pread64", "EIO"}} {
		for _, args := range [][]string{{"verify"}, {"verify", "--read-data"}, {"replay", "r0", "--no-content"}, {"evidence", "export", "r0"}} {
			sargs := []string{"-f", "-qq", "-o", "/dev/null"}
			for _, p := range packs {
				sargs = append(sargs, "-P", p)
			}
			sargs = append(sargs, "-e", "trace="+c.call, "-e", "inject="+c.call+":error="+c.errno+":when=1+", "readproof")
			cmd := exec.Command(strace, append(sargs, args...)...)
			var out, errb bytes.Buffer
			cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &errb
			err := cmd.Run()
			if err != nil && cmd.ProcessState == nil {
				t.Fatal(err)
			}
			code := cmd.ProcessState.ExitCode()
			all := out.String() + errb.String()
			at := strings.Join(args, " ") + " with every " + c.call + " of a pack failing with " + c.errno
			if code != 4 {
				t.Errorf("%s: exit code %d, want 4 (could not check)\n%s", at, code, all)
			}
			if strings.Contains(all, "broken") || strings.Contains(all, "corrupt") || strings.Contains(all, "fsck") {
				t.Errorf("%s: reported as damage\n%s", at, all)
			}
		}
	}
}

// TestCloneInPlaceMetOpenFiles: a clone whose last step, the sync of the
// directory that holds the store it put in place, met the limit on open
// files says that the verified store is there and to check it with
// verify, not to run the command again (a clone into it is refused: "pull
// into it instead"), and the store is there and verifies.
func TestCloneInPlaceMetOpenFiles(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	dir, uris, _, env := killProject(t, 1)
	mustRP(t, dir, "run", "--id", "r0", uris[0])
	shared := filepath.Join(t.TempDir(), "shared.git")
	if out, err := exec.Command("git", "init", "--quiet", "--bare", "--initial-branch=main", shared).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	mustRP(t, dir, "remote", "add", "origin", shared)
	mustRP(t, dir, "push")
	to := t.TempDir()
	// the parent of the clone is opened once, by the sync that ends it
	cmd := exec.Command(strace, "-f", "-qq", "-o", "/dev/null", "-P", to, "-e", "trace=openat", "-e", "inject=openat:error=EMFILE:when=1+",
		"readproof", "clone", shared, filepath.Join(to, "copy"))
	var errb bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stderr = dir, env, &errb
	if err := cmd.Run(); err == nil {
		t.Fatalf("clone with the sync of its parent failing: no error\n%s", errb.String())
	}
	h := errb.String()
	if !strings.Contains(h, "the store is in place, but its directory could not be synced") ||
		!strings.Contains(h, "readproof: hint: the verified store is in place at "+filepath.Join(to, "copy")+"; only the sync of its directory failed") ||
		!strings.Contains(h, "limit on open files") || !strings.Contains(h, "then check it with readproof --store "+filepath.Join(to, "copy")+" verify (not clone again") ||
		strings.Contains(h, "run the command again") {
		t.Fatalf("clone whose sync met the limit on open files:\n%s", h)
	}
	if out := mustRP(t, dir, "--store", filepath.Join(to, "copy"), "verify"); !strings.Contains(out, "store ok; 1 run") {
		t.Fatalf("the store in place: %s", out)
	}
}
