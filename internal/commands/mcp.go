package commands

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
)

func init() {
	extraCommands = append(extraCommands, mcpCommand())
}

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve readproof to an agent host over the Model Context Protocol on stdin/stdout",
		Description: "Started by the MCP client (Claude Code, Claude Desktop, Cursor), never by hand: stdout carries only\n" +
			"protocol messages. Declared resources are readproof:// resources, and the readproof_* tools run, mount,\n" +
			"commit, diff, replay, tag and export exactly as the CLI does. readproof.toml and the store are re-read\n" +
			"for every request. With a receipt key (" + receiptKeyEnv + " or [receipts] key) every tool call gets a\n" +
			"receipt in --session.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "verbose", Usage: "log requests and errors to stderr"},
			&cli.StringFlag{Name: "session", Usage: "receipt session for this server's tool calls (default: mcp-TIME-RANDOM)", EnvVars: []string{"READPROOF_SESSION"}},
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, 0, ""); err != nil {
				return err
			}
			e, err := newEnv(c)
			if err != nil {
				return err
			}
			// Fail at start, where the client shows stderr, rather than on
			// every request.
			st, err := e.open()
			if err != nil {
				return err
			}
			pol := st.Policy()
			st.Close()

			diag := io.Discard
			var logger *slog.Logger
			if c.Bool("verbose") {
				diag = e.err
				logger = slog.New(slog.NewTextHandler(e.err, &slog.HandlerOptions{Level: slog.LevelInfo}))
			}
			quiet := *e
			quiet.err = diag

			opts := mcpserver.Options{
				Open:    e.open,
				Version: Version,
				Logger:  logger,
				Mount: func(ctx context.Context, s *store.Store, runID, ref string, probed bool) (*store.Delivery, []byte, error) {
					if probed {
						return mcpMountProbed(ctx, &quiet, s, runID, ref)
					}
					d, err := s.Mount(ctx, runID, ref)
					if err != nil {
						return nil, nil, err
					}
					return d, d.Content, nil
				},
				ManifestExtra: func(s *store.Store, m *manifest.Manifest) (map[string]any, error) {
					extra := map[string]any{}
					for _, f := range manifestExtras {
						k, data, _, err := f(s, m)
						if err != nil {
							return nil, err
						}
						if data != nil {
							extra[k] = data
						}
					}
					return extra, nil
				},
				ReplayExtra: func(s *store.Store, res *store.ReplayResult) ([]string, error) {
					var lines []string
					var first error
					for _, f := range replayExtras {
						l, err := f(s, res)
						lines = append(lines, l...)
						if err != nil && first == nil {
							first = err
						}
					}
					return lines, first
				},
				ProbeCheck: mcpProbeCheck,
			}
			// Receipts are on when a key is configured: READPROOF_RECEIPTS_KEY
			// or [receipts] key (the receipts commands' own lookup, without
			// falling back to the default location).
			if os.Getenv(receiptKeyEnv) != "" || pol.ReceiptsKey != "" {
				key, _, err := loadReceiptKey(e, pol, "")
				if err != nil {
					return err
				}
				session := c.String("session")
				if session == "" {
					session = newMCPSession()
				}
				if err := identity.ValidateSessionID(session); err != nil {
					return withCode(ExitUsage, hint.With(fmt.Errorf("mcp --session %q: %w", session, err), "session ids are letters, digits, '.', '_' and '-', starting with a letter or digit"))
				}
				opts.ReceiptKey, opts.Session = key, session
				fmt.Fprintf(diag, "readproof: mcp: tool receipts on, session %s, key %s\n", session, key.ID())
			}
			fmt.Fprintf(diag, "readproof: mcp: serving store %s with %s\n", e.storePath, e.policyPath)
			err = mcpserver.Serve(c.Context, opts, c.App.Reader, e.out)
			if err != nil && c.Context.Err() != nil {
				return c.Context.Err()
			}
			return err
		},
	}
}

// newMCPSession names a receipt session: mcp-20260921T101500Z-1a2b3c4d.
func newMCPSession() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "mcp-" + time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// mcpMountProbed is `run mount --probe` for the MCP server: the probe key
// comes from [probe] key (or the default location).
func mcpMountProbed(ctx context.Context, e *env, s *store.Store, id, ref string) (*store.Delivery, []byte, error) {
	return mountProbed(flagless(ctx), e, s, id, ref)
}

// flagless is a cli.Context with no flags set, carrying ctx, for helpers
// shared with commands that read optional flags.
func flagless(ctx context.Context) *cli.Context {
	c := cli.NewContext(cli.NewApp(), nil, nil)
	c.Context = ctx
	return c
}

// mcpProbeCheck is `readproof probe check RUN --answer -` for the MCP
// server: it records the verdicts and returns the --json shape.
func mcpProbeCheck(_ context.Context, s *store.Store, target, answer string) (any, error) {
	m, err := s.Manifest(target)
	if err != nil {
		return nil, err
	}
	probed := 0
	for _, en := range m.Entries {
		if en.Probe != nil {
			probed++
		}
	}
	if probed == 0 {
		return nil, hint.With(fmt.Errorf("run %s has no probed entries: nothing to check", m.RunID),
			"mount documents with readproof_run_mount and probe set to true")
	}
	if len(answer) > maxAnswerBytes {
		return nil, hint.With(fmt.Errorf("answer is larger than %d MiB", maxAnswerBytes>>20), "pass only the agent's answer")
	}
	keys, _, err := loadProbeKeys("", s)
	if err != nil {
		return nil, err
	}
	rec, err := s.RecordVerdictsWithKey(m.RunID, keys, judgeAnswer(keys, s, []byte(answer), s.Now(), false))
	if err != nil {
		return nil, err
	}
	return verdictsJSON{Commit: rec.ID, VerdictRecord: rec}, nil
}
