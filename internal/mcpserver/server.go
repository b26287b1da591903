package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/receipts"
)

// Options configure a server. Open is required.
type Options struct {
	// Open opens the store with the policy file as it is now. It is called
	// once per request, so a resource declared or a run committed by another
	// process is seen without a restart; the server closes what it opens.
	Open func() (*store.Store, error)
	// Version is reported in the initialize result.
	Version string
	// Logger receives diagnostics; nil discards them. It must not write to
	// the protocol stream.
	Logger *slog.Logger

	// ReceiptKey, when set (not zero), makes every executed tool call issue
	// a tool receipt into the store under Session, and enables
	// readproof_receipts_verify_claims.
	ReceiptKey receipts.Key
	// Session is the receipt session of this server; required with
	// ReceiptKey.
	Session string

	// MaxAnswerBytes bounds the document bytes one tool answer carries
	// whole: readproof_replay with include_content (the windows it
	// returns) and readproof_evidence_export with with_content (every
	// entry's bytes). A call that would carry more is refused with a tool
	// error naming the budget and the way to take the bytes in windows,
	// decided from the manifest's sizes before any byte is read. 0 is no
	// limit; `readproof mcp --http` sets DefaultMaxAnswerBytes unless
	// --max-answer says otherwise. When set, readproof_manifest,
	// readproof_diff and readproof_replay also list at most
	// DefaultPageEntries entries per answer (entry_offset pages on).
	MaxAnswerBytes int64

	// pageEntries, when set, is the page bound instead of pageBound's
	// default (a test's WithPageEntries).
	pageEntries int

	// replayChunk is replayChunkBytes unless a test sets it
	// (WithReplayChunk).
	replayChunk int64

	// ReadReceiptRate and ReadReceiptBurst bound the receipts that the
	// calls of a token of scope read cause to be written, per token (a
	// token bucket: DefaultReadReceiptRate per second sustained,
	// DefaultReadReceiptBurst at once, when 0): with receipts on, a read
	// token's call beyond it is refused before it runs, with a tool error
	// and no receipt. A read token writes nothing else (resolveFor); its
	// receipts are the one record of what it was given, so they are kept,
	// within this bound rather than --rate's.
	ReadReceiptRate  float64
	ReadReceiptBurst int

	// StoreDir and PolicyFile are the absolute paths of the store and
	// the policy file. A client over HTTP reads them as <store> and
	// <policy> in every error, hint, warning and receipt error (paths.go);
	// the server's home directory is ~ there, and any other absolute path
	// its base name. The log keeps the full text.
	StoreDir, PolicyFile string
}

// DefaultMaxAnswerBytes is the content budget of one tool answer of
// `readproof mcp --http` (Options.MaxAnswerBytes): a replay's content is
// held as bytes, as a string and several times as JSON (the result, its
// receipt form, the response) while it is answered, about seven times its
// size at peak (50 MiB answered at 370 MB of RSS), and the server is
// shared by every token.
const DefaultMaxAnswerBytes = 16 << 20

// The receipts a read token's calls may cause (Options.ReadReceiptRate):
// one a second sustained, 60 at once; 86,400 a day per read token at
// most, against the 4.3 million of --rate's default 50 a second.
const (
	DefaultReadReceiptRate  = 1
	DefaultReadReceiptBurst = 60
)

// Instructions is the initialize result's instructions: what readproof is
// and how a run works, before the model calls anything.
const Instructions = `readproof governs the documents you read. Each registered document has a stable identity readproof://NAMESPACE/PATH, a freshness policy (require_fresh, allow_stale, pinned) and content-addressed snapshots kept in a git-backed store.

How to read: list documents with readproof_resources_list (or resources/list). Read one with resources/read or readproof_resolve; append @TAG (readproof://ns/path@prod) to get exactly the tagged snapshot, without consulting the source. Reading has side effects: resolving a plain URI may fetch the source and record a new snapshot; that is how readproof records what you saw.

How to record your work: for every task whose answer depends on documents, open a run with readproof_run_start, read each document that matters with readproof_run_mount (it returns the bytes and records them at the next position; pass position 0, 1, 2, ... so that a retried call is recorded once), then readproof_run_commit. The commit returns a manifest id (40 hex): cite it in your answer. With it anyone can inspect (readproof_manifest), compare (readproof_diff), re-verify byte for byte (readproof_replay) and export evidence (readproof_evidence_export). When a result carries a receipt_id, cite those receipt ids too.

Large documents are cut at 1 MiB with a marker naming the full content hash; readproof_replay with include_content returns every byte (with position, offset and max_bytes, in windows, when one answer would be too large). Never edit the store (the .readproof directory) by hand.`

// Server is a readproof MCP server.
type Server struct {
	mcp  *mcp.Server
	opts Options
	log  *slog.Logger
	// args is each tool's arguments in words, for the hint of a call its
	// input schema refuses; filled by addTool, read-only after New.
	args map[string]string
	// ints is each tool's integer arguments (exactIntegers); filled by
	// addTool, read-only after New.
	ints map[string][]string
	// paths are hidden from clients over HTTP (forClient).
	paths serverPaths
	// readReceipts is each read token's budget of receipted calls
	// (Options.ReadReceiptRate).
	readReceipts *rateLimiter
	// lookFor, when set, is onThisMachine for hiding paths (a test's,
	// counting the looks); nil is onThisMachine.
	lookFor func(top string) bool
}

// New builds the server: resources, the template and every tool.
func New(opts Options) (*Server, error) {
	if opts.Open == nil {
		return nil, errors.New("mcpserver: Options.Open is required")
	}
	if !opts.ReceiptKey.IsZero() {
		if err := identity.ValidateSessionID(opts.Session); err != nil {
			return nil, hint.With(fmt.Errorf("receipt session %q: %w", opts.Session, err), "pass --session NAME with letters, digits, '.', '_' and '-'")
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	} else {
		log = slog.New(tokenMask{log.Handler()})
	}
	version := opts.Version
	if version == "" {
		version = "devel"
	}
	if opts.ReadReceiptRate <= 0 {
		opts.ReadReceiptRate = DefaultReadReceiptRate
	}
	if opts.ReadReceiptBurst <= 0 {
		opts.ReadReceiptBurst = DefaultReadReceiptBurst
	}
	s := &Server{opts: opts, log: log, args: map[string]string{}, ints: map[string][]string{}, paths: newServerPaths(opts.StoreDir, opts.PolicyFile),
		readReceipts: newRateLimiter(opts.ReadReceiptRate, opts.ReadReceiptBurst)}
	instructions := Instructions
	if !opts.ReceiptKey.IsZero() {
		instructions += "\n\nTool receipts are on (session " + opts.Session + "): every tool result names its receipt_id. " +
			"List the receipt ids you relied on in your answer; readproof_receipts_verify_claims checks them."
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "readproof", Title: "readproof", Version: version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       log,
		// Resources are listed live from the store; no list_changed
		// notifications are sent, so none is promised. No logging
		// capability: diagnostics go to stderr.
		Capabilities: &mcp.ServerCapabilities{
			Resources: &mcp.ResourceCapabilities{},
			Tools:     &mcp.ToolCapabilities{},
		},
	})
	s.addResources()
	s.addTools()
	s.addTelemetry()
	// Added last, so outermost: they see every answer, the resources
	// middleware's included.
	s.mcp.AddReceivingMiddleware(s.recovered, s.codedErrors, s.argumentHints, s.exactIntegers, undeclared)
	return s, nil
}

// undeclared answers "method not found" (-32601) to the methods of
// capabilities the server does not declare: prompts and logging. The SDK
// serves them whatever the capabilities say (an empty prompt list, a
// logging level accepted), so a host would believe the server had prompts
// and logged to it. Completions and subscriptions the SDK refuses itself.
func undeclared(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "prompts/list", "prompts/get", "logging/setLevel":
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q (readproof serves resources and tools only)", method)}
		}
		return next(ctx, method, req)
	}
}

// recovered answers a request whose handler panicked (a defect) with a
// JSON-RPC internal error and logs the panic with its stack: the SDK
// recovers nothing, and one request must not stop the process every client
// of `readproof mcp --http` shares. A tool's own panic is caught first by
// guarded, which answers with a tool error and a receipt; this catches the
// rest (resources, lists, the middleware).
func (s *Server) recovered(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("request panicked", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
					Message: text.Escape(method) + " failed: an internal error in readproof (the server logged it and keeps serving)"}
			}
		}()
		return next(ctx, method, req)
	}
}

// codedErrors gives every error answer a JSON-RPC code: the SDK sends an
// error that is not a *jsonrpc.Error with code 0, which no client can
// classify. A second initialize is an invalid request; anything else (a
// source that fails under resources/read, a store that does not open) is
// an internal error, the code MCP names for it. Cancellations pass as
// they are. Every error's message is worded for the client once (forClient:
// over HTTP, without the server's paths), then escaped (escapeLines), as a
// tool error's is; one already worded (worded) is sent as it is.
func (s *Server) codedErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil || errors.Is(err, context.Canceled) {
			return res, err
		}
		// A text already worded for the client and escaped (rpcError,
		// resourceError, argumentHints) is sent as it is: worded again
		// after its escaping, its paths were looked up twice (up to 32
		// stats more per error) in a text no longer as it was said.
		var w *worded
		if errors.As(err, &w) {
			return res, w.rpc
		}
		clean := s.forClient(req)
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			if msg := escapeLines(clean(we.Message)); msg != we.Message {
				return res, &jsonrpc.Error{Code: we.Code, Message: msg, Data: we.Data}
			}
			return res, err
		}
		code := int64(jsonrpc.CodeInternalError)
		if method == "initialize" {
			code = jsonrpc.CodeInvalidRequest
		}
		return res, &jsonrpc.Error{Code: code, Message: escapeLines(clean(err.Error()))}
	}
}

// argumentHints ends the tool error of a call its input schema refused (a
// wrong type, a missing or an unknown argument: the SDK's validator names
// it) with a hint listing the arguments the tool takes, and the SDK's
// error for a tool this server does not have with the nearest name.
func (s *Server) argumentHints(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		creq, isCall := req.(*mcp.CallToolRequest)
		if !isCall || creq.Params == nil {
			return res, err
		}
		var we *jsonrpc.Error
		if errors.As(err, &we) && we.Code == jsonrpc.CodeInvalidParams && strings.HasPrefix(we.Message, "unknown tool") {
			h := "tools/list names the tools"
			// A name over maxToolNameRunes is no typo of a tool's (Nearest
			// would answer ""), and comparing a megabyte with every name
			// costs a second of CPU: it is not compared.
			if utf8.RuneCountInString(creq.Params.Name) <= maxToolNameRunes {
				if near := text.Nearest(creq.Params.Name, slices.Sorted(maps.Keys(s.args))); near != "" {
					h = "did you mean " + near + "? " + h
				}
			}
			msg := escapeLines(s.forClient(req)(identity.Shorten(we.Message, maxArgumentError) + " (hint: " + h + ")"))
			return res, &worded{&jsonrpc.Error{Code: we.Code, Message: msg, Data: we.Data}}
		}
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || !r.IsError || len(r.Content) != 1 {
			return res, err
		}
		tc, ok := r.Content[0].(*mcp.TextContent)
		if !ok || !strings.HasPrefix(tc.Text, `validating "arguments"`) {
			return res, err
		}
		// The validator quotes a wrong-typed value raw and whole: shortened
		// and escaped, as every other error quotes a caller's value.
		tc.Text = escapeLines(identity.Shorten(tc.Text, maxArgumentError))
		if args, known := s.args[creq.Params.Name]; known {
			tc.Text += "\nhint: " + creq.Params.Name + " takes " + args
		}
		return res, err
	}
}

// maxToolNameRunes: Nearest finds no tool for a longer name, since its
// distance to a tool's name (at most 42 runes, TestUnknownHugeToolName) is
// over a third of its length.
const maxToolNameRunes = 64

// maxArgumentError bounds the validator's message of a refused call
// (before its hint): enough for the argument's path and the rule broken.
const maxArgumentError = 512

// argumentsOf is an input schema in words: "uri (string, required), tag
// (string)", by name, or "no arguments".
func argumentsOf(sc *jsonschema.Schema) string {
	if len(sc.Properties) == 0 {
		return "no arguments"
	}
	names := slices.Sorted(maps.Keys(sc.Properties))
	for i, n := range names {
		what := sc.Properties[n].Type
		if slices.Contains(sc.Required, n) {
			what += ", required"
		}
		names[i] = n + " (" + what + ")"
	}
	return strings.Join(names, ", ")
}

// MCP returns the underlying go-sdk server.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Serve runs the server over newline-delimited JSON-RPC on in and out until
// in reaches EOF or ctx ends. Nothing but protocol messages is written to
// out.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	return s.Run(ctx, in, out)
}

// Run serves one session over in and out. A line that is not a JSON-RPC
// message is answered with a JSON-RPC error and the session goes on; it
// ends at the end of in, once the requests read have been answered, or
// when out fails as a broken pipe (the host went away), once the calls in
// flight have ended as cancelled calls do. The
// end of ctx (SIGTERM, Ctrl-C) ends it the same way: no more requests are
// read, and the calls in flight finish and are answered (for at most
// drainTimeout), so a write the host asked for is not cut off; Run then
// returns nil.
func (s *Server) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	err := s.mcp.Run(context.WithoutCancel(ctx), &lineTransport{in: in, out: out, stop: ctx.Done()})
	// A host that went away (out a broken pipe) ends the session as the
	// end of input does: the SDK has cancelled the calls in flight and
	// waited for them.
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return err
}

// receipted is implemented by every tool output (through the embedded
// Receipt), so the receipt id can be set after the result is hashed.
type receipted interface {
	setReceipt(id, failure string)
}

// Receipt is embedded in every tool output.
type Receipt struct {
	ReceiptID    string `json:"receipt_id,omitempty" jsonschema:"id of the tool receipt issued for this call; cite it with the manifest id. Absent when receipts are not configured"`
	ReceiptError string `json:"receipt_error,omitempty" jsonschema:"why no receipt could be issued for this call, when receipts are configured"`
}

func (r *Receipt) setReceipt(id, failure string) { r.ReceiptID, r.ReceiptError = id, failure }

// runScoped is implemented by inputs that name a run, so the receipt records
// it.
type runScoped interface{ runOf() string }

// reply is what a tool handler returns besides its output: the one short
// text block and the result's _meta.
type reply struct {
	text string
	meta mcp.Meta
}

// call is one executing tool call.
type call struct {
	st  *store.Store
	req *mcp.CallToolRequest
}

// guarded runs a tool's handler h and turns a panic in it into the call's
// error (logged with its stack): the server is shared by every client of
// `readproof mcp --http`, and the SDK runs a call in a goroutine nothing
// else recovers, so one call that trips a defect would stop the process for
// all of them. The client is told the tool failed, not why in Go's words.
func guarded[In any, Out any](log *slog.Logger, name string, h func(context.Context, *call, In) (Out, reply, error), ctx context.Context, c *call, in In) (out Out, rep reply, err error) {
	defer func() {
		if r := recover(); r != nil {
			log.Error("tool panicked", "tool", name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			var zero Out
			out, rep = zero, reply{}
			err = hint.With(fmt.Errorf("%s failed: an internal error in readproof (the server logged it and keeps serving)", name),
				"a defect in readproof: the server's log (stderr) has its stack; call again, or report it with that log")
		}
	}()
	return h(ctx, c, in)
}

// addTool registers a typed tool whose handler runs on a freshly opened
// store. Errors become tool error results (isError) carrying the message,
// the hint and the receipt id; outputs get the receipt id after the receipt
// is issued over them.
func addTool[In any, Out receipted](s *Server, t *mcp.Tool, h func(context.Context, *call, In) (Out, reply, error)) {
	t.InputSchema, t.OutputSchema = schemaFor[In](), schemaFor[Out]()
	sc := t.InputSchema.(*jsonschema.Schema)
	s.args[t.Name] = argumentsOf(sc)
	for _, n := range slices.Sorted(maps.Keys(sc.Properties)) {
		if sc.Properties[n].Type == "integer" {
			s.ints[t.Name] = append(s.ints[t.Name], n)
		}
	}
	mcp.AddTool(s.mcp, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		var zero Out
		start := time.Now()
		run := ""
		if rs, ok := any(in).(runScoped); ok {
			run = rs.runOf()
		}
		caller, canWrite := callerOf(req)
		clean := s.forClient(req)
		if !canWrite && WritesStore(t.Name) {
			return nil, zero, toolError(readOnlyRefusal(t.Name, caller), "", "", clean)
		}
		if !canWrite && !s.opts.ReceiptKey.IsZero() {
			if wait, ok := s.readReceipts.take(caller); !ok {
				return nil, zero, toolError(s.readReceiptRefusal(t.Name, caller, wait), "", "", clean)
			}
		}
		st, err := s.opts.Open()
		if err != nil {
			s.log.Warn("open store", "tool", t.Name, "err", err)
			return nil, zero, toolError(err, "", "", clean)
		}
		defer st.Close()
		st.SetCaller(caller)
		warned := &sourceWarnings{log: s.log, what: t.Name, clean: clean}
		st.SetSourceWarn(warned.add)
		out, rep, err := guarded(s.log, t.Name, h, ctx, &call{st: st, req: req}, in)
		if err != nil {
			err = warned.onError(err)
			s.log.Info("tool error", "tool", t.Name, "err", err)
			id, rerr := s.issue(ctx, st, t.Name, req, run, start, nil, err, clean)
			return nil, zero, toolError(err, id, rerr, clean)
		}
		// The receipt hashes the result as JSON: encoded here only when
		// receipts are on (the SDK encodes it again for the answer, and a
		// replay with content is megabytes).
		if w, ok := any(out).(warnable); ok {
			w.setWarnings(warned.list())
		}
		rep.text += warned.text()
		var data []byte
		if !s.opts.ReceiptKey.IsZero() {
			if data, err = json.Marshal(out); err != nil {
				return nil, zero, fmt.Errorf("%s: encode result: %w", t.Name, err)
			}
		}
		id, rerr := s.issue(ctx, st, t.Name, req, run, start, data, nil, clean)
		out.setReceipt(id, rerr)
		text := escapeLines(rep.text)
		meta := rep.meta
		text += receiptLine("Receipt", id, rerr)
		if id != "" {
			if meta == nil {
				meta = mcp.Meta{}
			}
			meta["receipt_id"] = id
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, Meta: meta}, out, nil
	})
}

// schemaFor infers the JSON schema of T and makes it portable: a Go
// pointer or slice is inferred as the type list ["null", X], which clients
// that map schemas onto a single-type dialect reject; every such list
// becomes X. Outputs never carry null (slices are sent empty, optional
// members are omitted), so the narrower schema is also the exact one.
func schemaFor[T any]() *jsonschema.Schema {
	sc, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err))
	}
	var fix func(*jsonschema.Schema)
	fix = func(sc *jsonschema.Schema) {
		if sc == nil {
			return
		}
		if len(sc.Types) == 2 && sc.Types[0] == "null" {
			sc.Type, sc.Types = sc.Types[1], nil
		}
		for _, p := range sc.Properties {
			fix(p)
		}
		fix(sc.Items)
		fix(sc.AdditionalProperties)
	}
	fix(sc)
	return sc
}

// toolError renders err for the model: its text (errorText), then the
// receipt id, or why there is none, on a line of its own.
func toolError(err error, receiptID, receiptErr string, clean func(string) string) error {
	return &renderedError{msg: errorText(err, clean) + receiptLine("receipt", receiptID, receiptErr), err: err}
}

// receiptLine is the line a tool's text ends with: "\nReceipt: ID" (word
// capitalised as the text's sentences are), or "\nNo receipt: " and why
// none was issued, or "" when receipts are off. Why is worded for the
// client already (issue); it is escaped here, once, and whole, so a line
// break in it cannot start a line of its own (a forged "receipt:" line).
// Before session 29 a tool error's worded it again, and neither escaped it.
func receiptLine(word, id, failure string) string {
	switch {
	case id != "":
		return "\n" + word + ": " + id
	case failure != "":
		no := "No receipt"
		if word == "receipt" {
			no = "no receipt"
		}
		return "\n" + no + ": " + text.Escape(failure)
	}
	return ""
}

// errorText is err as the client of a failed call reads it, and as its
// receipt records it: the message, then the hint on a line of its own,
// worded for the model (forModel) and for the client by clean (forClient),
// then escaped (escapeLines). The paths are hidden in the text as it was
// said: escaped, a tab before a path is the two characters \t, which
// start no word, and a store's path with a bidi character in it is no
// longer the store's.
func errorText(err error, clean func(string) string) string {
	msg := forModel(err.Error())
	if h := hint.Of(err); h != "" {
		msg += "\nhint: " + forModel(h)
	}
	return escapeLines(clean(msg))
}

// escapeLines is s with every line passed through text.Escape, as the CLI
// prints its messages: a text block is readproof's own words around values
// a source or a caller chose (an ETag, a path, an argument), and a host
// shows it to its user as well as to the model, so a control character,
// an invalid byte or a bidirectional override in such a value is written
// as its escape. structuredContent keeps every value as it is: data.
func escapeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = text.Escape(l)
	}
	return strings.Join(lines, "\n")
}

// worded is a JSON-RPC error whose message is worded for the client
// (forClient) and escaped: codedErrors sends rpc as it is.
type worded struct{ rpc *jsonrpc.Error }

func (w *worded) Error() string { return w.rpc.Message }
func (w *worded) Unwrap() error { return w.rpc }

type renderedError struct {
	msg string
	err error
}

func (e *renderedError) Error() string { return e.msg }
func (e *renderedError) Unwrap() error { return e.err }

func ptr[T any](v T) *T { return &v }

// callerOf is who made a call: the name and scope of the bearer token it
// came with over HTTP. A call without a token (stdio: the user who started
// the server) has no name and may write.
func callerOf(req *mcp.CallToolRequest) (name string, canWrite bool) {
	if req == nil || req.Extra == nil || req.Extra.TokenInfo == nil {
		return "", true
	}
	ti := req.Extra.TokenInfo
	return ti.UserID, slices.Contains(ti.Scopes, ScopeWrite)
}

// requestCaller is callerOf for any request: the token's name and whether
// its scope may write; a request without a token (stdio) may write.
func requestCaller(req mcp.Request) (name string, canWrite bool) {
	if req == nil {
		return "", true
	}
	extra := req.GetExtra()
	if extra == nil || extra.TokenInfo == nil {
		return "", true
	}
	return extra.TokenInfo.UserID, slices.Contains(extra.TokenInfo.Scopes, ScopeWrite)
}

// readOnlyRefusal is the tool error a read-only token gets from a tool
// that writes.
func readOnlyRefusal(tool, caller string) error {
	return hint.With(fmt.Errorf("%s writes to the store, and the token %q has scope read: refused", tool, caller),
		"read-only tokens may list, read, resolve, compare, replay and export; for runs, tags and probe checks ask for a write token (readproof mcp token add NAME --scope write)")
}

// readReceiptRefusal is the tool error of a read token's call beyond its
// budget of receipts (Options.ReadReceiptRate).
func (s *Server) readReceiptRefusal(tool, caller string, wait time.Duration) error {
	return hint.With(fmt.Errorf("%s: the token %q has scope read, and its calls have reached this server's bound on the receipts a read token causes (%g a second, %d at once): refused before it ran, nothing recorded",
		tool, caller, s.opts.ReadReceiptRate, s.opts.ReadReceiptBurst),
		fmt.Sprintf("call again in %d s; every call of a read token is receipted, so its calls are bounded by what the receipts write", int(wait/time.Second)+1))
}

// annotations for tools that change nothing.
func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
}

// annotations for tools that write to the store only.
func writes(title string, destructive, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, DestructiveHint: ptr(destructive), IdempotentHint: idempotent, OpenWorldHint: ptr(false)}
}

// annotations for tools that may read the configured source (file, http,
// github, git) and record a snapshot.
func reads(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, DestructiveHint: ptr(false), OpenWorldHint: ptr(true)}
}
