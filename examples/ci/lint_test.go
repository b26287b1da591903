// Package ci holds the CI recipes of examples/ci (no Go code); its test
// lints the GitHub workflow with actionlint and keeps the recipes' JSON
// copies in testdata current. The shell of both jobs runs, from those
// copies, against a real store in the root package's
// testdata/script/ci_examples.txtar. The lint lives here, in its own test
// binary, because actionlint's package initialisation would otherwise run in
// every `exec readproof` of the root package's scripts.
package ci_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/rhysd/actionlint"
)

const githubWorkflow = "github/readproof.yml"

// TestGitHubWorkflowLints: examples/ci/github/readproof.yml passes
// actionlint and holds one job (issue 16); so does the workflow
// docs/README-ci.md shows inline.
func TestGitHubWorkflowLints(t *testing.T) {
	t.Parallel()
	for _, name := range []string{githubWorkflow, readmeWorkflow} {
		t.Run(filepath.Base(name), func(t *testing.T) { lintWorkflow(t, name) })
	}
}

func lintWorkflow(t *testing.T, githubWorkflow string) {
	src, err := readRecipe(githubWorkflow)
	if err != nil {
		t.Fatal(err)
	}
	lint, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{Color: actionlint.ColorOptionKindNever})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := lint.Lint(githubWorkflow, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Logf("actionlint: %s", e.Error())
	}
	if len(errs) > 0 {
		t.Fatalf("actionlint: %d problem(s) in %s", len(errs), githubWorkflow)
	}
	wf, perrs := actionlint.Parse(src)
	if len(perrs) > 0 {
		t.Fatalf("parse %s: %v", githubWorkflow, perrs[0])
	}
	if len(wf.Jobs) != 1 {
		t.Fatalf("%s: want one job, found %d", githubWorkflow, len(wf.Jobs))
	}
}
