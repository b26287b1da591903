package commands

// CLI glue for the guarded shared remote (issue 12.8): `readproof remote
// init PATH` and the hidden `readproof hook pre-receive` its hook runs. The
// logic is in package share (InitRemote, Guard).

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/share"
	"github.com/readproof/readproof/internal/text"
)

// remoteInitCommand is `readproof remote init [--hook-only] PATH`.
func remoteInitCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "create a bare shared remote that refuses deletions, forced updates and records that do not verify",
		ArgsUsage: "PATH",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "hook-only", Usage: "install the configuration and pre-receive hook into an existing bare repository"},
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, 1, "PATH"); err != nil {
				return err
			}
			exe, err := selfPath()
			if err != nil {
				return err
			}
			res, err := share.InitRemote(c.Context, c.Args().First(), exe, c.Bool("hook-only"))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c.App.Writer, res)
			}
			fmt.Fprintf(c.App.Writer, "Guarded remote at %s\n", res.Path)
			fmt.Fprintf(c.App.ErrWriter, "its pre-receive hook runs %s; add it with: readproof remote add origin %s\n", res.Exe, text.ShellArg(res.Path))
			return nil
		},
	}
}

// selfPath is the absolute path of the running readproof as it was invoked
// (a symlink keeps its name), else the executable the kernel reports.
func selfPath() (string, error) {
	if arg := os.Args[0]; arg != "" {
		p := arg
		if !strings.ContainsRune(arg, filepath.Separator) {
			p, _ = exec.LookPath(arg)
		}
		if p != "" {
			if abs, err := filepath.Abs(p); err == nil {
				if fi, err := os.Stat(abs); err == nil && fi.Mode().IsRegular() {
					return abs, nil
				}
			}
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("remote init: find readproof's own path for the hook: %w", err)
	}
	return exe, nil
}

// hookCommand is `readproof hook pre-receive`, run by the hook `remote
// init` installs (or one installed by hand on a git server, README).
func hookCommand() *cli.Command {
	return &cli.Command{
		Name:   "hook",
		Usage:  "git server hooks of a guarded shared remote",
		Hidden: true,
		Subcommands: []*cli.Command{{
			Name:  "pre-receive",
			Usage: "judge a push on stdin (<old> <new> <ref> lines) in a bare repository; exit 1 refuses it",
			Action: func(c *cli.Context) error {
				if err := needArgs(c, 0, 0, ""); err != nil {
					return err
				}
				dir := os.Getenv("GIT_DIR")
				if dir == "" {
					dir = "."
				}
				err := share.Guard(c.Context, dir, c.App.Reader)
				if errors.Is(err, share.ErrRefused) {
					fmt.Fprintf(c.App.ErrWriter, "readproof guard: %v\n", err)
					fmt.Fprintln(c.App.ErrWriter, "readproof guard: nothing was changed; push with `readproof push` after `readproof pull`")
					return withCode(ExitError, errQuiet)
				}
				return err
			},
		}},
	}
}
