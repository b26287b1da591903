package commands

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/buildinfo"
)

// versionCommand is `readproof version [--json]`; `readproof --version`
// prints the same line.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version: module version, VCS revision and time, modified work tree",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, 0, ""); err != nil {
				return err
			}
			return runVersion(c.Context, versionOptions{out: c.App.Writer, json: c.Bool("json"), info: buildinfo.Read()})
		},
	}
}

type versionOptions struct {
	out  io.Writer
	json bool
	info buildinfo.Info
}

func runVersion(_ context.Context, opts versionOptions) error {
	if opts.json {
		return printJSON(opts.out, opts.info)
	}
	_, err := fmt.Fprintf(opts.out, "readproof version %s\n", opts.info)
	return err
}
