package commands

import (
	"os"
	"path/filepath"
	"testing"
)

// copyHooksDir copies the files of dir into a new directory, a file that
// is another's hard link linked again, as a kill -9 would leave dir.
func copyHooksDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]os.FileInfo{}
	for _, e := range entries {
		src := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(src)
		if err != nil {
			t.Fatal(err)
		}
		linked := false
		for name, other := range seen {
			if os.SameFile(fi, other) {
				if err := os.Link(filepath.Join(out, name), filepath.Join(out, e.Name())); err != nil {
					t.Fatal(err)
				}
				linked = true
				break
			}
		}
		if !linked {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, e.Name()), b, fi.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		}
		seen[e.Name()] = fi
	}
	return out
}

// TestInstallHookKilledAtEveryStep: `hooks install` over the user's own
// pre-commit, killed after any of its changes, leaves a pre-commit git runs
// (the user's or ours, whole) and the user's hook kept; install run again
// chains the user's hook, and once more changes nothing. The user's hook
// was moved to pre-commit.local before ours was written: killed there, git
// ran no pre-commit at all until the next install.
func TestInstallHookKilledAtEveryStep(t *testing.T) {
	const user = "#!/bin/sh\necho the user's checks\n"
	script := hookScript("pre-commit", "readproof.toml", "")
	dir := t.TempDir()
	path := filepath.Join(dir, "pre-commit")
	if err := os.WriteFile(path, []byte(user), 0o755); err != nil {
		t.Fatal(err)
	}
	var steps []string
	_, err := installHookSteps(dir, "pre-commit", script, func(step string) {
		steps = append(steps, step)
		b, err := os.ReadFile(path)
		if err != nil || string(b) != user && string(b) != script {
			t.Errorf("killed at %q: pre-commit is %q (%v), want the user's hook or ours, whole", step, b, err)
		}
		kept := string(b) == user
		if l, err := os.ReadFile(path + chainedSuffix); err == nil && string(l) == user {
			kept = true
		}
		if !kept {
			t.Errorf("killed at %q: the user's hook is at neither name", step)
		}
		again := copyHooksDir(t, dir)
		r, err := installHook(again, "pre-commit", script)
		if err != nil {
			t.Fatalf("killed at %q, install again: %v", step, err)
		}
		if l, err := os.ReadFile(filepath.Join(again, "pre-commit"+chainedSuffix)); err != nil || string(l) != user || r.Chained == "" {
			t.Errorf("killed at %q, install again: chained %q, pre-commit.local %q (%v), want the user's hook", step, r.Chained, l, err)
		}
		if b, err := os.ReadFile(filepath.Join(again, "pre-commit")); err != nil || string(b) != script {
			t.Errorf("killed at %q, install again: pre-commit is not ours (%v)", step, err)
		}
		if r, err := installHook(again, "pre-commit", script); err != nil || r.Action != "unchanged" {
			t.Errorf("killed at %q, install twice: %q, %v; want unchanged", step, r.Action, err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 2 {
		t.Fatalf("steps seen: %v", steps)
	}
	if l, err := os.ReadFile(path + chainedSuffix); err != nil || string(l) != user {
		t.Errorf("pre-commit.local %q (%v), want the user's hook", l, err)
	}
	if r, err := uninstallHook(dir, "pre-commit"); err != nil || r.Chained == "" {
		t.Fatalf("uninstall: %+v, %v", r, err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != user {
		t.Errorf("after uninstall pre-commit is %q (%v), want the user's hook", b, err)
	}
	if _, err := os.Lstat(path + chainedSuffix); err == nil {
		t.Error("after uninstall pre-commit.local is left")
	}
}
