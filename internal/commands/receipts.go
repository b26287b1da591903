package commands

// Tool receipts: `readproof receipts key init|issue|list|show|verify-claims`
// (docs/receipts.md). `readproof exec` lives in exec.go.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/receipts"
)

// receiptKeyEnv names the environment variable holding the receipt key
// file's path.
const receiptKeyEnv = "READPROOF_RECEIPTS_KEY"

const keyInitHint = "create the key with `readproof receipts key init` (or name an existing key file with --key, " + receiptKeyEnv + " or [receipts] key in readproof.toml)"

func receiptKeyFlag() cli.Flag {
	return &cli.StringFlag{Name: "key", Usage: "the receipt key file (default: $" + receiptKeyEnv + ", then [receipts] key in readproof.toml, then $XDG_CONFIG_HOME/readproof/receipts.key)"}
}

func receiptSessionFlag() cli.Flag {
	return &cli.StringFlag{Name: "session", Usage: "the session the call belongs to (required)"}
}

func receiptRunFlag() cli.Flag {
	return &cli.StringFlag{Name: "run", Usage: "the run the call belongs to (optional)"}
}

func receiptsCommand() *cli.Command {
	return &cli.Command{
		Name:  "receipts",
		Usage: "tool receipts: prove which tool calls really ran, and check the receipt ids an agent cites",
		Subcommands: []*cli.Command{
			{
				Name:  "key",
				Usage: "manage the receipt key (32 random bytes, mode 0600, outside every repository)",
				Subcommands: []*cli.Command{
					{
						Name:   "init",
						Usage:  "create the receipt key file; prints its path and key id",
						Flags:  []cli.Flag{receiptKeyFlag()},
						Action: receiptsKeyInit,
					},
				},
			},
			{
				Name:      "issue",
				Usage:     "record a tool call brokered elsewhere; prints the receipt id",
				ArgsUsage: "--session S --tool NAME (--args FILE | --args-json FILE) (--result FILE | --exit-code N [--stdout FILE] [--stderr FILE])",
				Flags: []cli.Flag{
					receiptSessionFlag(), receiptRunFlag(),
					&cli.StringFlag{Name: "tool", Usage: "the tool's name (required)"},
					&cli.StringFlag{Name: "args", Usage: "the call's command line: arguments separated by NUL bytes, as in /proc/PID/cmdline (- for stdin)"},
					&cli.StringFlag{Name: "args-json", Usage: "the call's JSON arguments, hashed in canonical form (- for stdin)"},
					&cli.StringFlag{Name: "result", Usage: "the call's result bytes (- for stdin)"},
					&cli.StringFlag{Name: "stdout", Usage: "a command's standard output (with --exit-code; default: empty)"},
					&cli.StringFlag{Name: "stderr", Usage: "a command's standard error (with --exit-code; default: empty)"},
					&cli.StringFlag{Name: "exit-code", Usage: "a command's exit status (128+N for signal N)"},
					&cli.StringFlag{Name: "signal", Usage: "the name of the signal that killed the command, e.g. SIGKILL"},
					&cli.StringFlag{Name: "error", Usage: "why the call failed outside its result"},
					&cli.StringFlag{Name: "start", Usage: "when the call started, RFC 3339 (default: --end)"},
					&cli.StringFlag{Name: "end", Usage: "when the call ended, RFC 3339 (default: now)"},
					receiptKeyFlag(),
				},
				Action: receiptsIssue,
			},
			{
				Name:      "list",
				Usage:     "list a session's receipts in issue order, each checked with the key when one is available",
				ArgsUsage: "SESSION",
				Flags:     []cli.Flag{receiptKeyFlag()},
				Action:    receiptsList,
			},
			{
				Name:      "show",
				Usage:     "print one receipt and whether its MAC verifies",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{receiptKeyFlag()},
				Action:    receiptsShow,
			},
			{
				Name:      "verify-claims",
				Usage:     "judge the receipt ids an agent cites (a JSON list, {\"receipts\": [...]}, or free text; - for stdin) and list the receipts it left out",
				ArgsUsage: "--session S [--strict] CLAIMS",
				Flags: []cli.Flag{
					receiptSessionFlag(),
					&cli.BoolFlag{Name: "strict", Usage: "exit 3 when a claim is fabricated, tampered or under an unknown key (for pre-merge hooks)"},
					receiptKeyFlag(),
				},
				Action: receiptsVerifyClaims,
			},
		},
	}
}

// Key location ---------------------------------------------------------------

// DefaultReceiptKeyPath is $XDG_CONFIG_HOME/readproof/receipts.key (per
// os.UserConfigDir).
func DefaultReceiptKeyPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", hint.With(fmt.Errorf("locating the receipt key: no user config directory: %w", err),
			"name the key file with --key PATH, "+receiptKeyEnv+" or [receipts] key in readproof.toml")
	}
	return filepath.Join(dir, "readproof", "receipts.key"), nil
}

// receiptKeyPath picks the key file: --key, then $READPROOF_RECEIPTS_KEY,
// then [receipts] key in the policy file, then the default. It returns the
// absolute path and where it came from.
func receiptKeyPath(flag string, pol *policy.File) (string, string, error) {
	var p, from string
	switch {
	case flag != "":
		p, from = flag, "--key"
	case os.Getenv(receiptKeyEnv) != "":
		p, from = os.Getenv(receiptKeyEnv), receiptKeyEnv
	case pol != nil && pol.ReceiptsKey != "":
		p, from = pol.ReceiptsKey, "[receipts] key in "+pol.Path
	default:
		d, err := DefaultReceiptKeyPath()
		if err != nil {
			return "", "", err
		}
		p, from = d, "the default location"
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", "", fmt.Errorf("receipt key %q (from %s): %w", p, from, err)
	}
	return abs, from, nil
}

// receiptKeyForbidden lists the directories a receipt key may not be in:
// the store, the project directory when a readproof.toml exists there, and
// the git repository (work tree or bare) that encloses the key path, if any.
func receiptKeyForbidden(e *env, pol *policy.File, keyPath string) []string {
	dirs := []string{e.storePath}
	if _, err := os.Stat(e.policyPath); err == nil {
		dirs = append(dirs, filepath.Dir(e.policyPath))
	}
	if pol != nil && pol.Path != "" && pol.Dir != "" {
		if _, err := os.Stat(pol.Path); err == nil {
			dirs = append(dirs, pol.Dir)
		}
	}
	return dirs
}

// loadReceiptKey finds and loads the receipt key, with hints a user can act
// on. It returns the key's path even when loading failed.
func loadReceiptKey(e *env, pol *policy.File, flag string) (receipts.Key, string, error) {
	path, from, err := receiptKeyPath(flag, pol)
	if err != nil {
		return receipts.Key{}, "", err
	}
	k, err := receipts.LoadKey(path, receiptKeyForbidden(e, pol, path)...)
	if err == nil {
		return k, path, nil
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return receipts.Key{}, path, hint.With(fmt.Errorf("no receipt key at %s (from %s): %w", path, from, err), keyInitHint)
	case errors.Is(err, receipts.ErrKeyPath):
		return receipts.Key{}, path, hint.With(err, "move the key outside the store, the project and every git repository, and name it with --key PATH, "+receiptKeyEnv+" or [receipts] key")
	case errors.Is(err, receipts.ErrKeyInsecure):
		return receipts.Key{}, path, hint.With(err, "run chmod 600 "+path)
	}
	return receipts.Key{}, path, fmt.Errorf("%w (key from %s)", err, from)
}

// receiptsKeyInit creates the key file.
func receiptsKeyInit(c *cli.Context) error {
	if err := needArgs(c, 0, 0, "[--key PATH]"); err != nil {
		return err
	}
	e, err := newEnv(c)
	if err != nil {
		return err
	}
	pol, err := e.loadPolicy()
	if err != nil {
		return err
	}
	path, _, err := receiptKeyPath(c.String("key"), pol)
	if err != nil {
		return err
	}
	forbidden := receiptKeyForbidden(e, pol, path)
	if err := receipts.CheckKeyLocation(path, forbidden...); err != nil {
		return withCode(ExitUsage, hint.With(err,
			"keep the key outside the store, the project and every git repository: pass --key PATH (for example under ~/.config/readproof/)"))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the directory of receipt key %s: %w", path, err)
	}
	if err := receipts.CreateKey(path, forbidden...); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return hint.With(err, "keep using it; to rotate, create a new key at another path with --key and keep the old one to check older receipts")
		}
		if errors.Is(err, receipts.ErrKeyPath) {
			return withCode(ExitUsage, hint.With(err, "pass --key PATH outside the store, the project and every git repository"))
		}
		return err
	}
	k, err := receipts.LoadKey(path, forbidden...)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.out, struct {
			Path  string `json:"path"`
			KeyID string `json:"key_id"`
		}{path, k.ID()})
	}
	fmt.Fprintf(e.out, "Created receipt key %s (key id %s)\n", path, k.ID())
	e.say("readproof: keep it secret and outside every repository; anyone holding it can issue receipts. Back it up: receipts made under it cannot be checked without it.")
	return nil
}

// Shared plumbing ------------------------------------------------------------

// receiptsCtx is what the receipt commands share.
type receiptsCtx struct {
	*env
	store   *store.Store
	ledger  *receipts.Ledger
	key     receipts.Key
	keyPath string
	keyErr  error // why key is zero
}

// withReceipts opens the store and loads the key. With needKey a key that
// cannot be loaded is an error; without it the command runs with keyErr set.
func withReceipts(c *cli.Context, needKey bool, fn func(*receiptsCtx) error) error {
	return withStore(c, func(e *env, s *store.Store) error {
		rc := &receiptsCtx{env: e, store: s, ledger: s.Receipts()}
		rc.key, rc.keyPath, rc.keyErr = loadReceiptKey(e, s.Policy(), c.String("key"))
		if rc.keyErr != nil && needKey {
			return rc.keyErr
		}
		return fn(rc)
	})
}

// receiptSession reads and validates --session.
func receiptSession(c *cli.Context) (string, error) {
	s := c.String("session")
	if s == "" {
		return "", withCode(ExitUsage, hint.With(fmt.Errorf("%s: missing --session", c.Command.FullName()), "name the agent session the receipts belong to: --session ID"))
	}
	if err := identity.ValidateSessionID(s); err != nil {
		return "", withCode(ExitUsage, hint.With(err, "session ids match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"))
	}
	return s, nil
}

// receiptRun reads and validates --run ("" when absent).
func receiptRun(c *cli.Context) (string, error) {
	r := c.String("run")
	if r == "" {
		return "", nil
	}
	if err := identity.ValidateRunID(r); err != nil {
		return "", withCode(ExitUsage, hint.With(err, "run ids match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"))
	}
	return r, nil
}

// readReceiptInput reads a file, or stdin for "-", refusing more than limit bytes.
func readReceiptInput(c *cli.Context, what, name string, limit int64) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = c.App.Reader
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", what, err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", what, name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("reading %s %s: more than %d bytes", what, name, limit)
	}
	return data, nil
}

// maxIssueInput bounds the argument and output files of `receipts issue`,
// which are held in memory (the result file is streamed).
const maxIssueInput = 1 << 30

// splitNULArgs splits a NUL-separated command line: each argument ends with a
// NUL, and a last argument may end without one (as xargs -0 reads).
func splitNULArgs(b []byte) []string {
	if len(b) == 0 {
		return []string{}
	}
	parts := bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0})
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

func parseReceiptTime(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, withCode(ExitUsage, hint.With(fmt.Errorf("--%s %q: not an RFC 3339 time", flag, s), "write times like 2026-11-29T20:00:02.5Z"))
	}
	return t, nil
}

// issueCall builds the Call of `receipts issue` from its flags.
func issueCall(c *cli.Context) (receipts.Call, error) {
	var call receipts.Call
	var err error
	if call.Session, err = receiptSession(c); err != nil {
		return call, err
	}
	if call.Run, err = receiptRun(c); err != nil {
		return call, err
	}
	if call.Tool = c.String("tool"); call.Tool == "" {
		return call, usageError("receipts issue: missing --tool NAME")
	}
	stdins := 0
	for _, f := range []string{"args", "args-json", "result", "stdout", "stderr"} {
		if c.String(f) == "-" {
			stdins++
		}
	}
	if stdins > 1 {
		return call, usageError("receipts issue: only one input may be read from stdin (-)")
	}
	switch a, j := c.String("args"), c.String("args-json"); {
	case a != "" && j != "":
		return call, usageError("receipts issue: give --args or --args-json, not both")
	case a != "":
		data, err := readReceiptInput(c, "arguments", a, maxIssueInput)
		if err != nil {
			return call, err
		}
		call.Args = receipts.ArgvArgs(splitNULArgs(data))
	case j != "":
		data, err := readReceiptInput(c, "JSON arguments", j, maxIssueInput)
		if err != nil {
			return call, err
		}
		if call.Args, err = receipts.JSONArgs(data); err != nil {
			return call, withCode(ExitUsage, hint.With(fmt.Errorf("--args-json %s: %w", j, err), "give one JSON document (RFC 8259); duplicate member names are refused"))
		}
	default:
		return call, withCode(ExitUsage, hint.With(errors.New("receipts issue: missing the call's arguments"),
			"give --args FILE (a command line, NUL-separated) or --args-json FILE (use a file holding {} for a call without arguments)"))
	}
	command := c.IsSet("exit-code")
	switch {
	case c.String("result") != "" && (command || c.String("stdout") != "" || c.String("stderr") != ""):
		return call, usageError("receipts issue: give --result for a tool's result, or --exit-code with --stdout/--stderr for a command's, not both")
	case c.String("result") != "":
		var r io.Reader = c.App.Reader
		if name := c.String("result"); name != "-" {
			f, err := os.Open(name)
			if err != nil {
				return call, fmt.Errorf("reading the result: %w", err)
			}
			defer f.Close()
			r = f
		}
		if call.Result, err = receipts.BytesResultReader(r); err != nil {
			return call, fmt.Errorf("reading the result %s: %w", c.String("result"), err)
		}
		if c.String("signal") != "" {
			return call, usageError("receipts issue: --signal belongs to a command result (--exit-code)")
		}
	case command:
		code, err := strconv.ParseInt(c.String("exit-code"), 10, 32)
		if err != nil {
			return call, usageError("receipts issue: --exit-code %q: want an integer", c.String("exit-code"))
		}
		var streams [2][]byte
		for i, f := range []string{"stdout", "stderr"} {
			if name := c.String(f); name != "" {
				if streams[i], err = readReceiptInput(c, f, name, maxIssueInput); err != nil {
					return call, err
				}
			}
		}
		call.Result = receipts.CommandResult(streams[0], streams[1], int(code), c.String("signal"))
	default:
		return call, withCode(ExitUsage, hint.With(errors.New("receipts issue: missing the call's result"),
			"give --result FILE for a tool's result bytes, or --exit-code N (with --stdout FILE and --stderr FILE) for a command"))
	}
	if msg := c.String("error"); msg != "" {
		call.Result = call.Result.WithError(msg)
	}
	if call.Start, err = parseReceiptTime("start", c.String("start")); err != nil {
		return call, err
	}
	if call.End, err = parseReceiptTime("end", c.String("end")); err != nil {
		return call, err
	}
	if !call.Start.IsZero() && call.End.IsZero() {
		return call, usageError("receipts issue: --start needs --end (or give neither: the receipt then records now)")
	}
	return call, nil
}

func receiptsIssue(c *cli.Context) error {
	if err := needArgs(c, 0, 0, "--session S --tool NAME ..."); err != nil {
		return err
	}
	call, err := issueCall(c)
	if err != nil {
		return err
	}
	return withReceipts(c, true, func(rc *receiptsCtx) error {
		r, err := receipts.NewIssuer(rc.key, rc.ledger).Issue(c.Context, call)
		if errors.Is(err, receipts.ErrInvalid) {
			return withCode(ExitUsage, err)
		}
		if err != nil {
			return err
		}
		if rc.json {
			return printJSON(rc.out, json.RawMessage(r.Encode()))
		}
		fmt.Fprintln(rc.out, r.ID)
		return nil
	})
}

// Listing and showing ----------------------------------------------------------

// check is the verdict of one stored receipt under the loaded key:
// "valid", "tampered", "unknown_key", or "?" without a key.
func (rc *receiptsCtx) check(r receipts.Receipt) (string, string) {
	if rc.key.IsZero() {
		return "?", "not checked: " + keyProblem(rc.keyErr)
	}
	err := receipts.Verify(r, rc.key)
	switch {
	case err == nil:
		return string(receipts.Valid), "the MAC verifies under key " + rc.key.ID()
	case errors.Is(err, receipts.ErrUnknownKey):
		return string(receipts.UnknownKey), fmt.Sprintf("issued under key %s, not %s (rotated key?): supply that key to check it", r.KeyID, rc.key.ID())
	}
	return string(receipts.Tampered), "the MAC does not verify: the receipt was edited after it was issued"
}

func keyProblem(err error) string {
	if err == nil {
		return "no key loaded"
	}
	return err.Error()
}

// receiptJSON is one receipt in `list --json` and `show --json`: the stored
// members plus the check.
type receiptJSON struct {
	ID       string `json:"id"`
	Session  string `json:"session,omitempty"`
	Run      string `json:"run,omitempty"`
	Tool     string `json:"tool,omitempty"`
	Args     string `json:"args_sha256,omitempty"`
	Result   string `json:"result_sha256,omitempty"`
	Start    string `json:"start,omitempty"`
	End      string `json:"end,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`
	Error    string `json:"error,omitempty"`
	KeyID    string `json:"key_id,omitempty"`
	MAC      string `json:"mac,omitempty"`
	Check    string `json:"check"`
	Detail   string `json:"detail"`
}

const receiptTimeLayout = "2006-01-02T15:04:05.000000000Z"

func toReceiptJSON(r receipts.Receipt, check, detail string) receiptJSON {
	return receiptJSON{
		ID: r.ID, Session: r.Session, Run: r.Run, Tool: r.Tool,
		Args: r.ArgsSHA256.String(), Result: r.ResultSHA256.String(),
		Start: r.Start.UTC().Format(receiptTimeLayout), End: r.End.UTC().Format(receiptTimeLayout),
		ExitCode: r.ExitCode, Signal: r.Signal, Error: r.Error, KeyID: r.KeyID, MAC: r.MAC.String(),
		Check: check, Detail: detail,
	}
}

func receiptsList(c *cli.Context) error {
	if err := needArgs(c, 1, 1, "SESSION"); err != nil {
		return err
	}
	session := c.Args().First()
	if err := identity.ValidateSessionID(session); err != nil {
		return withCode(ExitUsage, err)
	}
	return withReceipts(c, false, func(rc *receiptsCtx) error {
		entries, err := rc.ledger.Scan(session)
		if err != nil {
			return err
		}
		if rc.keyErr != nil {
			rc.say("readproof: receipts not checked (VALID ?): %s", strings.ReplaceAll(rc.keyErr.Error(), "\n", " "))
		}
		rows := make([]receiptJSON, 0, len(entries))
		for _, en := range entries {
			if en.Err != nil {
				rows = append(rows, receiptJSON{ID: en.ID, Check: string(receipts.Tampered), Detail: en.Err.Error()})
				continue
			}
			check, detail := rc.check(en.Receipt)
			rows = append(rows, toReceiptJSON(en.Receipt, check, detail))
		}
		if rc.json {
			return printJSON(rc.out, rows)
		}
		if len(rows) == 0 {
			rc.say("session %s has no receipts; issue one with `readproof exec --session %s -- COMMAND` or `readproof receipts issue`", session, session)
			return nil
		}
		tw := tabwriter.NewWriter(rc.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTOOL\tSTART\tEND\tEXIT\tVALID")
		for _, r := range rows {
			if r.Tool == "" {
				fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t%s\n", r.ID, r.Check)
				continue
			}
			exit := "-"
			if r.ExitCode != nil {
				exit = strconv.Itoa(*r.ExitCode)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, receiptText(r.Tool), receiptTableTime(r.Start), receiptTableTime(r.End), exit, r.Check)
		}
		return tw.Flush()
	})
}

// receiptTableTime shortens a receipt time to milliseconds for tables.
func receiptTableTime(s string) string {
	t, err := time.Parse(receiptTimeLayout, s)
	if err != nil {
		return s
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

// receiptText quotes a string that holds spaces or characters a table or a
// terminal would mangle.
func receiptText(s string) string {
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == '"' || r == '\\' || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 {
			return strconv.Quote(s)
		}
	}
	return s
}

func receiptsShow(c *cli.Context) error {
	if err := needArgs(c, 1, 1, "ID"); err != nil {
		return err
	}
	id := c.Args().First()
	if !receipts.ValidID(id) {
		return withCode(ExitUsage, hint.With(fmt.Errorf("%q is not a receipt id", cutText(id, 80)), "receipt ids are rcpt_ followed by 32 base32 digits"))
	}
	return withReceipts(c, false, func(rc *receiptsCtx) error {
		r, err := rc.ledger.Get(id)
		switch {
		case errors.Is(err, receipts.ErrNotFound):
			return hint.With(err, "list a session's receipts with `readproof receipts list SESSION`; an id no receipt has was never issued by this store (or the store was not pulled)")
		case errors.Is(err, receipts.ErrCorrupt):
			return withCode(ExitMismatch, hint.With(err, "the store was edited: the receipt cannot be trusted"))
		case err != nil:
			return err
		}
		check, detail := rc.check(r)
		if rc.json {
			if err := printJSON(rc.out, toReceiptJSON(r, check, detail)); err != nil {
				return err
			}
		} else {
			printReceipt(rc.out, r, check, detail)
		}
		if check == string(receipts.Tampered) {
			return withCode(ExitMismatch, fmt.Errorf("receipt %s: %w", id, receipts.ErrTampered))
		}
		return nil
	})
}

func printReceipt(w io.Writer, r receipts.Receipt, check, detail string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("receipt", r.ID)
	row("session", r.Session)
	if r.Run != "" {
		row("run", r.Run)
	}
	row("tool", receiptText(r.Tool))
	row("args", "sha256:"+r.ArgsSHA256.String())
	row("result", "sha256:"+r.ResultSHA256.String())
	row("start", r.Start.UTC().Format(receiptTimeLayout))
	row("end", r.End.UTC().Format(receiptTimeLayout))
	if r.ExitCode != nil {
		row("exit", strconv.Itoa(*r.ExitCode))
	}
	if r.Signal != "" {
		row("signal", receiptText(r.Signal))
	}
	if r.Error != "" {
		row("error", receiptText(r.Error))
	}
	row("key", r.KeyID)
	row("mac", r.MAC.String())
	row("check", check+": "+detail)
	_ = tw.Flush()
}

func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Claims ---------------------------------------------------------------------

func receiptsVerifyClaims(c *cli.Context) error {
	if err := needArgs(c, 1, 1, "--session S [--strict] CLAIMS  (CLAIMS: a file, or - for stdin)"); err != nil {
		return err
	}
	session, err := receiptSession(c)
	if err != nil {
		return err
	}
	data, err := readReceiptInput(c, "claims", c.Args().First(), receipts.MaxClaimsInput)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return withCode(ExitUsage, err)
		}
		return err
	}
	claims, err := receipts.ParseClaims(data)
	if err != nil {
		return withCode(ExitUsage, hint.With(err, `give a JSON list of receipt ids, {"receipts": [...]}, or free text citing rcpt_ ids`))
	}
	return withReceipts(c, false, func(rc *receiptsCtx) error {
		if rc.keyErr != nil {
			return withCode(ExitCannotCheck, rc.keyErr)
		}
		rep, err := receipts.VerifyClaims(rc.ledger, rc.key, session, claims)
		if err != nil {
			return err
		}
		if rc.json {
			if err := printJSON(rc.out, rep.JSON()); err != nil {
				return err
			}
		} else {
			printClaims(rc.out, rep, c.Bool("strict"))
		}
		if c.Bool("strict") && rep.Strict() {
			n := rep.Count(receipts.Fabricated) + rep.Count(receipts.Tampered) + rep.Count(receipts.UnknownKey)
			return withCode(ExitMismatch, hint.With(
				fmt.Errorf("claims of session %s: %d of %d claims fail --strict (%d fabricated, %d tampered, %d unknown key)",
					session, n, len(rep.Claims), rep.Count(receipts.Fabricated), rep.Count(receipts.Tampered), rep.Count(receipts.UnknownKey)),
				"every cited receipt id must be one this store issued for a real call, unaltered, under the key supplied"))
		}
		return nil
	})
}

func printClaims(w io.Writer, rep receipts.Report, strict bool) {
	fmt.Fprintf(w, "session %s, key %s: %d claims: %d valid, %d fabricated, %d tampered, %d other session, %d unknown key; %d omitted\n",
		rep.Session, rep.KeyID, len(rep.Claims), rep.Count(receipts.Valid), rep.Count(receipts.Fabricated),
		rep.Count(receipts.Tampered), rep.Count(receipts.OtherSession), rep.Count(receipts.UnknownKey), len(rep.Omitted))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(cr receipts.ClaimResult) {
		tool := "-"
		if cr.Receipt != nil {
			tool = receiptText(cr.Receipt.Tool)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cr.Verdict, receiptText(cr.ID), tool, strings.ReplaceAll(cr.Detail, "\n", " "))
	}
	if len(rep.Claims) > 0 {
		fmt.Fprintln(tw, "\nVERDICT\tCLAIM\tTOOL\tDETAIL")
		for _, cr := range rep.Claims {
			line(cr)
		}
	}
	if len(rep.Omitted) > 0 {
		fmt.Fprintln(tw, "\nVERDICT\tOMITTED\tTOOL\tDETAIL")
		for _, cr := range rep.Omitted {
			line(cr)
		}
	}
	_ = tw.Flush()
	switch {
	case rep.Strict() && strict:
		fmt.Fprintln(w, "\nstrict: FAIL (a claim is fabricated, tampered or under an unknown key)")
	case rep.Strict():
		fmt.Fprintln(w, "\nreport only: --strict would fail (a claim is fabricated, tampered or under an unknown key)")
	case strict:
		fmt.Fprintln(w, "\nstrict: pass")
	default:
		fmt.Fprintln(w, "\nreport only: --strict would pass")
	}
}
