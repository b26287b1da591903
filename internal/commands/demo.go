package commands

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/hint"
)

// demoSteps is the sixty-second walkthrough: each step is either a command
// line or a file edit, narrated as it runs.
type demoStep struct {
	say   string
	args  []string
	edit  string // new content of policies/refunds.md
	rm    bool   // delete the source file
	skip  string // command that must exist for the step to run
	allow bool   // a non-zero exit is part of the story
}

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "run the end-to-end walkthrough in a temporary directory, narrating each step",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "work in this (empty or new) directory and keep it"},
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, 0, "[--dir DIR]"); err != nil {
				return err
			}
			opts := demoOptions{Dir: c.String("dir")}
			return withEnv(c, func(e *env) error { return runDemo(c.Context, e, opts) })
		},
	}
}

// demoOptions are the flags of `readproof demo`.
type demoOptions struct {
	Dir string // work in this directory and keep it ("" for a temporary one)
}

// demoDirUsable refuses a --dir that exists and is not an empty directory.
func demoDirUsable(dir string) error {
	const h = "name a new or empty directory, such as --dir /tmp/readproof-demo"
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return withCode(ExitUsage, hint.With(fmt.Errorf("demo: --dir %s is not a directory", dir), h))
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if names, _ := f.Readdirnames(1); len(names) > 0 {
		return withCode(ExitUsage, hint.With(fmt.Errorf("demo: --dir %s is not empty: the walkthrough writes and deletes files there", dir), h))
	}
	return nil
}

// runDemo is `readproof demo`: each step runs readproof itself (Main) on
// a store of its own.
func runDemo(_ context.Context, e *env, opts demoOptions) error {
	out, errw := e.out, e.err
	dir := opts.Dir
	keep := dir != ""
	if keep {
		// the walkthrough writes, overwrites and deletes files in dir
		// (policies/refunds.md among them): never in a directory that
		// holds anything
		if err := demoDirUsable(dir); err != nil {
			return err
		}
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "readproof-demo-")
		if err != nil {
			return err
		}
		dir = d
	}
	if err := os.MkdirAll(filepath.Join(dir, "policies"), 0o755); err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	cfg := filepath.Join(dir, PolicyName)
	st := filepath.Join(dir, ".readproof")
	uri := "readproof://demo/policies/refunds"
	steps := []demoStep{
		{say: "A policy document the agent will read:", edit: "Products can be refunded within 30 days.\n"},
		{say: "Create the store (a bare git repository) and the policy file:", args: []string{"init"}},
		{say: "Give the document an identity, a source and a freshness policy:", args: []string{"resource", "add", uri, "--source-type", "filesystem", "--path", "policies/refunds.md", "--policy", "require_fresh"}},
		{say: "Record a run that reads it:", args: []string{"run", "--id", "run-a", uri}},
		{say: "Tag the snapshot the run read as prod:", args: []string{"tag", "set", uri, "prod"}},
		{say: "The source changes:", edit: "Products can be refunded within 14 days.\n"},
		{say: "A later run picks the change up:", args: []string{"run", "--id", "run-b", uri}},
		{say: "The diff says what changed and why:", args: []string{"diff", "run-a", "run-b"}},
		{say: "@prod still delivers the tagged bytes, without reading the source:", args: []string{"get", uri + "@prod"}},
		{say: "A run that mounts by tag records the ref:", args: []string{"run", "--id", "run-c", uri + "@prod"}},
		{args: []string{"manifest", "run-c"}},
		{say: "The source file disappears:", rm: true},
		{say: "Replay rebuilds run-a from the store alone and re-hashes it:", args: []string{"replay", "run-a"}},
		{say: "Export the run as an evidence bundle and verify it:", args: []string{"evidence", "export", "run-a", "--with-content", "--out", filepath.Join(dir, "bundle.json")}, skip: "evidence"},
		{args: []string{"evidence", "verify", filepath.Join(dir, "bundle.json")}, skip: "evidence"},
	}
	fmt.Fprintf(out, "# readproof demo in %s\n", dir)
	src := filepath.Join(dir, "policies", "refunds.md")
	for _, s := range steps {
		if s.skip != "" && findCommand(commandList(), s.skip) == nil {
			continue
		}
		if s.say != "" {
			fmt.Fprintf(out, "\n# %s\n", s.say)
		}
		switch {
		case s.edit != "":
			fmt.Fprintf(out, "$ printf %q > policies/refunds.md\n", s.edit)
			if err := os.WriteFile(src, []byte(s.edit), 0o644); err != nil {
				return err
			}
		case s.rm:
			fmt.Fprintf(out, "$ rm policies/refunds.md\n")
			if err := os.Remove(src); err != nil {
				return err
			}
		default:
			fmt.Fprintf(out, "$ readproof %s\n", strings.ReplaceAll(strings.Join(s.args, " "), dir+string(os.PathSeparator), ""))
			args := append([]string{"readproof", "--config", cfg, "--store", st}, s.args...)
			if code := Main(args, nil, out, errw); code != 0 && !s.allow {
				return withCode(code, fmt.Errorf("demo step `readproof %s` exited %d", strings.Join(s.args, " "), code))
			}
		}
	}
	if keep {
		fmt.Fprintf(out, "\n# done; the store is %s (try: git --git-dir %s log --oneline --all)\n", st, st)
	} else {
		fmt.Fprintf(out, "\n# done; pass --dir DIR to keep the store and look at it with git\n")
	}
	return nil
}
