package commands

// `readproof receipts list` and `receipts show`, and the receipt JSON shape.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/receipts"
)

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
// members plus the check. V is absent for an entry that did not decode.
type receiptJSON struct {
	V        int    `json:"v,omitempty"`
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
	Caller   string `json:"caller,omitempty"`
	MAC      string `json:"mac,omitempty"`
	Check    string `json:"check"`
	Detail   string `json:"detail"`
	// Binding is present when Run is: which manifest the receipt counts
	// for (docs/receipts.md "Storage").
	Binding *bindingJSON `json:"binding,omitempty"`
}

// bindingJSON is a receipt's binding: kind "manifest" (ManifestID set),
// "run_started" (StartedAt set, the open run's start as its run.json
// holds it) or "unbound".
type bindingJSON struct {
	Kind       string `json:"kind"`
	ManifestID string `json:"manifest_id,omitempty"`
	StartedAt  string `json:"started_at,omitempty"`
}

func toBindingJSON(r receipts.Receipt, b receipts.Binding) *bindingJSON {
	switch {
	case r.Run == "":
		return nil
	case b.Manifest != "":
		return &bindingJSON{Kind: "manifest", ManifestID: b.Manifest}
	case !b.RunStarted.IsZero():
		return &bindingJSON{Kind: "run_started", StartedAt: b.RunStarted.UTC().Format(time.RFC3339Nano)}
	}
	return &bindingJSON{Kind: "unbound"}
}

// bindingText is the BOUND column of `receipts list` (long false) and the
// "bound" row of `receipts show` (long true).
func bindingText(r receiptJSON, long bool) string {
	b := r.Binding
	switch {
	case b == nil:
		return "-"
	case b.ManifestID != "" && long:
		return "manifest " + b.ManifestID
	case b.ManifestID != "":
		return b.ManifestID
	case b.StartedAt != "" && long:
		return "open run started at " + b.StartedAt
	case b.StartedAt != "":
		t, err := time.Parse(time.RFC3339Nano, b.StartedAt)
		if err != nil {
			return "started " + b.StartedAt
		}
		return "started " + t.UTC().Format("2006-01-02T15:04:05.000Z")
	case long:
		return "unbound: counted for every manifest of run " + r.Run
	}
	return "unbound"
}

const receiptTimeLayout = "2006-01-02T15:04:05.000000000Z"

func toReceiptJSON(r receipts.Receipt, b receipts.Binding, check, detail string) receiptJSON {
	return receiptJSON{
		V: r.FormatVersion(), ID: r.ID, Session: r.Session, Run: r.Run, Tool: r.Tool,
		Args: r.ArgsSHA256.String(), Result: r.ResultSHA256.String(),
		Start: r.Start.UTC().Format(receiptTimeLayout), End: r.End.UTC().Format(receiptTimeLayout),
		ExitCode: r.ExitCode, Signal: r.Signal, Error: r.Error, KeyID: r.KeyID, Caller: r.Caller, MAC: r.MAC.String(),
		Check: check, Detail: detail, Binding: toBindingJSON(r, b),
	}
}

func receiptsList(c *cli.Context) error {
	if err := needArgs(c, 1, 1, "SESSION"); err != nil {
		return err
	}
	opts := receiptsListOptions{Key: c.String("key")}
	return withEnv(c, func(e *env) error { return runReceiptsList(c.Context, e, opts, c.Args().Slice()) })
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
// terminal would mangle: controls, and the format characters (bidi
// overrides) receipts.validText lets through (text.Printable's set).
func receiptText(s string) string {
	for _, r := range s {
		if r == ' ' || r == '"' || r == '\\' || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

func receiptsShow(c *cli.Context) error {
	if err := needArgs(c, 1, 1, "ID"); err != nil {
		return err
	}
	opts := receiptsShowOptions{Key: c.String("key")}
	return withEnv(c, func(e *env) error { return runReceiptsShow(c.Context, e, opts, c.Args().Slice()) })
}

func printReceipt(w io.Writer, r receipts.Receipt, b receipts.Binding, check, detail string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("receipt", r.ID)
	row("session", r.Session)
	if r.Run != "" {
		row("run", r.Run)
		row("bound", bindingText(receiptJSON{Run: r.Run, Binding: toBindingJSON(r, b)}, true))
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
	if r.Caller != "" {
		row("caller", r.Caller)
	}
	row("mac", r.MAC.String())
	row("check", check+": "+detail)
	_ = tw.Flush()
}

// receiptsListOptions are the flags of `readproof receipts list`.
type receiptsListOptions struct {
	Key string // the receipts key file ("" for the configured one)
}

// runReceiptsList is `readproof receipts list`. The session's receipts are
// read one at a time (receipts.SessionScan), never all at once: the table
// reads them twice, once for its columns' widths and once to print them,
// and --json prints each as it is read.
func runReceiptsList(_ context.Context, e *env, opts receiptsListOptions, args []string) error {
	session := args[0]
	if err := identity.ValidateSessionID(session); err != nil {
		return withCode(ExitUsage, err)
	}
	return e.withReceipts(opts.Key, false, func(rc *receiptsCtx) error {
		sc, err := rc.ledger.ScanSession(session)
		if err != nil {
			return err
		}
		if rc.keyErr != nil {
			rc.say("readproof: receipts not checked (VALID ?): %s", strings.ReplaceAll(rc.keyErr.Error(), "\n", " "))
		}
		each := func(fn func(receiptJSON) error) error {
			if sc == nil {
				return nil
			}
			return sc.Each(func(en receipts.Entry) error { return fn(rc.listRow(en)) })
		}
		if rc.json {
			return printJSONArray(rc.out, each)
		}
		if sc == nil || sc.Len() == 0 {
			rc.say("session %s has no receipts; issue one with `readproof exec --session %s -- COMMAND` or `readproof receipts issue`", session, session)
			return nil
		}
		return writeReceiptTable(rc.out, each)
	})
}

// writeReceiptTable writes the `receipts list` table of the rows each
// gives, which it asks for twice: once for the columns' widths, once to
// print them, holding no row longer than that.
func writeReceiptTable(out io.Writer, each func(func(receiptJSON) error) error) error {
	// The CALLER column appears when a receipt names one (calls made
	// over mcp --http with a token); RUN and BOUND when one names a
	// run. The columns are as wide as their widest cell and two
	// spaces (as text/tabwriter would make them, which holds every
	// line until its Flush).
	head := listCells{"ID", "TOOL", "CALLER", "RUN", "BOUND", "START", "END", "EXIT", "VALID"}
	var widths [len(head)]int
	withCaller, withRun := false, false
	measure := func(cells listCells) {
		for i, c := range cells {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	measure(head)
	if err := each(func(r receiptJSON) error {
		withCaller = withCaller || r.Caller != ""
		withRun = withRun || r.Run != ""
		measure(receiptListCells(r))
		return nil
	}); err != nil {
		return err
	}
	cols := []int{0, 1}
	if withCaller {
		cols = append(cols, 2)
	}
	if withRun {
		cols = append(cols, 3, 4)
	}
	cols = append(cols, 5, 6, 7, 8)
	w := bufio.NewWriter(out)
	// line returns the error of a write that failed (bufio keeps it)
	line := func(cells listCells) error {
		for k, i := range cols {
			w.WriteString(cells[i])
			if k == len(cols)-1 {
				return w.WriteByte('\n')
			}
			// two spaces at least: a cell wider than the first pass
			// measured (a receipt read then that cannot be read now, a
			// pack removed by a gc meanwhile) sets its line off, but
			// keeps its columns apart
			w.WriteString(strings.Repeat(" ", max(widths[i]+2-utf8.RuneCountInString(cells[i]), 2)))
		}
		return nil
	}
	const how = "so receipts of the session are missing from it"
	if err := line(head); err != nil {
		return outputCut("the table", how, err)
	}
	var werr error // the write that failed
	if err := each(func(r receiptJSON) error {
		werr = line(receiptListCells(r))
		return werr
	}); err != nil {
		if werr != nil {
			return outputCut("the table", how, werr)
		}
		return err
	}
	if err := w.Flush(); err != nil {
		return outputCut("the table", how, err)
	}
	return nil
}

// listRow is the row of `receipts list` for one entry of a session chain.
func (rc *receiptsCtx) listRow(en receipts.Entry) receiptJSON {
	if errors.Is(en.Err, receipts.ErrBindingEdited) {
		// a genuine receipt whose append commit's binding line was
		// edited: shown with the binding its MAC covers
		return toReceiptJSON(en.Receipt, en.Binding, string(receipts.Tampered), en.Err.Error())
	}
	if en.Err != nil {
		return receiptJSON{ID: en.ID, Check: string(receipts.Tampered), Detail: en.Err.Error()}
	}
	check, detail := rc.check(en.Receipt)
	return toReceiptJSON(en.Receipt, en.Binding, check, detail)
}

// listCells are the cells of a line of the `receipts list` table, every
// column there: ID, TOOL, CALLER, RUN, BOUND, START, END, EXIT, VALID.
type listCells [9]string

// receiptListCells are r's cells in the `receipts list` table; a row
// without a tool (a receipt that could not be read) has "-" in every
// column but ID, RUN, BOUND and VALID.
func receiptListCells(r receiptJSON) listCells {
	caller, run := "-", "-"
	if r.Caller != "" {
		caller = r.Caller
	}
	if r.Run != "" {
		run = r.Run
	}
	if r.Tool == "" {
		return listCells{r.ID, "-", caller, run, bindingText(r, false), "-", "-", "-", r.Check}
	}
	exit := "-"
	if r.ExitCode != nil {
		exit = strconv.Itoa(*r.ExitCode)
	}
	return listCells{r.ID, receiptText(r.Tool), caller, run, bindingText(r, false), receiptTableTime(r.Start), receiptTableTime(r.End), exit, r.Check}
}

// receiptsShowOptions are the flags of `readproof receipts show`.
type receiptsShowOptions struct {
	Key string // the receipts key file ("" for the configured one)
}

// runReceiptsShow is `readproof receipts show`.
func runReceiptsShow(_ context.Context, e *env, opts receiptsShowOptions, args []string) error {
	id := args[0]
	if !receipts.ValidID(id) {
		return withCode(ExitUsage, hint.With(fmt.Errorf("%q is not a receipt id", text.ShortenWith(id, 80, "...")), "receipt ids are rcpt_ followed by 32 base32 digits"))
	}
	return e.withReceipts(opts.Key, false, func(rc *receiptsCtx) error {
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
		bound, bindErr := rc.ledger.BindingOf(r)
		switch {
		case errors.Is(bindErr, receipts.ErrBindingEdited):
			// the binding line of its append commit is not the one its
			// MAC covers: the store was edited
			check, detail = string(receipts.Tampered), bindErr.Error()
		case bindErr != nil:
			return bindErr
		}
		if rc.json {
			if err := printJSON(rc.out, toReceiptJSON(r, bound, check, detail)); err != nil {
				return err
			}
		} else {
			printReceipt(rc.out, r, bound, check, detail)
		}
		if bindErr != nil {
			return withCode(ExitMismatch, hint.With(fmt.Errorf("receipt %s: %w", id, receipts.ErrBindingEdited),
				"its index chain's append commit names another binding than its MAC covers: the store was edited; restore the chain from a clone or a backup"))
		}
		if check == string(receipts.Tampered) {
			return withCode(ExitMismatch, fmt.Errorf("receipt %s: %w", id, receipts.ErrTampered))
		}
		return nil
	})
}
