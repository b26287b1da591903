package commands

// `readproof mcp token add|list|revoke`: the bearer tokens of mcp --http.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/mcpauth"
)

func mcpTokensFlag() cli.Flag {
	return &cli.StringFlag{Name: "tokens", Usage: "the MCP token `FILE` (default: $" + keyloc.MCPTokensEnv + ", then $XDG_CONFIG_HOME/readproof/mcp-tokens.json)"}
}

func mcpTokenCommand() *cli.Command {
	return &cli.Command{
		Name:  "token",
		Usage: "manage the bearer tokens of mcp --http (only their hashes are stored, in a 0600 file outside every repository)",
		Subcommands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "issue a token for a caller; prints it once on stdout (the name is recorded in what the caller writes)",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					mcpTokensFlag(),
					&cli.StringFlag{Name: "scope", Value: string(mcpauth.ScopeWrite), Usage: "read (every tool that changes nothing) or write (runs, tags and probe checks too)"},
					&cli.StringFlag{Name: "expires", Usage: "lifetime in s, m, h, d (days) or w (weeks), such as 12h, 30d or 2w (default: never)"},
					&cli.BoolFlag{Name: "same-caller", Usage: "give the name of a revoked or expired token again: the new token is that caller, and sees and continues its receipts and open runs"},
				},
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 1, 1, "NAME [--scope read|write] [--expires DURATION]"); err != nil {
						return err
					}
					o := mcpTokenOptions{Tokens: c.String("tokens"), Scope: c.String("scope"), Expires: c.String("expires"), SameCaller: c.Bool("same-caller"), Now: time.Now}
					return withEnv(c, func(e *env) error { return runMCPTokenAdd(c.Context, e, o, c.Args().First()) })
				},
			},
			{
				Name:  "list",
				Usage: "list the tokens: name, scope, state (active, expired, revoked), created, expires",
				Flags: []cli.Flag{mcpTokensFlag()},
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 0, 0, ""); err != nil {
						return err
					}
					o := mcpTokenOptions{Tokens: c.String("tokens"), Now: time.Now}
					return withEnv(c, func(e *env) error { return runMCPTokenList(c.Context, e, o) })
				},
			},
			{
				Name:      "revoke",
				Usage:     "revoke a token: a running server refuses it (401) from its next request",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{mcpTokensFlag()},
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 1, 1, "NAME"); err != nil {
						return err
					}
					o := mcpTokenOptions{Tokens: c.String("tokens"), Now: time.Now}
					return withEnv(c, func(e *env) error { return runMCPTokenRevoke(c.Context, e, o, c.Args().First()) })
				},
			},
		},
	}
}

// mcpTokenOptions are the flags of `mcp token`.
type mcpTokenOptions struct {
	Tokens  string // token file ("" for the default)
	Scope   string // add: read or write
	Expires string // add: lifetime ("" for none)
	// SameCaller (add): the name of a revoked or expired token may be
	// given again (mcpauth.File.Readd)
	SameCaller bool
	Now        func() time.Time
}

// tokenFile is where the token file is and the directories it must stay
// out of.
func (e *env) tokenFile(given string) (path, from string, forbidden []string, err error) {
	path, from, err = keyloc.MCPTokensPath(given)
	if err != nil {
		return "", "", nil, err
	}
	pol, err := e.loadPolicy()
	if err != nil {
		return "", "", nil, err
	}
	return path, from, keyloc.Forbidden(e.storePath, pol), nil
}

// lifetimeHint says which lifetimes --expires takes.
const lifetimeHint = "give a lifetime in s, m, h, d (days) or w (weeks), such as 90m, 12h, 30d or 2w"

// maxLifetimeDays is the longest lifetime --expires takes, in days.
const maxLifetimeDays = 65535

// parseLifetime reads --expires: a Go duration (90m, 12h), a number of
// days (30d) or of weeks (2w), at most maxLifetimeDays.
func parseLifetime(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	var d time.Duration
	var err error
	if n, ok := strings.CutSuffix(s, "d"); ok {
		var days uint64
		days, err = strconv.ParseUint(n, 10, 16)
		d = time.Duration(days) * 24 * time.Hour
	} else if n, ok := strings.CutSuffix(s, "w"); ok {
		var weeks uint64
		if weeks, err = strconv.ParseUint(n, 10, 16); err == nil && weeks*7 > maxLifetimeDays {
			err = strconv.ErrRange
		}
		d = time.Duration(weeks) * 7 * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil && tooLong(s) {
		return 0, withCode(ExitUsage, hint.With(fmt.Errorf("mcp token add --expires %q: longer than a token can be kept (at most 65535d, 9362w or 2562047h)", s), lifetimeHint+", or leave --expires out for a token that does not expire"))
	}
	if err != nil || d <= 0 {
		return 0, withCode(ExitUsage, hint.With(fmt.Errorf("mcp token add --expires %q: not a positive duration", s), lifetimeHint+", or leave --expires out for a token that does not expire"))
	}
	if d < time.Second {
		// the token file keeps expiry times to the second: such a
		// token would be expired when it is shown
		return 0, withCode(ExitUsage, hint.With(fmt.Errorf("mcp token add --expires %q: under a second, so the token would expire before it is used", s), lifetimeHint))
	}
	return d, nil
}

// tooLong reports whether a lifetime that does not parse is refused for
// its size alone: a positive number of days or a Go duration that parses
// once each run of digits in it is 1 ("100000d", "3000000h").
func tooLong(s string) bool {
	if strings.HasPrefix(s, "-") {
		return false
	}
	var b strings.Builder
	digit := false
	for _, r := range s {
		d := r >= '0' && r <= '9'
		switch {
		case d && !digit:
			b.WriteByte('1')
		case !d:
			b.WriteRune(r)
		}
		digit = d
	}
	if n, ok := strings.CutSuffix(b.String(), "d"); ok {
		return n == "1"
	}
	if n, ok := strings.CutSuffix(b.String(), "w"); ok {
		return n == "1"
	}
	_, err := time.ParseDuration(b.String())
	return err == nil
}

func tokenHint(err error, path string) error {
	switch {
	case errors.Is(err, mcpauth.ErrName):
		return withCode(ExitUsage, hint.With(err, "token names are letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64"))
	case errors.Is(err, mcpauth.ErrExists):
		return withCode(ExitUsage, hint.With(err, "revoke it first (readproof mcp token revoke NAME) or choose another name"))
	case errors.Is(err, mcpauth.ErrUsed):
		return withCode(ExitUsage, hint.With(err, "receipts, runs and tag moves name their caller by the token's name, so a new token of this name would see and continue what the old one did: choose another name for a new caller, or give --same-caller if the new token is the same caller (an agent's lost or expired token replaced)"))
	case errors.Is(err, mcpauth.ErrUnused):
		return withCode(ExitUsage, hint.With(err, "--same-caller gives again the name of a revoked or expired token (see them with: readproof mcp token list); without it the name is a new caller's"))
	case errors.Is(err, mcpauth.ErrNotFound):
		return hint.With(err, "see the names with: readproof mcp token list")
	case errors.Is(err, mcpauth.ErrOwner):
		return hint.With(err, "a token file is a secret of the user who runs the server: mode 0600, owned by that user")
	case errors.Is(err, mcpauth.ErrFile):
		return hint.With(err, "the token file "+path+" is damaged: restore it, or move it away and add the tokens again")
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return err // a path this user cannot write: Main's hint says so
	case hint.Of(err) != "":
		// a lock file held by another readproof (mcpauth.ErrLocked:
		// internal/lockfile gives each such error a hint) or that cannot
		// be made says what to do
		return err
	}
	return hint.With(err, "the token file must be a 0600 file outside the store, the project and every git repository; name another with --tokens or "+keyloc.MCPTokensEnv)
}

// tokenLock bounds and tells the wait for the token file's lock: the lock
// timings of the environment (READPROOF_LOCK_TIMEOUT, _STALE_LOCK_AGE)
// when set, and the terminal's lock-wait line.
func (e *env) tokenLock() (mcpauth.LockOptions, error) {
	lo, err := e.lockOptions()
	return mcpauth.LockOptions{Timeout: lo.Git.LockTimeout, StaleAge: lo.Git.StaleLockAge, Wait: lo.Git.LockWait}, err
}

// runMCPTokenAdd issues a token: the token on stdout, once; what was done
// on stderr.
func runMCPTokenAdd(_ context.Context, e *env, o mcpTokenOptions, name string) error {
	scope, err := mcpauth.ParseScope(o.Scope)
	if err != nil {
		return withCode(ExitUsage, hint.With(fmt.Errorf("mcp token add --scope: %w", err), "give --scope read or --scope write"))
	}
	if err := mcpauth.ValidateName(name); err != nil {
		return tokenHint(err, "")
	}
	ttl, err := parseLifetime(o.Expires)
	if err != nil {
		return err
	}
	path, _, forbidden, err := e.tokenFile(o.Tokens)
	if err != nil {
		return err
	}
	lock, err := e.tokenLock()
	if err != nil {
		return err
	}
	now := o.Now()
	var token string
	var entry mcpauth.Entry
	err = mcpauth.UpdateWith(path, forbidden, lock, func(f *mcpauth.File) error {
		var err error
		add := f.Add
		if o.SameCaller {
			add = f.Readd
		}
		if token, err = add(name, scope, ttl, now, nil); err != nil {
			return err
		}
		entry, _ = f.Find(name)
		return nil
	})
	if err != nil {
		return tokenHint(err, path)
	}
	var shown error
	if e.json {
		shown = printJSON(e.out, tokenJSONOf(entry, now, token))
	} else {
		_, shown = fmt.Fprintln(e.out, token)
	}
	if shown != nil {
		// The token is shown once and kept nowhere: one whose line did
		// not arrive is a live credential nobody holds. Revoked, its name
		// can be given again with --same-caller: no call was made with it.
		rerr := mcpauth.UpdateWith(path, forbidden, lock, func(f *mcpauth.File) error {
			if cur, ok := f.Find(name); !ok || cur.SHA256 != entry.SHA256 {
				return nil
			}
			return f.Revoke(name, o.Now())
		})
		if rerr != nil {
			return hint.With(fmt.Errorf("mcp token add: the token could not be shown: %w", shown),
				"revoke it with `readproof mcp token revoke "+name+"` (revoking failed: "+rerr.Error()+") and add it again where stdout can be written, with --same-caller (no one held it)")
		}
		return hint.With(fmt.Errorf("mcp token add: the token could not be shown: %w", shown),
			"it was revoked; no one held it, so add it again with --same-caller where stdout can be written")
	}
	if e.json {
		return nil
	}
	exp := "never expires"
	if entry.ExpiresAt != nil {
		exp = "expires " + textTime(*entry.ExpiresAt)
	}
	fmt.Fprintf(e.err, "readproof: mcp token %s added (scope %s, %s); only its hash is kept, in %s: copy the token now, it is not shown again\n", name, scope, exp, path)
	return nil
}

// tokenJSON is one token in `mcp token list --json` (and add --json, the
// only place Token is set).
type tokenJSON struct {
	Name      string     `json:"name"`
	Scope     string     `json:"scope"`
	State     string     `json:"state"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	Token     string     `json:"token,omitempty"`
}

func tokenJSONOf(en mcpauth.Entry, now time.Time, token string) tokenJSON {
	return tokenJSON{Name: en.Name, Scope: string(en.Scope), State: en.State(now), CreatedAt: en.CreatedAt, ExpiresAt: en.ExpiresAt, RevokedAt: en.RevokedAt, Token: token}
}

func runMCPTokenList(_ context.Context, e *env, o mcpTokenOptions) error {
	path, from, forbidden, err := e.tokenFile(o.Tokens)
	if err != nil {
		return err
	}
	f, err := mcpauth.Load(path, forbidden)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return tokenHint(err, path)
	}
	now := o.Now()
	out := []tokenJSON{}
	for _, en := range f.Tokens {
		out = append(out, tokenJSONOf(en, now, ""))
	}
	if e.json {
		return printJSON(e.out, out)
	}
	if len(out) == 0 {
		fmt.Fprintf(e.err, "readproof: no MCP tokens in %s (from %s); add one with: readproof mcp token add NAME\n", path, from)
		return nil
	}
	tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCOPE\tSTATE\tCREATED\tEXPIRES")
	for _, t := range out {
		exp := "never"
		if t.ExpiresAt != nil {
			exp = textTime(*t.ExpiresAt)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, t.Scope, t.State, textTime(t.CreatedAt), exp)
	}
	return tw.Flush()
}

func runMCPTokenRevoke(_ context.Context, e *env, o mcpTokenOptions, name string) error {
	path, _, forbidden, err := e.tokenFile(o.Tokens)
	if err != nil {
		return err
	}
	lock, err := e.tokenLock()
	if err != nil {
		return err
	}
	err = mcpauth.UpdateWith(path, forbidden, lock, func(f *mcpauth.File) error { return f.Revoke(name, o.Now()) })
	if err != nil {
		return tokenHint(err, path)
	}
	fmt.Fprintf(e.err, "readproof: mcp token %s revoked; a running server refuses it from its next request\n", name)
	return nil
}
