package commands

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/buildinfo"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/mcpserver"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve readproof to an agent host over the Model Context Protocol on stdin/stdout",
		Description: "Started by the MCP client (Claude Code, Claude Desktop, Cursor), never by hand: stdout carries only\n" +
			"protocol messages. Declared resources are readproof:// resources, and the readproof_* tools run, mount,\n" +
			"commit, diff, replay, tag and export exactly as the CLI does. readproof.toml and the store are re-read\n" +
			"for every request. With a receipt key (" + keyloc.ReceiptsKeyEnv + " or [receipts] key) every tool call gets a\n" +
			"receipt in --session.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "verbose", Usage: "log requests and errors to stderr"},
			&cli.StringFlag{Name: "session", Usage: "receipt session for this server's tool calls (default: mcp-TIME-RANDOM)", EnvVars: []string{"READPROOF_SESSION"}},
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, 0, ""); err != nil {
				return err
			}
			opts := mcpOptions{Verbose: c.Bool("verbose"), Session: c.String("session")}
			return withEnv(c, func(e *env) error { return runMCP(c.Context, e, opts) })
		},
	}
}

// mcpOptions are the flags of `mcp`.
type mcpOptions struct {
	Verbose bool   // log requests and errors to stderr
	Session string // receipt session ("" for a new one)
}

// runMCP serves the MCP protocol on e.in and e.out until EOF or ctx ends.
func runMCP(ctx context.Context, e *env, o mcpOptions) error {
	// Fail at start, where the client shows stderr, rather than on
	// every request.
	st, err := e.open()
	if err != nil {
		return err
	}
	pol := st.Policy()
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
	opts := mcpserver.Options{Open: e.open, Version: buildinfo.Read().Version, Logger: logger}
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
	fmt.Fprintf(diag, "readproof: mcp: serving store %s with %s\n", e.storePath, e.policyPath)
	err = mcpserver.Serve(ctx, opts, e.in, e.out)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// newMCPSession names a receipt session: mcp-20260921T101500Z-1a2b3c4d.
func newMCPSession() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "mcp-" + time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
