package commands

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/buildinfo"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/probe"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve readproof to agent hosts over the Model Context Protocol (stdio, or streamable HTTP with --http)",
		Description: "Without --http it is started by the MCP client (Claude Code, Claude Desktop, Cursor), never by hand:\n" +
			"stdout carries only protocol messages. With --http ADDR it serves many clients at once on one store over\n" +
			"the streamable HTTP transport, each with its own bearer token (readproof mcp token add NAME); it listens on\n" +
			"loopback only unless --public, and --public needs --tls-cert/--tls-key or --insecure-public.\n" +
			"Declared resources are readproof:// resources, and the readproof_* tools run, mount, commit, diff, replay,\n" +
			"tag and export exactly as the CLI does. readproof.toml and the store are re-read for every request. With a\n" +
			"receipt key (" + keyloc.ReceiptsKeyEnv + " or [receipts] key) every tool call gets a receipt in --session.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "verbose", Usage: "log requests and errors to stderr"},
			&cli.StringFlag{Name: "session", Usage: "receipt session for this server's tool calls (default: mcp-TIME-RANDOM)", EnvVars: []string{"READPROOF_SESSION"}},
			&cli.StringFlag{Name: "http", Usage: "serve the streamable HTTP transport on `ADDR` (host:port; 127.0.0.1:0 picks a port) instead of stdio"},
			&cli.BoolFlag{Name: "public", Usage: "with --http: allow an address that is not loopback (needs --tls-cert/--tls-key or --insecure-public)"},
			&cli.BoolFlag{Name: "insecure-public", Usage: "with --public: serve plain HTTP off loopback (tokens cross the network in clear text)"},
			&cli.StringFlag{Name: "tls-cert", Usage: "with --http: serve HTTPS with this PEM certificate `FILE`"},
			&cli.StringFlag{Name: "tls-key", Usage: "with --http: the PEM private key `FILE` of --tls-cert"},
			&cli.StringFlag{Name: "tokens", Usage: "the MCP token `FILE` (default: $" + keyloc.MCPTokensEnv + ", then $XDG_CONFIG_HOME/readproof/mcp-tokens.json)"},
			&cli.Int64Flag{Name: "max-body", Value: mcpserver.DefaultMaxBodyBytes, Usage: "with --http: largest request body in `BYTES` (413 beyond)"},
			&cli.IntFlag{Name: "max-concurrent", Value: mcpserver.DefaultMaxConcurrent, Usage: "with --http: requests executing at once (others wait, then 503)"},
			&cli.Float64Flag{Name: "rate", Value: mcpserver.DefaultRate, Usage: "with --http: requests per second per token (429 beyond, with Retry-After)"},
			&cli.IntFlag{Name: "burst", Value: mcpserver.DefaultBurst, Usage: "with --http: requests a token may make at once above --rate"},
			&cli.Float64Flag{Name: "read-receipt-rate", Value: mcpserver.DefaultReadReceiptRate, Usage: "with --http and receipts on: receipted calls per second per token of scope read (a tool error beyond, nothing run); from " + strconv.FormatFloat(minReadReceiptRate, 'g', -1, 64) + " (one each ~17 minutes) to " + strconv.Itoa(maxReadReceiptRate)},
			&cli.IntFlag{Name: "read-receipt-burst", Value: mcpserver.DefaultReadReceiptBurst, Usage: "with --http and receipts on: receipted calls a token of scope read may make at once above --read-receipt-rate; 1 to " + strconv.Itoa(maxReadReceiptBurst)},
			&cli.IntFlag{Name: "max-idle-conns", Value: mcpserver.DefaultMaxConns, Usage: "with --http: connections held open without a request in progress; one more closes the one waiting longest, a client's last; 1 to " + strconv.Itoa(maxIdleConns)},
			&cli.Int64Flag{Name: "max-answer", Usage: "most document `BYTES` one tool answer carries (replay with include_content, evidence export with with_content); more is refused, naming the windows that return every byte; with a limit, the entry lists of manifest, diff and replay come in pages of at most 1,000 entries; 0: no limit",
				DefaultText: strconv.Itoa(mcpserver.DefaultMaxAnswerBytes) + " with --http, no limit on stdio"},
			&cli.DurationFlag{Name: "shutdown-timeout", Value: mcpserver.DefaultShutdownTimeout, Usage: "with --http: on SIGTERM or SIGINT, how long requests in flight may take to finish"},
		},
		Subcommands: []*cli.Command{mcpTokenCommand()},
		Action: func(c *cli.Context) error {
			// mcp takes no argument of its own: one is a subcommand
			// mistyped (`mcp tokn add x`), answered as every unknown
			// command is, with the nearest name
			if first := c.Args().First(); first != "" {
				return unknownCommandError("mcp ", c.Command.Subcommands, first)
			}
			opts := mcpOptions{
				Verbose: c.Bool("verbose"), Session: c.String("session"),
				HTTP: c.String("http"), Public: c.Bool("public"), InsecurePublic: c.Bool("insecure-public"),
				TLSCert: c.String("tls-cert"), TLSKey: c.String("tls-key"), Tokens: c.String("tokens"),
				MaxBody: c.Int64("max-body"), MaxConcurrent: c.Int("max-concurrent"),
				Rate: c.Float64("rate"), Burst: c.Int("burst"), ShutdownTimeout: c.Duration("shutdown-timeout"),
				ReadReceiptRate: c.Float64("read-receipt-rate"), ReadReceiptBurst: c.Int("read-receipt-burst"), MaxIdleConns: c.Int("max-idle-conns"),
				MaxAnswer: c.Int64("max-answer"),
			}
			if !c.IsSet("max-answer") && opts.HTTP != "" {
				// One store, many tokens: an answer of every byte of a
				// large run is bounded over HTTP by default. On stdio
				// the one client is the user who started the server.
				opts.MaxAnswer = mcpserver.DefaultMaxAnswerBytes
			}
			if opts.MaxAnswer < 0 {
				return withCode(ExitUsage, hint.With(fmt.Errorf("mcp --max-answer %d: must not be negative", opts.MaxAnswer), "give a number of bytes, or 0 for no limit"))
			}
			if opts.HTTP != "" {
				if err := checkRanges(opts); err != nil {
					return err
				}
			}
			if opts.HTTP == "" {
				for _, f := range []string{"public", "insecure-public", "tls-cert", "tls-key", "tokens", "max-body", "max-concurrent", "rate", "burst", "shutdown-timeout",
					"read-receipt-rate", "read-receipt-burst", "max-idle-conns"} {
					if c.IsSet(f) {
						return withCode(ExitUsage, hint.With(fmt.Errorf("mcp --%s applies to --http only", f), "add --http 127.0.0.1:PORT, or drop --"+f))
					}
				}
			}
			return withEnv(c, func(e *env) error { return runMCP(c.Context, e, opts) })
		},
	}
}

// mcpOptions are the flags of `mcp`.
type mcpOptions struct {
	Verbose bool   // log requests and errors to stderr
	Session string // receipt session ("" for a new one)

	HTTP            string // listen address; "" serves stdio
	Public          bool
	InsecurePublic  bool
	TLSCert, TLSKey string
	Tokens          string // token file ("" for the default)
	MaxBody         int64
	MaxConcurrent   int
	Rate            float64
	Burst           int
	ShutdownTimeout time.Duration
	MaxAnswer       int64 // Options.MaxAnswerBytes; 0 for no limit
	// Options.ReadReceiptRate and ReadReceiptBurst, HTTPOptions.MaxConns
	ReadReceiptRate  float64
	ReadReceiptBurst int
	MaxIdleConns     int

	// listen is net.Listen unless a test binds elsewhere.
	listen func(network, address string) (net.Listener, error)
}

// runMCP serves the MCP protocol on e.in and e.out until EOF or ctx ends,
// or over HTTP with --http until ctx ends.
func runMCP(ctx context.Context, e *env, o mcpOptions) error {
	if o.HTTP != "" {
		// Refuse a bad address or an unsafe exposure before anything else.
		if err := checkListen(o); err != nil {
			return err
		}
	}
	if o.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey); err != nil {
			return withCode(ExitUsage, hint.With(fmt.Errorf("mcp --tls-cert %s --tls-key %s: %w", o.TLSCert, o.TLSKey, err),
				"give a PEM certificate (with its chain) and the PEM private key that matches it"))
		}
	}
	if err := mcpPolicyBesideStore(e); err != nil {
		return err
	}
	// Fail at start, where the client shows stderr, rather than on
	// every request.
	st, err := e.open()
	if err != nil {
		return err
	}
	pol, err := st.Policy()
	if err != nil {
		st.Close()
		return err
	}
	opened := st
	defer func() {
		if opened != nil {
			opened.Close()
		}
	}()

	diag := io.Discard
	var logger *slog.Logger
	if o.Verbose {
		diag = e.err
		logger = slog.New(slog.NewTextHandler(e.err, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	pc := &policyCache{}
	opts := mcpserver.Options{Open: func() (*store.Store, error) { return pc.open(e) }, Version: buildinfo.Read().Version, Logger: logger, MaxAnswerBytes: o.MaxAnswer,
		StoreDir: e.storePath, PolicyFile: e.policyPath, ReadReceiptRate: o.ReadReceiptRate, ReadReceiptBurst: o.ReadReceiptBurst}
	var verifier *mcpauth.Verifier
	if o.HTTP != "" {
		path, from, err := keyloc.MCPTokensPath(o.Tokens)
		if err != nil {
			return err
		}
		verifier, err = mcpauth.NewVerifier(path, keyloc.Forbidden(e.storePath, pol), nil)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, mcpauth.ErrNotFound) {
				return hint.With(fmt.Errorf("mcp --http: no active token in %s (from %s): %w", path, from, err),
					"every HTTP client needs a token: create one with `readproof mcp token add NAME` (name the file with --tokens or "+keyloc.MCPTokensEnv+")")
			}
			return hint.With(fmt.Errorf("mcp --http: token file %s (from %s): %w", path, from, err), "fix or recreate the token file: `readproof mcp token list` shows what it holds")
		}
	}
	// Receipts are on when a key is configured: READPROOF_RECEIPTS_KEY
	// or [receipts] key (the receipts commands' own lookup, without
	// falling back to the default location).
	if keyloc.ReceiptsConfigured(pol) {
		key, _, err := keyloc.LoadReceipts("", e.storePath, pol)
		if err != nil {
			return err
		}
		session := o.Session
		if session == "" {
			session = newMCPSession()
		}
		if err := identity.ValidateSessionID(session); err != nil {
			return withCode(ExitUsage, hint.With(fmt.Errorf("mcp --session %q: %w", session, err), "session ids are letters, digits, '.', '_' and '-', starting with a letter or digit"))
		}
		if err := preflightReceipt(e, st, session, "mcp: not serving"); err != nil {
			return err
		}
		opts.ReceiptKey, opts.Session = key, session
		fmt.Fprintf(diag, "readproof: mcp: tool receipts on, session %s, key %s\n", session, key.ID())
	}
	opened.Close()
	opened = nil
	if o.HTTP == "" {
		fmt.Fprintf(diag, "readproof: mcp: serving store %s with %s\n", e.storePath, e.policyPath)
		// A host that goes away while calls run leaves stdout a broken
		// pipe. Caught, SIGPIPE no longer ends the process at the first
		// answer written into it, in the middle of the other calls'
		// fetches, writes and receipts: the write fails, and the calls
		// in flight end as cancelled calls do, and the session is over
		// (exit 0: the server answers its own output's errors, rawOut).
		pipe := make(chan os.Signal, 1)
		signal.Notify(pipe, syscall.SIGPIPE)
		defer signal.Stop(pipe)
		err = mcpserver.Serve(ctx, opts, e.in, rawOut(e.out))
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}

	listen := o.listen
	if listen == nil {
		listen = net.Listen
	}
	ln, err := listen("tcp", o.HTTP)
	if err != nil {
		return hint.With(fmt.Errorf("mcp --http %s: %w", o.HTTP, err), "pick another port, or 127.0.0.1:0 for any free one")
	}
	if !o.Public {
		// The name passed checkListen; what it resolved to is checked
		// here, where a hosts file or resolver that maps localhost off
		// loopback would otherwise expose the server.
		if err := boundLoopback(o.HTTP, ln.Addr()); err != nil {
			ln.Close()
			return err
		}
	}
	scheme := "http"
	if o.TLSCert != "" {
		scheme = "https"
	}
	// The address goes to stderr whatever --verbose says: with port 0 it
	// is the only way to learn it.
	fmt.Fprintf(e.err, "readproof: mcp: serving store %s with %s on %s://%s/\n", e.storePath, e.policyPath, scheme, ln.Addr())
	ho := mcpserver.HTTPOptions{
		Verify:       tokenProblems(verifier.Verify, e.err),
		MaxBodyBytes: o.MaxBody, MaxConcurrent: o.MaxConcurrent,
		Rate: o.Rate, Burst: o.Burst, ShutdownTimeout: o.ShutdownTimeout, MaxConns: o.MaxIdleConns,
		TLSCert: o.TLSCert, TLSKey: o.TLSKey, AnyHost: o.Public,
	}
	served := make(chan struct{})
	ho.Stopping = func() { stopping(e.err, o.ShutdownTimeout, served) }
	err = mcpserver.ServeHTTP(ctx, opts, ho, ln)
	close(served)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.err, "readproof: mcp: stopped; requests in flight finished\n")
	return nil
}

// stopping tells the operator, at the first SIGINT or SIGTERM, that the
// server waits for the requests in flight, and answers each further signal
// until served is closed: without it the wait (up to --shutdown-timeout) went
// without a word, and a second Ctrl-C was swallowed as if the server hung.
// The requests are not cut short: a write in flight finishes.
func stopping(stderr io.Writer, timeout time.Duration, served <-chan struct{}) {
	// Listening before saying so: a signal sent on reading the line is
	// answered.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	until := time.Now().Add(timeout).UTC().Format(time.TimeOnly)
	fmt.Fprintf(stderr, "readproof: mcp: stopping: no new requests; waiting up to %s for the requests in flight to finish\n", timeout)
	go func() {
		defer signal.Stop(sig)
		for {
			select {
			case <-sig:
				fmt.Fprintf(stderr, "readproof: mcp: still waiting for the requests in flight (until %s UTC at most), so no write is cut off\n"+
					"readproof: hint: to end it now, kill it (SIGKILL), then run `readproof verify` on the store\n", until)
			case <-served:
				return
			}
		}
	}()
}

// tokenProblems wraps verify so that a token file which becomes unusable
// while the server runs (opened to others, broken by an edit, removed) is
// told to the operator on stderr, with --verbose or without: every request
// is refused meanwhile, and the client's answer names only stderr. Each
// problem is printed once, until a token is checked again.
func tokenProblems(verify func(string) (mcpauth.Caller, error), stderr io.Writer) func(string) (mcpauth.Caller, error) {
	var mu sync.Mutex
	last := ""
	return func(token string) (mcpauth.Caller, error) {
		c, err := verify(token)
		switch {
		case err == nil:
			mu.Lock()
			last = ""
			mu.Unlock()
		case !errors.Is(err, mcpauth.ErrMalformed) && !errors.Is(err, mcpauth.ErrUnknown) && !errors.Is(err, mcpauth.ErrExpired) && !errors.Is(err, mcpauth.ErrRevoked):
			msg := text.Printable(err.Error())
			mu.Lock()
			if msg != last {
				last = msg
				fmt.Fprintf(stderr, "readproof: mcp: refusing every request: %s\nreadproof: hint: fix the token file; requests are served again as soon as it is usable\n", msg)
			}
			mu.Unlock()
		}
		return c, err
	}
}

// checkListen applies the exposure rules of --http: a host:port address;
// loopback unless --public; --public only with TLS or --insecure-public;
// --tls-cert and --tls-key together.
func checkListen(o mcpOptions) error {
	host, port, err := net.SplitHostPort(o.HTTP)
	if err != nil {
		return withCode(ExitUsage, hint.With(fmt.Errorf("mcp --http %q: %w", o.HTTP, err), "give HOST:PORT, such as 127.0.0.1:8765"))
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return withCode(ExitUsage, hint.With(fmt.Errorf("mcp --http %q: port %q is not a number from 0 to 65535", o.HTTP, port), "give HOST:PORT, such as 127.0.0.1:8765"))
	}
	for _, f := range []struct {
		name string
		bad  bool
	}{
		{"max-body", o.MaxBody <= 0}, {"max-concurrent", o.MaxConcurrent <= 0}, {"rate", !(o.Rate > 0)},
		{"burst", o.Burst <= 0}, {"shutdown-timeout", o.ShutdownTimeout <= 0},
	} {
		if f.bad {
			return withCode(ExitUsage, hint.With(fmt.Errorf("mcp --%s: must be positive", f.name), "leave it out for the default (see readproof mcp --help)"))
		}
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return withCode(ExitUsage, hint.With(errors.New("mcp: --tls-cert and --tls-key go together"), "give both files, or neither"))
	}
	if o.InsecurePublic && !o.Public {
		return withCode(ExitUsage, hint.With(errors.New("mcp: --insecure-public without --public"), "add --public to listen off loopback, or drop --insecure-public"))
	}
	if probe.LoopbackHost(host) {
		return nil
	}
	if !o.Public {
		what := "host " + host
		if host == "" {
			what = "every interface"
		}
		return withCode(ExitUsage, hint.With(fmt.Errorf("mcp --http %s: %s is not loopback: refused without --public", o.HTTP, what),
			"serve on 127.0.0.1 and let clients on this machine connect, or expose it with --public and --tls-cert/--tls-key"))
	}
	if o.TLSCert == "" && !o.InsecurePublic {
		return withCode(ExitUsage, hint.With(fmt.Errorf("mcp --http %s --public: refused without TLS: bearer tokens would cross the network in clear text", o.HTTP),
			"give --tls-cert FILE --tls-key FILE, or accept clear text behind your own TLS proxy with --insecure-public"))
	}
	return nil
}

// The ranges of the flags of `mcp --http` that bound what a token, or
// anyone, may hold of the server.
const (
	// the least rate is one receipted call each 1,000 s (~17 minutes): a
	// rate as small as 1e-300 was accepted and told a read token to call
	// again in 9223372037 s
	minReadReceiptRate  = 0.001
	maxReadReceiptRate  = 1000
	maxReadReceiptBurst = 100000
	maxIdleConns        = 1000000
)

// checkRanges refuses a value of --read-receipt-rate, --read-receipt-burst
// or --max-idle-conns outside its range, naming the flag and the range
// (the command's values: each flag has a default; mcpOptions of 0 are the
// server's defaults).
func checkRanges(o mcpOptions) error {
	var bad, want string
	switch {
	case !(o.ReadReceiptRate >= minReadReceiptRate && o.ReadReceiptRate <= maxReadReceiptRate):
		bad, want = fmt.Sprintf("read-receipt-rate %g", o.ReadReceiptRate), fmt.Sprintf("from %g to %d (receipted calls a second per read token; %g is one each ~17 minutes)", minReadReceiptRate, maxReadReceiptRate, minReadReceiptRate)
	case o.ReadReceiptBurst < 1 || o.ReadReceiptBurst > maxReadReceiptBurst:
		bad, want = fmt.Sprintf("read-receipt-burst %d", o.ReadReceiptBurst), fmt.Sprintf("from 1 to %d (receipted calls at once per read token)", maxReadReceiptBurst)
	case o.MaxIdleConns < 1 || o.MaxIdleConns > maxIdleConns:
		bad, want = fmt.Sprintf("max-idle-conns %d", o.MaxIdleConns), fmt.Sprintf("from 1 to %d (connections without a request in progress)", maxIdleConns)
	default:
		return nil
	}
	return withCode(ExitUsage, hint.With(fmt.Errorf("mcp --%s: out of range: must be %s", bad, want), "leave it out for the default (see readproof mcp --help)"))
}

// boundLoopback refuses a listener of `mcp --http ADDR` bound to an
// address that is not loopback.
func boundLoopback(addr string, bound net.Addr) error {
	if ta, ok := bound.(*net.TCPAddr); ok && ta.IP.IsLoopback() {
		return nil
	}
	return withCode(ExitUsage, hint.With(fmt.Errorf("mcp --http %s: bound to %s, which is not loopback: refused without --public", addr, bound),
		"give a loopback IP address, such as 127.0.0.1:PORT or [::1]:PORT, or expose it on purpose with --public and --tls-cert/--tls-key"))
}

// mcpPolicyBesideStore makes `mcp --store DIR` use the policy file of that
// store's project when it was started from elsewhere: readproof.toml beside
// DIR when it exists and --config did not name one; else the file found from
// the working directory. When neither exists the server would serve an
// empty list without a word, so it refuses, naming where it looked.
func mcpPolicyBesideStore(e *env) error {
	if e.policyNamed {
		return nil
	}
	beside := filepath.Join(filepath.Dir(e.storePath), PolicyName)
	if e.storeNamed && beside != e.policyPath {
		if _, err := os.Stat(beside); err == nil {
			e.policyPath = beside
			return nil
		}
	}
	if _, err := os.Stat(e.policyPath); err == nil {
		return nil
	}
	looked := e.policyPath
	if e.storeNamed && beside != e.policyPath {
		looked = beside + " (beside the store) and " + e.policyPath + " (from the working directory)"
	}
	return withCode(ExitUsage, hint.With(fmt.Errorf("mcp: no %s: looked at %s; the server would list no resources", PolicyName, looked),
		"start it from the project directory, or name the policy with --config PATH (READPROOF_CONFIG) or the store beside it with --store"))
}

// policyCache keeps the parsed readproof.toml between requests and parses
// it again when the file's size, modification time or identity changed, so
// the server still reads the policy live (an edit applies to the next
// request) without parsing it for every request. A *policy.File is never
// changed after it is parsed, so requests share it.
type policyCache struct {
	mu  sync.Mutex
	fi  os.FileInfo
	pol *policy.File
}

// open opens the store under the policy as it is now.
func (c *policyCache) open(e *env) (*store.Store, error) {
	fi, err := os.Stat(e.policyPath)
	if err != nil {
		return e.open() // missing or unreadable: the usual errors
	}
	c.mu.Lock()
	pol := c.pol
	if pol == nil || !fi.ModTime().Equal(c.fi.ModTime()) || fi.Size() != c.fi.Size() || !os.SameFile(fi, c.fi) {
		pol = nil
	}
	c.mu.Unlock()
	if pol == nil {
		if pol, err = e.loadPolicy(); err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.fi, c.pol = fi, pol
		c.mu.Unlock()
	}
	return e.openWith(pol)
}

// newMCPSession names a receipt session: mcp-20260921T101500Z-1a2b3c4d.
func newMCPSession() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "mcp-" + time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
