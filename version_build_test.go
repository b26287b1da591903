package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/testsize"
)

// TestVersionFromClone builds readproof from a git clone of this repository
// (go build -buildvcs=true) and checks that `version --json` reports the
// clone's HEAD, its commit time and an unmodified tree, and that -ldflags -X
// overrides the version (issue 15). Building links a whole binary outside
// the build cache's reach, so it runs with READPROOF_LONG_TESTS=1; .ci/run
// checks the same on every CI run with the binary it builds.
func TestVersionFromClone(t *testing.T) {
	if !testsize.Long() {
		t.Skipf("builds a binary from a clone (about a minute of CPU on a cold cache): %s=1 runs it", testsize.Env)
	}
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git work tree: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	run := func(dir string, env []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("", nil, "git", "clone", "-q", strings.TrimSpace(string(top)), clone)
	head := run(clone, nil, "git", "rev-parse", "HEAD")
	when := run(clone, []string{"TZ=UTC"}, "git", "log", "-1", "--date=format-local:%Y-%m-%dT%H:%M:%SZ", "--format=%cd")
	bin := filepath.Join(t.TempDir(), "readproof")
	// -trimpath keeps the compiled packages independent of the clone's
	// path, so a second run finds them in the build cache.
	run(clone, []string{"GOFLAGS="}, "go", "build", "-trimpath", "-buildvcs=true",
		"-ldflags=-X github.com/readproof/readproof/internal/buildinfo.version=v9.8.7-test", "-o", bin, ".")
	var got struct {
		Version  string `json:"version"`
		Revision string `json:"revision"`
		Time     string `json:"time"`
		Modified bool   `json:"modified"`
	}
	out := run("", nil, bin, "version", "--json")
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("version --json: %v\n%s", err, out)
	}
	if got.Revision != head || got.Time != when || got.Modified || got.Version != "v9.8.7-test" {
		t.Errorf("version --json = %+v; want revision %s, time %s, unmodified, version v9.8.7-test (from -ldflags)", got, head, when)
	}
	if line := run("", nil, bin, "--version"); !strings.Contains(line, head[:12]) {
		t.Errorf("--version = %q; want the revision %s", line, head[:12])
	}
}
