package ci_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"testing"

	yaml "go.yaml.in/yaml/v4"
)

var update = flag.Bool("update", false, "rewrite testdata/*.json from the CI recipes")

// jobCopies are the recipes and their JSON copies. The root package's
// testdata/script/ci_examples.txtar runs the jobs' shell from the JSON
// copies (ci_examples_test.go), which keeps a YAML parser, and its package
// initialisation, out of the root test binary that every `exec readproof`
// of the scripts starts.
var jobCopies = []struct{ yaml, json string }{
	{"github/readproof.yml", "testdata/github.json"},
	{"gitlab/.gitlab-ci.yml", "testdata/gitlab.json"},
	{readmeWorkflow, "testdata/readme-ci.json"},
}

// readmeWorkflow names the workflow that docs/README-ci.md shows inline,
// under "The same checks in CI": its YAML block (readRecipe).
const readmeWorkflow = "../../docs/README-ci.md"

// readRecipe returns a recipe's YAML: the file, or for readmeWorkflow the
// first yaml block after the heading "### The same checks in CI".
func readRecipe(name string) ([]byte, error) {
	src, err := os.ReadFile(name)
	if err != nil || name != readmeWorkflow {
		return src, err
	}
	_, rest, ok := bytes.Cut(src, []byte("\n### The same checks in CI\n"))
	if ok {
		_, rest, ok = bytes.Cut(rest, []byte("\n```yaml\n"))
	}
	var block []byte
	if ok {
		block, _, ok = bytes.Cut(rest, []byte("\n```\n"))
	}
	if !ok {
		return nil, fmt.Errorf("%s: no ```yaml block under \"### The same checks in CI\"", name)
	}
	return append(block, '\n'), nil
}

// TestJobsJSONCurrent: each testdata/*.json is its recipe's YAML document
// as JSON, so the jobs the root package runs are the recipes as written.
// `go test ./examples/ci -update` rewrites them after a recipe changes.
func TestJobsJSONCurrent(t *testing.T) {
	t.Parallel()
	for _, c := range jobCopies {
		src, err := readRecipe(c.yaml)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := yaml.Unmarshal(src, &doc); err != nil {
			t.Fatalf("parse %s: %v", c.yaml, err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // keep the shell's > and && readable
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			t.Fatalf("%s as JSON: %v", c.yaml, err)
		}
		want := buf.Bytes()
		if *update {
			if err := os.WriteFile(c.json, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(c.json)
		if err != nil {
			t.Fatalf("%v (go test ./examples/ci -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not %s as JSON: run go test ./examples/ci -update", c.json, c.yaml)
		}
	}
}
