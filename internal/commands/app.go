// Package commands is readproof's command line: flags, output and exit
// codes, and nothing else. Every command is listed once in commandGroups; its
// cli.Command reads the flags into an options struct in a tiny adapter and
// calls runX(ctx, env, options, args), which calls the domain packages
// (store, proofread, share, storecheck, evidence, receipts) and prints what
// they return. stdout carries data, stderr carries conversation, and every
// error is printed as one line with a hint on the next.
//
// The package holds no domain logic and no package-level state: no init
// functions, no registries, no variables other than error sentinels
// (TestNoPackageState enforces it). The MCP server (internal/mcpserver)
// calls the same domain functions directly, not this package.
package commands

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/buildinfo"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/progress"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
)

// Exit codes. New codes may be added; existing ones keep their meaning.
const (
	ExitOK          = 0   // success
	ExitError       = 1   // the command failed (store, source, I/O, not found)
	ExitUsage       = 2   // bad arguments, flags or names
	ExitMismatch    = 3   // a proof failed: replay mismatch, evidence or store verification failure, strict claims
	ExitCannotCheck = 4   // a check could not run to completion (verify)
	ExitDrift       = 5   // status --exit-code: a source no longer matches its snapshot or tag
	ExitConflicts   = 6   // conflicts list --exit-code: a pull left conflicts to settle
	ExitInterrupted = 130 // interrupted by a signal
)

// exitError carries an explicit exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// errQuiet, wrapped by withCode, makes Main exit with that code and print
// nothing: the command already said everything (readproof exec exits with
// the code of the command it ran).
var errQuiet = errors.New("exit quietly")

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// usageError marks bad command-line input.
func usageError(format string, args ...any) error {
	return withCode(ExitUsage, fmt.Errorf(format, args...))
}

// Main runs readproof with args (args[0] is the program name) and returns
// the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return mainApp(args, stdin, stdout, stderr, true)
}

// mainApp is Main; with sole false it builds every command even where
// soleCommand would build one (for TestSoleCommandSameAnswers).
func mainApp(args []string, stdin io.Reader, stdout, stderr io.Writer, sole bool) int {
	// SIGINT and SIGTERM cancel ctx once a command's action runs (signals.go).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := &interrupts{cancel: cancel}
	defer sigs.stop()
	ctx = context.WithValue(ctx, interruptsKey{}, sigs)
	// Help, which urfave/cli prints ignoring write errors, fails like any
	// other output that does not arrive (withEnv does the same for each
	// command's own output).
	out := &outWriter{w: stdout}
	stdout = out
	var help *bufio.Writer
	if len(args) == 1 || len(args) == 2 && (args[1] == "--help" || args[1] == "-h") {
		// readproof's own help and nothing else (no command runs): urfave/cli
		// writes it a cell at a time, so gather it and write it once (a
		// write error is out's).
		help = bufio.NewWriter(stdout)
		stdout = help
	}
	if words, ok := isCompletion(args); ok {
		complete(newApp(stdin, stdout, stderr), words, stdout)
		return ExitOK
	}
	var cmds []*cli.Command
	if sole {
		cmds = soleCommand(args)
	}
	if cmds == nil {
		cmds = commandList()
	}
	app := buildApp(stdin, stdout, stderr, cmds)
	err := app.RunContext(ctx, permute(app, args))
	if help != nil {
		_ = help.Flush()
	}
	if err == nil && out.err != nil {
		err = out.err
	}
	if err == nil {
		return ExitOK
	}
	code := codeOf(ctx, err)
	if errors.Is(err, errQuiet) {
		return code
	}
	if hint.Of(err) == "" && errors.Is(err, fs.ErrPermission) {
		// the system's error names the path; say what to do about it
		err = hint.With(err, "this user may not write (or read) the path named above (permission denied): fix its permissions or its directory's (ls -ld shows the owner and mode), or run readproof as a user who may")
	} else if hint.Of(err) == "" && errors.Is(err, syscall.EROFS) {
		err = hint.With(err, "the path named above is on a read-only file system: remount it read-write, or name a path on one where you can write")
	}
	msg, h := errorLines(err)
	fmt.Fprintf(stderr, "readproof: error: %s\n", msg)
	if h != "" {
		fmt.Fprintf(stderr, "readproof: hint: %s\n", h)
	}
	return code
}

// errorLines are the texts of the two lines that say err on stderr (and
// of a --json object that repeats them, `evidence export`'s): its message
// on one line and its hint ("" when none). An error may quote what a
// remote, a source or a store holds (a ref name, git's message from the
// server, a path): escaped (text.Escape), its bytes cannot act on a
// terminal, and a script that shows the decoded JSON shows the same text.
func errorLines(err error) (msg, h string) {
	return text.Escape(strings.ReplaceAll(err.Error(), "\n", " ")), text.Escape(hint.Of(err))
}

// exitCode is the code Main exits with for err (0 for nil).
func exitCode(ctx context.Context, err error) int {
	if err == nil {
		return ExitOK
	}
	return codeOf(ctx, err)
}

func codeOf(ctx context.Context, err error) int {
	var ee *exitError
	switch {
	case errors.Is(err, store.ErrNotAStore):
		return ExitUsage
	case errors.As(err, &ee):
		return ee.code
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, store.ErrMismatch):
		return ExitMismatch
	case errors.Is(err, identity.ErrInvalid), errors.Is(err, keyloc.ErrConfig):
		return ExitUsage
	}
	return ExitError
}

// appHelpTemplate is urfave/cli's AppHelpTemplate with the commands listed
// in commandList's order, a heading at each change of group.
const appHelpTemplate = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{.HelpName}} [global options] command [command options] [arguments...]

VERSION:
   {{.Version}}

COMMANDS:{{$group := ""}}{{range .VisibleCommands}}{{if ne .Category $group}}{{$group = .Category}}
   {{.Category}}:{{end}}
     {{join .Names ", "}}{{"\t"}}{{.Usage}}{{end}}

GLOBAL OPTIONS:{{template "visibleFlagTemplate" .}}

Run 'readproof help COMMAND [SUBCOMMAND]' for a command's help.
`

// globalFlags are accepted before or after any command.
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "store", Usage: "the readproof store (a bare git repository)", EnvVars: []string{"READPROOF_STORE"}},
		&cli.StringFlag{Name: "config", Usage: "the policy file", EnvVars: []string{"READPROOF_CONFIG"}},
		&cli.BoolFlag{Name: "json", Usage: "print data as JSON"},
		// declared here because the help command hides urfave/cli's own --help
		&cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help", DisableDefaultText: true},
	}
}

// newApp is readproof's command line with every command.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	return buildApp(stdin, stdout, stderr, commandList())
}

// buildApp is readproof's command line with the commands cmds (Main's, all
// of them or the one soleCommand found).
func buildApp(stdin io.Reader, stdout, stderr io.Writer, cmds []*cli.Command) *cli.App {
	app := &cli.App{
		Name:    "readproof",
		Usage:   "record, diff, replay and prove what AI agents read",
		Version: buildinfo.Read().String(),
		// Shown nowhere; left zero, urfave/cli stats os.Args[0] at every
		// start to fill it in.
		Compiled:                  time.Unix(0, 0),
		CustomAppHelpTemplate:     appHelpTemplate,
		EnableBashCompletion:      true,
		Reader:                    stdin,
		Writer:                    stdout,
		ErrWriter:                 stderr,
		Flags:                     globalFlags(),
		HideHelpCommand:           true,
		DisableSliceFlagSeparator: true,
		Suggest:                   true,
		ExitErrHandler:            func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return flagUsageError("", globalFlags(), err)
		},
		Commands: cmds,
	}
	// Reached only when the first argument names no command.
	app.Action = unknownCommand("", app.Commands, cli.ShowAppHelp)
	var mark func(string, []*cli.Command)
	mark = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			name := prefix + c.Name
			// The flags as declared (urfave/cli adds its own later), put
			// together with the global ones only when a usage error needs
			// them: not for each of some 70 commands at every start.
			own := c.Flags
			c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
				return flagUsageError(name, append(append([]cli.Flag{}, own...), globalFlags()...), err)
			}
			// urfave/cli gives every command a subcommand "help" (alias
			// "h"): a leaf's argument spelled so (`remote rm h`, `tag set
			// URI help`) printed help, exit 0, and did nothing
			c.HideHelpCommand = true
			if len(c.Subcommands) > 0 {
				// `readproof tag help set` is readproof's help, not
				// urfave/cli's (which answers "No help topic", exit 1)
				if c.Action == nil {
					c.Action = unknownCommand(name+" ", c.Subcommands, cli.ShowSubcommandHelp)
				} else {
					c.Action = helpFirst(name, c.Action)
				}
			}
			if c.Action != nil {
				c.Action = hintUsage(name, c.Action)
			}
			if c.Action != nil && !ignoresInterrupts(name) {
				c.Action = listening(c.Action)
			}
			mark(name+" ", c.Subcommands)
		}
	}
	mark("", app.Commands)
	return app
}

// hintUsage gives a usage error (exit 2) that carries no hint of its own
// the one every usage error of urfave/cli's parsing gets: where the usage of
// the command at path is.
func hintUsage(path string, action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		err := action(c)
		if err != nil && hint.Of(err) == "" && !errors.Is(err, errQuiet) && codeOf(c.Context, err) == ExitUsage {
			err = hint.With(err, "see `readproof "+path+" --help`")
		}
		return err
	}
}

// ignoresInterrupts names the commands that never read their context:
// they print and exit, and run without a signal handler (signals.go).
func ignoresInterrupts(name string) bool {
	switch name {
	case "version", "help", "man":
		return true
	}
	return false
}

// flagUsageError is a usage error (exit 2) of the command at path ("" for
// readproof itself) that names the command and, for an unknown flag,
// suggests the closest one of flags.
func flagUsageError(path string, flags []cli.Flag, err error) error {
	h := "see `readproof " + path + " --help`"
	if path == "" {
		h = "see `readproof --help`"
	}
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		err = fmt.Errorf("%w %s", errUnknownFlag, typedFlag(name))
		if cli.SuggestFlag != nil {
			if s := cli.SuggestFlag(flags, name, false); s != "" && text.Nearest(name, []string{strings.TrimLeft(s, "-")}) != "" {
				h = fmt.Sprintf("did you mean %q? (%s)", s, h)
			}
		}
	} else if name, ok := strings.CutPrefix(err.Error(), "flag needs an argument: -"); ok {
		err = fmt.Errorf("flag %s needs a value", typedFlag(name))
	} else if before, name, why, ok := cutInvalidFlag(err.Error()); ok {
		err = fmt.Errorf("%s for %s: %s", before, typedFlag(name), why)
	}
	if path != "" {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return withCode(ExitUsage, hint.With(err, h))
}

// cutInvalidFlag splits Go's flag error for a value that does not parse:
// `invalid value "x" for flag -rate: parse error`, or for a boolean flag
// `invalid boolean value "x" for -sign: parse error`.
func cutInvalidFlag(msg string) (before, name, why string, ok bool) {
	for _, sep := range []string{" for flag -", " for -"} {
		if before, rest, found := strings.Cut(msg, sep); found && strings.HasPrefix(before, "invalid ") {
			name, why, _ = strings.Cut(rest, ": ")
			return before, name, why, true
		}
	}
	return "", "", "", false
}

// typedFlag is a flag's name as it is typed: --name, or -n for a one-letter
// name (Go's flag package writes -name in its errors).
func typedFlag(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// errUnknownFlag is the cause of an unknown-flag usage error.
var errUnknownFlag = errors.New("unknown flag")

// unknownCommand is the action of the app and of each command that only
// groups subcommands: without arguments it shows the help, with an unknown
// subcommand it is a usage error (exit 2) with a hint; urfave/cli's own
// answer exits 1 without one.
func unknownCommand(prefix string, cs []*cli.Command, help func(*cli.Context) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if !c.Args().Present() {
			return help(c)
		}
		if c.Args().First() == "help" {
			return runHelp(c.Context, helpOptions{app: c.App}, append(strings.Fields(prefix), c.Args().Tail()...))
		}
		return unknownCommandError(prefix, cs, c.Args().First())
	}
}

// helpFirst is the action of a command that has subcommands and an action
// of its own (run --id): `readproof run help mount` is help, anything else
// is the command's.
func helpFirst(path string, action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.Args().First() == "help" {
			return runHelp(c.Context, helpOptions{app: c.App}, append(strings.Fields(path), c.Args().Tail()...))
		}
		return action(c)
	}
}

// commandPath is the command's name as typed after readproof ("tag list").
func commandPath(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" && x.Command.Name != x.App.Name {
			names = append([]string{x.Command.Name}, names...)
		}
	}
	if len(names) == 0 && c.Command != nil {
		return c.Command.Name
	}
	return strings.Join(names, " ")
}

// commandGroups is every command, in the order `readproof --help` lists
// them: grouped by task, the groups in this order (appHelpTemplate keeps
// it; urfave/cli would sort the groups by name). A new command is added
// here, in its group, with its name (TestCommandGroupsNames holds the two
// equal); its file holds the cli.Command (flags and a tiny adapter) and its
// runX function.
func commandGroups() []commandGroup {
	return []commandGroup{
		{"record", []namedCommand{{"init", initCommand}, {"resource", resourceCommand}, {"get", getCommand}, {"run", runCommand}, {"tag", tagCommand}, {"exec", execCommand}}},
		{"inspect", []namedCommand{{"inspect", inspectCommand}, {"history", historyCommand}, {"status", statusCommand}, {"manifest", manifestCommand}, {"diff", diffCommand}}},
		// hook is run by the guarded shared remote's pre-receive hook.
		{"share", []namedCommand{{"remote", remoteCommand}, {"push", pushCommand}, {"pull", pullCommand}, {"clone", cloneCommand}, {"conflicts", conflictsCommand}, {"hook", hookCommand}}},
		{"prove", []namedCommand{{"replay", replayCommand}, {"verify", verifyCommand}, {"evidence", evidenceCommand}, {"verify-commit", verifyCommitCommand}, {"key", keyCommand}, {"probe", probeCommand}, {"receipts", receiptsCommand}}},
		{"agent", []namedCommand{{"mcp", mcpCommand}}},
		{"store", []namedCommand{{"gc", gcCommand}, {"migrate", migrateCommand}, {"hooks", hooksCommand}}},
		{"help", []namedCommand{{"help", helpCommand}, {"version", versionCommand}, {"completion", completionCommand}, {"man", manCommand}, {"demo", demoCommand}}},
	}
}

// commandGroup is one heading of `readproof --help` and its commands.
type commandGroup struct {
	category string
	commands []namedCommand
}

// namedCommand is a top-level command's name and its constructor, so that
// one command can be built without the others (soleCommand).
type namedCommand struct {
	name string
	make func() *cli.Command
}

// commandList is every command, built, in commandGroups' order.
func commandList() []*cli.Command {
	var cs []*cli.Command
	for _, g := range commandGroups() {
		for _, nc := range g.commands {
			c := nc.make()
			c.Category = g.category
			cs = append(cs, c)
		}
	}
	return cs
}

// soleCommand returns the commands a run of readproof with args needs when
// args name one top-level command that runs on its own (`readproof get
// URI`, `readproof --json run --id ID URI`): that command and help (whose
// presence keeps urfave/cli from adding a second --help). Building the
// tree of some 70 commands and their flags was about a tenth of the CPU of
// `readproof version` (docs/startup.md, session 8). It returns nil, for the
// whole tree, when anything but the global flags --store, --config and
// --json comes before the command's name, when the name is no command's,
// and for the commands that read the tree: help, completion, man and demo
// (and shell completion, which Main answers before).
func soleCommand(args []string) []*cli.Command {
	if len(args) < 2 {
		return nil
	}
	name := ""
	for i := 1; i < len(args) && name == ""; i++ {
		a := args[i]
		switch {
		case a == "--json" || a == "-json":
		case a == "--store" || a == "-store" || a == "--config" || a == "-config":
			i++ // its value
		case strings.HasPrefix(a, "--store=") || strings.HasPrefix(a, "-store=") ||
			strings.HasPrefix(a, "--config=") || strings.HasPrefix(a, "-config="):
		case strings.HasPrefix(a, "-"):
			return nil
		default:
			name = a
		}
	}
	switch name {
	case "", "help", "completion", "man", "demo":
		return nil
	}
	var cmd, help *cli.Command
	for _, g := range commandGroups() {
		for _, nc := range g.commands {
			if nc.name == name || nc.name == "help" {
				c := nc.make()
				c.Category = g.category
				if nc.name == "help" {
					help = c
				} else {
					cmd = c
				}
			}
		}
	}
	if cmd == nil {
		return nil
	}
	return []*cli.Command{cmd, help}
}

// permute moves flags after positional arguments to where urfave/cli v2
// parses them: global flags before the command, command flags right after
// the command path. Everything after "--" stays positional, and so does
// everything from the first argument of exec on (the command it runs, whose
// flags are its own). A flag that takes a value and ends the line without
// one ends the permuted line too.
func permute(app *cli.App, args []string) []string {
	if len(args) == 0 {
		return args
	}
	globals := map[string]cli.Flag{}
	for _, f := range app.Flags {
		for _, n := range f.Names() {
			if n != "help" && n != "h" { // --help asks for the help of the command it follows
				globals[n] = f
			}
		}
	}
	var globalArgs, path, flagArgs, positional []string
	cmds := app.Commands
	local := map[string]cli.Flag{}
	rest := args[1:]
	dashdash := false
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i+1:]...)
			dashdash = true
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			name := strings.TrimLeft(a, "-")
			hasValue := false
			if j := strings.IndexByte(name, '='); j >= 0 {
				name, hasValue = name[:j], true
			}
			f, isLocal := local[name]
			if !isLocal {
				f = globals[name]
			}
			tokens := []string{a}
			if f != nil && !hasValue && takesValue(f) {
				if i+1 == len(rest) {
					// typed last without its value: end the line with it,
					// so that urfave/cli says it needs one instead of
					// taking a positional argument (or the command's name)
					// as the value
					out := append([]string{args[0]}, globalArgs...)
					if isLocal {
						out = append(append(out, path...), flagArgs...)
					}
					return append(out, a)
				}
				tokens = append(tokens, rest[i+1])
				i++
			}
			if isLocal || f == nil {
				flagArgs = append(flagArgs, tokens...)
			} else {
				globalArgs = append(globalArgs, tokens...)
			}
			continue
		}
		if len(positional) == 0 && len(path) == 1 && path[0] == "exec" {
			// exec's first argument starts the command it runs: the
			// rest is that command's, flags included, as after "--"
			positional = append(positional, rest[i:]...)
			dashdash = true
			break
		}
		if len(positional) == 0 {
			if c := findCommand(cmds, a); c != nil {
				path = append(path, a)
				cmds = c.Subcommands
				local = map[string]cli.Flag{}
				for _, f := range c.Flags {
					for _, n := range f.Names() {
						local[n] = f
					}
				}
				continue
			}
		}
		positional = append(positional, a)
	}
	out := []string{args[0]}
	out = append(out, globalArgs...)
	out = append(out, path...)
	out = append(out, flagArgs...)
	if len(positional) > 0 {
		if dashdash || hasDash(positional) {
			out = append(out, "--")
		}
		out = append(out, positional...)
	}
	return out
}

func hasDash(ss []string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, "-") {
			return true
		}
	}
	return false
}

func findCommand(cs []*cli.Command, name string) *cli.Command {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

func takesValue(f cli.Flag) bool {
	if _, ok := f.(*cli.BoolFlag); ok {
		return false
	}
	if df, ok := f.(cli.DocGenerationFlag); ok {
		return df.TakesValue()
	}
	return true
}

// output helpers --------------------------------------------------------------

func printJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeJSONControls(b.Bytes()))
	return err
}

// printJSONArray prints, as printJSON prints a slice of them, the values
// each gives, one at a time: the array is never held whole. A write that
// fails on the way (a full device, a reader gone) fails it with
// outputCut's error: what stdout received stops part-way, no valid JSON.
func printJSONArray[T any](w io.Writer, each func(func(T) error) error) error {
	bw := bufio.NewWriter(w)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("  ", "  ")
	enc.SetEscapeHTML(false)
	n := 0
	var werr error // the write that failed
	if err := each(func(v T) error {
		b.Reset()
		if err := enc.Encode(v); err != nil {
			return err
		}
		sep := ",\n  "
		if n == 0 {
			sep = "[\n  "
		}
		n++
		bw.WriteString(sep)
		// Encode ends the value with a newline
		_, werr = bw.Write(escapeJSONControls(bytes.TrimSuffix(b.Bytes(), []byte("\n"))))
		return werr
	}); err != nil {
		if werr != nil {
			return outputCut("the JSON array", "without its closing ], so it is not valid JSON", werr)
		}
		return err
	}
	if n == 0 {
		bw.WriteString("[]\n")
	} else {
		bw.WriteString("\n]\n")
	}
	if err := bw.Flush(); err != nil {
		return outputCut("the JSON array", "without its closing ], so it is not valid JSON", err)
	}
	return nil
}

// outputCut is the error of a write that cut what (the JSON array, the
// table a command streams to stdout) short: the command fails (exit 1)
// saying that what reached stdout is a part of it (how says which), so
// that no script takes it for the whole.
func outputCut(what, how string, err error) error {
	return hint.With(fmt.Errorf("writing %s to stdout: %w: what was printed stops part-way, %s", what, err, how),
		"discard what was printed: make room where stdout goes (or keep its reader open to the end) and run the command again")
}

// escapeJSONControls writes each rune of encoded JSON that a terminal acts
// on and encoding/json leaves as it is (DEL, C1 controls, bidi overrides and
// other format characters: text.Printable's) as a \u escape, so what a
// source or a remote chose reaches a terminal as text and the JSON decodes
// to the same value. Such runes are 0x7f and up, which JSON has only inside
// strings; encoding/json itself escapes what is below 0x20 and replaces
// invalid UTF-8.
func escapeJSONControls(b []byte) []byte {
	i := 0
	for i < len(b) && b[i] < 0x7f {
		i++
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		if b[i] < 0x7f {
			out = append(out, b[i])
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if unicode.IsPrint(r) {
			out = append(out, b[i:i+n]...)
		} else if r1, r2 := utf16.EncodeRune(r); r1 != unicode.ReplacementChar {
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += n
	}
	return out
}

// isTerminal reports whether w is a terminal (for progress lines).
func isTerminal(w io.Writer) bool { return progress.Terminal(w) }

// needArgs checks the number of positional arguments.
func needArgs(c *cli.Context, min, max int, usage string) error {
	n := c.Args().Len()
	if n < min || (max >= 0 && n > max) {
		name := commandPath(c)
		return withCode(ExitUsage, hint.With(fmt.Errorf("%s: wrong number of arguments (%d)", name, n), strings.TrimSpace("usage: readproof "+name+" "+usage)))
	}
	return nil
}
