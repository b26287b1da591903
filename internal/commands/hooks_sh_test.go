package commands

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// posixSh is the shell git runs hooks with on Debian, dash, when installed,
// else sh.
func posixSh(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"dash", "sh"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no sh")
	return ""
}

// TestHookRunsUnderDash: the hook `hooks install` writes is run by sh
// (dash on Debian, which reads no $'...'), and names a store and a policy
// file whose paths hold a quote, a space, a newline and a non-ASCII
// character as the bytes they are: run by dash, it checks that store.
func TestHookRunsUnderDash(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("file names with a newline")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	sh := posixSh(t)
	base := t.TempDir()
	home := filepath.Join(base, "home")
	proj := filepath.Join(base, "proj")
	const odd = "it's a\nstoré"
	storeDir := filepath.Join(base, odd)        // outside the work tree: an absolute path
	confDir := filepath.Join(proj, "conf "+odd) // inside it: "$top"/'...'
	for _, d := range []string{home, confDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	config := filepath.Join(confDir, "readproof.toml")
	if err := os.WriteFile(config, []byte("version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	git := exec.Command("git", "init", "-q", "-b", "main", proj)
	git.Env = env
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"init"}, {"hooks", "install"}} {
		if _, stderr, err := readproofCmd(t, proj, env, append([]string{"--config", config, "--store", storeDir}, args...)...); err != nil {
			t.Fatalf("readproof %s: %v\n%s", args, err, stderr)
		}
	}
	hook := filepath.Join(proj, ".git", "hooks", "pre-commit")
	script, err := os.ReadFile(hook)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(script, []byte("$'")) {
		t.Errorf("the hook quotes in a form dash does not read ($'...'):\n%s", script)
	}
	// readproof for the hook: this test binary under that name
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(bin, "readproof")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, hook)
	cmd.Dir = proj
	cmd.Env = append([]string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, env[0], env[2], env[3])
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s\n%s", sh, hook, err, stdout.String(), stderr.String(), script)
	}
	if !strings.Contains(stdout.String(), "store ok") {
		t.Errorf("the hook did not check the store:\n%s%s", stdout.String(), stderr.String())
	}
	// the store checked is the one named, and no other was made
	entries, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"bin", "home", odd, "proj"}; strings.Join(names, "|") != strings.Join(want, "|") {
		t.Errorf("directories beside the project: %q, want %q", names, want)
	}
}
