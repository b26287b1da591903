package receipts

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"time"
)

// Call describes one brokered tool call to be receipted.
type Call struct {
	Session string
	// Run is the run id the call belongs to, or "".
	Run  string
	Tool string
	// Args and Result must be set (ArgvArgs/JSONArgs, BytesResult/
	// CommandResult/ExecResult.Result).
	Args   Args
	Result Result
	// Start and End are when the call ran. A zero End means "now" by the
	// issuer's clock; a zero Start means End.
	Start, End time.Time
	// Caller names who made the call (an MCP token's name), or "".
	Caller string
	// Bound is the run the call was made for, sealed into the receipt
	// (docs/receipts.md, "Version 2"). Issue sets it, when it is zero and
	// Run is set, from its ledger's Bind; a binding that is not valid
	// (a start outside 1678-2262) binds nothing.
	Bound Binding
}

// CommandCall is the Call for a command run by Exec: tool "exec", the argv
// as arguments, the streamed outcome as result, Exec's start and end times.
func CommandCall(session, run string, argv []string, res ExecResult) Call {
	return Call{
		Session: session, Run: run, Tool: "exec",
		Args: ArgvArgs(argv), Result: res.Result(),
		Start: res.Start, End: res.End,
	}
}

// Issuer issues receipts: it seals each call with its key and appends the
// receipt to its ledger before returning it. It is safe for concurrent use
// when its fields are not changed after the first Issue.
type Issuer struct {
	key    Key
	ledger *Ledger
	// Now is the clock for calls without an End time; time.Now when nil.
	Now func() time.Time
	// Rand is the source of receipt ids; crypto/rand when nil. Tests set it
	// to reproduce test vectors.
	Rand io.Reader
}

// NewIssuer returns an Issuer that seals with key and records into ledger.
// A nil ledger issues receipts without storing them (for tests and for
// callers that store receipts themselves).
func NewIssuer(key Key, ledger *Ledger) *Issuer {
	return &Issuer{key: key, ledger: ledger}
}

// Issue seals a receipt for c, appends it to the ledger and returns it. The
// receipt is durable in the store when Issue returns nil.
//
// ctx bounds only the wait between append retries: to receipt a call that
// was itself cancelled, pass context.WithoutCancel(ctx).
func (is *Issuer) Issue(ctx context.Context, c Call) (Receipt, error) {
	if c.Bound.IsZero() && c.Run != "" && is.ledger != nil && is.ledger.Bind != nil {
		c.Bound = is.ledger.Bind(c.Run)
	}
	if c.Bound.validate(c.Run) != nil {
		c.Bound = Binding{}
	}
	r, err := is.Seal(c)
	if err != nil {
		return Receipt{}, err
	}
	if is.ledger != nil {
		if err := is.ledger.appendCtx(ctx, r); err != nil {
			return Receipt{}, fmt.Errorf("issuing receipt %s for tool %q in session %q: %w", r.ID, c.Tool, c.Session, err)
		}
	}
	return r, nil
}

// Seal builds and seals the receipt for c without storing it: a version 2
// receipt carrying c.Bound.
func (is *Issuer) Seal(c Call) (Receipt, error) {
	if !c.Args.set {
		return Receipt{}, fmt.Errorf("%w: call to tool %q: arguments not set (use ArgvArgs or JSONArgs)", ErrInvalid, c.Tool)
	}
	if !c.Result.set {
		return Receipt{}, fmt.Errorf("%w: call to tool %q: result not set (use BytesResult, CommandResult or ExecResult.Result)", ErrInvalid, c.Tool)
	}
	end := c.End
	if end.IsZero() {
		if is.Now != nil {
			end = is.Now()
		} else {
			end = time.Now()
		}
	}
	start := c.Start
	if start.IsZero() {
		start = end
	}
	src := is.Rand
	if src == nil {
		src = rand.Reader
	}
	id, err := newIDFrom(src)
	if err != nil {
		return Receipt{}, err
	}
	r := Receipt{
		ID: id, Session: c.Session, Run: c.Run, Tool: c.Tool,
		ArgsSHA256: c.Args.sum, ResultSHA256: c.Result.sum,
		Start: start.UTC(), End: end.UTC(),
		Signal: c.Result.signal, Error: c.Result.err, Caller: c.Caller,
		Format: BoundVersion, Bound: c.Bound,
	}
	if !r.Bound.RunStarted.IsZero() {
		r.Bound.RunStarted = r.Bound.RunStarted.UTC()
	}
	if c.Result.exitCode != nil {
		code := *c.Result.exitCode
		r.ExitCode = &code
	}
	if is.key.IsZero() {
		return Receipt{}, errors.New("issuing a receipt: no key loaded (use LoadKey)")
	}
	return is.key.Seal(r)
}
