package commands

// `readproof receipts key init`.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/receipts"
)

// receiptsKeyInit creates the key file.
func receiptsKeyInit(c *cli.Context) error {
	if err := needArgs(c, 0, 0, "[--key PATH]"); err != nil {
		return err
	}
	opts := receiptsKeyInitOptions{Key: c.String("key")}
	return withEnv(c, func(e *env) error { return runReceiptsKeyInit(c.Context, e, opts) })
}

// receiptsKeyInitOptions are the flags of `readproof receipts key init`.
type receiptsKeyInitOptions struct {
	Key string
}

// runReceiptsKeyInit is `readproof receipts key init`.
func runReceiptsKeyInit(_ context.Context, e *env, opts receiptsKeyInitOptions) error {
	pol, err := e.loadPolicy()
	if err != nil {
		return err
	}
	path, _, err := keyloc.ReceiptsPath(opts.Key, pol)
	if err != nil {
		return err
	}
	forbidden := keyloc.Forbidden(e.storePath, pol)
	if err := receipts.CheckKeyLocation(path, forbidden...); err != nil {
		return withCode(ExitUsage, hint.With(err,
			"keep the key outside the store, the project and every git repository: pass --key PATH (for example under ~/.config/readproof/)"))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the directory of receipt key %s: %w", path, err)
	}
	if err := receipts.CreateKey(path, forbidden...); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return hint.With(err, "keep using it; to rotate, create a new key at another path with --key and keep the old one to check older receipts")
		}
		if errors.Is(err, receipts.ErrKeyPath) {
			return withCode(ExitUsage, hint.With(err, "pass --key PATH outside the store, the project and every git repository"))
		}
		return err
	}
	k, err := receipts.LoadKey(path, forbidden...)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.out, struct {
			Path  string `json:"path"`
			KeyID string `json:"key_id"`
		}{path, k.ID()})
	}
	fmt.Fprintf(e.out, "Created receipt key %s (key id %s)\n", path, k.ID())
	e.say("readproof: keep it secret and outside every repository; anyone holding it can issue receipts. Back it up: receipts made under it cannot be checked without it.")
	return nil
}
