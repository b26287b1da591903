package commands

// Tool receipts: `readproof receipts key init|issue|list|show|verify-claims`
// (docs/receipts.md). `readproof exec` lives in exec.go.

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/receipts"
)

// receiptKeyEnv names the environment variable holding the receipt key
// file's path.
const receiptKeyEnv = keyloc.ReceiptsKeyEnv

func receiptKeyFlag() cli.Flag {
	return &cli.StringFlag{Name: "key", Usage: "the receipt key file (default: $" + receiptKeyEnv + ", then [receipts] key in readproof.toml, then $XDG_CONFIG_HOME/readproof/receipts.key)"}
}

func receiptSessionFlag() cli.Flag {
	return &cli.StringFlag{Name: "session", Usage: "the session the call belongs to (required)"}
}

func receiptRunFlag() cli.Flag {
	return &cli.StringFlag{Name: "run", Usage: "the run the call belongs to (optional)"}
}

func receiptsCommand() *cli.Command {
	return &cli.Command{
		Name:  "receipts",
		Usage: "tool receipts: prove which tool calls really ran, and check the receipt ids an agent cites",
		Subcommands: []*cli.Command{
			{
				Name:  "key",
				Usage: "manage the receipt key (32 random bytes, mode 0600, outside every repository)",
				Subcommands: []*cli.Command{
					{
						Name:   "init",
						Usage:  "create the receipt key file; prints its path and key id",
						Flags:  []cli.Flag{receiptKeyFlag()},
						Action: receiptsKeyInit,
					},
				},
			},
			{
				Name:      "issue",
				Usage:     "record a tool call brokered elsewhere; prints the receipt id",
				ArgsUsage: "--session S --tool NAME (--args FILE | --args-json FILE) (--result FILE | --exit-code N [--stdout FILE] [--stderr FILE])",
				Flags: []cli.Flag{
					receiptSessionFlag(), receiptRunFlag(),
					&cli.StringFlag{Name: "tool", Usage: "the tool's name (required)"},
					&cli.StringFlag{Name: "args", Usage: "the call's command line: arguments separated by NUL bytes, as in /proc/PID/cmdline (- for stdin)"},
					&cli.StringFlag{Name: "args-json", Usage: "the call's JSON arguments, hashed in canonical form (- for stdin)"},
					&cli.StringFlag{Name: "result", Usage: "the call's result bytes (- for stdin)"},
					&cli.StringFlag{Name: "stdout", Usage: "a command's standard output (with --exit-code; default: empty)"},
					&cli.StringFlag{Name: "stderr", Usage: "a command's standard error (with --exit-code; default: empty)"},
					&cli.StringFlag{Name: "exit-code", Usage: "a command's exit status (128+N for signal N)"},
					&cli.StringFlag{Name: "signal", Usage: "the name of the signal that killed the command, e.g. SIGKILL"},
					&cli.StringFlag{Name: "error", Usage: "why the call failed outside its result"},
					&cli.StringFlag{Name: "start", Usage: "when the call started, RFC 3339 (default: --end)"},
					&cli.StringFlag{Name: "end", Usage: "when the call ended, RFC 3339 (default: now)"},
					receiptKeyFlag(),
				},
				Action: receiptsIssue,
			},
			{
				Name:      "list",
				Usage:     "list a session's receipts in issue order, each checked with the key when one is available",
				ArgsUsage: "SESSION",
				Flags:     []cli.Flag{receiptKeyFlag()},
				Action:    receiptsList,
			},
			{
				Name:      "show",
				Usage:     "print one receipt and whether its MAC verifies",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{receiptKeyFlag()},
				Action:    receiptsShow,
			},
			{
				Name:      "verify-claims",
				Usage:     "judge the receipt ids an agent cites (a JSON list, {\"receipts\": [...]}, or free text; - for stdin) and list the receipts it left out",
				ArgsUsage: "--session S [--strict] CLAIMS",
				Flags: []cli.Flag{
					receiptSessionFlag(),
					&cli.BoolFlag{Name: "strict", Usage: "exit 3 when a claim is fabricated, tampered, of another session or under an unknown key (for pre-merge hooks)"},
					receiptKeyFlag(),
				},
				Action: receiptsVerifyClaims,
			},
		},
	}
}

// Shared plumbing ------------------------------------------------------------

// receiptsCtx is what the receipt commands share.
type receiptsCtx struct {
	*env
	store   *store.Store
	ledger  *receipts.Ledger
	key     receipts.Key
	keyPath string
	keyErr  error // why key is zero
}

// withReceipts opens the store and loads the key. With needKey a key that
// cannot be loaded is an error; without it the command runs with keyErr set.
// keyFile is the --key flag ("" for the configured key).
func (e *env) withReceipts(keyFile string, needKey bool, fn func(*receiptsCtx) error) error {
	return e.withStore(func(s *store.Store) error {
		rc := &receiptsCtx{env: e, store: s, ledger: s.Receipts()}
		pol, err := s.Policy()
		if err != nil {
			return err
		}
		rc.key, rc.keyPath, rc.keyErr = keyloc.LoadReceipts(keyFile, e.storePath, pol)
		if rc.keyErr != nil && needKey {
			return rc.keyErr
		}
		return fn(rc)
	})
}

// receiptSession validates --session s of command cmd.
func receiptSession(cmd, s string) (string, error) {
	if s == "" {
		return "", withCode(ExitUsage, hint.With(fmt.Errorf("%s: missing --session", cmd), "name the agent session the receipts belong to: --session ID"))
	}
	if err := identity.ValidateSessionID(s); err != nil {
		return "", withCode(ExitUsage, hint.With(err, "session ids match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"))
	}
	return s, nil
}

// receiptRun validates --run r ("" when absent).
func receiptRun(r string) (string, error) {
	if r == "" {
		return "", nil
	}
	if err := identity.ValidateRunID(r); err != nil {
		return "", withCode(ExitUsage, hint.With(err, "run ids match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"))
	}
	return r, nil
}
