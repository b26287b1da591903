package commands

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
)

// completeFlag is urfave/cli's completion protocol: the shell script runs
// `readproof WORDS... --generate-bash-completion` with the words before the
// cursor and the current word when it starts with "-" (else "", readproof's
// addition: the words before are whole), and offers the lines printed,
// filtered by what is typed.
const completeFlag = "--generate-bash-completion"

// completionCommand is `readproof completion bash|zsh|fish`.
func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish (commands, flags, resource URIs, tags and run ids)",
		ArgsUsage: "bash|zsh|fish",
		Description: "bash: source <(readproof completion bash), or save it as ~/.local/share/bash-completion/completions/readproof\n" +
			"zsh:  readproof completion zsh > \"${fpath[1]}/_readproof\" (or source it after compinit)\n" +
			"fish: readproof completion fish > ~/.config/fish/completions/readproof.fish",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, 1, "bash|zsh|fish"); err != nil {
				return err
			}
			return runCompletion(c.Context, completionOptions{out: c.App.Writer}, c.Args().First())
		},
	}
}

type completionOptions struct {
	out io.Writer
}

func runCompletion(_ context.Context, opts completionOptions, shell string) error {
	switch shell {
	case "bash":
		_, err := io.WriteString(opts.out, bashCompletion)
		return err
	case "zsh":
		_, err := io.WriteString(opts.out, zshCompletion)
		return err
	case "fish":
		_, err := io.WriteString(opts.out, fishCompletion)
		return err
	}
	return withCode(ExitUsage, hint.With(fmt.Errorf("completion: unknown shell %q", shell), "readproof completion bash, zsh or fish"))
}

// The three scripts ask readproof for the candidates by running the words
// typed so far with completeFlag appended. After a "--" they ask nothing
// and offer file names: isCompletion does not take a line holding "--" for
// a request, so `readproof exec --session S -- CMD ARGS <TAB>` would run
// CMD, and record a receipt of a call nobody made (before session 29 all
// three asked).

// bashCompletion reads the words from COMP_LINE (bash splits URIs at ':'
// in COMP_WORDS), falling back to COMP_WORDS, and trims what bash
// considers already typed before a ':' from each candidate.
const bashCompletion = `# readproof completion for bash (readproof completion bash)
# Load it in this shell: source <(readproof completion bash)
# Load it in every shell: readproof completion bash > ~/.local/share/bash-completion/completions/readproof
_readproof_complete() {
  local line cur
  local -a words
  if [[ -n "${COMP_LINE:-}" ]]; then
    line="${COMP_LINE:0:${COMP_POINT:-${#COMP_LINE}}}"
    read -r -a words <<<"$line"
    if [[ "$line" =~ [[:space:]]$ ]]; then
      cur=""
    else
      cur="${words[${#words[@]}-1]}"
      unset 'words[${#words[@]}-1]'
    fi
  else
    words=("${COMP_WORDS[@]:0:COMP_CWORD}")
    cur="${COMP_WORDS[COMP_CWORD]}"
  fi
  local w
  for w in "${words[@]:1}"; do
    # the words after -- are a command's (exec): never run them
    [[ "$w" == "--" ]] && return 0
  done
  # a flag being typed is asked for; "--" as "-", since a line holding
  # "--" is not a request and would run; any other word as "", so that
  # the word before is taken whole (after "--id=ID " or "--json " comes
  # a value, not a flag)
  if [[ "$cur" == "--" ]]; then
    words+=("-")
  elif [[ "$cur" == -* ]]; then
    words+=("$cur")
  else
    words+=("")
  fi
  local IFS=$'\n'
  local candidates
  candidates="$("${words[@]}" --generate-bash-completion 2>/dev/null)"
  COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
  if [[ "$cur" == *:* && "$COMP_WORDBREAKS" == *:* ]]; then
    local strip="${cur%"${cur##*:}"}" i
    for i in "${!COMPREPLY[@]}"; do
      COMPREPLY[$i]="${COMPREPLY[$i]#"$strip"}"
    done
  fi
  return 0
}
complete -o bashdefault -o default -F _readproof_complete readproof
`

const zshCompletion = `#compdef readproof
# readproof completion for zsh (readproof completion zsh)
# Install: readproof completion zsh > "${fpath[1]}/_readproof", or source it after compinit.
_readproof() {
  local -a req candidates
  local cur=${words[CURRENT]}
  req=("${(@)words[1,CURRENT-1]}")
  if (( ${req[(Ie)--]} )); then
    # the words after -- are a command's (exec): never run them
    _files
    return
  fi
  # a flag being typed is asked for; "--" as "-", since a line holding
  # "--" is not a request and would run; any other word as "", so that
  # the word before is taken whole (after "--id=ID " or "--json " comes
  # a value, not a flag)
  if [[ $cur == -- ]]; then
    req+=(-)
  elif [[ $cur == -* ]]; then
    req+=("$cur")
  else
    req+=("")
  fi
  candidates=("${(@f)$("${(@)req}" --generate-bash-completion 2>/dev/null)}")
  if [[ -n ${candidates[1]} ]]; then
    compadd -- "${(@)candidates}"
  else
    _files
  fi
}
if [[ "${funcstack[1]}" == "_readproof" ]]; then
  _readproof "$@"
else
  compdef _readproof readproof
fi
`

// fishCompletion asks readproof for everything, commands and flags
// included, as the bash and zsh scripts do. Before session 29 the commands
// and flags came from urfave/cli's static fish script, whose conditions
// know a subcommand by its name alone: `init` took remote, key, probe and
// receipts init's flags, `run show` key show's, and `run mount RUN` offered
// run's subcommands.
const fishCompletion = `# readproof completion for fish (readproof completion fish)
# Install: readproof completion fish > ~/.config/fish/completions/readproof.fish
function __readproof_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    if contains -- -- $words
        # the words after -- are a command's (exec): never run them
        __fish_complete_path $cur
        return
    end
    set -l req $words
    # a flag being typed is asked for; "--" as "-", since a line holding
    # "--" is not a request and would run; any other word as "", so that
    # the word before is taken whole (after "--id=ID " or "--json " comes
    # a value, not a flag)
    if test "$cur" = --
        set -a req -
    else if string match -q -- '-*' $cur
        set -a req $cur
    else
        set -a req ''
    end
    set -l out ($req --generate-bash-completion 2>/dev/null)
    if set -q out[1]
        printf '%s\n' $out
    else if not string match -q -- '-*' $cur
        # nothing readproof knows: a flag's value or a file argument
        __fish_complete_path $cur
    end
end
complete -c readproof -f -a '(__readproof_complete)'
`

// argKind is what a positional argument takes, for completion.
type argKind int

const (
	argNone       argKind = iota
	argURI                // a resource URI
	argURITag             // a resource URI, or URI@TAG
	argTag                // a tag of the URI before it
	argRun                // a committed run id
	argOpenRun            // an open run id
	argAnyRun             // a run id, open or committed
	argAbortedRun         // an aborted run id
	argCommand            // a command path (help)
)

// argSpec says what a command's positional arguments take; the last kind
// repeats when many is set.
type argSpec struct {
	kinds []argKind
	many  bool
}

// completionArgs is the kind of each positional argument, by command path.
// TestCompletionArgsNameCommands keeps the keys in the command tree.
func completionArgs() map[string]argSpec {
	return map[string]argSpec{
		"get":               {kinds: []argKind{argURITag}},
		"inspect":           {kinds: []argKind{argURITag}},
		"history":           {kinds: []argKind{argURI}},
		"run":               {kinds: []argKind{argURITag}, many: true},
		"run mount":         {kinds: []argKind{argOpenRun, argURITag}, many: true},
		"run commit":        {kinds: []argKind{argOpenRun}},
		"run show":          {kinds: []argKind{argAnyRun}},
		"run abort":         {kinds: []argKind{argOpenRun}},
		"run reopen":        {kinds: []argKind{argAbortedRun}},
		"manifest":          {kinds: []argKind{argRun}},
		"diff":              {kinds: []argKind{argRun, argRun}},
		"replay":            {kinds: []argKind{argRun}},
		"evidence export":   {kinds: []argKind{argRun}},
		"probe check":       {kinds: []argKind{argRun}},
		"verify-commit":     {kinds: []argKind{argRun}, many: true},
		"tag set":           {kinds: []argKind{argURI, argTag}},
		"tag list":          {kinds: []argKind{argURI}},
		"tag rm":            {kinds: []argKind{argURI, argTag}},
		"tag history":       {kinds: []argKind{argURI, argTag}},
		"tag revert":        {kinds: []argKind{argURI, argTag}},
		"tag promote":       {kinds: []argKind{argURI, argTag, argTag}},
		"tag propose":       {kinds: []argKind{argURI, argTag}},
		"conflicts show":    {kinds: []argKind{argURI, argTag}},
		"conflicts resolve": {kinds: []argKind{argURI, argTag}},
		"help":              {kinds: []argKind{argCommand}, many: true},
	}
}

// complete answers one completion request: words are the arguments after
// the program name, the protocol flag removed. It prints one candidate a
// line on out and never fails: a store that cannot be read offers no values.
func complete(app *cli.App, words []string, out io.Writer) {
	globals := map[string]cli.Flag{}
	for _, f := range app.Flags {
		for _, n := range f.Names() {
			globals[n] = f
		}
	}
	// The scripts send the word being typed when it starts with "-" (a
	// flag being typed), and "" for any other: the words before it are
	// whole, a last one starting with "-" too (`run --id=ID <TAB>`,
	// `get --json <TAB>`). A script saved before session 29 sends nothing
	// for the other words, which leaves the protocol's one ambiguity: a
	// last word starting with "-" is then the flag being typed, unless it
	// is a whole flag that takes a value (`--store <TAB>`): then the value
	// is being typed and the shell offers files.
	flagPrefix := ""
	if n := len(words); n > 0 && words[n-1] == "" {
		words = words[:n-1]
	} else if n > 0 && strings.HasPrefix(words[n-1], "-") {
		flagPrefix = words[n-1]
		words = words[:n-1]
	}
	var (
		path       []string
		cmd        *cli.Command
		cmds       = app.Commands
		positional []string
		globalVals = map[string]string{}
		cmdFlags   = map[string]bool{} // the command's own flags on the line
	)
	flagOf := func(name string) (cli.Flag, bool) {
		if cmd != nil {
			for _, f := range cmd.Flags {
				for _, n := range f.Names() {
					if n == name {
						return f, false
					}
				}
			}
		}
		f, ok := globals[name]
		return f, ok
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			positional = append(positional, words[i+1:]...)
			break
		}
		if strings.HasPrefix(w, "-") && len(w) > 1 {
			name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
			f, global := flagOf(name)
			if f != nil && !global {
				for _, n := range f.Names() {
					cmdFlags[n] = true
				}
			}
			if f == nil || !takesValue(f) || hasValue {
				if global && hasValue {
					globalVals[name] = value
				}
				continue
			}
			if i+1 == len(words) {
				return // the value of a flag: let the shell offer files
			}
			i++
			if global {
				globalVals[name] = words[i]
			}
			continue
		}
		if len(positional) == 0 {
			if c := findCommand(cmds, w); c != nil {
				cmd, cmds = c, c.Subcommands
				path = append(path, c.Name)
				continue
			}
		}
		positional = append(positional, w)
	}
	if flagPrefix != "" {
		name, _, hasValue := strings.Cut(strings.TrimLeft(flagPrefix, "-"), "=")
		if f, _ := flagOf(name); f != nil && takesValue(f) && !hasValue {
			return
		}
		var fs []cli.Flag
		if cmd != nil {
			fs = append(fs, cmd.Flags...)
		}
		fs = append(fs, app.Flags...)
		seen := map[string]bool{}
		for _, f := range fs {
			if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
				continue
			}
			for _, n := range f.Names() {
				name := "--" + n
				if len(n) == 1 {
					name = "-" + n
				}
				if !seen[name] {
					seen[name] = true
					fmt.Fprintln(out, name)
				}
			}
		}
		if !seen["--help"] {
			fmt.Fprintln(out, "--help")
		}
		return
	}
	// `run --id ID` takes URIs, not a subcommand (`run --id x start`
	// fails: start has no --id)
	oneShot := cmd != nil && cmd.Name == "run" && cmdFlags["id"]
	if len(positional) == 0 && len(cmds) > 0 && (cmd == nil || cmd.Action == nil || len(cmd.Subcommands) > 0) && !oneShot {
		printCommands(cmds, out)
		if cmd == nil || cmd.Name != "run" {
			return
		}
	}
	spec, ok := completionArgs()[strings.Join(path, " ")]
	if !ok || len(spec.kinds) == 0 {
		return
	}
	k := len(positional)
	if k >= len(spec.kinds) {
		if !spec.many {
			return
		}
		k = len(spec.kinds) - 1
	}
	kind := spec.kinds[k]
	if kind == argCommand {
		cs := app.Commands
		for _, p := range positional {
			c := findCommand(cs, p)
			if c == nil {
				return
			}
			cs = c.Subcommands
		}
		printCommands(cs, out)
		return
	}
	config, storePath := globalVals["config"], globalVals["store"]
	if config == "" {
		config = os.Getenv("READPROOF_CONFIG")
	}
	if storePath == "" {
		storePath = os.Getenv("READPROOF_STORE")
	}
	e, err := envFor(nil, io.Discard, io.Discard, config, storePath, false)
	if err != nil {
		return
	}
	prev := ""
	if k > 0 && k-1 < len(positional) {
		prev = positional[k-1]
	}
	for _, v := range completionValues(e, kind, prev) {
		fmt.Fprintln(out, v)
	}
}

func printCommands(cs []*cli.Command, out io.Writer) {
	for _, c := range cs {
		if !c.Hidden {
			fmt.Fprintln(out, c.Name)
		}
	}
}

// completionValues lists the store's values of one kind; prev is the
// argument before (the URI whose tags are wanted). A run id that no
// command takes (a ref that plain git, not readproof, put in the store) is
// not offered: it would reach the terminal unescaped, a bidi character and
// all, where `run list` quotes it. (A tag's name is checked against the
// record its ref points to, which Tags refuses when they differ.)
func completionValues(e *env, kind argKind, prev string) []string {
	pol, err := e.loadPolicy()
	if err != nil {
		return nil
	}
	var uris []string
	var ids []identity.URI
	for _, r := range pol.Resources() {
		uris = append(uris, r.URI.String())
		ids = append(ids, r.URI)
	}
	s, err := e.openWith(pol)
	if err != nil {
		if kind == argURI || kind == argURITag {
			return uris
		}
		return nil
	}
	defer s.Close()
	var out []string
	switch kind {
	case argURI:
		out = uris
	case argURITag:
		for i, u := range uris {
			out = append(out, u)
			tags, _ := s.Tags(ids[i])
			for _, t := range tags {
				out = append(out, u+"@"+t.Tag)
			}
		}
	case argTag:
		pu, err := identity.ParseURI(prev)
		if err != nil {
			return nil
		}
		tags, _ := s.Tags(pu)
		for _, t := range tags {
			out = append(out, t.Tag)
		}
	case argRun, argOpenRun, argAnyRun:
		runs, _ := s.Runs()
		for _, r := range runs {
			if (kind == argAnyRun || r.Open == (kind == argOpenRun)) && identity.ValidateRunID(r.RunID) == nil {
				out = append(out, r.RunID)
			}
		}
	case argAbortedRun:
		aborted, _ := s.AbortedRuns()
		for _, a := range aborted {
			if len(out) == 0 || out[len(out)-1] != a.RunID {
				out = append(out, a.RunID)
			}
		}
	}
	sort.Strings(out)
	return out
}

// isCompletion reports whether args (args[0] is the program) are a
// completion request, and returns the words to complete from.
// After "--" every word is an argument (`readproof exec -- CMD ...` passes
// them on), so a line with "--" is never a request, as in urfave/cli.
func isCompletion(args []string) ([]string, bool) {
	n := len(args)
	if n < 2 || args[n-1] != completeFlag {
		return nil, false
	}
	for _, a := range args[1 : n-1] {
		if a == "--" {
			return nil, false
		}
	}
	return args[1 : n-1], true
}
