package share

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestGuardHookRunsUnderDash: the pre-receive hook `remote init` writes is
// run by sh (dash on Debian, which reads no $'...'), and runs the readproof
// it names even when that path holds a quote, a space, a newline and a
// non-ASCII character.
func TestGuardHookRunsUnderDash(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("file names with a newline")
	}
	sh, err := exec.LookPath("dash")
	if err != nil {
		if sh, err = exec.LookPath("sh"); err != nil {
			t.Skip("no sh")
		}
	}
	dir := filepath.Join(t.TempDir(), "it's a\nbiné")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "readproof")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nprintf 'ran %s\\n' \"$*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(t.TempDir(), "pre-receive")
	if err := os.WriteFile(hook, []byte(HookScript(exe)), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, hook)
	cmd.Env = []string{"PATH=/nonexistent"} // not the readproof on PATH: the one named
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "ran hook pre-receive\n" {
		t.Fatalf("%s pre-receive = %q, %v; want %q\n%s", sh, out, err, "ran hook pre-receive\n", HookScript(exe))
	}
}
