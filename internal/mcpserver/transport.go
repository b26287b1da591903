package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/strictjson"
)

// lineTransport is the stdio transport of `readproof mcp`: one JSON-RPC
// message per line, as the SDK's IOTransport, with these differences, the
// first three of which keep one hostile or broken line from ending the
// session:
//
//   - a line that is not JSON is answered with a parse error (-32700, id
//     null) and a line that is JSON but not a message (a batch included:
//     protocol 2025-06-18 dropped batching) with an invalid-request error
//     (-32600), and the server reads on; the SDK's reader returns an error
//     instead, which closes the connection;
//   - a response the SDK cannot encode (an error whose data is not JSON, as
//     mcp.ResourceNotFoundError builds for a URI with a control character)
//     is repaired or replaced by an internal error (-32603) for the same id,
//     instead of ending the session;
//   - at the end of input, the requests already read are answered before the
//     connection closes (the SDK drops them: go-sdk #1061), for at most
//     drainTimeout;
//   - a message that names a member twice in one object is answered with
//     an invalid-request error (repeatedMember), not run with the last;
//   - a request the client cancelled (notifications/cancelled) while it
//     was pending gets no answer, as MCP says; the SDK sends one.
type lineTransport struct {
	in      io.Reader
	out     io.Writer
	maxLine int
	// stop, when it closes, ends the input as EOF does: the requests
	// read are answered, and no more are read.
	stop <-chan struct{}
}

// drainTimeout bounds the wait for answers to requests read before EOF.
const drainTimeout = 30 * time.Second

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	limit := t.maxLine
	if limit <= 0 {
		limit = mcp.DefaultMaxLineLength
	}
	c := &lineConn{
		out:       t.out,
		lines:     make(chan lineOrErr),
		closed:    make(chan struct{}),
		pending:   map[any]bool{},
		cancelled: map[any]bool{},
		answered:  make(chan struct{}, 1),
		stop:      t.stop,
	}
	go c.readLines(bufio.NewReaderSize(t.in, 64<<10), limit)
	return c, nil
}

type lineOrErr struct {
	line    []byte
	tooLong bool
	err     error
}

type lineConn struct {
	out     io.Writer
	writeMu sync.Mutex

	lines     chan lineOrErr
	closed    chan struct{}
	closeOnce sync.Once

	mu        sync.Mutex
	pending   map[any]bool // ids of requests read and not yet answered
	cancelled map[any]bool // pending ids the client cancelled: no answer is sent
	answered  chan struct{}

	stop <-chan struct{} // nil: never
}

// readLines sends every line of r (without its end of line) to c.lines.
// A line longer than limit is dropped up to its newline and reported as
// tooLong.
func (c *lineConn) readLines(r *bufio.Reader, limit int) {
	for {
		var line []byte
		tooLong := false
		var err error
		for {
			var part []byte
			part, err = r.ReadSlice('\n')
			if !tooLong {
				if len(line)+len(part) > limit+2 {
					tooLong, line = true, nil
				} else {
					line = append(line, part...)
				}
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if len(line) > 0 || tooLong {
			select {
			case c.lines <- lineOrErr{line: bytes.TrimRight(line, "\r\n"), tooLong: tooLong}:
			case <-c.closed:
				return
			}
		}
		if err != nil {
			select {
			case c.lines <- lineOrErr{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// Read returns the next message. What is not a message is answered here
// and skipped; only the end of input (or Close) ends the session.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		select {
		case <-c.stop: // before any line already waiting
			c.drain(ctx)
			return nil, io.EOF
		default:
		}
		var l lineOrErr
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case <-c.stop:
			c.drain(ctx)
			return nil, io.EOF
		case l = <-c.lines:
		}
		if l.err != nil {
			c.drain(ctx)
			if errors.Is(l.err, io.EOF) {
				return nil, io.EOF
			}
			return nil, l.err
		}
		if l.tooLong {
			c.writeError(nil, jsonrpc.CodeParseError, "Parse error: line longer than the maximum message size")
			continue
		}
		line := bytes.TrimSpace(l.line)
		if len(line) == 0 {
			continue
		}
		if !json.Valid(line) {
			c.writeError(nil, jsonrpc.CodeParseError, "Parse error: the line is not JSON")
			continue
		}
		if line[0] == '[' {
			c.writeError(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not supported")
			continue
		}
		if id, msg, bad := repeatedMember(line); bad {
			c.writeError(id, jsonrpc.CodeInvalidRequest, msg)
			continue
		}
		if id, bad := unusableID(line); bad {
			c.writeError(id, jsonrpc.CodeInvalidRequest, invalidIDMessage)
			continue
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			c.writeError(idOf(line), jsonrpc.CodeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message")
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
			c.mu.Lock()
			c.pending[req.ID.Raw()] = true
			c.mu.Unlock()
		} else if ok && req.Method == "notifications/cancelled" {
			c.noteCancelled(req.Params)
		}
		return msg, nil
	}
}

// invalidIDMessage answers a request whose id is unusable.
const invalidIDMessage = "Invalid Request: a request id must be a string or an integer of at most 2^53, not null or a fraction"

// unusableID reports a request (an object with a method) whose id the SDK
// would not return as sent: null, which MCP forbids and the SDK takes for a
// notification (no answer: the client waits forever), or a number that is
// not an integer within 2^53, which it turns into a different integer
// (1.5 into 1). The id to answer with is the one sent, so the client can
// match the error to its request; null when it was null.
func unusableID(line []byte) (id any, bad bool) {
	// encoding/json prefers a field of the exact name, and matches one of
	// another case only when there is none: each spelling of "id" has its
	// own, so ID is the member "id" alone, as the SDK reads it. (A map
	// would copy every member's bytes, params too.)
	var probe struct {
		ID      json.RawMessage `json:"id"`
		IDUpper json.RawMessage `json:"ID"`
		IDTitle json.RawMessage `json:"Id"`
		IDOdd   json.RawMessage `json:"iD"`
		Method  json.RawMessage `json:"method"`
	}
	if json.Unmarshal(line, &probe) != nil || probe.Method == nil || probe.ID == nil {
		return nil, false
	}
	raw := bytes.TrimSpace(probe.ID)
	switch {
	case string(raw) == "null":
		return nil, true
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n > 1<<53 || n < -(1<<53) {
			return json.RawMessage(raw), true
		}
	}
	return nil, false
}

// repeatedMember reports a message that names a member twice in one of its
// objects (strictjson's rule), with the message to refuse it with and the
// id to answer (null when the id is the member named twice). JSON readers
// disagree about which one counts: the SDK keeps the last, so a call
// {"name":"readproof_resolve","name":"readproof_tag_delete"} or arguments
// {"uri":A,"uri":B} ran with B while a proxy or a log reader that keeps
// the first saw A, and the call's receipt hashed both.
func repeatedMember(msg []byte) (id any, message string, bad bool) {
	var e *strictjson.Error
	if !errors.As(strictjson.Members(msg, nil), &e) {
		return nil, "", false
	}
	var top *strictjson.Error
	if !errors.As(strictjson.Members(msg, topLevel{}), &top) || top.Name != "id" {
		id = idOf(msg)
	}
	return id, "Invalid Request: " + e.Error() + "; send each member once", true
}

// topLevel is the shape of a message whose top-level member names alone
// are checked.
type topLevel struct{}

func (topLevel) Member(string) (strictjson.Shape, error) { return strictjson.Opaque, nil }
func (topLevel) Elem() strictjson.Shape                  { return strictjson.Opaque }

// noteCancelled records the request a notifications/cancelled names, when
// it is still pending, so that its answer is not sent: MCP says the
// receiver of a cancellation should not respond to the request.
func (c *lineConn) noteCancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil || !id.IsValid() {
		return
	}
	c.mu.Lock()
	if c.pending[id.Raw()] {
		c.cancelled[id.Raw()] = true
	}
	c.mu.Unlock()
}

// idOf returns the id of a JSON object that is not a valid message, when it
// has a usable one, so the error names the request; else nil. The id is
// the member named "id" exactly, as the SDK reads it: see unusableID.
func idOf(line []byte) any {
	var probe struct {
		ID      any             `json:"id"`
		IDUpper json.RawMessage `json:"ID"`
		IDTitle json.RawMessage `json:"Id"`
		IDOdd   json.RawMessage `json:"iD"`
	}
	if json.Unmarshal(line, &probe) != nil {
		return nil
	}
	id, err := jsonrpc.MakeID(probe.ID)
	if err != nil || !id.IsValid() {
		return nil
	}
	return id.Raw()
}

// drain waits until every request read has been answered, ctx ends, the
// connection closes or drainTimeout passes.
func (c *lineConn) drain(ctx context.Context) {
	deadline := time.NewTimer(drainTimeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.answered:
		case <-ctx.Done():
			return
		case <-c.closed:
			return
		case <-deadline.C:
			return
		}
	}
}

// Write encodes msg on one line. A response that cannot be encoded is
// repaired (error data that is not JSON becomes a JSON string) or replaced
// by an internal error for the same id.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	resp, isResp := msg.(*jsonrpc.Response)
	if err != nil && isResp {
		data, err = jsonrpc.EncodeMessage(repaired(resp))
	}
	if err != nil {
		return fmt.Errorf("encoding a JSON-RPC message: %w", err)
	}
	drop := false
	if isResp && resp.ID.IsValid() {
		c.mu.Lock()
		drop = c.cancelled[resp.ID.Raw()]
		delete(c.cancelled, resp.ID.Raw())
		c.mu.Unlock()
	}
	if !drop {
		c.writeMu.Lock()
		_, err = c.out.Write(append(data, '\n'))
		c.writeMu.Unlock()
	}
	if isResp && resp.ID.IsValid() {
		c.mu.Lock()
		delete(c.pending, resp.ID.Raw())
		c.mu.Unlock()
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return err
}

// repaired is resp made encodable: error data that is not valid JSON is
// sent as a JSON string of its bytes, and a result that is not valid JSON
// becomes an internal error.
func repaired(resp *jsonrpc.Response) *jsonrpc.Response {
	out := &jsonrpc.Response{ID: resp.ID}
	if resp.Error == nil {
		out.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the result could not be encoded"}
		return out
	}
	var we *jsonrpc.Error
	if errors.As(resp.Error, &we) {
		fixed := &jsonrpc.Error{Code: we.Code, Message: resp.Error.Error()}
		if len(we.Data) > 0 {
			if json.Valid(we.Data) {
				fixed.Data = we.Data
			} else if s, err := json.Marshal(string(we.Data)); err == nil {
				fixed.Data = s
			}
		}
		out.Error = fixed
		return out
	}
	out.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: resp.Error.Error()}
	return out
}

// writeError answers a line that is not a usable message.
func (c *lineConn) writeError(id any, code int64, message string) {
	data, err := errorReply(id, code, message)
	if err != nil {
		return
	}
	c.writeMu.Lock()
	c.out.Write(append(data, '\n'))
	c.writeMu.Unlock()
}

// errorReply encodes a JSON-RPC error response for id (a JSON value, or
// nil for null).
func errorReply(id any, code int64, message string) ([]byte, error) {
	type wireErr struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	return json.Marshal(struct {
		JSONRPC string  `json:"jsonrpc"`
		ID      any     `json:"id"`
		Error   wireErr `json:"error"`
	}{"2.0", id, wireErr{code, message}})
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *lineConn) SessionID() string { return "" }
