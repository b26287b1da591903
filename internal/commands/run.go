package commands

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
)

func committedLine(e *env, m *manifest.Manifest) error {
	if e.json {
		return printJSON(e.out, map[string]any{"manifest_id": m.ID, "run_id": m.RunID, "entries": len(m.Entries), "created_at": m.CreatedAt})
	}
	n := len(m.Entries)
	word := "entries"
	if n == 1 {
		word = "entry"
	}
	fmt.Fprintf(e.out, "Committed manifest %s for run %s (%d %s)\n", m.ID, m.RunID, n, word)
	return nil
}

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "record what a piece of work reads: start, mount, commit (or all at once with --id)",
		ArgsUsage: "--id ID URI[@TAG]...",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "id", Usage: "run id for a single-shot run"},
		},
		Action: func(c *cli.Context) error {
			id := c.String("id")
			if id == "" {
				return usageError("run: give --id ID and URIs for a single-shot run, or use run start|mount|commit|list")
			}
			if c.Args().Len() == 0 {
				return usageError("run --id %s: no URIs to mount", id)
			}
			return withStore(c, func(e *env, s *store.Store) error {
				m, _, err := s.RunOnce(c.Context, id, c.Args().Slice())
				if err != nil {
					return err
				}
				return committedLine(e, m)
			})
		},
		Subcommands: []*cli.Command{
			{
				Name:      "start",
				Usage:     "open a run",
				ArgsUsage: "ID",
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 1, 1, "ID"); err != nil {
						return err
					}
					return withStore(c, func(e *env, s *store.Store) error {
						id := c.Args().First()
						if err := s.StartRun(id); err != nil {
							return err
						}
						if e.json {
							return printJSON(e.out, map[string]any{"run_id": id, "open": true})
						}
						fmt.Fprintf(e.out, "Started run %s\n", id)
						return nil
					})
				},
			},
			{
				Name:      "mount",
				Usage:     "read documents and record them in an open run; prints the bytes",
				ArgsUsage: "ID URI[@TAG]...",
				Flags:     mountFlags,
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 2, -1, "ID URI[@TAG]..."); err != nil {
						return err
					}
					return withStore(c, func(e *env, s *store.Store) error {
						id := c.Args().First()
						var out []deliveryJSON
						for _, ref := range c.Args().Slice()[1:] {
							d, content, err := mountOne(c, e, s, id, ref)
							if err != nil {
								return err
							}
							if e.json {
								j := toDeliveryJSON(d)
								out = append(out, j)
								continue
							}
							e.say("readproof: mounted at position %d: %s", d.Position, provenanceLine(d))
							if _, err := e.out.Write(content); err != nil {
								return err
							}
						}
						if e.json {
							return printJSON(e.out, out)
						}
						return nil
					})
				},
			},
			{
				Name:      "commit",
				Usage:     "freeze an open run into an immutable manifest; prints the manifest id",
				ArgsUsage: "ID",
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 1, 1, "ID"); err != nil {
						return err
					}
					return withStore(c, func(e *env, s *store.Store) error {
						m, err := s.CommitRun(c.Args().First())
						if err != nil {
							return err
						}
						return committedLine(e, m)
					})
				},
			},
			{
				Name:  "list",
				Usage: "list committed and open runs",
				Action: func(c *cli.Context) error {
					return withStore(c, func(e *env, s *store.Store) error {
						runs, err := s.Runs()
						if err != nil {
							return err
						}
						if e.json {
							if runs == nil {
								runs = []store.RunInfo{}
							}
							return printJSON(e.out, runs)
						}
						tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
						fmt.Fprintln(tw, "RUN\tSTATE\tMANIFEST")
						for _, r := range runs {
							state, m := "committed", r.Manifest
							if r.Open {
								state, m = "open", "-"
							}
							fmt.Fprintf(tw, "%s\t%s\t%s\n", r.RunID, state, m)
						}
						return tw.Flush()
					})
				},
			},
		},
	}
}

// mountFlags and mountOne are extended by the proof-of-read feature.
var mountFlags []cli.Flag

var mountOne = func(c *cli.Context, e *env, s *store.Store, id, ref string) (*store.Delivery, []byte, error) {
	d, err := s.Mount(c.Context, id, ref)
	if err != nil {
		return nil, nil, err
	}
	return d, d.Content, nil
}
