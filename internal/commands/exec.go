package commands

// `readproof exec`: run a command as a brokered tool call and record its
// receipt (docs/receipts.md).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/urfave/cli/v2"
	"go.opentelemetry.io/otel/attribute"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/preflight"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/telemetry"
	"github.com/readproof/readproof/receipts"
)

func execCommand() *cli.Command {
	return &cli.Command{
		Name: "exec",
		Usage: "run a command, stream its output byte for byte, exit with its exit code, and record a tool receipt " +
			"(also when it fails, cannot start or is killed; the receipt id goes to stderr)",
		ArgsUsage: "--session S [--run R] [--tool NAME] -- COMMAND [ARGS...]",
		Flags: []cli.Flag{
			receiptSessionFlag(), receiptRunFlag(),
			&cli.StringFlag{Name: "tool", Value: "exec", Usage: "the tool name recorded in the receipt"},
			&cli.StringFlag{Name: "json-receipt", Usage: "also write the receipt's JSON to FILE"},
			receiptKeyFlag(),
		},
		Action: execAction,
	}
}

func execAction(c *cli.Context) error {
	opts := execOptions{Session: c.String("session"), Run: c.String("run"), Tool: c.String("tool"), Key: c.String("key"), JSONReceipt: c.String("json-receipt")}
	return withEnv(c, func(e *env) error { return runExec(c.Context, e, opts, c.Args().Slice()) })
}

// execOutcome describes how a command ended, for the receipt line.
func execOutcome(res receipts.ExecResult) string {
	s := "exit " + strconv.Itoa(res.ExitCode)
	switch {
	case res.Signal != "":
		s += ", " + res.Signal
	case res.ExitCode == receipts.ExitCannotStart && res.Err != "":
		s += ", could not start"
	}
	return s
}

// lastByteWriter passes writes through and remembers the last byte written.
type lastByteWriter struct {
	w    io.Writer
	n    int64
	last byte
}

func (t *lastByteWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if n > 0 {
		t.n += int64(n)
		t.last = p[n-1]
	}
	return n, err
}

// preflightReceipt checks that a receipt of session can be stored in st
// now: the store accepts new objects and the locks of the session chain,
// the index chains and packed-refs can be taken. what says what was not
// done, for the message.
func preflightReceipt(e *env, st *store.Store, session, what string) error {
	pol, err := st.Policy()
	if err != nil {
		return err
	}
	opts, err := e.storeOptions(pol)
	if err != nil {
		return err
	}
	refs := []string{receipts.SessionRef(session)}
	for _, d := range receiptIDDigits {
		refs = append(refs, receipts.IndexRefPrefix+string(d))
	}
	err = preflight.Write(st.Path(), refs, preflight.Options{LockTimeout: opts.Git.LockTimeout, StaleLockAge: opts.Git.StaleLockAge, LockWait: opts.Git.LockWait})
	switch {
	case errors.Is(err, preflight.ErrLocked):
		// the hint names the lock file and how to remove it
		return fmt.Errorf("%s: receipts could not be stored: %w", what, err)
	case err != nil && gitstore.WriteLimitRemedy(err, "the store") != "":
		return hint.With(fmt.Errorf("%s: receipts could not be stored: %w", what, err),
			gitstore.WriteLimitRemedy(err, "the store")+", then run it again")
	case err != nil:
		return hint.With(fmt.Errorf("%s: receipts could not be stored: %w", what, err),
			"make the store writable (or use one that is: --store), then run it again")
	}
	return nil
}

// receiptIDDigits are the first digits a receipt id can start with
// (receipts' id alphabet); each picks one index chain.
const receiptIDDigits = "0123456789abcdefghjkmnpqrstvwxyz"

// execOptions are the flags of `readproof exec`.
type execOptions struct {
	Session     string // the receipt session
	Run         string // the run the call belongs to ("" for none)
	Tool        string // the tool name recorded in the receipt
	Key         string // the receipts key file ("" for the configured one)
	JSONReceipt string // also write the receipt's JSON to FILE
}

// runExec is `readproof exec`.
func runExec(ctx context.Context, e *env, opts execOptions, args []string) error {
	argv := args
	if len(argv) == 0 {
		return withCode(ExitUsage, hint.With(errors.New("exec: no command given"), "usage: readproof exec --session S [--run R] -- COMMAND [ARGS...]"))
	}
	session, err := receiptSession("exec", opts.Session)
	if err != nil {
		return err
	}
	run, err := receiptRun(opts.Run)
	if err != nil {
		return err
	}
	tool := opts.Tool
	return e.withReceipts(opts.Key, true, func(rc *receiptsCtx) error {
		issuer := receipts.NewIssuer(rc.key, rc.ledger)
		// Check every field before the command runs: a command must not run
		// when its receipt could not be sealed.
		draft := receipts.Call{Session: session, Run: run, Tool: tool, Args: receipts.ArgvArgs(argv), Result: receipts.BytesResult(nil)}
		if _, err := issuer.Seal(draft); err != nil {
			return withCode(ExitUsage, err)
		}
		// ... and that the store takes the receipt: objects can be written
		// and the receipt refs' locks can be taken.
		if err := preflightReceipt(rc.env, rc.store, session, "exec: the command was not run"); err != nil {
			return err
		}
		// From here on readproof must outlive the command: signals it
		// receives go to the command, and are caught until the receipt is
		// stored. The context is never cancelled for the same reason.
		sigs, stopSignals := brokerSignals()
		defer stopSignals()
		if err := ctx.Err(); err != nil {
			return withCode(ExitInterrupted, fmt.Errorf("exec: interrupted before the command started: %w", err))
		}
		ctx := context.WithoutCancel(ctx)
		stderr := &lastByteWriter{w: e.err}
		// The command runs in the exec span; TRACEPARENT names it.
		xctx, span := telemetry.Start(ctx, telemetry.SpanExec, attribute.String(telemetry.KeyExecutable, filepath.Base(argv[0])))
		res, xerr := receipts.Exec(xctx, receipts.ExecOptions{
			Argv: argv, Stdin: e.in, Stdout: rawOut(e.out), Stderr: stderr, Signals: sigs, Env: telemetry.ChildEnv(xctx, os.Environ()),
		})
		span.SetAttributes(attribute.Int(telemetry.KeyExitCode, res.ExitCode))
		telemetry.End(span, xerr)
		if stderr.n > 0 && stderr.last != '\n' {
			// readproof's own lines start on a line of their own; the
			// command's bytes before them are unchanged.
			fmt.Fprintln(rc.err)
		}
		call := receipts.CommandCall(session, run, argv, res)
		call.Tool = tool
		r, ierr := issuer.Issue(ctx, call)
		if xerr != nil {
			fmt.Fprintf(rc.err, "readproof: exec: %s\n", xerr)
		}
		if ierr != nil {
			return hint.With(fmt.Errorf("the command ran (%s) but its receipt could not be recorded: %w", execOutcome(res), ierr),
				"the call has no receipt: run it again once the store is writable")
		}
		fmt.Fprintf(rc.err, "readproof: receipt %s (%s)\n", r.ID, execOutcome(res))
		telemetry.Annotate(ctx, attribute.String(telemetry.KeyReceiptID, r.ID))
		if name := opts.JSONReceipt; name != "" {
			if err := os.WriteFile(name, r.Encode(), 0o644); err != nil {
				return fmt.Errorf("receipt %s is stored, but writing it to --json-receipt %s failed: %w", r.ID, name, err)
			}
		}
		if res.ExitCode == 0 {
			return nil
		}
		return withCode(res.ExitCode, errQuiet)
	})
}
