package commands

// `readproof hooks install|uninstall|status`: git hooks in the project repository
// (pre-commit, pre-merge-commit, pre-push) that run `readproof verify` and
// `readproof status --exit-code`.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
)

// hookNames are the hooks readproof installs. pre-merge-commit (git 2.24+)
// covers `git merge`, which does not run pre-commit when it creates the
// merge commit itself; older git ignores it.
func hookNames() []string { return []string{"pre-commit", "pre-merge-commit", "pre-push"} }

// hookRefuses names what a hook refuses, for its header comment.
func hookRefuses(name string) string {
	switch name {
	case "pre-merge-commit":
		return "merge commit"
	case "pre-push":
		return "push"
	}
	return "commit"
}

// hookSkip is the git command whose --no-verify skips the hook, for its
// message when readproof cannot be found: the first word of what it
// refuses (merge, push, commit).
func hookSkip(name string) string {
	cmd, _, _ := strings.Cut(hookRefuses(name), " ")
	return cmd
}

// hookMarker identifies a hook readproof wrote.
const hookMarker = "# readproof-hook v1"

// chainedSuffix is appended to the name of a hook readproof chains.
const chainedSuffix = ".local"

func hooksCommand() *cli.Command {
	repoFlag := &cli.StringFlag{Name: "repo", Usage: "the project's git work tree (default: the directory of readproof.toml)"}
	return &cli.Command{
		Name:  "hooks",
		Usage: "git hooks that refuse a commit or push when the store is broken or a document drifted",
		Subcommands: []*cli.Command{
			{
				Name: "install",
				Usage: "write pre-commit, pre-merge-commit and pre-push hooks running `readproof verify` and `readproof status --exit-code`; " +
					"an existing hook is kept as <hook>.local and runs first",
				Flags: []cli.Flag{repoFlag},
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 0, 0, "[--repo DIR]"); err != nil {
						return err
					}
					opts := hooksOptions{Repo: c.String("repo"), Install: true}
					return withEnv(c, func(e *env) error { return runHooks(c.Context, e, opts) })
				},
			},
			{
				Name:  "status",
				Usage: "say which of readproof's hooks git runs, and warn when a core.hooksPath set, moved or unset since install (husky's) keeps git from running them",
				Flags: []cli.Flag{repoFlag},
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 0, 0, "[--repo DIR]"); err != nil {
						return err
					}
					opts := hooksOptions{Repo: c.String("repo"), Status: true}
					return withEnv(c, func(e *env) error { return runHooks(c.Context, e, opts) })
				},
			},
			{
				Name:  "uninstall",
				Usage: "remove readproof's hooks and put back the hooks they chained",
				Flags: []cli.Flag{repoFlag},
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 0, 0, "[--repo DIR]"); err != nil {
						return err
					}
					opts := hooksOptions{Repo: c.String("repo")}
					return withEnv(c, func(e *env) error { return runHooks(c.Context, e, opts) })
				},
			},
		},
	}
}

// hookResult is one hook's outcome, for --json.
type hookResult struct {
	Hook    string `json:"hook"`
	Path    string `json:"path"`
	Action  string `json:"action"`
	Chained string `json:"chained,omitempty"`
}

// hooksOptions are the flags of `readproof hooks install|uninstall`.
type hooksOptions struct {
	Repo    string // the project's git work tree ("" for the directory of readproof.toml)
	Install bool   // install (else uninstall, or with Status neither)
	Status  bool   // say what is installed where git runs hooks
}

// hookState is one hook as `hooks status --json` reports it.
type hookState struct {
	Hook    string `json:"hook"`
	Path    string `json:"path"`
	State   string `json:"state"` // "readproof", "foreign" (as uninstall says) or "absent"
	Chained string `json:"chained,omitempty"`
}

// runHooks is `readproof hooks install`, `hooks uninstall` and `hooks status`.
func runHooks(_ context.Context, e *env, opts hooksOptions) error {
	install := opts.Install
	repo := opts.Repo
	var err error
	if install {
		// hooks naming a policy file that is not there refuse every commit
		if _, err := os.Stat(e.policyPath); errors.Is(err, fs.ErrNotExist) {
			return hint.With(fmt.Errorf("hooks: no policy file at %s: hooks would refuse every commit", e.policyPath),
				"run readproof hooks install in the directory that holds readproof.toml (or name it with --config), or create one first with readproof init")
		}
	}
	if repo == "" {
		repo = filepath.Dir(e.policyPath)
	}
	if repo, err = filepath.Abs(repo); err != nil {
		return err
	}
	top, dir, common, err := hooksPlace(repo)
	if err != nil {
		return err
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(repo, dir)
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(repo, common)
	}
	if opts.Status {
		return hooksStatus(e, repo, dir)
	}
	if install && filepath.Clean(dir) != filepath.Join(common, "hooks") {
		if err := checkHooksPathScope(repo, dir); err != nil {
			return err
		}
	}
	if install {
		// refuse before writing anything, so no hook is left half done
		command := checkCommand(top, e)
		for _, name := range hookNames() {
			if err := checkChainable(top, dir, name, command); err != nil {
				return err
			}
		}
	}
	var results []hookResult
	for _, name := range hookNames() {
		var r hookResult
		if install {
			script := hookScript(name, relativeTo(top, e.policyPath), storeArg(top, e))
			r, err = installHook(dir, name, script)
		} else {
			r, err = uninstallHook(dir, name)
		}
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	rec := "" // the directory install recorded, asked once (uninstall)
	if !install {
		// readproof's hooks where install put them before git's hooks
		// directory moved (status warns of them): removed too
		rec = recordedHooksDir(repo, common)
		extra, err := uninstallLeft(common, dir, rec)
		if err != nil {
			return err
		}
		results = append(results, extra...)
	}
	recordHooksDir(e, repo, top, common, dir, install, rec)
	if e.json {
		return printJSON(e.out, results)
	}
	for _, r := range results {
		switch r.Action {
		case "installed", "updated", "unchanged":
			line := fmt.Sprintf("%s %s hook %s", map[string]string{"installed": "Installed", "updated": "Updated"}[r.Action], r.Hook, text.Printable(r.Path))
			if r.Action == "unchanged" {
				line = fmt.Sprintf("%s hook %s is up to date", r.Hook, text.Printable(r.Path))
			}
			if r.Chained != "" {
				line += " (runs the existing hook first, kept as " + text.Printable(filepath.Base(r.Chained)) + ")"
			}
			fmt.Fprintln(e.out, line)
		case "removed":
			line := fmt.Sprintf("Removed %s hook %s", r.Hook, text.Printable(r.Path))
			if r.Chained != "" {
				line += " (restored the hook it had chained)"
			}
			fmt.Fprintln(e.out, line)
		case "absent":
			fmt.Fprintf(e.out, "No %s hook at %s\n", r.Hook, text.Printable(r.Path))
		case "foreign":
			fmt.Fprintf(e.out, "Left %s alone: readproof did not write it\n", text.Printable(r.Path))
		}
	}
	return nil
}

// storeArg is the --store the hook passes, when the store is not the
// default one beside readproof.toml.
func storeArg(top string, e *env) string {
	if !e.storeNamed {
		return ""
	}
	return relativeTo(top, e.storePath)
}

// relativeTo returns path relative to the work tree top when it lies inside
// it (so the hook survives moving the checkout), else the absolute path.
func relativeTo(top, path string) string {
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		path = filepath.Join(dir, filepath.Base(path))
	}
	rel, err := filepath.Rel(top, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return "$top/" + filepath.ToSlash(rel)
}

// hooksPlace returns the top of the work tree around repo, its hooks
// directory and its common git directory (as git names them, maybe relative
// to repo), from one git process when no path holds a newline, else from
// three.
func hooksPlace(repo string) (top, dir, common string, err error) {
	notTree := func(err error) error {
		return hint.With(fmt.Errorf("hooks: %s is not inside a git work tree: %w", repo, err), "run it in the project's repository, or name it with --repo DIR")
	}
	all, err := gitOutput(repo, "rev-parse", "--show-toplevel", "--git-path", "hooks", "--git-common-dir")
	if err != nil {
		// --show-toplevel is what fails outside a work tree: ask it alone
		// for the error it gives
		if _, terr := gitOutput(repo, "rev-parse", "--show-toplevel"); terr != nil {
			return "", "", "", notTree(terr)
		}
		return "", "", "", fmt.Errorf("hooks: find the hooks directory of %s: %w", repo, err)
	}
	if lines := strings.Split(all, "\n"); len(lines) == 3 {
		// each trimmed as gitOutput trims the output of one question
		return strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1]), strings.TrimSpace(lines[2]), nil
	}
	if top, err = gitOutput(repo, "rev-parse", "--show-toplevel"); err != nil {
		return "", "", "", notTree(err)
	}
	if dir, err = gitOutput(repo, "rev-parse", "--git-path", "hooks"); err != nil {
		return "", "", "", fmt.Errorf("hooks: find the hooks directory of %s: %w", repo, err)
	}
	if common, err = gitOutput(repo, "rev-parse", "--git-common-dir"); err != nil {
		return "", "", "", fmt.Errorf("hooks: find the git directory of %s: %w", repo, err)
	}
	return top, dir, common, nil
}

// checkHooksPathScope refuses a core.hooksPath set outside the repository's
// own configuration (global, system, or on the command line): the hooks
// directory it names serves every repository, where readproof's hooks would
// refuse each commit for want of a readproof.toml. Asked only when the hooks
// directory is not the default one.
func checkHooksPathScope(repo, dir string) error {
	out, err := gitOutput(repo, "config", "--show-scope", "--show-origin", "--get", "core.hooksPath")
	if err != nil {
		return nil // not set (exit 1): nothing to refuse
	}
	scope, rest, _ := strings.Cut(out, "\t")
	if scope == "local" || scope == "worktree" {
		return nil
	}
	origin, _, _ := strings.Cut(rest, "\t")
	origin = strings.TrimPrefix(origin, "file:")
	return hint.With(fmt.Errorf("hooks: core.hooksPath is set in the %s git configuration (%s): hooks written to %s would run in every repository, and refuse commits where there is no readproof.toml", scope, origin, dir),
		"give this repository a hooks directory of its own (git config core.hooksPath .githooks; the global hooks then no longer run here, so copy those it needs), then run readproof hooks install again; nothing was written")
}

func gitOutput(dir string, args ...string) (string, error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return "", hint.With(errors.New("git is not installed"), "install git; hooks are a git feature")
	}
	cmd := exec.Command(git, append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("%s", msg)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// shellQuote quotes s for the hook script, which sh runs (POSIX quoting:
// dash has no $'...'), keeping a leading $top/ expandable.
func shellQuote(s string) string {
	prefix := ""
	if rest, ok := strings.CutPrefix(s, "$top/"); ok {
		prefix, s = `"$top"/`, rest
	}
	return prefix + text.SingleQuoted(s)
}

func hookScript(name, config, storePath string) string {
	args := "--config " + shellQuote(config)
	if storePath != "" {
		args += " --store " + shellQuote(storePath)
	}
	worktree, setStore := "", ""
	if rel, ok := strings.CutPrefix(config, "$top/"); ok && storePath == "" {
		// the store (ignored by git) is in the worktree it was made in; a
		// linked worktree shares the hooks but not the store
		def := shellQuote(path.Join(path.Dir(rel), filepath.Base(store.DefaultPath("."))))
		worktree = `store=
if [ -z "${READPROOF_STORE:-}" ] && [ ! -e "$top"/` + def + ` ]; then
	# a linked worktree (git worktree add) has no store: use the main worktree's
	main=$(git worktree list --porcelain 2>/dev/null | sed -n '1s/^worktree //p')
	if [ -n "$main" ] && [ "$main" != "$top" ] && [ -d "$main"/` + def + ` ]; then
		store="$main"/` + def + `
		echo "readproof hook: this worktree has no store: checking against the main worktree's, $store; record with readproof --store \"$store\" get URI" >&2
	fi
fi
`
		args += ` "$@"`
		setStore = "\t" + `if [ -n "$store" ]; then set -- --store "$store"; else set --; fi` + "\n"
	}
	return `#!/bin/sh
` + hookMarker + `: written by ` + "`readproof hooks install`" + `; ` + "`readproof hooks uninstall`" + ` removes it.
# Runs the hook this one replaced (kept as ` + name + chainedSuffix + `) first, then refuses the
# ` + hookRefuses(name) + ` when the readproof store is broken or a declared document drifted.
hook_dir=$(dirname "$0")
if [ -x "$hook_dir/` + name + chainedSuffix + `" ]; then
	"$hook_dir/` + name + chainedSuffix + `" "$@" || exit $?
fi
top=$(git rev-parse --show-toplevel) || exit 1
readproof=${READPROOF:-readproof}
if ! command -v "$readproof" >/dev/null 2>&1; then
	echo "readproof hook: $readproof is not on PATH: put readproof on PATH, or set READPROOF to its path; git ` + hookSkip(name) + ` --no-verify skips the check once" >&2
	exit 1
fi
` + worktree + `(
	unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX
` + setStore + `	"$readproof" ` + args + ` verify || exit $?
	"$readproof" ` + args + ` status --exit-code || exit $?
) </dev/null || exit $?
`
}

func isOurHook(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	return bytes.Contains(data, []byte(hookMarker)), nil
}

// checkChainable refuses to chain a hook managed by husky or by the
// pre-commit framework (preCommitMarker). husky's hooks
// (.husky/_/NAME sourcing ./h; before husky 9, .husky/NAME sourcing
// _/husky.sh) find the script to run by their own file name: kept as
// NAME.local, one runs .husky/NAME.local, which does not exist, and exits 0,
// so chaining it would switch the team's husky checks off without a word.
func checkChainable(top, dir, name, command string) error {
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil // a missing or unreadable hook is installHook's to report
	}
	undo := ""
	if bytes.Contains(data, []byte(hookMarker)) {
		// an install before this check may have chained one already
		path += chainedSuffix
		if data, err = os.ReadFile(path); err != nil {
			return nil
		}
		undo = "run `readproof hooks uninstall`, which puts it back, then "
	}
	if bytes.Contains(data, []byte(preCommitMarker)) {
		return hint.With(fmt.Errorf("hooks: %s is the pre-commit framework's (pre-commit.com): `pre-commit install` run again would put readproof's hook aside and have it run the copy kept as %s, which pre-commit refuses", path, name+chainedSuffix),
			undo+"add readproof to .pre-commit-config.yaml instead: under `repo: local`, a hook with `entry: "+preCommitEntry(command)+"`, `language: system`, `pass_filenames: false`, `always_run: true`, `stages: [pre-commit, pre-merge-commit, pre-push]`; nothing was written")
	}
	if !isHuskyHook(data) {
		return nil
	}
	scripts := dir
	if filepath.Base(dir) == "_" {
		scripts = filepath.Dir(dir)
	}
	if rel, err := filepath.Rel(top, scripts); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		scripts = rel
	}
	scripts = filepath.ToSlash(scripts)
	return hint.With(fmt.Errorf("hooks: %s is husky's: husky runs the script named after the hook in %s/, which a hook kept as %s would not run", path, scripts, name+chainedSuffix),
		fmt.Sprintf(undo+"add `%[2]s` to %[1]s/pre-commit, %[1]s/pre-merge-commit and %[1]s/pre-push (husky runs them); nothing was written", scripts, command))
}

// checkCommand is the line a hook manager's script runs (from the top of the
// work tree, as git runs hooks) for readproof's checks: --config and --store
// named when they are not found from there by default, quoted as sh reads
// them (husky's hooks and a pre-commit `sh -c` entry run under sh).
func checkCommand(top string, e *env) string {
	var args string
	config := relativeTo(top, e.policyPath)
	if rel, ok := strings.CutPrefix(config, "$top/"); !ok || rel != PolicyName {
		config = strings.TrimPrefix(config, "$top/")
		args += " --config " + text.ScriptArg(config)
	}
	if st := storeArg(top, e); st != "" {
		args += " --store " + text.ScriptArg(strings.TrimPrefix(st, "$top/"))
	}
	return "readproof" + args + " verify && readproof" + args + " status --exit-code"
}

// preCommitMarker is the line the pre-commit framework writes into each of
// its hooks. `pre-commit install` moves a hook that is not its own to
// NAME.legacy and runs it first, refusing (to stop a loop) one that runs
// pre-commit's own script again: readproof's hook, chaining pre-commit's
// old copy as NAME.local, would be just that.
const preCommitMarker = "# File generated by pre-commit: https://pre-commit.com"

// isHuskyHook reports whether a hook's text is husky's: it names husky
// (husky 4 to 8), or sources the helper h beside it (husky 9: `. "$(dirname
// "$0")/h"`, or `. "${0%/*}/h"`).
func isHuskyHook(data []byte) bool {
	if bytes.Contains(bytes.ToLower(data), []byte("husky")) {
		return true
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, ". ") && strings.HasSuffix(line, `/h"`) {
			return true
		}
	}
	return false
}

func installHook(dir, name, script string) (hookResult, error) {
	return installHookSteps(dir, name, script, nil)
}

// installHookSteps is installHook; step, when set, is called after each
// change it makes in dir, for a test to look at what a kill -9 there
// would leave. At every step git finds a hook at path: the user's until
// ours replaces it in one rename, with the user's hook linked at local
// first, to be chained. A killed install leaves the two names linked to
// the user's hook, which the next install takes as the user's hook kept.
func installHookSteps(dir, name, script string, step func(string)) (hookResult, error) {
	path := filepath.Join(dir, name)
	local := path + chainedSuffix
	r := hookResult{Hook: name, Path: path, Action: "installed"}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, fmt.Errorf("hooks: %w", err)
	}
	tmp := path + ".readproof-tmp"
	keep := false // the user's hook at path is to be kept at local, to be chained
	ours, err := isOurHook(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return r, fmt.Errorf("hooks: read %s: %w", path, err)
	case ours:
		r.Action = "updated"
		if cur, err := os.ReadFile(path); err == nil && string(cur) == script {
			if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o111 == 0o111 {
				// installed already, as it would be written: nothing to do
				r.Action = "unchanged"
				if _, err := os.Lstat(local); err == nil {
					r.Chained = local
				}
				return r, nil
			}
		}
	default:
		if fi, err := os.Lstat(local); err == nil {
			// the same file at both names: an install killed after it
			// kept the user's hook, which is kept already
			if pi, perr := os.Lstat(path); perr != nil || !os.SameFile(fi, pi) {
				return r, hint.With(fmt.Errorf("hooks: %s exists and so does %s", path, local),
					"merge the two hooks into one, or move one away, then run readproof hooks install again")
			}
		} else {
			keep = true
		}
	}
	// A hook that cannot be written (a full disk) leaves no part of it,
	// and the user's own hook in place: it is written before the user's
	// hook is touched.
	fail := func(err error, kept string) (hookResult, error) {
		os.Remove(tmp)
		err = fmt.Errorf("hooks: write %s: %w", path, err)
		if hint.Of(err) != "" {
			return r, err
		}
		what := gitstore.WriteLimitRemedy(err, filepath.Dir(path))
		if what == "" {
			return r, err // Main's hint says what to do of a permission
		}
		return r, hint.With(err, path+kept+": "+what+", then run readproof hooks install again")
	}
	unchanged := " is unchanged"
	if keep {
		unchanged = ", the existing hook, is unchanged"
	}
	if err := os.WriteFile(tmp, []byte(script), 0o755); err != nil {
		return fail(err, unchanged)
	}
	if step != nil {
		step("written")
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fail(err, unchanged)
	}
	if keep {
		if err := os.Link(path, local); err != nil {
			// a file system without hard links: moved, and back on failure
			if err := os.Rename(path, local); err != nil {
				os.Remove(tmp)
				return r, fmt.Errorf("hooks: keep the existing hook: %w", err)
			}
			if step != nil {
				step("moved")
			}
			if err := os.Rename(tmp, path); err != nil {
				if rerr := os.Rename(local, path); rerr != nil {
					os.Remove(tmp)
					return r, fmt.Errorf("hooks: write %s: %w; and moving %s back: %w", path, err, local, rerr)
				}
				return fail(err, ", the existing hook, is back in place")
			}
			r.Chained = local
			return r, nil
		}
		if step != nil {
			step("linked")
		}
	}
	if _, err := os.Lstat(local); err == nil {
		r.Chained = local
	}
	if err := os.Rename(tmp, path); err != nil {
		if keep {
			os.Remove(local) // the user's hook is still at path
		}
		return fail(err, unchanged)
	}
	return r, nil
}

func uninstallHook(dir, name string) (hookResult, error) {
	path := filepath.Join(dir, name)
	local := path + chainedSuffix
	r := hookResult{Hook: name, Path: path, Action: "removed"}
	ours, err := isOurHook(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Action = "absent"
		return r, nil
	case err != nil:
		return r, fmt.Errorf("hooks: read %s: %w", path, err)
	case !ours:
		r.Action = "foreign"
		return r, nil
	}
	// the user's hook, kept at local, replaces ours in one rename: a
	// removal first, then a kill -9, left it at local, where git does not
	// run it and the next uninstall found no hook of ours to remove
	if _, err := os.Lstat(local); err == nil {
		if err := os.Rename(local, path); err != nil {
			return r, fmt.Errorf("hooks: restore %s: %w", local, err)
		}
		r.Chained = local
		return r, nil
	}
	if err := os.Remove(path); err != nil {
		return r, fmt.Errorf("hooks: remove %s: %w", path, err)
	}
	return r, nil
}

// uninstallLeft removes readproof's hooks from the directories status
// watches (the repository's own .git/hooks and rec, the one install
// recorded, "" for none) other than dir, where git runs hooks from now:
// only the hooks removed are reported.
func uninstallLeft(common, dir, rec string) ([]hookResult, error) {
	watched := []string{filepath.Join(common, "hooks")}
	if rec != "" {
		watched = append(watched, rec)
	}
	var out []hookResult
	for i, d := range watched {
		if sameDir(d, dir) || i > 0 && sameDir(d, watched[0]) {
			continue
		}
		for _, name := range hookNames() {
			r, err := uninstallHook(d, name)
			if err != nil {
				return out, err
			}
			if r.Action == "removed" {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// hooksStatus is `readproof hooks status`: each hook in the directory git
// runs hooks from, whether it is readproof's, and silencedHooks' warning.
func hooksStatus(e *env, repo, dir string) error {
	var states []hookState
	for _, name := range hookNames() {
		h := hookState{Hook: name, Path: filepath.Join(dir, name), State: "readproof"}
		ours, err := isOurHook(h.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			h.State = "absent"
		case err != nil:
			return fmt.Errorf("hooks: read %s: %w", h.Path, err)
		case !ours:
			h.State = "foreign"
		default:
			if _, err := os.Lstat(h.Path + chainedSuffix); err == nil {
				h.Chained = h.Path + chainedSuffix
			}
		}
		states = append(states, h)
	}
	if e.json {
		if err := printJSON(e.out, states); err != nil {
			return err
		}
	} else {
		for _, h := range states {
			switch h.State {
			case "readproof":
				line := fmt.Sprintf("%s: readproof's hook %s", h.Hook, text.Printable(h.Path))
				if h.Chained != "" {
					line += " (runs the hook kept as " + text.Printable(filepath.Base(h.Chained)) + " first)"
				}
				fmt.Fprintln(e.out, line)
			case "foreign":
				fmt.Fprintf(e.out, "%s: %s is not readproof's\n", h.Hook, text.Printable(h.Path))
			default:
				fmt.Fprintf(e.out, "%s: no hook at %s\n", h.Hook, text.Printable(h.Path))
			}
		}
	}
	if err := silencedHooks(repo); err != nil {
		e.warn(err)
	}
	return nil
}

// hooksDirKey is the key of the repository's own git configuration
// (.git/config) where `hooks install` records the core.hooksPath it wrote
// readproof's hooks into, so that status notices when the path moves
// again (silencedHooks). Hooks in .git/hooks need no record.
const hooksDirKey = "readproof.hooksDir"

// recordHooksDir records (install) or forgets (uninstall) dir, the hooks
// directory git runs hooks from, under hooksDirKey when it is not the
// repository's own. A directory inside the work tree top is recorded
// relative to it: the configuration is every worktree's, and a relative
// core.hooksPath names a directory in each. rec is the directory recorded
// (recordedHooksDir), asked by uninstall only. A failure is a warning: the
// hooks are in place.
func recordHooksDir(e *env, repo, top, common, dir string, install bool, rec string) {
	own := filepath.Join(common, "hooks")
	var err error
	switch {
	case install && !sameDir(dir, own):
		_, err = gitOutput(repo, "config", "--local", hooksDirKey, recordedForm(top, filepath.Clean(dir)))
	case !install:
		// uninstall removed readproof's hooks from dir and from the
		// recorded directory (uninstallLeft)
		if rec != "" {
			_, err = gitOutput(repo, "config", "--local", "--unset-all", hooksDirKey)
		}
	}
	if err != nil {
		e.warn(hint.With(fmt.Errorf("hooks: recording where readproof's hooks are (git config %s): %w", hooksDirKey, err),
			"readproof status cannot tell when git stops running them; run readproof hooks install again"))
	}
}

// recordedForm is dir as recordHooksDir records it: relative to the work
// tree top when inside it (resolving symbolic links on both), else as is.
func recordedForm(top, dir string) string {
	if top == "" {
		return dir
	}
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	if rel, err := filepath.Rel(real(top), real(dir)); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return dir
}

// recordedHooksDir is the directory hooksDirKey names, "" when none; a
// relative record is of the work tree around repo. It starts git only
// when the repository's configuration file has a [readproof] section.
func recordedHooksDir(repo, common string) string {
	data, err := os.ReadFile(filepath.Join(common, "config"))
	if err != nil || !bytes.Contains(bytes.ToLower(data), []byte("[readproof]")) {
		return ""
	}
	dir, err := gitOutput(repo, "config", "--local", "--get", hooksDirKey)
	if err != nil || dir == "" {
		return ""
	}
	if !filepath.IsAbs(dir) {
		if !filepath.IsLocal(filepath.FromSlash(dir)) {
			return ""
		}
		top, err := gitOutput(repo, "rev-parse", "--show-toplevel")
		if err != nil || !filepath.IsAbs(top) {
			return ""
		}
		dir = filepath.Join(top, filepath.FromSlash(dir))
	}
	return dir
}

// silencedHooks is the warning `readproof status` and `hooks status` give
// when readproof's hooks, installed in the repository's own hooks
// directory (.git/hooks) or in the core.hooksPath `hooks install` recorded
// (hooksDirKey), no longer run because git now runs the hooks of another
// directory (a core.hooksPath set or changed since, by husky for one; or
// unset) that holds none of them; nil otherwise. With no readproof hook in
// .git/hooks and no record it costs a few file looks and no process.
func silencedHooks(repo string) error {
	common := gitCommonDir(repo)
	if common == "" {
		return nil
	}
	own := filepath.Join(common, "hooks")
	watched := []string{own}
	if rec := recordedHooksDir(repo, common); rec != "" && !sameDir(rec, own) {
		watched = append(watched, rec)
	}
	dir := "" // where git runs hooks from, asked once
	for _, ours := range watched {
		var installed []string // shell words, for the hint
		for _, name := range hookNames() {
			if ok, _ := isOurHook(filepath.Join(ours, name)); ok {
				installed = append(installed, text.ShellArg(filepath.Join(ours, name)))
			}
		}
		if len(installed) == 0 {
			continue
		}
		if dir == "" {
			d, err := gitOutput(repo, "rev-parse", "--git-path", "hooks")
			if err != nil {
				return nil // not a question status must answer
			}
			if !filepath.IsAbs(d) {
				d = filepath.Join(repo, d)
			}
			dir = filepath.Clean(d)
			for _, name := range hookNames() {
				if ok, _ := isOurHook(filepath.Join(dir, name)); ok {
					return nil // installed where git runs them too
				}
			}
		}
		if sameDir(dir, ours) {
			continue
		}
		why := "core.hooksPath"
		if sameDir(dir, own) {
			why = "git's own hooks directory"
		}
		return hint.With(fmt.Errorf("readproof's hooks in %s no longer run: git runs the hooks in %s (%s)", ours, dir, why),
			"run readproof hooks install again: it installs them there, or, under husky or the pre-commit framework, says what to add to their scripts; once readproof's checks run from there, remove the old hooks: rm "+strings.Join(installed, " "))
	}
	return nil
}

// gitCommonDir finds, without running git, the common git directory of the
// work tree around dir: .git, or for a linked worktree the directory its
// .git file names, and that one's commondir. "" when there is none.
func gitCommonDir(dir string) string {
	for {
		dotGit := filepath.Join(dir, ".git")
		fi, err := os.Stat(dotGit)
		switch {
		case err == nil && fi.IsDir():
			return dotGit
		case err == nil:
			data, err := os.ReadFile(dotGit)
			gd, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
			if err != nil || !ok {
				return ""
			}
			if !filepath.IsAbs(gd) {
				gd = filepath.Join(dir, gd)
			}
			c, err := os.ReadFile(filepath.Join(gd, "commondir"))
			if err != nil {
				return gd
			}
			common := strings.TrimSpace(string(c))
			if !filepath.IsAbs(common) {
				common = filepath.Join(gd, common)
			}
			return common
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// preCommitEntry is the value of a .pre-commit-config.yaml hook's entry
// that runs command with sh, written as a YAML double-quoted scalar: a
// plain one ends at " #" (a comment) and breaks at ": ", which a store or
// config path may hold. JSON's string syntax, without HTML escapes, is
// YAML's double-quoted syntax.
func preCommitEntry(command string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode("sh -c " + text.SingleQuoted(command)) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
