package ci_test

import (
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v4"
)

// TestGoInstallAfterSetupGo: a GitHub workflow that installs readproof with
// `go install` runs actions/setup-go first. On GitHub's runners the
// preinstalled Go puts nothing of `go install` on PATH (the directory
// $(go env GOPATH)/bin is not there: actions/runner-images#9316); setup-go
// adds it. Without it the next step's `readproof verify` is "command not
// found" (exit 127), as the workflow docs/README-ci.md showed before
// session 23.
func TestGoInstallAfterSetupGo(t *testing.T) {
	t.Parallel()
	for _, name := range []string{githubWorkflow, readmeWorkflow} {
		src, err := readRecipe(name)
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			Jobs map[string]struct {
				Steps []struct {
					Uses string `yaml:"uses"`
					Run  string `yaml:"run"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(src, &wf); err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		installs := 0
		for job, j := range wf.Jobs {
			setup := false
			for i, st := range j.Steps {
				if strings.HasPrefix(st.Uses, "actions/setup-go@") {
					setup = true
				}
				if strings.Contains(st.Run, "go install ") {
					installs++
					if !setup {
						t.Errorf("%s: job %s, step %d runs `go install` with no actions/setup-go step before it: on GitHub's runners what it installs is not on PATH", name, job, i)
					}
				}
			}
		}
		if installs == 0 {
			t.Errorf("%s: no step runs `go install`: this test checks nothing there", name)
		}
	}
}
