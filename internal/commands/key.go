package commands

// `readproof key init|show`, and commit signing: the ed25519 key that signs
// evidence bundles (DSSE) and, when configured, every manifest commit (an
// SSH signature, namespace "git", that stock `git verify-commit` accepts).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
)

// SigningKeyEnv names the signing key file; it takes precedence over
// [signing] key in readproof.toml.
const SigningKeyEnv = "READPROOF_SIGNING_KEY"

// keyFormats are the forms `key show --format` prints.
func keyFormats() []string {
	return []string{"all", "allowed-signers", "pem", "authorized-key", "fingerprint"}
}

func keyCommand() *cli.Command {
	keyFlag := &cli.StringFlag{Name: "key", Usage: "the private key file (default: " + SigningKeyEnv + ", else [signing] key in readproof.toml, else $XDG_CONFIG_HOME/readproof/evidence_ed25519)"}
	principalFlag := &cli.StringFlag{Name: "principal", Usage: "the principal of the allowed_signers line; key init records it beside the key (default: the recorded one, else \"readproof\")"}
	return &cli.Command{
		Name:  "key",
		Usage: "manage the ed25519 key that signs evidence bundles and manifest commits",
		Subcommands: []*cli.Command{
			{
				Name:  "init",
				Usage: "create a signing key outside every repository (mode 0600) and print its public key as an allowed_signers line and as PKIX PEM",
				Flags: []cli.Flag{keyFlag, principalFlag},
				Action: func(c *cli.Context) error {
					flag, err := keyArg(c, "[--key PATH | PATH] [--principal NAME]")
					if err != nil {
						return err
					}
					e, err := newEnv(c)
					if err != nil {
						return err
					}
					pol, err := e.loadPolicy()
					if err != nil {
						return err
					}
					path, err := signingKeyPath(flag, pol)
					if err != nil {
						return err
					}
					key, err := evidence.CreateKeyFor(path, c.String("principal"), keyForbidden(e.storePath, pol, path)...)
					if err != nil {
						return keyHint(err, path)
					}
					if err := printKey(e, key, c.String("principal"), "all"); err != nil {
						return err
					}
					e.say("readproof: created ed25519 signing key %s (mode 0600), public key in %s.pub, fingerprint %s", path, path, key.Fingerprint())
					if configured, _ := configuredSigningKey(pol); configured != path {
						e.say("readproof: to sign manifest commits with it, set [signing] key = %q in readproof.toml (or %s); `evidence export --sign --key %s` signs bundles", path, SigningKeyEnv, path)
					}
					return nil
				},
			},
			{
				Name:  "show",
				Usage: "print the signing key's public key (an existing OpenSSH ed25519 key works too)",
				Flags: []cli.Flag{keyFlag, principalFlag,
					&cli.StringFlag{Name: "format", Value: "all", Usage: "one of " + strings.Join(keyFormats(), ", ")},
				},
				Action: func(c *cli.Context) error {
					flag, err := keyArg(c, "[--key PATH | PATH] [--principal NAME] [--format FORMAT]")
					if err != nil {
						return err
					}
					format := c.String("format")
					if !keyFormatKnown(format) {
						return usageError("key show: unknown --format %q: use one of %s", format, strings.Join(keyFormats(), ", "))
					}
					e, err := newEnv(c)
					if err != nil {
						return err
					}
					pol, err := e.loadPolicy()
					if err != nil {
						return err
					}
					key, err := loadSigningKey(flag, e, pol)
					if err != nil {
						return err
					}
					return printKey(e, key, c.String("principal"), format)
				},
			},
		},
	}
}

// keyArg returns the key path given as --key or as the one positional
// argument ("" for neither).
func keyArg(c *cli.Context, usage string) (string, error) {
	if err := needArgs(c, 0, 1, usage); err != nil {
		return "", err
	}
	if c.Args().Len() == 1 {
		if c.String("key") != "" {
			return "", usageError("%s: give the key path once, as --key PATH or as PATH", c.Command.FullName())
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

// configuredSigningKey is the key that signs manifest commits:
// READPROOF_SIGNING_KEY, else [signing] key; "" when neither is set.
func configuredSigningKey(pol *policy.File) (string, error) {
	if v := os.Getenv(SigningKeyEnv); v != "" {
		if rest, ok := strings.CutPrefix(v, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", usageError("%s=%q: no home directory to expand ~ in: give an absolute path", SigningKeyEnv, v)
			}
			v = filepath.Join(home, rest)
		}
		return filepath.Abs(v)
	}
	if pol != nil {
		return pol.SigningKey, nil
	}
	return "", nil
}

// signingKeyPath picks the key file: the flag, then the configured key,
// then evidence.DefaultKeyPath.
func signingKeyPath(flag string, pol *policy.File) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if p, err := configuredSigningKey(pol); err != nil || p != "" {
		return p, err
	}
	p, err := evidence.DefaultKeyPath()
	if err != nil {
		return "", hint.With(err, "name the key with --key, "+SigningKeyEnv+" or [signing] key in readproof.toml")
	}
	return p, nil
}

// loadSigningKey loads the key signingKeyPath picks.
func loadSigningKey(flag string, e *env, pol *policy.File) (evidence.Key, error) {
	path, err := signingKeyPath(flag, pol)
	if err != nil {
		return evidence.Key{}, err
	}
	key, err := evidence.LoadKey(path, keyForbidden(e.storePath, pol, path)...)
	if err != nil {
		return evidence.Key{}, keyHint(err, path)
	}
	return key, nil
}

// keyForbidden lists the directories a signing key may not be in: the
// store and the project directory (when readproof.toml exists); evidence
// itself refuses every git repository that encloses path.
func keyForbidden(storePath string, pol *policy.File, path string) []string {
	dirs := []string{storePath}
	if pol != nil && pol.Path != "" {
		if _, err := os.Stat(pol.Path); err == nil {
			dirs = append(dirs, pol.Dir)
		}
	}
	return dirs
}

// keyHint adds what a user can do about a key error.
func keyHint(err error, path string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, evidence.ErrKeyLocation):
		return hint.With(err, "keep the signing key outside the store, the project and every git repository: pass --key PATH, or point "+SigningKeyEnv+" / [signing] key elsewhere")
	case errors.Is(err, evidence.ErrKeyExists):
		return hint.With(err, "print the existing key with `readproof key show --key "+path+"`, or choose another path with --key")
	case errors.Is(err, fs.ErrNotExist):
		return hint.With(err, "create a key with `readproof key init --key "+path+"`, or name an existing OpenSSH ed25519 key")
	}
	return err
}

// signCommits signs every manifest commit with the configured key. The
// key is loaded on the first commit, so commands that only read work even
// when it is missing.
func signCommits(e *env, pol *policy.File, opts *store.Options) error {
	path, err := configuredSigningKey(pol)
	if err != nil || path == "" {
		return err
	}
	forbidden := keyForbidden(e.storePath, pol, path)
	var (
		once sync.Once
		key  evidence.Key
		kerr error
	)
	opts.SignCommit = func(payload []byte) (string, error) {
		once.Do(func() {
			key, kerr = evidence.LoadKey(path, forbidden...)
			kerr = keyHint(kerr, path)
		})
		if kerr != nil {
			return "", kerr
		}
		return evidence.SignCommit(payload, key)
	}
	return nil
}
