package commands

// `readproof migrate`: bring the store to the current format
// (store.Migrate; docs/store-format.md, "Migrating a store").

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
)

func migrateCommand() *cli.Command {
	return &cli.Command{
		Name:  "migrate",
		Usage: "bring the store to the current format (the journal's document view on main)",
		Description: "Computes the view of every run the journal records (documents/NAMESPACE/PATH as the runs last\n" +
			"delivered them) and appends one journal commit carrying it. Nothing is rewritten or removed, a\n" +
			"killed migration changes nothing, and running it again finds nothing to do.",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, 0, ""); err != nil {
				return err
			}
			return withEnv(c, func(e *env) error { return runMigrate(c.Context, e, migrateOptions{}) })
		},
	}
}

// migrateOptions are the flags of `readproof migrate` (none yet).
type migrateOptions struct{}

// runMigrate is `readproof migrate`.
func runMigrate(_ context.Context, e *env, _ migrateOptions) error {
	return e.withStore(func(s *store.Store) error {
		res, err := s.Migrate()
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.out, res)
		}
		switch {
		case res.Changed:
			fmt.Fprintf(e.out, "Migrated the store from format %d to %d: main %s carries the view of %s (tree %s)\n",
				res.From, res.To, res.Journal, text.Count(res.Runs, "run", "runs"), res.Tree)
		case res.Journal == "":
			fmt.Fprintf(e.out, "Nothing to migrate: the store has no journal yet (format %d)\n", res.To)
		default:
			fmt.Fprintf(e.out, "Nothing to migrate: the store is in format %d (main %s, %s)\n", res.To, res.Journal, text.Count(res.Runs, "run", "runs"))
		}
		return nil
	})
}
