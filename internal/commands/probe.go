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
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

func init() {
	extraCommands = append(extraCommands, probeCommand())
}

// DefaultProbeAddr is where `probe serve` listens without --addr.
const DefaultProbeAddr = "127.0.0.1:8787"

// maxAnswerBytes bounds the answer file of `probe check`.
const maxAnswerBytes = 16 << 20

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
					&cli.StringFlag{Name: "audit-log", Usage: "append the JSON-lines audit log to FILE (default: stderr)"},
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
	stderr := c.App.ErrWriter
	addr, public := c.String("addr"), c.Bool("public")
	if !public {
		if err := requireLoopback(c.Context, addr); err != nil {
			return err
		}
	}
	opts := probe.ServerOptions{Audit: stderr, ErrorLog: log.New(stderr, "readproof: probe server: ", 0)}
	if cidrs := c.StringSlice("trusted-proxy"); len(cidrs) > 0 {
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
	if p := c.String("audit-log"); p != "" {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
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
	ln, err := lc.Listen(c.Context, "tcp", addr)
	if err != nil {
		return hint.With(fmt.Errorf("probe serve: listen on %s: %w", addr, err), "pick another port with --addr, or 127.0.0.1:0 for a free one")
	}
	if ta, ok := ln.Addr().(*net.TCPAddr); ok && !public && !ta.IP.IsLoopback() {
		ln.Close()
		return requireLoopback(c.Context, ta.String())
	}
	fmt.Fprintf(stderr, "readproof: probe server listening on http://%s\n", ln.Addr())
	fmt.Fprintf(stderr, "readproof: GET %s{session} serves a probe, POST %s judges a report; the secret lives in this process only, so stopping it ends every sentinel\n", probe.PathPrefix, probe.VerifyPath)
	err = srv.Serve(c.Context, ln)
	fmt.Fprintln(stderr, "readproof: probe server stopped")
	return err
}

func probeKeyInit(c *cli.Context) error {
	if c.Args().Len() != 0 {
		return usageError("probe key init takes no arguments; give the path with --key PATH")
	}
	e, err := newEnv(c)
	if err != nil {
		return err
	}
	pol, err := e.loadPolicy()
	if err != nil {
		return err
	}
	path, err := probeKeyPath(c.String("key"), pol)
	if err != nil {
		return err
	}
	forbidden := probeForbidden(e.storePath, pol)
	rotate := c.Bool("rotate")
	if rotate {
		err = probe.RotateKeyFile(path, forbidden...)
	} else {
		err = probe.CreateKeyFile(path, forbidden...)
	}
	if err != nil {
		return probeKeyHint(err, path)
	}
	if e.json {
		return printJSON(e.out, map[string]any{"path": path, "rotated": rotate})
	}
	fmt.Fprintln(e.out, path)
	if rotate {
		e.say("readproof: replaced the probe key: every outstanding sentinel now checks as HALLUCINATED, and replay can no longer re-check the delivered hashes of earlier probed runs")
	} else {
		e.say("readproof: created the probe key (mode 0600); keep it outside every repository, and never commit or share it")
	}
	return nil
}

func readAnswer(c *cli.Context, name string) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = c.App.Reader
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, hint.With(fmt.Errorf("read answer %s: %w", name, err), "give the file holding the agent's answer, or - for stdin")
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxAnswerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read answer %s: %w", name, err)
	}
	if len(data) > maxAnswerBytes {
		return nil, hint.With(fmt.Errorf("answer %s is larger than %d MiB", name, maxAnswerBytes>>20), "pass only the agent's answer")
	}
	return data, nil
}

// judgeAnswer builds the verdict record of one check from the manifest and
// the previous record (which says which sentinels were already adjudicated).
func judgeAnswer(keys probe.Keys, s *store.Store, answer []byte, now time.Time, override bool) func(*manifest.Manifest, *store.VerdictRecord) (*store.VerdictRecord, error) {
	answerHash := sha256Hex(answer)
	return func(m *manifest.Manifest, prev *store.VerdictRecord) (*store.VerdictRecord, error) {
		var entries []manifest.Entry
		var issued []probe.Issued
		var adjudicated []bool
		for _, en := range m.Entries {
			if en.Probe == nil {
				continue
			}
			sess, err := probe.EntrySession(m.RunID, en.Position)
			if err != nil {
				return nil, err
			}
			entries = append(entries, en)
			issued = append(issued, probe.Issued{Session: sess, Bucket: en.Probe.Bucket, Length: en.Probe.Length})
			pv := prev.Entry(en.Position)
			adjudicated = append(adjudicated, pv != nil && pv.Adjudicated)
		}
		results, err := keys.CheckAnswer(issued, string(answer), now, probe.AnswerOptions{Adjudicated: adjudicated})
		if err != nil {
			return nil, fmt.Errorf("manifest %s: %w", m.ID, err)
		}
		r := &store.VerdictRecord{Format: store.VerdictsFormat, RunID: m.RunID, ManifestID: m.ID, CheckedAt: now.UTC(), ClockOverride: override, Check: 1}
		if prev != nil {
			r.Check = prev.Check + 1
		}
		for i, en := range entries {
			res := results[i]
			v := store.VerdictEntry{Position: en.Position, URI: en.URI, Session: issued[i].Session, Verdict: string(res.Verdict),
				Reason: res.Reason, Bucket: issued[i].Bucket, AnswerSHA256: answerHash}
			if res.Matched {
				age := res.AgeSeconds
				v.AgeSeconds = &age
			}
			if content, err := s.Content(en.Snapshot); err == nil && sha256Hex(content) == en.ContentHash {
				out, err := keys.Deliver(content, issued[i])
				v.DeliveredHashVerified = err == nil && sha256Hex(out) == en.Probe.DeliveredHash
			}
			if pv := prev.Entry(en.Position); pv != nil && pv.Adjudicated {
				v.Adjudicated, v.AdjudicatedVerdict, v.AdjudicatedAt = true, pv.AdjudicatedVerdict, pv.AdjudicatedAt
			} else if res.Verdict == probe.ReadVerified || res.Verdict == probe.ReadStale {
				at := r.CheckedAt
				v.Adjudicated, v.AdjudicatedVerdict, v.AdjudicatedAt = true, string(res.Verdict), &at
			}
			r.Entries = append(r.Entries, v)
		}
		return r, nil
	}
}

func probeCheck(c *cli.Context) error {
	if err := needArgs(c, 1, 1, "RUN --answer FILE"); err != nil {
		return err
	}
	answerPath := c.String("answer")
	if answerPath == "" {
		return withCode(ExitUsage, hint.With(errors.New("probe check: no answer given"), "usage: readproof probe check RUN --answer FILE (- for stdin)"))
	}
	var at time.Time
	if v := c.String("at"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return usageError("--at %q: %v; give an RFC 3339 time such as 2026-09-15T13:09:37Z", v, err)
		}
		at = t
	}
	return withStore(c, func(e *env, s *store.Store) error {
		m, err := s.Manifest(c.Args().First())
		if err != nil {
			return err
		}
		probed := 0
		for _, en := range m.Entries {
			if en.Probe != nil {
				probed++
			}
		}
		if probed == 0 {
			return hint.With(fmt.Errorf("run %s has no probed entries: nothing to check", m.RunID),
				"mount documents with a probe line: readproof run mount --probe RUN URI...")
		}
		keys, _, err := loadProbeKeys(c.String("key"), s)
		if err != nil {
			return err
		}
		answer, err := readAnswer(c, answerPath)
		if err != nil {
			return err
		}
		now, override := s.Now(), false
		if !at.IsZero() {
			now, override = at, true
		}
		rec, err := s.RecordVerdictsWithKey(m.RunID, keys, judgeAnswer(keys, s, answer, now, override))
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
			if err := printJSON(e.out, verdictsJSON{Commit: rec.ID, VerdictRecord: rec}); err != nil {
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
			len(rec.Entries), plural(len(rec.Entries), "verdict", "verdicts"), rec.RunID, rec.Check, manifest.Short(rec.ID), rec.ManifestID)
		if c.Bool("strict") && notVerified > 0 {
			return withCode(ExitMismatch, hint.With(fmt.Errorf("run %s: %d of %d probed entries are not READ_VERIFIED", rec.RunID, notVerified, len(rec.Entries)),
				"the verdicts are recorded; see them with: readproof manifest "+rec.RunID))
		}
		return nil
	})
}
