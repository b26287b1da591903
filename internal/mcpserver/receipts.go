package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/receipts"
)

// issue records a tool receipt for one executed call when receipts are
// configured, and returns its id, or why none could be issued.
//
// What the receipt hashes (docs/README-mcp.md, "Tool receipts"):
//   - arguments: the call's JSON arguments in canonical form
//     (receipts.JSONArgs), {} when the call had none;
//   - result of a successful call: the canonical JSON (RFC 8785) of the
//     structuredContent without its receipt_id and receipt_error members,
//     as bytes (receipts.BytesResult);
//   - result of a failed call: the error's text as the client reads it
//     (errorText: its message and hint lines, without the receipt line),
//     as bytes, also recorded as the receipt's error (one line: the line
//     break before the hint is "; ").
//
// The run is recorded when the call names a valid run id. The error's
// text, and why no receipt could be issued, are worded for the client by
// clean (forClient: over HTTP without the server's paths), so a receipt
// records exactly what the client read.
func (s *Server) issue(ctx context.Context, st *store.Store, tool string, req *mcp.CallToolRequest, run string, start time.Time, output []byte, callErr error, clean func(string) string) (id, failure string) {
	if s.opts.ReceiptKey.IsZero() {
		return "", ""
	}
	rawArgs := []byte("{}")
	if req != nil && req.Params != nil && len(req.Params.Arguments) > 0 {
		rawArgs = req.Params.Arguments
	}
	args, err := receipts.JSONArgs(rawArgs)
	if err != nil {
		// Arguments the SDK accepted are JSON; keep the call receipted
		// over their bytes as a JSON string rather than drop it.
		quoted, _ := json.Marshal(string(rawArgs))
		if args, err = receipts.JSONArgs(quoted); err != nil {
			return "", clean("arguments could not be hashed: " + err.Error())
		}
	}
	var res receipts.Result
	if callErr != nil {
		// the error field is one line: the hint's line break is "; "
		msg := errorText(callErr, clean)
		res = receipts.BytesResult([]byte(msg)).WithError(strings.ReplaceAll(msg, "\n", "; "))
	} else {
		canon, err := receipts.Canonicalize(output)
		if err != nil {
			canon = output
		}
		res = receipts.BytesResult(canon)
	}
	caller, _ := callerOf(req)
	if identity.ValidateRunID(run) != nil {
		run = ""
	}
	issuer := receipts.NewIssuer(s.opts.ReceiptKey, st.Receipts())
	r, err := issuer.Issue(context.WithoutCancel(ctx), receipts.Call{
		Session: s.opts.Session, Run: run, Tool: tool,
		Args: args, Result: res, Start: start, End: time.Now(), Caller: caller,
	})
	if err != nil {
		s.log.Warn("receipt", "tool", tool, "err", err)
		return "", clean(err.Error())
	}
	return r.ID, ""
}
