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
