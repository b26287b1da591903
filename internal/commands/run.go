package commands

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/proofread"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

func committedLine(e *env, m *manifest.Manifest) error {
	if e.json {
		return printJSON(e.out, map[string]any{"manifest_id": m.ID, "run_id": m.RunID, "entries": len(m.Entries), "created_at": m.CreatedAt})
	}
	fmt.Fprintf(e.out, "Committed manifest %s for run %s (%s)\n", m.ID, m.RunID, text.Count(len(m.Entries), "entry", "entries"))
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
			return withEnv(c, func(e *env) error {
				return runOnce(c.Context, e, runOnceOptions{ID: c.String("id")}, c.Args().Slice())
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
					return withEnv(c, func(e *env) error { return runStart(c.Context, e, c.Args().Slice()) })
				},
			},
			{
				Name:      "mount",
				Usage:     "read documents and record them in an open run; prints the bytes",
				ArgsUsage: "ID URI[@TAG]...",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "probe", Usage: "append a proof-of-read probe line to each document (needs a key: readproof probe key init)"},
					&cli.StringFlag{Name: "probe-key", Usage: "the probe key file (default: [probe] key in readproof.toml, else $XDG_CONFIG_HOME/readproof/probe.key)"},
				},
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 2, -1, "ID URI[@TAG]..."); err != nil {
						return err
					}
					opts := mountOptions{Probe: c.Bool("probe"), ProbeKey: c.String("probe-key")}
					return withEnv(c, func(e *env) error { return runMount(c.Context, e, opts, c.Args().Slice()) })
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
					return withEnv(c, func(e *env) error { return runCommit(c.Context, e, c.Args().Slice()) })
				},
			},
			{
				Name:  "list",
				Usage: "list committed and open runs",
				Action: func(c *cli.Context) error {
					return withEnv(c, func(e *env) error { return runList(c.Context, e) })
				},
			},
		},
	}
}

// runOnceOptions are the flags of `run --id`.
type runOnceOptions struct {
	ID string
}

func runOnce(ctx context.Context, e *env, opts runOnceOptions, args []string) error {
	if opts.ID == "" {
		return usageError("run: give --id ID and URIs for a single-shot run, or use run start|mount|commit|list")
	}
	if len(args) == 0 {
		return usageError("run --id %s: no URIs to mount", opts.ID)
	}
	return e.withStore(func(s *store.Store) error {
		m, _, err := s.RunOnce(ctx, opts.ID, args)
		if err != nil {
			return err
		}
		return committedLine(e, m)
	})
}

func runStart(_ context.Context, e *env, args []string) error {
	return e.withStore(func(s *store.Store) error {
		id := args[0]
		if err := s.StartRun(id); err != nil {
			return err
		}
		if e.json {
			return printJSON(e.out, map[string]any{"run_id": id, "open": true})
		}
		fmt.Fprintf(e.out, "Started run %s\n", id)
		return nil
	})
}

// mountOptions are the flags of `run mount`.
type mountOptions struct {
	Probe    bool   // append a proof-of-read probe line
	ProbeKey string // the probe key file ("" for the configured one)
}

// runMount mounts args[1:] in the open run args[0] and prints the bytes
// (or, with --json, the deliveries).
func runMount(ctx context.Context, e *env, opts mountOptions, args []string) error {
	return e.withStore(func(s *store.Store) error {
		id := args[0]
		var keys probe.Keys
		if opts.Probe {
			k, _, err := proofread.LoadKeys(opts.ProbeKey, s)
			if err != nil {
				return err
			}
			keys = k
		}
		var out []deliveryJSON
		for _, ref := range args[1:] {
			var d *store.Delivery
			if opts.Probe {
				pm, err := proofread.Mount(ctx, s, keys, id, ref)
				if err != nil {
					return err
				}
				e.say("readproof: probe line appended for session %s (bucket %d); delivered %s, %d bytes", pm.Session, pm.Probe.Bucket, manifest.Short(pm.Probe.DeliveredHash), pm.Probe.DeliveredSize)
				d = pm.Delivery
			} else {
				var err error
				if d, err = s.Mount(ctx, id, ref); err != nil {
					return err
				}
			}
			if e.json {
				out = append(out, toDeliveryJSON(d))
				continue
			}
			e.say("readproof: mounted at position %d: %s", d.Position, provenanceLine(d))
			if _, err := e.out.Write(d.Content); err != nil {
				return err
			}
		}
		if e.json {
			return printJSON(e.out, out)
		}
		return nil
	})
}

func runCommit(ctx context.Context, e *env, args []string) error {
	return e.withStore(func(s *store.Store) error {
		m, err := s.CommitRunContext(ctx, args[0])
		if err != nil {
			return err
		}
		return committedLine(e, m)
	})
}

func runList(_ context.Context, e *env) error {
	return e.withStore(func(s *store.Store) error {
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
}
