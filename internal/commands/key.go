package commands

// `readproof key init|show`, and commit signing: the ed25519 key that signs
// evidence bundles (DSSE) and, when configured, every manifest commit (an
// SSH signature, namespace "git", that stock `git verify-commit` accepts).

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
)

// SigningKeyEnv names the signing key file (keyloc.SigningKeyEnv).
const SigningKeyEnv = keyloc.SigningKeyEnv

// keyFormats are the forms `key show --format` prints.
func keyFormats() []string {
	return []string{"all", "allowed-signers", "pem", "authorized-key", "fingerprint"}
}

func keyCommand() *cli.Command {
	keyFlag := &cli.StringFlag{Name: "key", Usage: "the private key file (default: " + SigningKeyEnv + ", else [signing] key in readproof.toml, else $XDG_CONFIG_HOME/readproof/evidence_ed25519)"}
	initPrincipalFlag := &cli.StringFlag{Name: "principal", Usage: "the principal of the allowed_signers line, recorded beside the new key, where key show finds it (default: \"readproof\")"}
	showPrincipalFlag := &cli.StringFlag{Name: "principal", Usage: "the principal of the allowed_signers line (default: the one key init recorded beside the key, else \"readproof\")"}
	return &cli.Command{
		Name:  "key",
		Usage: "manage the ed25519 key that signs evidence bundles and manifest commits",
		Subcommands: []*cli.Command{
			{
				Name:      "init",
				Usage:     "create a signing key outside every repository (mode 0600) and print its public key as an allowed_signers line and as PKIX PEM",
				ArgsUsage: "[PATH]",
				Flags:     []cli.Flag{keyFlag, initPrincipalFlag},
				Action: func(c *cli.Context) error {
					flag, err := keyArg(c, "[--key PATH | PATH] [--principal NAME]")
					if err != nil {
						return err
					}
					opts := keyOptions{Key: flag, Principal: c.String("principal")}
					return withEnv(c, func(e *env) error { return runKeyInit(c.Context, e, opts) })
				},
			},
			{
				Name:      "show",
				Usage:     "print the signing key's public key (an existing OpenSSH ed25519 key works too)",
				ArgsUsage: "[PATH]",
				Flags: []cli.Flag{keyFlag, showPrincipalFlag,
					&cli.StringFlag{Name: "format", Value: "all", Usage: "one of " + strings.Join(keyFormats(), ", ")},
				},
				Action: func(c *cli.Context) error {
					flag, err := keyArg(c, "[--key PATH | PATH] [--principal NAME] [--format FORMAT]")
					if err != nil {
						return err
					}
					opts := keyOptions{Key: flag, Principal: c.String("principal"), Format: c.String("format")}
					return withEnv(c, func(e *env) error { return runKeyShow(c.Context, e, opts) })
				},
			},
		},
	}
}

// keyOptions are the flags of `readproof key init|show`.
type keyOptions struct {
	Key       string // the key file, from --key or the argument ("" for the configured one)
	Principal string // the principal of the allowed_signers line
	Format    string // key show --format
}

// runKeyInit is `readproof key init`.
func runKeyInit(_ context.Context, e *env, opts keyOptions) error {
	pol, err := e.loadPolicy()
	if err != nil {
		return err
	}
	path, err := keyloc.SigningPath(opts.Key, pol)
	if err != nil {
		return err
	}
	key, err := keyloc.CreateSigning(path, opts.Principal, e.storePath, pol)
	if err != nil {
		return err
	}
	if err := printKey(e, key, opts.Principal, "all"); err != nil {
		return err
	}
	e.say("readproof: created ed25519 signing key %s (mode 0600), public key in %s.pub, fingerprint %s", path, path, key.Fingerprint())
	if configured, _ := keyloc.ConfiguredSigning(pol); configured != path {
		e.say("readproof: to sign manifest commits with it, set [signing] key = %q in readproof.toml (or %s); `evidence export --sign --key %s` signs bundles", path, SigningKeyEnv, path)
	}
	return nil
}

// runKeyShow is `readproof key show`.
func runKeyShow(_ context.Context, e *env, opts keyOptions) error {
	if !keyFormatKnown(opts.Format) {
		return usageError("key show: unknown --format %q: use one of %s", opts.Format, strings.Join(keyFormats(), ", "))
	}
	pol, err := e.loadPolicy()
	if err != nil {
		return err
	}
	key, err := keyloc.LoadSigning(opts.Key, e.storePath, pol)
	if err != nil {
		return err
	}
	return printKey(e, key, opts.Principal, opts.Format)
}

// keyArg returns the key path given as --key or as the one positional
// argument ("" for neither).
func keyArg(c *cli.Context, usage string) (string, error) {
	if err := needArgs(c, 0, 1, usage); err != nil {
		return "", err
	}
	if c.Args().Len() == 1 {
		if c.String("key") != "" {
			return "", usageError("%s: give the key path once, as --key PATH or as PATH", commandPath(c))
		}
		return c.Args().First(), nil
	}
	return c.String("key"), nil
}

// keyFormatKnown reports whether s is one of keyFormats.
func keyFormatKnown(s string) bool {
	for _, v := range keyFormats() {
		if v == s {
			return true
		}
	}
	return false
}

// printKey writes the public forms of key; never the private half.
func printKey(e *env, key evidence.Key, principal, format string) error {
	if e.json {
		return printJSON(e.out, map[string]string{
			"path":            key.Path,
			"fingerprint":     key.Fingerprint(),
			"allowed_signers": key.AllowedSignersLine(principal),
			"authorized_key":  key.AuthorizedKey(),
			"public_pem":      string(key.PublicPEM()),
		})
	}
	switch format {
	case "allowed-signers":
		fmt.Fprintln(e.out, key.AllowedSignersLine(principal))
	case "pem":
		fmt.Fprint(e.out, string(key.PublicPEM()))
	case "authorized-key":
		fmt.Fprintln(e.out, key.AuthorizedKey())
	case "fingerprint":
		fmt.Fprintln(e.out, key.Fingerprint())
	default:
		fmt.Fprintf(e.out, "%s\n%s", key.AllowedSignersLine(principal), key.PublicPEM())
	}
	return nil
}

// signCommits signs every manifest commit with the configured key
// (keyloc.CommitSigner).
func signCommits(e *env, pol *policy.File, opts *store.Options) error {
	sign, err := keyloc.CommitSigner(e.storePath, pol)
	if err != nil {
		return err
	}
	opts.SignCommit = sign
	return nil
}
