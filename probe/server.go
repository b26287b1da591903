package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HTTP paths of the probe server.
const (
	PathPrefix = "/probe/"
	VerifyPath = "/probe/verify"
)

// Server defaults.
const (
	DefaultMaxClients        = 10000
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 10 * time.Second
	DefaultWriteTimeout      = 10 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultShutdownTimeout   = 5 * time.Second
)

// ServerOptions configure a Server. The zero value is a working server with
// a process-scoped secret and the defaults below.
type ServerOptions struct {
	// Keys mint and check sentinels. nil (the normal case) means fresh keys
	// from crypto/rand that are never written anywhere and die with the
	// process; tests pass their own.
	Keys *Keys
	// Clock defaults to SystemClock; it drives buckets and rate limits.
	Clock Clock
	// Length, Window and LogLimit configure the Adjudicator.
	Length   int
	Window   Window
	LogLimit int
	// ProbeRate and VerifyRate limit GET /probe/{session} and POST
	// /probe/verify per client; zero values mean DefaultRateLimit.
	ProbeRate, VerifyRate RateLimit
	// MaxClients bounds the clients tracked per endpoint (default 10000).
	MaxClients int
	// Audit receives one JSON line per request outcome; nil disables it.
	Audit io.Writer
	// ClientAddr names the client of a request for rate limiting (an IPv6
	// address counted by its /64) and the audit hash. nil means RemoteIP;
	// use TrustForwardedFor behind a proxy.
	ClientAddr func(*http.Request) string
	// Timeouts of Serve's http.Server; zero means the defaults above.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout, ShutdownTimeout time.Duration
	// ErrorLog receives http.Server errors; nil means the log package default.
	ErrorLog *log.Logger
	// AnyHost serves requests whatever host they are addressed to. By
	// default a request that reached a loopback listener addressed to a
	// host that is not localhost or a loopback address (a DNS name rebound
	// to 127.0.0.1, as a web page's can be) is refused with 403; set it
	// when a proxy on this machine forwards requests under a public name
	// (probe serve --public or --trusted-proxy).
	AnyHost bool
}

// Server is the probe HTTP server (PROBE_PROTOCOL.md §9). It implements
// http.Handler; Serve runs it on a listener.
type Server struct {
	opts   ServerOptions
	keys   Keys
	adj    *Adjudicator
	clock  Clock
	probeL *limiter
	verifL *limiter
	client func(*http.Request) string

	auditMu sync.Mutex
}

// NewServer builds a Server. It fails only on invalid options.
func NewServer(opts ServerOptions) (*Server, error) {
	s := &Server{opts: opts, clock: opts.Clock, client: opts.ClientAddr}
	if s.clock == nil {
		s.clock = SystemClock
	}
	if s.client == nil {
		s.client = RemoteIP
	}
	if opts.Keys != nil {
		s.keys = *opts.Keys
	} else {
		k, err := NewRandomKeys()
		if err != nil {
			return nil, err
		}
		s.keys = k
	}
	adj, err := NewAdjudicator(s.keys, Options{Clock: s.clock, Length: opts.Length, Window: opts.Window, LogLimit: opts.LogLimit})
	if err != nil {
		return nil, err
	}
	s.adj = adj
	maxClients := opts.MaxClients
	if maxClients == 0 {
		maxClients = DefaultMaxClients
	}
	if maxClients < 0 {
		return nil, fmt.Errorf("%w: max clients %d is negative", ErrOptions, maxClients)
	}
	pr, vr := opts.ProbeRate.orDefault(), opts.VerifyRate.orDefault()
	for _, r := range []RateLimit{pr, vr} {
		if r.Burst < 1 || r.Every <= 0 {
			return nil, fmt.Errorf("%w: rate limit needs a burst of at least 1 and a positive interval, got %d per %v", ErrOptions, r.Burst, r.Every)
		}
	}
	s.probeL = newLimiter(pr, maxClients, s.clock)
	s.verifL = newLimiter(vr, maxClients, s.clock)
	return s, nil
}

// Adjudicator returns the server's adjudicator (for in-process checks).
func (s *Server) Adjudicator() *Adjudicator { return s.adj }

// RemoteIP is the default client address: the IP of r.RemoteAddr without
// port or zone, IPv4-mapped IPv6 unmapped.
func RemoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().WithZone("").String()
	}
	return host
}

// TrustForwardedFor returns a ClientAddr function for a server behind
// proxies: when the peer is inside one of trusted, the client is the
// right-most X-Forwarded-For address that is not; otherwise, and when the
// header is missing or malformed, it is the peer itself. Never trust the
// header from peers you do not run.
func TrustForwardedFor(trusted ...netip.Prefix) func(*http.Request) string {
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return func(r *http.Request) string {
		peer := RemoteIP(r)
		pa, err := netip.ParseAddr(peer)
		if err != nil || !isTrusted(pa) {
			return peer
		}
		var hops []string
		for _, h := range r.Header.Values("X-Forwarded-For") {
			hops = append(hops, strings.Split(h, ",")...)
		}
		for i := len(hops) - 1; i >= 0; i-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				return peer
			}
			a = a.Unmap().WithZone("")
			if !isTrusted(a) {
				return a.String()
			}
		}
		return peer
	}
}

// setNoStore marks a response uncacheable; every response gets it.
func setNoStore(h http.Header) {
	h.Set("Cache-Control", "no-store, no-cache, max-age=0")
	h.Set("Pragma", "no-cache")
	h.Set("Expires", "0")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setNoStore(w.Header())
	if !s.opts.AnyHost && reboundHost(r) {
		// Before the rate limit, so a web page cannot spend the budget of
		// the loopback client, which every local agent shares; and, like a
		// 404, not audited, so it cannot flood the audit log either.
		s.writeError(w, http.StatusForbidden, "forbidden: this probe server listens on loopback and answers only requests addressed to localhost or a loopback address (a proxy on this machine needs probe serve --public or --trusted-proxy)")
		return
	}
	if !strings.HasPrefix(r.URL.Path, PathPrefix) {
		s.writeError(w, http.StatusNotFound, "not found: the probe server serves GET /probe/{session} and POST /probe/verify")
		return
	}
	addr := s.client(r)
	client := s.keys.ClientHash(addr)
	budget := client // an IPv4 address counts by itself: one HMAC, not two
	if k := rateKey(addr); k != addr {
		budget = s.keys.ClientHash(k)
	}
	if r.URL.Path == VerifyPath {
		if !s.limited(w, s.verifL, budget, client, "POST "+VerifyPath) {
			s.serveVerify(w, r, client)
		}
		return
	}
	if !s.limited(w, s.probeL, budget, client, "GET "+PathPrefix+"{session}") {
		s.serveProbe(w, r, client, r.URL.Path[len(PathPrefix):])
	}
}

// rateKey is what the rate limit counts a client address by
// (PROBE_PROTOCOL.md §9.3): an IPv6 address by its /64, which one client
// owns whole and can rotate addresses in; an IPv4 address (an IPv4-mapped
// one unmapped) by itself; anything else as it is.
func rateKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a, 64).Masked().String()
}

// reboundHost reports whether r reached a loopback listener addressed to a
// host that is not loopback: a DNS name that resolved to 127.0.0.1, which
// is how a web page on another site reaches a server that listens on
// loopback only (DNS rebinding).
func reboundHost(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil {
		return false
	}
	if ta, ok := la.(*net.TCPAddr); !ok || !ta.IP.IsLoopback() {
		return false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return !LoopbackHost(host)
}

// LoopbackHost reports whether host (a name or an IP address, without
// port or brackets) is localhost, in any case, or a loopback IP address:
// the hosts a server on loopback answers (ServerOptions.AnyHost), and
// the listen addresses `readproof mcp --http` takes without --public.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// limited answers 429 and reports true when budget (the hash of the
// client's rateKey) is over l's rate; client is the audit's hash.
func (s *Server) limited(w http.ResponseWriter, l *limiter, budget, client, endpoint string) bool {
	ok, wait := l.allow(budget)
	if ok {
		return false
	}
	secs := int64((wait + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	s.writeError(w, http.StatusTooManyRequests, fmt.Sprintf("rate limit exceeded on %s; retry after %d s", endpoint, secs))
	s.audit(auditLine{Event: "rate_limited", Client: client, Status: http.StatusTooManyRequests})
	return true
}

func (s *Server) serveProbe(w http.ResponseWriter, r *http.Request, client, session string) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		s.writeError(w, http.StatusMethodNotAllowed, "method not allowed: use GET "+PathPrefix+"{session}")
		s.audit(auditLine{Event: "rejected", Client: client, Status: http.StatusMethodNotAllowed})
		return
	}
	if err := ValidateSession(session); err != nil {
		s.writeError(w, http.StatusBadRequest, err.Error())
		s.audit(auditLine{Event: "rejected", Client: client, Status: http.StatusBadRequest})
		return
	}
	sentinel, bucket, err := s.adj.Issue(session)
	if err != nil {
		s.writeError(w, http.StatusInternalServerError, "cannot issue a sentinel: the server clock is wrong")
		s.audit(auditLine{Event: "rejected", Client: client, SessionID: session, Status: http.StatusInternalServerError})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, ProbeDocument(session, bucket, sentinel))
	s.audit(auditLine{Event: "issued", Client: client, SessionID: session, Status: http.StatusOK})
}

// ProbeDocument is the body of GET /probe/{session}: a short text that ends
// with the probe line.
func ProbeDocument(session string, bucket int64, sentinel string) string {
	var b strings.Builder
	b.WriteString("readproof probe document\n\n")
	b.WriteString("session: " + session + "\n")
	b.WriteString("issued in the five minutes from " + BucketStart(bucket).Format(time.RFC3339) + "\n\n")
	b.WriteString("This document checks that its text reached the reader's context. It holds\n")
	b.WriteString("no other information. The value on the last line changes every five minutes\n")
	b.WriteString("and only this server can produce it.\n\n")
	b.WriteString(ProbeLine(sentinel) + "\n")
	return b.String()
}

// verifyResponse is the wire form of a verdict; it never carries a sentinel.
type verifyResponse struct {
	Verdict    Verdict `json:"verdict"`
	SessionID  string  `json:"session_id"`
	Bucket     *int64  `json:"bucket"`
	AgeSeconds *int64  `json:"age_seconds,omitempty"`
	Reason     string  `json:"reason"`
}

func (s *Server) serveVerify(w http.ResponseWriter, r *http.Request, client string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.writeError(w, http.StatusMethodNotAllowed, "method not allowed: use POST "+VerifyPath)
		s.audit(auditLine{Event: "rejected", Client: client, Status: http.StatusMethodNotAllowed})
		return
	}
	tooLarge := func() {
		s.writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("report larger than %d bytes; send only {\"session_id\", \"sentinel\"}", MaxReportBytes))
		s.audit(auditLine{Event: "rejected", Client: client, Status: http.StatusRequestEntityTooLarge})
	}
	if r.ContentLength > MaxReportBytes {
		tooLarge()
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxReportBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			tooLarge()
			return
		}
		s.writeError(w, http.StatusBadRequest, "cannot read the report body")
		s.audit(auditLine{Event: "rejected", Client: client, Status: http.StatusBadRequest})
		return
	}
	rep, err := ParseReport(body)
	if err != nil {
		s.writeError(w, http.StatusBadRequest, err.Error())
		s.audit(auditLine{Event: "rejected", Client: client, Status: http.StatusBadRequest})
		return
	}
	res := s.adj.Adjudicate(rep.SessionID, rep.Sentinel)
	out := verifyResponse{Verdict: res.Verdict, SessionID: res.Session, Reason: res.Reason}
	if res.Matched {
		out.Bucket, out.AgeSeconds = &res.Bucket, &res.AgeSeconds
	}
	s.writeJSON(w, http.StatusOK, out)
	s.audit(auditLine{Event: "verified", Client: client, SessionID: res.Session, Verdict: res.Verdict, Status: http.StatusOK})
}

func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func (s *Server) writeError(w http.ResponseWriter, status int, msg string) {
	s.writeJSON(w, status, struct {
		Error string `json:"error"`
	}{msg})
}

// auditLine is one audit record. It holds no raw address and no sentinel:
// Client is ClientHash of the address (PROBE_PROTOCOL.md §8).
type auditLine struct {
	Time      string  `json:"time"`
	Event     string  `json:"event"`
	Client    string  `json:"client"`
	SessionID string  `json:"session_id,omitempty"`
	Verdict   Verdict `json:"verdict,omitempty"`
	Status    int     `json:"status"`
}

func (s *Server) audit(l auditLine) {
	if s.opts.Audit == nil {
		return
	}
	l.Time = s.clock.Now().UTC().Format(time.RFC3339)
	b, err := json.Marshal(l)
	if err != nil {
		return
	}
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	if _, err := s.opts.Audit.Write(append(b, '\n')); err != nil && s.opts.ErrorLog != nil {
		s.opts.ErrorLog.Printf("probe audit log: %v", err)
	}
}

// Serve serves HTTP on ln until ctx is cancelled, then shuts down
// gracefully, waiting up to ShutdownTimeout for requests in flight. It
// returns nil after a clean shutdown and the server's error otherwise. ln is
// closed on return.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	or := func(d, def time.Duration) time.Duration {
		if d > 0 {
			return d
		}
		return def
	}
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: or(s.opts.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       or(s.opts.ReadTimeout, DefaultReadTimeout),
		WriteTimeout:      or(s.opts.WriteTimeout, DefaultWriteTimeout),
		IdleTimeout:       or(s.opts.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          s.opts.ErrorLog,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), or(s.opts.ShutdownTimeout, DefaultShutdownTimeout))
	defer cancel()
	err := hs.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("probe server shutdown: %w", err)
	}
	return nil
}
