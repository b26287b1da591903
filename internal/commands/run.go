package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/progress"
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
			if first := c.Args().First(); c.String("id") == "" && first != "" && !strings.Contains(first, "://") {
				if second := c.Args().Get(1); strings.Contains(second, "://") && text.Nearest(first, subcommandNames(c.Command)) == "" && identity.ValidateRunID(first) == nil {
					// a run id given without --id (`run r1 URI`); a word
					// no run may be named (`run ./a.md URI`) is not one
					line := "readproof run --id " + text.ShellArg(first) + " " + text.ShellArg(second)
					if c.NArg() > 2 {
						line += " ..."
					}
					return withCode(ExitUsage, hint.With(fmt.Errorf("unknown command %q", "run "+first),
						"to record a run with this id, give it with --id: "+line+" (see `readproof run --help`)"))
				}
				// a subcommand mistyped (`run strat r1`), not a URI
				return unknownCommandError("run ", c.Command.Subcommands, first)
			}
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
					&cli.BoolFlag{Name: "verbose", Usage: "a stderr line per mounted document instead of one summary line"},
				},
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 2, -1, "ID URI[@TAG]..."); err != nil {
						return err
					}
					opts := mountOptions{Probe: c.Bool("probe"), ProbeKey: c.String("probe-key"), Verbose: c.Bool("verbose")}
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
				Name:      "show",
				Usage:     "show an open run: when it started and the entries mounted so far (a committed run: its manifest)",
				ArgsUsage: "ID",
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 1, 1, "ID"); err != nil {
						return err
					}
					return withEnv(c, func(e *env) error { return runShow(c.Context, e, c.Args().Slice()) })
				},
			},
			{
				Name:      "abort",
				Usage:     "discard an open run; reversible with run reopen until gc's grace period has passed",
				ArgsUsage: "ID",
				Description: "The open run's entries are kept under an aborted ref (local, never pushed) until `readproof gc`\n" +
					"runs after its grace period (default 2w); `readproof run reopen ID` opens the run again before that.",
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 1, 1, "ID"); err != nil {
						return err
					}
					return withEnv(c, func(e *env) error { return runAbort(c.Context, e, c.Args().Slice()) })
				},
			},
			{
				Name:      "reopen",
				Usage:     "undo the newest abort of a run: it is open again with the entries it had",
				ArgsUsage: "ID",
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 1, 1, "ID"); err != nil {
						return err
					}
					return withEnv(c, func(e *env) error { return runReopen(c.Context, e, c.Args().Slice()) })
				},
			},
			{
				Name:  "list",
				Usage: "list committed, open and aborted runs",
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 0, 0, ""); err != nil {
						return err
					}
					return withEnv(c, func(e *env) error { return runList(c.Context, e) })
				},
			},
		},
	}
}

// subcommandNames are the names of cmd's visible subcommands.
func subcommandNames(cmd *cli.Command) []string {
	var names []string
	for _, c := range cmd.Subcommands {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return names
}

// runOnceOptions are the flags of `run --id`.
type runOnceOptions struct {
	ID string
}

func runOnce(ctx context.Context, e *env, opts runOnceOptions, args []string) error {
	if opts.ID == "" {
		if len(args) > 0 {
			line := "readproof run --id ID " + text.ShellArg(args[0])
			if len(args) > 1 {
				line += " ..."
			}
			return withCode(ExitUsage, hint.With(fmt.Errorf("run %s: no --id: a one-step run needs the id to record it under", text.Printable(args[0])),
				"give one: "+line+"; or record it step by step with run start, mount and commit (see `readproof run --help`)"))
		}
		return usageError("run: give --id ID and URIs for a single-shot run, or use run start|mount|commit|show|abort|reopen|list")
	}
	if len(args) == 0 {
		return withCode(ExitUsage, hint.With(fmt.Errorf("run --id %s: no URIs to mount", opts.ID), "name the documents the run reads: readproof run --id "+opts.ID+" URI[@TAG]... (`readproof resource list` shows them)"))
	}
	largeRunGC(len(args))
	largePolicyGC(e.policyPath, len(args))
	return e.withStore(func(s *store.Store) error {
		line := progress.Start(e.err, "run", "documents", e.json)
		m, err := s.RunOnceProgress(ctx, opts.ID, args, progressOver(line, 2))
		line.Stop()
		if err != nil {
			return readingInterrupted(ctx, "run --id "+opts.ID, "nothing of the run was recorded", err)
		}
		return committedLine(e, m)
	})
}

// largeRun is the number of documents from which `run --id` runs the
// collector with largeRunGOGC, and hugeRun the number from which it runs
// it with hugeRunGOGC.
const (
	largeRun     = 2000
	largeRunGOGC = 40
	hugeRun      = 5000
	hugeRunGOGC  = 10
)

// largeRunGC lets the garbage collector of a `run --id` of largeRun
// documents or more collect when the heap has grown by 40% of what was
// live after the last collection (GOGC=40) instead of by all of it, and
// from hugeRun documents by 10%. Such a run holds about 1 KB a document
// until it is committed (docs/scaling.md, "Memory of a large run"), which at
// 2,000 documents passes what the process holds anyway, and Go's default
// headroom doubles it: at 10,000 documents the peak RSS drops by about 10
// MB at GOGC=40 (GOGC=50 took 9, 40 another 1.5 for about 7% more CPU),
// and by 6 MB more at GOGC=10 (44 -> 38 MiB, for about a quarter more CPU:
// 1.2 -> 1.5 s, where the peer takes minutes; docs/cli.md). It is left
// alone when the user set GOGC or GOMEMLIMIT, and only this CLI action
// calls it (the MCP server keeps Go's default).
func largeRunGC(docs int) {
	switch {
	case docs >= hugeRun:
		setGCPercentUnlessUserSet(hugeRunGOGC)
	case docs >= largeRun:
		setGCPercentUnlessUserSet(largeRunGOGC)
	}
}

// largePolicyDocs is the number of documents up to which a `run --id` or a
// `get` under a large policy file runs the collector with largePolicyGOGC.
const (
	largePolicyDocs = 16
	largePolicyGOGC = 200
)

// largePolicyGC lets the garbage collector of a `get`, or of a `run --id`
// of largePolicyDocs documents or fewer, wait until the heap is three times
// what was live (GOGC=200) instead of twice when the policy file at path is
// large (policy.CacheMinBytes or more, about 600 resources). Such a
// command's heap is mostly the policy's resources, live until it exits:
// with 10,000 of them (3.5 MB) Go's default collected twice during a
// 1-document `get`, rescanning them, about a third of its CPU (16 -> 11 ms;
// docs/scaling.md, session 26), and the heap stays under 8 MB. It is left
// alone when the user set GOGC or GOMEMLIMIT, and only these CLI actions
// call it.
func largePolicyGC(path string, docs int) {
	if docs > largePolicyDocs {
		return
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() >= policy.CacheMinBytes {
		setGCPercentUnlessUserSet(largePolicyGOGC)
	}
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
	Verbose  bool   // a stderr line per entry instead of one summary
}

// runMount mounts args[1:] in the open run args[0] and prints the bytes
// (or, with --json, the deliveries).
func runMount(ctx context.Context, e *env, opts mountOptions, args []string) error {
	if err := identity.ValidateRunID(args[0]); err != nil && strings.HasPrefix(args[0], "readproof://") && len(args) == 2 && identity.ValidateRunID(args[1]) == nil {
		// the arguments swapped
		return withCode(ExitUsage, hint.With(err, "the run id comes first: readproof run mount "+args[1]+" "+args[0]))
	}
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
		if !opts.Probe {
			return mountMany(ctx, e, s, opts, id, args[1:])
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

// mountMany mounts refs in one store commit and prints the bytes in order
// (or, with --json, the deliveries); stderr gets one summary line, or a
// line per entry with --verbose or for a single URI.
func mountMany(ctx context.Context, e *env, s *store.Store, opts mountOptions, id string, refs []string) error {
	line := progress.Start(e.err, "run mount", "documents", e.json)
	ds, err := s.MountMany(ctx, id, refs, progressOver(line, 2))
	line.Stop()
	if err != nil {
		return readingInterrupted(ctx, "run mount "+id, "nothing of this mount was recorded: the open run is as it was", err)
	}
	if e.json {
		out := make([]deliveryJSON, 0, len(ds))
		for _, d := range ds {
			out = append(out, toDeliveryJSON(d))
		}
		return printJSON(e.out, out)
	}
	for _, d := range ds {
		if opts.Verbose || len(ds) == 1 {
			e.say("readproof: mounted at position %d: %s", d.Position, provenanceLine(d))
		}
		if _, err := e.out.Write(d.Content); err != nil {
			return err
		}
	}
	if len(ds) > 1 && !opts.Verbose {
		e.say("readproof: mounted %d documents in run %s at positions %d-%d (--verbose lists each)", len(ds), id, ds[0].Position, ds[len(ds)-1].Position)
	}
	return nil
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
	return e.withReadStore(func(s *store.Store) error {
		runs, err := s.Runs()
		if err != nil {
			return err
		}
		aborted, err := s.AbortedRuns()
		if err != nil {
			return err
		}
		for _, a := range aborted {
			at := a.AbortedAt
			runs = append(runs, store.RunInfo{RunID: a.RunID, Aborted: true, AbortedAt: &at})
		}
		if e.json {
			if runs == nil {
				runs = []store.RunInfo{}
			}
			return printJSON(e.out, runs)
		}
		if len(runs) == 0 {
			// a "nothing here" note, on stderr as remote list's and tag
			// list's: stdout holds no table without rows
			e.say("no runs in %s; record one with `readproof run --id ID URI...` (or `readproof run start ID`)", text.Printable(e.storePath))
			return nil
		}
		tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tSTATE\tMANIFEST")
		for _, r := range runs {
			state, m := "committed", r.Manifest
			switch {
			case r.Open:
				state, m = "open", "-"
			case r.Aborted:
				state, m = "aborted "+textTime(*r.AbortedAt), "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", text.Printable(r.RunID), state, m) // a ref's name
		}
		return tw.Flush()
	})
}

// progressOver is line's Update for work of more than min units, else nil:
// a run of one document draws no line.
func progressOver(line *progress.Line, min int) func(done, total int) {
	if line == nil {
		return nil
	}
	return func(done, total int) {
		if total > min {
			line.Update(done, total)
		}
	}
}

// runShow is `readproof run show ID`: an open run's entries so far; a
// committed run is shown as `readproof manifest ID` shows it.
func runShow(ctx context.Context, e *env, args []string) error {
	var committed bool
	err := e.withStore(func(s *store.Store) error {
		r, err := s.OpenRunNamed(args[0])
		if errors.Is(err, store.ErrRunCommitted) {
			committed = true
			return nil
		}
		if errors.Is(err, store.ErrUnknownRun) {
			if aborted, aerr := s.AbortedRuns(); aerr == nil {
				for _, a := range aborted {
					if a.RunID == args[0] {
						return hint.With(fmt.Errorf("run %s: %w (aborted %s with %s)", args[0], store.ErrUnknownRun, textTime(a.AbortedAt), text.Count(a.Entries, "entry", "entries")),
							"open it again with: readproof run reopen "+args[0])
					}
				}
			}
			h := "`readproof run list` lists the open, aborted and committed runs"
			if near := s.NearRun(args[0]); near != "" {
				h = "did you mean " + near + "? (" + h + ")"
			}
			return hint.With(fmt.Errorf("run %s: %w", args[0], store.ErrUnknownRun), h)
		}
		if err != nil {
			return err
		}
		if e.json {
			entries := r.Entries
			if entries == nil {
				entries = []manifest.Entry{}
			}
			return printJSON(e.out, map[string]any{"run_id": r.RunID, "open": true, "started_at": r.StartedAt, "entries": entries})
		}
		fmt.Fprintf(e.out, "run      %s (open)\nstarted  %s\nentries  %d\n", r.RunID, textTime(r.StartedAt), len(r.Entries))
		if len(r.Entries) == 0 {
			return nil
		}
		fmt.Fprintln(e.out)
		tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "POS\tURI\tREF\tSNAPSHOT\tCONTENT_HASH\tDECISION")
		for _, en := range r.Entries {
			ref := en.Ref
			if ref == "" {
				ref = "-"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", en.Position, en.URI, ref, manifest.Short(en.Snapshot), manifest.Short(en.ContentHash), en.Decision)
		}
		return tw.Flush()
	})
	if err == nil && committed {
		return runManifest(ctx, e, formatOptions{}, args)
	}
	return err
}

// runAbort is `readproof run abort ID`.
func runAbort(_ context.Context, e *env, args []string) error {
	return e.withStore(func(s *store.Store) error {
		a, err := s.AbortRun(args[0])
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.out, a)
		}
		fmt.Fprintf(e.out, "Aborted run %s (%s mounted)\n", a.RunID, text.Count(a.Entries, "entry", "entries"))
		e.say("readproof: hint: `readproof run reopen %s` opens it again until gc runs after its grace period (default 2w)", a.RunID)
		return nil
	})
}

// runReopen is `readproof run reopen ID`.
func runReopen(_ context.Context, e *env, args []string) error {
	return e.withStore(func(s *store.Store) error {
		a, err := s.ReopenRun(args[0])
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.out, map[string]any{"run_id": a.RunID, "open": true, "entries": a.Entries, "aborted_at": a.AbortedAt})
		}
		fmt.Fprintf(e.out, "Reopened run %s (%s mounted)\n", a.RunID, text.Count(a.Entries, "entry", "entries"))
		return nil
	})
}
