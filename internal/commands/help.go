package commands

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/text"
)

// helpCommand is `readproof help [COMMAND [SUBCOMMAND]]`: the same text as
// `readproof COMMAND SUBCOMMAND --help`. urfave/cli's own help command is
// hidden (App.HideHelpCommand) because it cannot reach subcommands.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "show the help of readproof or of a command (`readproof help resource add`)",
		ArgsUsage: "[COMMAND [SUBCOMMAND]]",
		// `help --help` reaches runHelp: urfave/cli would show the app's help.
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			return runHelp(c.Context, helpOptions{app: c.App}, c.Args().Slice())
		},
	}
}

type helpOptions struct {
	app *cli.App // the running app: its writers and command tree
}

func runHelp(ctx context.Context, opts helpOptions, args []string) error {
	var words []string
	for _, a := range args {
		if a != "--help" && a != "-h" && a != "--" {
			words = append(words, a)
		}
	}
	if len(words) == 0 && len(args) > 0 {
		words = []string{"help"} // help --help
	}
	path, err := resolvePath(opts.app.Commands, words)
	if err != nil {
		return err
	}
	// urfave/cli writes help a cell at a time (over 200 writes for the
	// command list): gather it and write it once. A write error is kept by
	// the outWriter Main puts around stdout, which fails the command.
	out := bufio.NewWriter(opts.app.Writer)
	if len(path) == 1 && path[0] == "help" {
		// help's own help, printed here: `readproof help --help` would
		// come back to this function.
		cli.HelpPrinter(out, cli.CommandHelpTemplate, findCommand(opts.app.Commands, "help"))
		_ = out.Flush()
		return nil
	}
	if len(path) == 0 && opts.app.ExtraInfo == nil {
		// readproof's own help, from the running app: what `readproof
		// --help` prints (urfave/cli's ShowAppHelp), without a second app.
		tpl := opts.app.CustomAppHelpTemplate
		if tpl == "" {
			tpl = cli.AppHelpTemplate
		}
		cli.HelpPrinter(out, tpl, opts.app)
		_ = out.Flush()
		return nil
	}
	app := newApp(opts.app.Reader, out, opts.app.ErrWriter)
	err = app.RunContext(ctx, append(append([]string{opts.app.Name}, path...), "--help"))
	_ = out.Flush()
	return err
}

// resolvePath checks that args name a command path (aliases allowed) and
// returns it with canonical names; an unknown name is a usage error with a
// suggestion.
func resolvePath(cs []*cli.Command, args []string) ([]string, error) {
	var path []string
	for _, a := range args {
		c := findCommand(cs, a)
		if c == nil {
			prefix := strings.Join(path, " ")
			if prefix != "" {
				prefix += " "
			}
			return nil, unknownCommandError(prefix, cs, a)
		}
		path = append(path, c.Name)
		cs = c.Subcommands
	}
	return path, nil
}

// unknownCommandError is the usage error (exit 2) for an unknown command
// name under prefix ("" or "tag "), with urfave/cli's suggestion when one is
// close enough.
func unknownCommandError(prefix string, cs []*cli.Command, name string) error {
	h := "see `readproof " + prefix + "--help`"
	// the nearest name by the rule flags and policy keys use, when one is
	// near: urfave/cli's SuggestCommand offers a name however far (tag
	// bogus: "propose"), or none at all as `did you mean ""?`
	var names []string
	for _, c := range cs {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	if s := text.Nearest(name, names); s != "" {
		h = fmt.Sprintf("did you mean %q? (%s)", s, h)
	}
	return withCode(ExitUsage, hint.With(fmt.Errorf("unknown command %q", strings.TrimSpace(prefix+name)), h))
}

//go:generate go run ../.. man ../../docs/man

// manCommand is `readproof man [DIR]`: the manual page, generated from the
// command definitions, to stdout or to DIR/readproof.1. docs/man/readproof.1
// is regenerated with `go run . man docs/man` (TestManPageCurrent fails
// when it is stale).
func manCommand() *cli.Command {
	return &cli.Command{
		Name:      "man",
		Usage:     "print the manual page (roff), or write it to DIR/readproof.1",
		ArgsUsage: "[DIR]",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, 1, "[DIR]"); err != nil {
				return err
			}
			return runMan(c.Context, manOptions{out: c.App.Writer, err: c.App.ErrWriter, app: c.App}, c.Args().First())
		},
	}
}

type manOptions struct {
	out, err io.Writer
	app      *cli.App
}

// ManPage renders readproof's manual page (section 1).
func ManPage() (string, error) {
	return manPage(newApp(nil, io.Discard, io.Discard))
}

func manPage(app *cli.App) (string, error) {
	// The page does not depend on the build: no version in it.
	saved := app.Version
	app.Version = ""
	defer func() { app.Version = saved }()
	page, err := app.ToManWithSection(1)
	if err != nil {
		return "", fmt.Errorf("man page: %w", err)
	}
	// urfave/cli leaves out what the help shows besides the flags' usage
	// (the version flag, [$VAR]) and what README.md documents (exit codes).
	const commands = "\n.SH COMMANDS\n"
	i := strings.Index(page, commands)
	if i < 0 {
		return "", fmt.Errorf("man page: no %q section to put --version before", strings.TrimSpace(commands))
	}
	page = page[:i] + "\n.PP\n\\fB--version, -v\\fP: print the version\n" + page[i:]
	var b strings.Builder
	b.WriteString(page)
	b.WriteString("\n.SH ENVIRONMENT\n")
	var env func(prefix string, flags []cli.Flag, cs []*cli.Command)
	env = func(prefix string, flags []cli.Flag, cs []*cli.Command) {
		for _, f := range flags {
			if ev, ok := f.(interface{ GetEnvVars() []string }); ok {
				for _, v := range ev.GetEnvVars() {
					fmt.Fprintf(&b, ".TP\n\\fB%s\\fR\nthe value of \\fB%s--%s\\fR when the flag is not given\n", v, prefix, f.Names()[0])
				}
			}
		}
		for _, c := range cs {
			env(prefix+c.Name+" ", c.Flags, c.Subcommands)
		}
	}
	env("", app.Flags, app.Commands)
	// and those read without a flag (README.md gives each)
	for _, v := range [][2]string{
		{keyloc.SigningKeyEnv, "the ed25519 key file that signs manifest commits and evidence bundles, after \\fB--key\\fR and before \\fB[signing] key\\fR in readproof.toml"},
		{keyloc.ReceiptsKeyEnv, "the receipts key file, after \\fB--key\\fR and before \\fB[receipts] key\\fR in readproof.toml"},
		{keyloc.MCPTokensEnv, "the token file of \\fBmcp --http\\fR when \\fB--tokens\\fR is not given"},
		{"READPROOF_LOCK_TIMEOUT", "how long a command waits for the store's lock (a positive duration; default 15s)"},
		{"READPROOF_STALE_LOCK_AGE", "the age past which a lock file is taken to be left by a crashed process (a positive duration; default 10s)"},
		{"READPROOF", "the readproof the hooks of \\fBhooks install\\fR run (default: readproof on PATH)"},
	} {
		fmt.Fprintf(&b, ".TP\n\\fB%s\\fR\n%s\n", v[0], v[1])
	}
	b.WriteString("\n.SH EXIT STATUS\n")
	for _, e := range exitStatuses() {
		fmt.Fprintf(&b, ".TP\n%d\n%s\n", e.code, e.meaning)
	}
	b.WriteString(".PP\nNew codes may be added in later versions; the meaning of existing codes does not change.\n")
	return b.String(), nil
}

// exitStatuses are the exit codes and their meanings, as README.md's "Exit
// codes" table gives them (TestManPageHasWhatHelpShows holds the two
// together), in roff.
func exitStatuses() []struct {
	code    int
	meaning string
} {
	return []struct {
		code    int
		meaning string
	}{
		{ExitOK, "success"},
		{ExitError, "the command failed (store, source, I/O, not found)"},
		{ExitUsage, "bad arguments, flags, names or policy file"},
		{ExitMismatch, "a proof failed: replay mismatch, evidence or store verification failure, strict receipt claims"},
		{ExitCannotCheck, "a check could not run to completion"},
		{ExitDrift, "\\fBstatus --exit-code\\fR: a source drifted from its snapshot or tag"},
		{ExitConflicts, "\\fBconflicts list --exit-code\\fR: a pull left conflicts to settle (a run id with two manifests, a tag moved on both sides)"},
		{ExitInterrupted, "interrupted"},
	}
}

func runMan(_ context.Context, opts manOptions, dir string) error {
	page, err := manPage(newApp(nil, io.Discard, io.Discard))
	if err != nil {
		return err
	}
	if dir == "" {
		_, err := io.WriteString(opts.out, page)
		return err
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return withCode(ExitUsage, hint.With(fmt.Errorf("man: %s is not a directory", dir), "create it first, or leave DIR out to print the page"))
	}
	path := filepath.Join(dir, "readproof.1")
	tmp, err := os.CreateTemp(dir, ".readproof.1-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = io.WriteString(tmp, page)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if r := gitstore.WriteLimitRemedy(err, dir); r != "" {
		return hint.With(fmt.Errorf("man: write %s: %w", path, err), "nothing was written at "+path+" (a page already there is unchanged): "+r+", then run it again")
	} else if err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	fmt.Fprintf(opts.err, "readproof: wrote %s\n", path)
	return nil
}
