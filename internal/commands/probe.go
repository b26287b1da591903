package commands

// `readproof probe serve|key init|check` (docs/PROBE_PROTOCOL.md).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"os"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/proofread"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// DefaultProbeAddr is where `probe serve` listens without --addr.
const DefaultProbeAddr = "127.0.0.1:8787"

func probeCommand() *cli.Command {
	return &cli.Command{
		Name:  "probe",
		Usage: "proof of read: serve probes, manage the offline key, check an agent's answer against a run",
		Subcommands: []*cli.Command{
			{
				Name:  "serve",
				Usage: "run the probe HTTP server (GET /probe/SESSION, POST /probe/verify) with a secret that dies with the process",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "addr", Value: DefaultProbeAddr, Usage: "HOST:PORT to listen on; port 0 picks a free port"},
					&cli.BoolFlag{Name: "public", Usage: "allow a non-loopback address (the endpoints are oracles; put a TLS proxy in front)"},
					&cli.StringFlag{Name: "audit-log", Usage: "append the JSON-lines audit log to FILE, rotated at 10 MiB into FILE.1 to FILE.5 (default: stderr)"},
					&cli.StringSliceFlag{Name: "trusted-proxy", Usage: "CIDR of a reverse proxy whose X-Forwarded-For is believed (repeatable)"},
				},
				Action: probeServe,
			},
			{
				Name:  "key",
				Usage: "manage the offline probe key used by `run mount --probe` and `probe check`",
				Subcommands: []*cli.Command{
					{
						Name:  "init",
						Usage: "create the probe key file (mode 0600, outside every repository); prints its path",
						Flags: []cli.Flag{
							&cli.StringFlag{Name: "key", Usage: "key file path (default: [probe] key in readproof.toml, else $XDG_CONFIG_HOME/readproof/probe.key)"},
							&cli.BoolFlag{Name: "rotate", Usage: "replace an existing key; every outstanding sentinel ends"},
						},
						Action: probeKeyInit,
					},
				},
			},
			{
				Name:      "check",
				Usage:     "judge an agent's answer against a run's probed entries and record one verdict per entry (the manifest is not changed)",
				ArgsUsage: "RUN --answer FILE",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "answer", Usage: "the agent's answer (- for stdin)"},
					&cli.StringFlag{Name: "at", Usage: "adjudicate as of this RFC 3339 time instead of now (recorded as a clock override)"},
					&cli.StringFlag{Name: "key", Usage: "key file path (default: [probe] key in readproof.toml, else $XDG_CONFIG_HOME/readproof/probe.key)"},
					&cli.BoolFlag{Name: "strict", Usage: "exit 3 when any verdict is not READ_VERIFIED"},
				},
				Action: probeCheck,
			},
		},
	}
}

// requireLoopback refuses an address that is reachable from other machines.
func requireLoopback(ctx context.Context, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return withCode(ExitUsage, hint.With(fmt.Errorf("--addr %q: %w", addr, err), "give HOST:PORT, for example 127.0.0.1:8787"))
	}
	refuse := func(why string) error {
		return withCode(ExitUsage, hint.With(
			fmt.Errorf("--addr %s %s: both probe endpoints are oracles (one mints sentinels, one answers guesses), so the server listens on loopback unless told otherwise", addr, why),
			"use 127.0.0.1:PORT, or pass --public to expose it on purpose (behind a TLS proxy named with --trusted-proxy)"))
	}
	if host == "" {
		return refuse("listens on every interface")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if !ip.IsLoopback() {
			return refuse("is not a loopback address")
		}
		return nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return hint.With(fmt.Errorf("--addr %s: resolve %s: %w", addr, host, err), "give an IP address, for example 127.0.0.1:8787")
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return refuse("resolves to the non-loopback address " + ip.String())
		}
	}
	return nil
}

func probeServe(c *cli.Context) error {
	if c.Args().Len() != 0 {
		return usageError("probe serve takes no arguments; give the address with --addr HOST:PORT")
	}
	opts := probeServeOptions{Addr: c.String("addr"), Public: c.Bool("public"), AuditLog: c.String("audit-log"), TrustedProxy: c.StringSlice("trusted-proxy")}
	return runProbeServe(c.Context, c.App.ErrWriter, opts)
}

// probeServeOptions are the flags of `readproof probe serve`.
type probeServeOptions struct {
	Addr         string   // HOST:PORT to listen on
	Public       bool     // allow a non-loopback address
	AuditLog     string   // append the audit log to this file ("" for stderr)
	TrustedProxy []string // CIDRs of proxies whose X-Forwarded-For is believed
}

// runProbeServe is `readproof probe serve`. It needs no store or policy,
// only where to talk.
func runProbeServe(ctx context.Context, stderr io.Writer, o probeServeOptions) error {
	addr, public := o.Addr, o.Public
	if !public {
		if err := requireLoopback(ctx, addr); err != nil {
			return err
		}
	}
	// On loopback a request addressed to another host is refused (DNS
	// rebinding); --public or --trusted-proxy serves every host, as behind
	// a proxy on this machine that forwards under a public name.
	opts := probe.ServerOptions{Audit: stderr, ErrorLog: log.New(stderr, "readproof: probe server: ", 0), AnyHost: public || len(o.TrustedProxy) > 0}
	if cidrs := o.TrustedProxy; len(cidrs) > 0 {
		var trusted []netip.Prefix
		for _, s := range cidrs {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return usageError("--trusted-proxy %q: %v; give a CIDR such as 127.0.0.1/32", s, err)
			}
			trusted = append(trusted, p)
		}
		opts.ClientAddr = probe.TrustForwardedFor(trusted...)
	}
	if p := o.AuditLog; p != "" {
		// rotated at 10 MiB, 5 old files kept (PROBE_PROTOCOL.md §10)
		f, err := probe.OpenAuditLog(p, probe.AuditLogOptions{})
		if err != nil {
			return hint.With(fmt.Errorf("open audit log %s: %w", p, err), "name a writable file with --audit-log, or leave it out to log to stderr")
		}
		defer f.Close()
		opts.Audit = f
	}
	srv, err := probe.NewServer(opts)
	if err != nil {
		return err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return hint.With(fmt.Errorf("probe serve: listen on %s: %w", addr, err), "pick another port with --addr, or 127.0.0.1:0 for a free one")
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); ok && !public && !ta.IP.IsLoopback() {
		ln.Close()
		return requireLoopback(ctx, ta.String())
	}
	fmt.Fprintf(stderr, "readproof: probe server listening on http://%s\n", ln.Addr())
	fmt.Fprintf(stderr, "readproof: GET %s{session} serves a probe, POST %s judges a report; the secret lives in this process only, so stopping it ends every sentinel\n", probe.PathPrefix, probe.VerifyPath)
	err = srv.Serve(ctx, ln)
	fmt.Fprintln(stderr, "readproof: probe server stopped")
	return err
}

func probeKeyInit(c *cli.Context) error {
	if c.Args().Len() != 0 {
		return usageError("probe key init takes no arguments; give the path with --key PATH")
	}
	opts := probeKeyInitOptions{Key: c.String("key"), Rotate: c.Bool("rotate")}
	return withEnv(c, func(e *env) error { return runProbeKeyInit(c.Context, e, opts) })
}

// probeKeyInitOptions are the flags of `probe key init`.
type probeKeyInitOptions struct {
	Key    string // the key file ("" for the configured one)
	Rotate bool   // replace an existing key
}

func runProbeKeyInit(_ context.Context, e *env, opts probeKeyInitOptions) error {
	pol, err := e.loadPolicy()
	if err != nil {
		return err
	}
	path, err := proofread.KeyPath(opts.Key, pol)
	if err != nil {
		return err
	}
	if err := proofread.InitKey(path, opts.Rotate, e.storePath, pol); err != nil {
		return err
	}
	if e.json {
		return printJSON(e.out, map[string]any{"path": path, "rotated": opts.Rotate})
	}
	fmt.Fprintln(e.out, path)
	if opts.Rotate {
		e.say("readproof: replaced the probe key: every outstanding sentinel now checks as HALLUCINATED, and replay can no longer re-check the delivered hashes of earlier probed runs")
	} else {
		e.say("readproof: created the probe key (mode 0600); keep it outside every repository, and never commit or share it")
	}
	return nil
}

func readAnswer(stdin io.Reader, name string) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, hint.With(fmt.Errorf("read answer %s: %w", name, err), "give the file holding the agent's answer, or - for stdin")
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, proofread.MaxAnswerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read answer %s: %w", name, err)
	}
	if len(data) > proofread.MaxAnswerBytes {
		return nil, hint.With(fmt.Errorf("answer %s is larger than %d MiB", name, proofread.MaxAnswerBytes>>20), "pass only the agent's answer")
	}
	return data, nil
}

func probeCheck(c *cli.Context) error {
	if err := needArgs(c, 1, 1, "RUN --answer FILE"); err != nil {
		return err
	}
	opts := probeCheckOptions{Answer: c.String("answer"), At: c.String("at"), Key: c.String("key"), Strict: c.Bool("strict")}
	return withEnv(c, func(e *env) error { return runProbeCheck(c.Context, e, opts, c.Args().Slice()) })
}

// probeCheckOptions are the flags of `probe check`.
type probeCheckOptions struct {
	Answer string // the answer file, - for stdin
	At     string // adjudicate as of this RFC 3339 time
	Key    string // the probe key file ("" for the configured one)
	Strict bool   // exit 3 when a verdict is not READ_VERIFIED
}

func runProbeCheck(ctx context.Context, e *env, opts probeCheckOptions, args []string) error {
	if opts.Answer == "" {
		return withCode(ExitUsage, hint.With(errors.New("probe check: no answer given"), "usage: readproof probe check RUN --answer FILE (- for stdin)"))
	}
	var at time.Time
	if v := opts.At; v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return usageError("--at %q: %v; give an RFC 3339 time such as 2026-09-15T13:09:37Z", v, err)
		}
		at = t
	}
	return e.withStore(func(s *store.Store) error {
		m, err := proofread.Manifest(s, args[0])
		if errors.Is(err, proofread.ErrNotProbed) {
			return hint.With(err, "mount documents with a probe line: readproof run mount --probe RUN URI...")
		}
		if err != nil {
			return err
		}
		keys, _, err := proofread.LoadKeys(opts.Key, s)
		if err != nil {
			return err
		}
		answer, err := readAnswer(e.in, opts.Answer)
		if err != nil {
			return err
		}
		rec, err := proofread.Check(ctx, s, m, answer, proofread.CheckOptions{Keys: keys, At: at})
		if err != nil {
			return err
		}
		notVerified := 0
		for _, v := range rec.Entries {
			if v.Verdict != string(probe.ReadVerified) {
				notVerified++
			}
			if !v.DeliveredHashVerified {
				e.say("readproof: warning: [%d] %s: this key does not reproduce the delivered bytes, so it is not the key the entry was mounted with (rotated?); its sentinel cannot be recognised", v.Position, v.URI)
			}
		}
		if e.json {
			if err := printJSON(e.out, proofread.Report{Commit: rec.ID, VerdictRecord: rec}); err != nil {
				return err
			}
		} else {
			tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "POS\tURI\tVERDICT\tREASON")
			for _, v := range rec.Entries {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", v.Position, v.URI, v.Verdict, v.Reason)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		e.say("readproof: recorded %d %s for run %s (check %d, verdict commit %s); manifest %s unchanged",
			len(rec.Entries), text.Plural(len(rec.Entries), "verdict", "verdicts"), rec.RunID, rec.Check, manifest.Short(rec.ID), rec.ManifestID)
		if opts.Strict && notVerified > 0 {
			return withCode(ExitMismatch, hint.With(fmt.Errorf("run %s: %d of %d probed entries are not READ_VERIFIED", rec.RunID, notVerified, len(rec.Entries)),
				"the verdicts are recorded; see them with: readproof manifest "+rec.RunID))
		}
		return nil
	})
}
