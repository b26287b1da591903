package commands

// `readproof receipts issue`: a receipt for a call made outside readproof.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/receipts"
)

// readReceiptInput reads a file, or stdin for "-", refusing more than limit bytes.
func readReceiptInput(stdin io.Reader, what, name string, limit int64) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, hint.With(fmt.Errorf("reading %s: %w", what, err), "give the file that holds the "+what+", or - for stdin")
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
	if call.Session, err = receiptSession(commandPath(c), c.String("session")); err != nil {
		return call, err
	}
	if call.Run, err = receiptRun(c.String("run")); err != nil {
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
		data, err := readReceiptInput(c.App.Reader, "arguments", a, maxIssueInput)
		if err != nil {
			return call, err
		}
		call.Args = receipts.ArgvArgs(splitNULArgs(data))
	case j != "":
		data, err := readReceiptInput(c.App.Reader, "JSON arguments", j, maxIssueInput)
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
				if streams[i], err = readReceiptInput(c.App.Reader, f, name, maxIssueInput); err != nil {
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
	if call.End.Before(call.Start) {
		// said of the flags here, before a receipt (and its id) is made
		return call, withCode(ExitUsage, hint.With(fmt.Errorf("receipts issue: --end %s is before --start %s", text.Printable(c.String("end")), text.Printable(c.String("start"))),
			"a call ends at or after it starts: swap the two, or check their time zones"))
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
	opts := receiptsIssueOptions{Call: call, Key: c.String("key")}
	return withEnv(c, func(e *env) error { return runReceiptsIssue(c.Context, e, opts) })
}

// receiptsIssueOptions are the flags of `readproof receipts issue`: the
// call they describe (issueCall) and the key file.
type receiptsIssueOptions struct {
	Call receipts.Call // the call the flags describe
	Key  string        // the receipts key file ("" for the configured one)
}

// runReceiptsIssue is `readproof receipts issue`.
func runReceiptsIssue(ctx context.Context, e *env, opts receiptsIssueOptions) error {
	return e.withReceipts(opts.Key, true, func(rc *receiptsCtx) error {
		r, err := receipts.NewIssuer(rc.key, rc.ledger).Issue(ctx, opts.Call)
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
