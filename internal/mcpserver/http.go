package mcpserver

// The streamable HTTP front end of `readproof mcp --http`: bearer tokens
// (the SDK's auth.RequireBearerToken over internal/mcpauth), a bound on
// the requests refused for their token per remote address (untrusted.go),
// a per-token rate limit, a concurrency limit, a request body limit and a graceful
// shutdown that lets in-flight calls finish.

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/telemetry"
)

// HTTP defaults; each has a flag of `readproof mcp`.
const (
	DefaultMaxBodyBytes    = 4 << 20 // bytes of one request body
	DefaultMaxConcurrent   = 32      // requests executing at once, all tokens together
	DefaultRate            = 50      // requests per second per token, sustained
	DefaultBurst           = 100     // requests per token above the rate, at once
	DefaultQueueWait       = 10 * time.Second
	DefaultShutdownTimeout = 60 * time.Second
	DefaultBodyTimeout     = 30 * time.Second
	DefaultAnswerTimeout   = 30 * time.Second
	DefaultMaxConns        = 512 // connections held open without a request in progress
)

// HTTPOptions configure the HTTP front end. Verify is required.
type HTTPOptions struct {
	// Verify checks a presented bearer token. Errors wrapping
	// mcpauth.ErrMalformed, ErrUnknown, ErrExpired or ErrRevoked answer 401;
	// any other error (the token file became unusable) answers 500 without
	// its message, which Verify's caller tells the operator.
	Verify func(token string) (mcpauth.Caller, error)
	// MaxBodyBytes limits one request body (413 beyond it).
	MaxBodyBytes int64
	// BodyTimeout bounds how long a request's body may take to arrive
	// once its headers have (DefaultBodyTimeout when 0): a client that
	// stalls its body is cut off instead of holding its connection and
	// its goroutine for ever.
	BodyTimeout time.Duration
	// AnswerTimeout bounds how long a client may leave its answer unread
	// (DefaultAnswerTimeout when 0): a write of the answer that makes no
	// progress for that long fails and closes the connection, so a client
	// that stops reading cannot hold a --max-concurrent slot for ever.
	AnswerTimeout time.Duration
	// MaxConcurrent limits the requests executing at once; a request
	// waits up to QueueWait for a slot, then gets 503.
	MaxConcurrent int
	QueueWait     time.Duration
	// Rate and Burst are each token's budget (a token bucket): a token
	// over it gets 429 with Retry-After while other tokens are served.
	Rate  float64
	Burst int
	// UntrustedRate and UntrustedBurst are each remote address's budget
	// of requests refused for their token (401: none, or one the server
	// did not issue, revoked or expired): past it, until the bucket
	// refills, the address's requests without a token get 429 with
	// Retry-After unchecked and those with one are checked, a refused one
	// answered 429 with Retry-After instead of 401 (DefaultUntrustedRate and
	// DefaultUntrustedBurst when 0). A request takes one before its token is
	// checked and a valid token's gives it back once accepted; a valid
	// token is never refused by the budget (untrustedLimiter).
	UntrustedRate  float64
	UntrustedBurst int
	// MaxConns bounds the connections ServeHTTP holds open at once
	// without a request in progress: idle between requests, or not yet
	// sent one whole (DefaultMaxConns when 0). A connection accepted at the
	// bound closes the one of them that has waited longest, of those that
	// never carried a request with a valid token when there is one
	// (connCap). Connections with a request in progress are not counted
	// and never refused: only a token's requests stay in progress (a
	// request without one is answered 401 once its headers are read), and
	// those are bounded by the rate, the body budget and the timeouts.
	MaxConns int
	// ShutdownTimeout bounds how long ServeHTTP waits for in-flight
	// requests when its context ends.
	ShutdownTimeout time.Duration
	// AnyHost serves requests whatever host they are addressed to. By
	// default a request that arrived at a loopback address addressed to a
	// host that is not loopback (a DNS name rebound to 127.0.0.1) gets 403,
	// whatever address the server listens on; `mcp --public` sets it, so
	// that a proxy on the same machine can forward under the public name
	// (the token and TLS are then the boundary).
	AnyHost bool
	// TLSCert and TLSKey, when both set, serve HTTPS.
	TLSCert, TLSKey string
	// Stopping, when set, is called once ServeHTTP's context has ended,
	// before it waits for the requests in flight: the command tells the
	// operator what the wait is.
	Stopping func()
}

func (o *HTTPOptions) defaults() {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	// max+1 bytes are read to tell a body over the limit: keep it an
	// int64 (a --max-body of the largest int64 means no limit).
	o.MaxBodyBytes = min(o.MaxBodyBytes, math.MaxInt64-1)
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	if o.QueueWait <= 0 {
		o.QueueWait = DefaultQueueWait
	}
	if o.Rate <= 0 {
		o.Rate = DefaultRate
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	if o.UntrustedRate <= 0 {
		o.UntrustedRate = DefaultUntrustedRate
	}
	if o.UntrustedBurst <= 0 {
		o.UntrustedBurst = DefaultUntrustedBurst
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.AnswerTimeout <= 0 {
		o.AnswerTimeout = DefaultAnswerTimeout
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
}

// HTTPHandler is the server as an http.Handler: the MCP streamable HTTP
// transport, stateless (every POST carries whole requests; no session
// state lives in the server, so any number of clients share one store and a
// restart loses nothing) with JSON responses, behind the token check, the
// rate limit and the concurrency limit.
func (s *Server) HTTPHandler(o HTTPOptions) (http.Handler, error) {
	if o.Verify == nil {
		return nil, errors.New("mcpserver: HTTPOptions.Verify is required")
	}
	o.defaults()
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              s.log,
		MaxRequestBodyBytes: o.MaxBodyBytes,
		// The SDK's check (DNS rebinding) goes by the connection's local
		// address, not by the listener or the flags.
		DisableLocalhostProtection: o.AnyHost,
	})
	h = refuseRepeated(h)
	h = s.recheckAnswer(h, o.Verify)
	// The token is checked again once the request holds its slot: it may
	// have waited up to QueueWait for it, and a token revoked (or expired)
	// meanwhile must not run a call (before session 28 it did, up to 10 s
	// after `readproof mcp token revoke`).
	bearer := auth.RequireBearerToken(s.verifier(o.Verify), &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	h = bearer(h)
	h = limitConcurrency(h, o.MaxConcurrent, o.QueueWait)
	// The body is read before a slot is taken: a client that trickles
	// its body holds no slot meanwhile. What bodies hold in memory, read
	// or waiting for a slot, is bounded by a budget of twice what the
	// slots' bodies could hold.
	h = readBody(h, o.MaxBodyBytes, o.BodyTimeout, &byteBudget{left: bodyBudget(o.MaxConcurrent, o.MaxBodyBytes)})
	h = newRateLimiter(o.Rate, o.Burst).wrap(h)
	h = trustConn(h)
	// Around the token check: past an address's budget of refusals its
	// requests without a token are answered 429 unchecked, and those whose
	// token is refused 429 after the check; a request whose token is
	// accepted gives back what it took, and is never refused.
	untrusted := newUntrustedLimiter(o.UntrustedRate, o.UntrustedBurst, DefaultUntrustedEntries)
	h = untrusted.accepted(h)
	h = bearer(h)
	h = untrusted.wrap(h)
	h = challenge(h)
	h = s.accessLog(h)
	h = answerDeadline(h, o.AnswerTimeout)
	return h, nil
}

// answerDeadline gives every write of an answer a deadline of timeout from
// the moment it starts, in pieces of answerPiece bytes, so a client that
// reads its answer slowly is served and one that stops reading is cut off:
// without it the write blocked for as long as the connection stayed open,
// and the call held its --max-concurrent slot meanwhile (a token that sent
// that many calls and read none of their answers stopped the server for
// every other token). The connection's deadline is also renewed when a
// request arrives and when its handler returns (for what net/http writes
// then), so a deadline left from an earlier request on a kept-alive
// connection never cuts off a later one.
func answerDeadline(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Now().Add(timeout))
		next.ServeHTTP(&deadlineWriter{ResponseWriter: w, rc: rc, timeout: timeout}, r)
		_ = rc.SetWriteDeadline(time.Now().Add(timeout))
	})
}

// answerPiece is the most an answer writes under one deadline.
const answerPiece = 64 << 10

type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		piece := p[:min(len(p), answerPiece)]
		_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
		m, err := w.ResponseWriter.Write(piece)
		n += m
		if err != nil {
			return n, err
		}
		p = p[len(piece):]
	}
	return n, nil
}

func (w *deadlineWriter) Flush() {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	_ = w.rc.Flush()
}

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// verifier adapts mcpauth to the SDK: the caller's name becomes the
// TokenInfo's UserID and its scope the one scope. A string that is not
// shaped as a token we issue (mcpauth.ParseToken: "rpmcp_" and 64
// lower-case hex digits) is refused here, without calling verify: it
// cannot be valid, so it costs no stat of the token file and no hash, and
// its refusal takes the time of reading its own bytes whatever the valid
// tokens are (before session 30 every presented string was checked).
func (s *Server) verifier(verify func(string) (mcpauth.Caller, error)) auth.TokenVerifier {
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if mcpauth.ParseToken(token) != nil {
			return nil, fmt.Errorf("%w: not a token of this server", auth.ErrInvalidToken)
		}
		c, err := verify(token)
		switch {
		case errors.Is(err, mcpauth.ErrRevoked):
			return nil, fmt.Errorf("%w: the token was revoked", auth.ErrInvalidToken)
		case errors.Is(err, mcpauth.ErrExpired):
			return nil, fmt.Errorf("%w: the token has expired", auth.ErrInvalidToken)
		case errors.Is(err, mcpauth.ErrMalformed), errors.Is(err, mcpauth.ErrUnknown):
			return nil, fmt.Errorf("%w: not a token of this server", auth.ErrInvalidToken)
		case err != nil:
			s.log.Error("token check", "err", err)
			return nil, errors.New("the token could not be checked: the server's token file is unusable; its operator sees why on the server's stderr")
		}
		return &auth.TokenInfo{UserID: c.Name, Scopes: []string{string(c.Scope)}, Expiration: c.ExpiresAt}, nil
	}
}

// recheckAnswer checks the request's token again when its answer is
// written, and withholds a successful answer (401, or 500 when the token
// file became unusable) from a token revoked or expired while its call
// ran: a call that reads a slow source, or exports a large bundle, would
// otherwise hand its bytes to a token the operator has taken back (before
// session 28 it did). What the call wrote stays written, as a call the
// client cancels, and its receipt names it; the answer is one JSON
// response, so the whole of it is withheld.
func (s *Server) recheckAnswer(next http.Handler, verify func(string) (mcpauth.Caller, error)) http.Handler {
	check := s.verifier(verify)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := ""
		if f := strings.Fields(r.Header.Get("Authorization")); len(f) == 2 {
			token = f[1]
		}
		rw := &recheckWriter{ResponseWriter: w, check: func() (int, string) {
			_, err := check(r.Context(), token, r)
			switch {
			case err == nil:
				return 0, ""
			case errors.Is(err, auth.ErrInvalidToken):
				return http.StatusUnauthorized, err.Error() + " while the call ran: its answer is withheld (what the call wrote stays, and its receipt names it)"
			}
			return http.StatusInternalServerError, err.Error()
		}}
		next.ServeHTTP(rw, r)
	})
}

// recheckWriter decides at the first byte or status of a successful answer
// whether to send it (check).
type recheckWriter struct {
	http.ResponseWriter
	check             func() (code int, msg string)
	decided, withheld bool
}

// decide checks once, before the answer's status goes out: an answer of
// code 300 or more is sent as it is; a success is replaced by check's
// refusal, if any. It reports whether the answer is withheld.
func (w *recheckWriter) decide(code int) bool {
	if w.decided {
		return w.withheld
	}
	w.decided = true
	if code >= http.StatusMultipleChoices {
		return false
	}
	if c, msg := w.check(); c != 0 {
		w.withheld = true
		http.Error(w.ResponseWriter, msg, c)
	}
	return w.withheld
}

func (w *recheckWriter) WriteHeader(code int) {
	if !w.decide(code) {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *recheckWriter) Write(p []byte) (int, error) {
	if w.decide(http.StatusOK) {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *recheckWriter) Flush() {
	if w.decide(http.StatusOK) {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recheckWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// challenge gives every 401 its WWW-Authenticate header, which RFC 6750
// (section 3) requires and the SDK's bearer middleware sends only with
// OAuth resource metadata: the scheme and realm, and error="invalid_token"
// when the request carried credentials that were refused.
func challenge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := `Bearer realm="readproof"`
		if r.Header.Get("Authorization") != "" {
			c += `, error="invalid_token"`
		}
		next.ServeHTTP(&challengeWriter{ResponseWriter: w, challenge: c}, r)
	})
}

// challengeWriter adds the challenge when the status written is 401, and
// closes the connection with every refusal (a status of 400 or more): the
// request's body may not have been read (the token, the rate or the budget
// refused it first), and net/http would read the rest of it before it sent
// the answer, to reuse the connection, so a client that stalls its body
// would hold the connection and a goroutine, unanswered, for as long as it
// liked. Over HTTP/2 (served with TLS; h2c is not) the header has no
// meaning, and net/http's HTTP/2 server takes it as a graceful shutdown of
// the connection instead: a GOAWAY, then the connection closed a second
// after its streams end, whatever the client does; an unread body there
// holds nothing, its stream is reset (TestHTTP2RefusedConnectionClosed).
type challengeWriter struct {
	http.ResponseWriter
	challenge string
}

func (w *challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", w.challenge)
	}
	if code >= http.StatusBadRequest {
		w.Header().Set("Connection", "close")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *challengeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *challengeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// callerName is the verified caller of an HTTP request, or "".
func callerName(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}

// rateLimiter keeps one token bucket per caller.
type rateLimiter struct {
	rate  rate.Limit
	burst int
	mu    sync.Mutex
	byKey map[string]*rate.Limiter
}

func newRateLimiter(r float64, burst int) *rateLimiter {
	return &rateLimiter{rate: rate.Limit(r), burst: burst, byKey: map[string]*rate.Limiter{}}
}

func (l *rateLimiter) limiter(name string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.byKey[name]
	if lim == nil {
		lim = rate.NewLimiter(l.rate, l.burst)
		l.byKey[name] = lim
	}
	return lim
}

// take takes one from name's bucket, or says how long until one is there.
func (l *rateLimiter) take(name string) (wait time.Duration, ok bool) {
	res := l.limiter(name).Reserve()
	if d := res.Delay(); d > 0 {
		res.Cancel()
		return d, false
	}
	return 0, true
}

func (l *rateLimiter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := callerName(r)
		if v, ok := r.Context().Value(callerSlot{}).(*atomic.Value); ok {
			v.Store(name)
		}
		if d, ok := l.take(name); !ok {
			secs := int(d/time.Second) + 1
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			http.Error(w, "too many requests for this token: slow down (the limit is per token; see mcp --rate and --burst)", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// readBody reads a POST's body before the request goes on to take a slot
// (so a slow sender holds none), up to max+1 bytes, and passes it on whole
// (so the SDK still answers a body over max with 413). These bound and
// check that read:
//   - its bytes come from budget, given back when the request is done
//     (beyond it: 503), so bodies waiting for a slot cannot fill memory;
//   - it must arrive within timeout of the headers (else 400, connection
//     closed);
//   - a request whose id the SDK would not return as sent (null, a
//     fraction, an integer beyond 2^53: unusableID) is answered 400 with an
//     invalid-request error carrying that id, as the stdio transport does;
//     the SDK would answer 1.5 as id 1;
//   - a batch is answered 400 with an invalid-request error (batchMessage).
func readBody(next http.Handler, max int64, timeout time.Duration, budget *byteBudget) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		// The body's bytes are taken from the budget before they are
		// read, and given back when the request is done: its declared
		// length, or the most a body may be when it declares none.
		need := max + 1
		if r.ContentLength >= 0 && r.ContentLength <= max {
			need = r.ContentLength
		}
		if !budget.take(need) {
			// (the connection closes with the answer: challengeWriter)
			w.Header().Set("Retry-After", "1")
			http.Error(w, "server busy: too many request bodies held at once (see mcp --max-concurrent and --max-body)", http.StatusServiceUnavailable)
			return
		}
		defer budget.give(need)
		// The body's deadline; lifted once it is read, so a call that
		// runs long is not cut off (the server sets no ReadTimeout).
		// A body that failed keeps its deadline: net/http would otherwise
		// wait for the rest of it, to reuse the connection, with none.
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(timeout))
		body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
		if err != nil {
			w.Header().Set("Connection", "close")
			http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		_ = rc.SetReadDeadline(time.Time{})
		if int64(len(body)) <= max {
			msg := bytes.TrimSpace(body)
			if len(msg) > 0 && msg[0] == '[' {
				writeError(w, nil, batchMessage)
				return
			}
			if id, bad := unusableID(msg); bad {
				writeError(w, id, invalidIDMessage)
				return
			}
		}
		if int64(len(body)) <= max {
			r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, body))
		}
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		next.ServeHTTP(w, r)
	})
}

// bodyKey is the context key of a request's body, read whole by readBody.
type bodyKey struct{}

// refuseRepeated answers 400 with an invalid-request error a message that
// names a member twice in one object (repeatedMember), as the stdio
// transport does. It runs inside a --max-concurrent slot: checking a body
// of 4 MiB of short members costs about as much as decoding it (a second
// of CPU and 100 MB of allocations), which only the slots bound.
func refuseRepeated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body, ok := r.Context().Value(bodyKey{}).([]byte); ok {
			if id, m, bad := repeatedMember(bytes.TrimSpace(body)); bad {
				writeError(w, id, m)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

type readCloser struct {
	io.Reader
	io.Closer
}

// batchMessage refuses a JSON-RPC batch, over HTTP as over stdio, whatever
// protocol version the request names: a batch is one POST, so its calls
// would pass a token's --rate and --burst as one request, and its ids
// would escape unusableID.
const batchMessage = "Invalid Request: JSON-RPC batches are not supported: send one request per POST"

// writeError answers 400 with an invalid-request error of id.
func writeError(w http.ResponseWriter, id any, message string) {
	data, err := errorReply(id, jsonrpc.CodeInvalidRequest, message)
	if err != nil {
		http.Error(w, message, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(data)
}

// limitConcurrency lets at most n requests execute at once; the others wait
// up to wait for a slot, then get 503 with Retry-After.
func limitConcurrency(next http.Handler, n int, wait time.Duration) http.Handler {
	slots := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
		default:
			t := time.NewTimer(wait)
			select {
			case slots <- struct{}{}:
				t.Stop()
			case <-t.C:
				w.Header().Set("Retry-After", "1")
				http.Error(w, "server busy: too many requests at once (see mcp --max-concurrent)", http.StatusServiceUnavailable)
				return
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		defer func() { <-slots }()
		next.ServeHTTP(w, r)
	})
}

// bodyBudget is twice what slots bodies of at most max bytes hold (each
// takes max+1 until it is read), saturated at the largest int64: a huge
// --max-body overflowed the product, to a negative budget (every request
// 503) or a tiny one.
func bodyBudget(slots int, max int64) int64 {
	per := max + 1
	if per > math.MaxInt64/2/int64(slots) {
		return math.MaxInt64
	}
	return 2 * int64(slots) * per
}

// byteBudget is a count of bytes that requests take and give back.
type byteBudget struct {
	mu   sync.Mutex
	left int64
}

// take takes n bytes if that many are left.
func (b *byteBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.left {
		return false
	}
	b.left -= n
	return true
}

func (b *byteBudget) give(n int64) {
	b.mu.Lock()
	b.left += n
	b.mu.Unlock()
}

// statusWriter remembers the status code for the access log.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// accessLog logs method, path, status, caller and duration at info level;
// never a header value.
func (s *Server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.log.Enabled(r.Context(), slog.LevelInfo) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		// The caller is known only inside the auth middleware; record it
		// from there.
		var who atomic.Value
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), callerSlot{}, &who)))
		name, _ := who.Load().(string)
		s.log.Info("http", "method", r.Method, "path", r.URL.Path, "status", sw.code, "caller", name, "ms", time.Since(start).Milliseconds())
	})
}

type callerSlot struct{}

// ServeHTTP serves the MCP streamable HTTP transport on ln until ctx ends,
// then stops accepting, lets the requests in flight finish (their writes
// commit) for at most ShutdownTimeout and returns nil.
func ServeHTTP(ctx context.Context, opts Options, ho HTTPOptions, ln net.Listener) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	return s.ServeHTTP(ctx, ho, ln)
}

// ServeHTTP is the package function ServeHTTP on an existing server.
func (s *Server) ServeHTTP(ctx context.Context, ho HTTPOptions, ln net.Listener) error {
	ho.defaults()
	h, err := s.HTTPHandler(ho)
	if err != nil {
		return err
	}
	// Calls join the trace of their traceparent header, exported by ctx's
	// tracer provider when OTEL_* configures one.
	h = telemetry.Middleware(ctx)(h)
	conns := &connCap{max: ho.MaxConns, held: map[net.Conn]connState{}}
	ln = conns.listener(ln)
	srv := &http.Server{
		Handler:           h,
		ConnState:         conns.track,
		ConnContext:       conns.connContext,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		// Request contexts do not derive from ctx: the end of ctx stops
		// the listener, not the calls in flight.
		BaseContext: func(net.Listener) context.Context { return context.Background() },
	}
	errc := make(chan error, 1)
	go func() {
		if ho.TLSCert != "" && ho.TLSKey != "" {
			errc <- srv.ServeTLS(ln, ho.TLSCert, ho.TLSKey)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if ho.Stopping != nil {
		ho.Stopping()
	}
	sctx, cancel := context.WithTimeout(context.Background(), ho.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-errc
	if err != nil {
		srv.Close()
		return fmt.Errorf("mcp: requests still running after %s were cut off: %w", ho.ShutdownTimeout, err)
	}
	return nil
}

// connCap holds the connections of a server that have no request in
// progress to a number: each accepted at the bound closes the one of them
// that has waited longest. Without it a client (no token needed) held every
// connection it opened until ReadHeaderTimeout or IdleTimeout closed it,
// each with a goroutine and its buffers, and opened them faster than they
// were closed. Busy connections are left out: counting them would let a
// token's requests, stalled on purpose, fill the bound and have every new
// connection refused.
//
// A connection that has carried a request with a valid token (trust) is
// closed only when no other can be: an idle keep-alive connection of a
// client is the oldest idle one as soon as enough raw connections arrive
// after it, and a client that has begun its next request on it (its
// headers not yet whole, so still idle here) would lose that request (a
// POST is not retried). Before the re-read of session 28 anyone could
// close every client's kept-alive connections that way, no token needed.
//
// When every waiting connection is a client's, the one waiting longest is
// closed for the newcomer, although the newcomer has carried no token yet:
// closing the newcomer instead would refuse every new client (its first
// connection carries no token until its first request is read) for as
// long as the clients' idle connections fill the bound, up to IdleTimeout
// (2 minutes), and a busy connection without a token (its request being
// answered 401) is on its way out, not one to close. What a tokenless
// client gains is bounded: its connection is then the one that goes at
// the next arrival, so it closes one client connection each time the
// clients' idle connections fill the bound, and none while a tokenless
// connection waits (TestConnCapRealConnections).
//
// The choice takes constant time whatever the bound (--max-idle-conns
// allows 1,000,000): the waiting connections are kept in two lists, those
// that never carried a valid token and clients', each in the order they
// began to wait, and the one to close is the front of the first that is
// not empty. Before the re-read of session 29 every held connection was
// scanned under the lock at each accept (0.6 to 1.7 ms at 20,000, 67 to
// 94 ms at 1,000,000).
type connCap struct {
	max  int
	mu   sync.Mutex
	held map[net.Conn]connState
	// waiting lists the connections of held without a request in
	// progress, [0] those not trusted and [1] clients', each longest
	// waiting first; at is each one's element.
	waiting [2]list.List
	at      map[net.Conn]*list.Element
}

type connState struct {
	busy    bool      // a request is in progress (its headers were read)
	trusted bool      // a request with a valid token came on it
	since   time.Time // when it entered this state
}

// connRef is a request's connection and its cap, in the request's context
// (ConnContext), for trustConn.
type connRef struct {
	cap  *connCap
	conn net.Conn
}

type connKey struct{}

// connContext is the server's ConnContext hook: the request contexts of
// conn carry it (trustConn).
func (c *connCap) connContext(ctx context.Context, conn net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, connRef{c, conn})
}

// track is the server's ConnState hook: it sees each connection as the
// server does (a TLS connection as *tls.Conn).
func (c *connCap) track(conn net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st {
	case http.StateNew:
		c.set(conn, connState{since: time.Now()})
	case http.StateIdle, http.StateActive:
		c.set(conn, connState{busy: st == http.StateActive, trusted: c.held[conn].trusted, since: time.Now()})
	default: // closed, hijacked
		c.unlist(conn)
		delete(c.held, conn)
	}
}

// set records conn's state, and lists it as waiting when it is not busy:
// at the back of its list, since states are set in the order of their
// since (under c.mu), unless it was waiting already (trust), then in its
// place by since. c.mu is held.
func (c *connCap) set(conn net.Conn, st connState) {
	c.unlist(conn)
	c.held[conn] = st
	if st.busy {
		return
	}
	if c.at == nil {
		c.at = map[net.Conn]*list.Element{}
	}
	l := &c.waiting[trustIndex(st.trusted)]
	e := l.Back()
	for e != nil && c.held[e.Value.(net.Conn)].since.After(st.since) {
		e = e.Prev()
	}
	if e == nil {
		c.at[conn] = l.PushFront(conn)
	} else {
		c.at[conn] = l.InsertAfter(conn, e)
	}
}

// unlist takes conn out of its waiting list, if it is in one. c.mu is held.
func (c *connCap) unlist(conn net.Conn) {
	if e, ok := c.at[conn]; ok {
		c.waiting[trustIndex(c.held[conn].trusted)].Remove(e)
		delete(c.at, conn)
	}
}

func trustIndex(trusted bool) int {
	if trusted {
		return 1
	}
	return 0
}

// trust marks conn as a client's: a request with a valid token came on it.
func (c *connCap) trust(conn net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.held[conn]; ok && !st.trusted {
		st.trusted = true
		c.set(conn, st)
	}
}

// trustConn marks the request's connection as a client's (connCap.trust);
// it runs once the token is verified.
func trustConn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ref, ok := r.Context().Value(connKey{}).(connRef); ok {
			ref.cap.trust(ref.conn)
		}
		next.ServeHTTP(w, r)
	})
}

// makeRoom makes room for one more connection without a request in
// progress: at the bound it closes the one that has waited longest, of
// those that never carried a valid token if there is one.
func (c *connCap) makeRoom() {
	c.mu.Lock()
	e := c.waiting[0].Front()
	if e == nil {
		e = c.waiting[1].Front()
	}
	if e == nil || c.waiting[0].Len()+c.waiting[1].Len() < c.max {
		c.mu.Unlock()
		return
	}
	oldest := e.Value.(net.Conn)
	c.unlist(oldest)
	delete(c.held, oldest)
	c.mu.Unlock()
	// apart: a TLS connection says goodbye, which may wait on its peer
	go oldest.Close()
}

func (c *connCap) listener(ln net.Listener) net.Listener {
	return &cappedListener{Listener: ln, cap: c}
}

type cappedListener struct {
	net.Listener
	cap *connCap
}

// Accept returns the next connection, once there is room for it; the
// server's ConnState hook counts it before Accept is called again.
func (l *cappedListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.cap.makeRoom()
	return conn, nil
}
