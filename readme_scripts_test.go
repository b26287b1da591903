package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestREADMEScripts runs testdata/readme: README blocks that need what a
// user's machine has and a script's sandbox lacks. Each script finds the
// repository's readproof.toml.example in $WORK, as a user who cloned the
// repository would, and the go command works offline with this machine's
// build cache (the `exec -- go test ./...` example).
func TestREADMEScripts(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile("readproof.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	var gocache string
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		gocache = strings.TrimSpace(string(out))
	}
	p := scriptParams(t, "testdata/readme")
	setup := p.Setup
	p.Setup = func(e *testscript.Env) error {
		if err := setup(e); err != nil {
			return err
		}
		if gocache != "" {
			e.Setenv("GOCACHE", gocache)
		}
		e.Setenv("GOPROXY", "off")
		e.Setenv("GOTOOLCHAIN", "local")
		// No -trimpath (and nothing from the caller's GOFLAGS): the agent
		// module's standard-library packages then have the cache keys of
		// the build that compiled this test, so only its one small package
		// is compiled and linked each run. With -trimpath every key was
		// new, and a fresh machine (CI) compiled the standard library a
		// second time for this test: about 30 s of CPU.
		e.Setenv("GOFLAGS", "")
		return os.WriteFile(filepath.Join(e.WorkDir, "readproof.toml.example"), example, 0o644)
	}
	condition := p.Condition
	p.Condition = func(cond string) (bool, error) {
		if cond == "gocache" {
			return gocache != "", nil
		}
		return condition(cond)
	}
	testscript.Run(t, p)
}
