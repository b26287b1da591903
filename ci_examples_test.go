package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// The CI recipes in examples/ci, checked by `cijob` in
// testdata/script/ci_examples.txtar: the shell of both jobs runs against a
// real store with the readproof under test on PATH. The GitHub workflow is
// linted with actionlint by examples/ci's test (TestGitHubWorkflowLints).
// The jobs are read from the recipes' JSON copies in examples/ci/testdata,
// which examples/ci's TestJobsJSONCurrent keeps equal to the YAML as
// written: a YAML parser here would add its package initialisation to every
// `exec readproof` the scripts start.
const (
	githubWorkflow = "examples/ci/github/readproof.yml"
	gitlabJob      = "examples/ci/gitlab/.gitlab-ci.yml"
	githubJSON     = "examples/ci/testdata/github.json"
	gitlabJSON     = "examples/ci/testdata/gitlab.json"
	// the workflow docs/README-ci.md shows inline, and its JSON copy
	readmeWorkflow = "docs/README-ci.md (its workflow block)"
	readmeJSON     = "examples/ci/testdata/readme-ci.json"
)

// ciExpr is a GitHub expression inside a step's env or run.
var ciExpr = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`) })

// ciJobCmd is `cijob github|gitlab|readme`: it runs the job's shell in the
// script's current directory, as the CI system would (GitHub: each `run`
// step with bash -eo pipefail, stopping at the first failure; GitLab: the
// job's script lines in one bash -eo pipefail). Steps that install
// readproof (the GitHub `install` step, actions, GitLab's before_script)
// are left out: the readproof under test is on PATH. Expressions resolve
// vars.NAME from the script's environment and steps.ID.outputs.NAME from
// earlier steps' $GITHUB_OUTPUT; any other expression fails the command,
// so the example stays runnable here. The job's log goes to stdout; the
// job summary to $WORK/github-summary.md. `! cijob` expects the job to
// fail.
func ciJobCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: cijob github|gitlab|readme")
	}
	var ok bool
	switch args[0] {
	case "github":
		ok = runGitHubJob(ts, githubWorkflow, githubJSON)
	case "readme":
		ok = runGitHubJob(ts, readmeWorkflow, readmeJSON)
	case "gitlab":
		ok = runGitLabJob(ts)
	default:
		ts.Fatalf("cijob: unknown CI %q", args[0])
	}
	switch {
	case ok && neg:
		ts.Fatalf("the %s job passed; expected it to fail", args[0])
	case !ok && !neg:
		ts.Fatalf("the %s job failed", args[0])
	}
}

func repoFile(ts *testscript.TestScript, name string) []byte {
	// custom commands run in the test process, whose directory is the
	// module root
	b, err := os.ReadFile(name)
	ts.Check(err)
	return b
}

// githubWorkflowDef is what this test reads of a GitHub workflow: the
// steps of its jobs. (examples/ci's own test lints the file with
// actionlint, whose package initialisation would be the largest of this
// test binary's.)
type githubWorkflowDef struct {
	Jobs map[string]struct {
		Steps []githubStepDef `json:"steps"`
	} `json:"jobs"`
}

type githubStepDef struct {
	ID   string            `json:"id"`
	Name string            `json:"name"`
	If   *string           `json:"if"`
	Uses string            `json:"uses"`
	Run  *string           `json:"run"`
	Env  map[string]string `json:"env"`
}

// runGitHubJob runs the job of the workflow whose JSON copy is jsonCopy
// (githubWorkflow names it in messages).
func runGitHubJob(ts *testscript.TestScript, githubWorkflow, jsonCopy string) bool {
	var wf githubWorkflowDef
	if err := json.Unmarshal(repoFile(ts, jsonCopy), &wf); err != nil {
		ts.Fatalf("parse %s (the JSON copy of %s): %v", jsonCopy, githubWorkflow, err)
	}
	if len(wf.Jobs) != 1 {
		ts.Fatalf("%s: want one job, found %d", githubWorkflow, len(wf.Jobs))
	}
	var steps []githubStepDef
	for _, j := range wf.Jobs {
		steps = j.Steps
	}
	dir := ts.MkAbs(".")
	summary := filepath.Join(ts.Getenv("WORK"), "github-summary.md")
	outputs := map[string]map[string]string{}
	expr := func(e string) string {
		parts := strings.Split(e, ".")
		switch {
		case len(parts) == 2 && parts[0] == "vars":
			return ts.Getenv(parts[1])
		case len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs":
			return outputs[parts[1]][parts[3]]
		case e == "github.workspace":
			return dir
		}
		ts.Fatalf("%s: expression %q is not one this test resolves", githubWorkflow, e)
		return ""
	}
	subst := func(s string) string {
		return ciExpr().ReplaceAllStringFunc(s, func(m string) string { return expr(ciExpr().FindStringSubmatch(m)[1]) })
	}
	ran := 0
	for i, st := range steps {
		id := st.ID
		if st.Run == nil || id == "install" || strings.HasPrefix(*st.Run, "go install github.com/readproof/readproof@") {
			continue // the readproof under test is on PATH
		}
		if st.If != nil {
			ts.Fatalf("%s: step %d has an if: condition, which this test does not evaluate", githubWorkflow, i)
		}
		env := append(scriptEnv(ts), "GITHUB_STEP_SUMMARY="+summary, "GITHUB_WORKSPACE="+dir, "CI=true", "GITHUB_ACTIONS=true")
		out := filepath.Join(ts.Getenv("WORK"), fmt.Sprintf("github-output-%d", i))
		ts.Check(os.WriteFile(out, nil, 0o600))
		env = append(env, "GITHUB_OUTPUT="+out)
		names := make([]string, 0, len(st.Env))
		for k := range st.Env {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			env = append(env, k+"="+subst(st.Env[k]))
		}
		name := id
		if st.Name != "" {
			name = st.Name
		}
		if name == "" { // a step with neither: its command's first line
			name, _, _ = strings.Cut(*st.Run, "\n")
		}
		code := runShell(ts, dir, env, name, subst(*st.Run))
		ran++
		if id != "" {
			outputs[id] = readOutputs(ts, out)
		}
		if code != 0 {
			return false
		}
	}
	if ran == 0 {
		ts.Fatalf("%s: no run step was run", githubWorkflow)
	}
	return true
}

func readOutputs(ts *testscript.TestScript, path string) map[string]string {
	b, err := os.ReadFile(path)
	ts.Check(err)
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}

// runShell runs script with bash -eo pipefail (GitHub's and GitLab's
// default) and returns its exit code; its output goes to the script's
// stdout under a header naming the step.
func runShell(ts *testscript.TestScript, dir string, env []string, name, script string) int {
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		ts.Check(err)
	}
	fmt.Fprintf(ts.Stdout(), "== step %s: exit %d\n%s", name, code, out.String())
	return code
}

// gitlabJobDef is what this test reads of a GitLab job.
type gitlabJobDef struct {
	Image        string   `json:"image"`
	BeforeScript []string `json:"before_script"`
	Script       []string `json:"script"`
	Artifacts    struct {
		When     string   `json:"when"`
		ExposeAs string   `json:"expose_as"`
		Paths    []string `json:"paths"`
	} `json:"artifacts"`
}

func runGitLabJob(ts *testscript.TestScript) bool {
	var jobs map[string]gitlabJobDef
	if err := json.Unmarshal(repoFile(ts, gitlabJSON), &jobs); err != nil {
		ts.Fatalf("parse %s (the JSON copy of %s): %v", gitlabJSON, gitlabJob, err)
	}
	job, ok := jobs["readproof"]
	if !ok || len(job.Script) == 0 {
		ts.Fatalf("%s: no job readproof with a script", gitlabJob)
	}
	if job.Artifacts.When != "always" || len(job.Artifacts.Paths) == 0 {
		ts.Fatalf("%s: the summary artifact must be kept when the job fails (artifacts: when: always, paths)", gitlabJob)
	}
	dir := ts.MkAbs(".")
	env := append(scriptEnv(ts), "CI=true", "GITLAB_CI=true", "CI_PROJECT_DIR="+dir, "READPROOF_STORE_URL="+ts.Getenv("READPROOF_STORE_URL"))
	// a merge request pipeline, when the script sets one up (notesink)
	for _, k := range []string{"CI_MERGE_REQUEST_IID", "CI_API_V4_URL", "CI_PROJECT_ID", "READPROOF_NOTE_TOKEN"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	code := runShell(ts, dir, env, "script", strings.Join(job.Script, "\n"))
	for _, p := range job.Artifacts.Paths {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			ts.Fatalf("%s: artifact %s was not written: %v", gitlabJob, p, err)
		}
	}
	return code == 0
}

// noteSinkCmd is `notesink STATUS`: a stand-in for the GitLab API on
// 127.0.0.1 that answers every request with STATUS and writes what it got
// to $WORK/note-request.txt (method and path, the PRIVATE-TOKEN header, and
// the form's body field), for the GitLab job's merge-request note. It sets
// $CI_API_V4_URL.
func noteSinkCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: notesink STATUS")
	}
	status, err := strconv.Atoi(args[0])
	ts.Check(err)
	out := filepath.Join(ts.Getenv("WORK"), "note-request.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rec := fmt.Sprintf("%s %s\ntoken: %s\n%s", r.Method, r.URL.Path, r.Header.Get("PRIVATE-TOKEN"), r.PostForm.Get("body"))
		if err := os.WriteFile(out, []byte(rec), 0o600); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(status)
		fmt.Fprintln(w, `{"id": 1}`)
	}))
	ts.Defer(srv.Close)
	ts.Setenv("CI_API_V4_URL", srv.URL+"/api/v4")
}
