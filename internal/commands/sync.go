package commands

// Sharing run history over git (package share): remote add|list|rm, push,
// pull, clone, and the conflicts a pull can leave.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/proofread"
	"github.com/readproof/readproof/internal/share"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// shareOptions shows git's progress and lets git ask for credentials when
// stderr is a terminal.
func shareOptions(e *env) share.Options {
	var o share.Options
	if isTerminal(e.err) {
		o = share.Options{Progress: e.err, Interactive: true}
		if e.json {
			o.Progress = nil // machine output: no progress bytes
		}
	}
	o.Notice = e.err
	// A ref lock left on a remote on this machine goes stale like a local one.
	if d, err := time.ParseDuration(os.Getenv("READPROOF_STALE_LOCK_AGE")); err == nil && d > 0 {
		o.StaleLockAge = d
	}
	return o
}

// maxFetchCLIFlag is pull's and clone's bound on what one git fetch may
// receive.
func maxFetchCLIFlag() cli.Flag {
	return &cli.StringFlag{Name: strings.TrimPrefix(gitstore.MaxFetchFlag, "--"), Value: policy.FormatSize(gitstore.DefaultMaxFetchBytes),
		Usage: "stop a fetch, changing nothing, once the remote has sent more than `SIZE` (such as 512MiB or 8GiB)"}
}

// maxFetchFlag reads --max-fetch-bytes (0 when not given: the default).
func maxFetchFlag(c *cli.Context) (int64, error) {
	name := strings.TrimPrefix(gitstore.MaxFetchFlag, "--")
	if !c.IsSet(name) {
		return 0, nil
	}
	n, err := policy.ParseSize(c.String(name))
	if err != nil {
		return 0, withCode(ExitUsage, hint.With(fmt.Errorf("%s: %w", gitstore.MaxFetchFlag, err), `write a size such as "512MiB" or "8GiB"`))
	}
	return n, nil
}

// syncErr gives share's errors their exit codes.
func syncErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, share.ErrUnverified):
		return withCode(ExitMismatch, err)
	case strings.HasPrefix(err.Error(), "remote name "):
		return withCode(ExitUsage, err)
	}
	return err
}

// syncInterrupted is err of push, pull or clone as an interruption when a
// signal ended ctx: git was killed, and the error's own hint (a remote
// that cannot be reached, objects to check) would send the user the wrong
// way. again says what to run (and what the interruption left).
func syncInterrupted(ctx context.Context, err error, again string) error {
	if err == nil || ctx.Err() == nil || !errors.Is(err, context.Canceled) {
		return syncErr(err)
	}
	return withCode(ExitInterrupted, hint.With(err, "interrupted: "+again))
}

func remoteArg(args []string, i int) string {
	if len(args) > i {
		return args[i]
	}
	return "origin"
}

func remoteCommand() *cli.Command {
	return &cli.Command{
		Name:  "remote",
		Usage: "manage the git remotes runs are shared through (kept in the store's git config)",
		Subcommands: []*cli.Command{
			remoteInitCommand(),
			{
				Name:      "add",
				Usage:     "add a remote: a repository path, file://, git://, ssh:// or http(s):// URL",
				ArgsUsage: "NAME URL",
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 2, 2, "NAME URL"); err != nil {
						return err
					}
					return withEnv(c, func(e *env) error { return runRemoteAdd(c.Context, e, c.Args().Slice()) })
				},
			},
			{
				Name:    "list",
				Aliases: []string{"ls"},
				Usage:   "list the remotes (passwords in URLs are redacted)",
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 0, 0, ""); err != nil {
						return err
					}
					return withEnv(c, func(e *env) error { return runRemoteList(c.Context, e) })
				},
			},
			{
				Name:      "rm",
				Aliases:   []string{"remove"},
				Usage:     "remove a remote and its tracking refs (nothing pulled from it is touched)",
				ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 1, 1, "NAME"); err != nil {
						return err
					}
					return withEnv(c, func(e *env) error { return runRemoteRm(c.Context, e, c.Args().Slice()) })
				},
			},
		},
	}
}

func pushCommand() *cli.Command {
	return &cli.Command{
		Name:      "push",
		Usage:     "send committed runs, resources, tags and the journal to a remote (never overwrites remote data)",
		ArgsUsage: "[REMOTE]  (default origin)",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, 1, "[REMOTE]"); err != nil {
				return err
			}
			return withEnv(c, func(e *env) error { return runPush(c.Context, e, c.Args().Slice()) })
		},
	}
}

func pullCommand() *cli.Command {
	return &cli.Command{
		Name:      "pull",
		Usage:     "fetch a remote's runs, resources, tags and journal, verify them, and integrate them",
		ArgsUsage: "[REMOTE]  (default origin)",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, 1, "[REMOTE]"); err != nil {
				return err
			}
			max, err := maxFetchFlag(c)
			if err != nil {
				return err
			}
			return withEnv(c, func(e *env) error { return runPull(c.Context, e, c.Args().Slice(), max) })
		},
		Flags: []cli.Flag{maxFetchCLIFlag()},
	}
}

func printPull(e *env, head string, res *share.PullResult) {
	if res.UpToDate {
		fmt.Fprintf(e.out, "Already up to date with %s\n", res.Remote)
		return
	}
	parts := []string{text.Count(len(res.NewRuns), "new run", "new runs")}
	if n := len(res.Resources); n > 0 {
		parts = append(parts, text.Count(n, "resource updated", "resources updated"))
	}
	if n := len(res.Merged); n > 0 {
		parts = append(parts, text.Count(n, "resource merged", "resources merged"))
	}
	if n := len(res.Tags); n > 0 {
		parts = append(parts, text.Count(n, "tag updated", "tags updated"))
	}
	if n := len(res.Receipts) + len(res.ReceiptsMerged); n > 0 {
		parts = append(parts, text.Count(n, "receipt chain updated", "receipt chains updated"))
	}
	if n := len(res.Verdicts) + len(res.VerdictsMerged); n > 0 {
		parts = append(parts, text.Count(n, "verdict record updated", "verdict records updated"))
	}
	parts = append(parts, "journal "+res.Journal)
	fmt.Fprintf(e.out, "%s: %s; %s verified\n", head, strings.Join(parts, ", "), text.Count(res.Verified, "manifest", "manifests"))
	// one table, as other lists: each manifest id under the others
	rows := make([][]string, len(res.NewRuns))
	for i, r := range res.NewRuns {
		rows[i] = []string{"  new run " + r.RunID, "manifest " + string(r.Manifest)}
	}
	_ = writeTable(e.out, rows) // a failed write is outWriter's to report, as for the lines above
	for _, r := range res.Recorded {
		fmt.Fprintf(e.out, "  recorded run %s (manifest %s) on the journal: the remote's journal did not reach it\n", r.RunID, r.Manifest)
	}
	for _, c := range res.ReceiptConflicts {
		e.say("readproof: conflict: receipt %s in %s differs on the two sides; the local receipt stays", c.Receipt, c.Chain)
	}
}

func reportConflicts(e *env, runs []share.RunConflict, tags []share.TagConflict) {
	for _, r := range runs {
		local := r.Local
		if local == "" {
			local = "(none)"
		}
		e.say("readproof: conflict: run %s has more than one manifest: local %s, other %s; both are kept", r.RunID, local, strings.Join(r.Others, ", "))
		e.say("readproof: hint: give one another id: readproof conflicts rename %s NEW-ID [--manifest %s]", r.RunID, r.Others[0])
	}
	for _, t := range tags {
		e.say("readproof: conflict: %s@%s moved on both sides: local %s, remote %s; the local value stays", t.URI, t.Tag, tagValue(t.Local), tagValue(t.Remote))
		e.say("readproof: hint: settle it with: readproof conflicts resolve %s %s --take local|remote", t.URI, t.Tag)
	}
}

func tagValue(t *store.TagState) string {
	switch {
	case t == nil:
		return "(absent)"
	case t.Deleted:
		return "(deleted)"
	}
	return "snapshot " + manifest.Short(t.Snapshot)
}

func cloneCommand() *cli.Command {
	return &cli.Command{
		Name:      "clone",
		Usage:     "create a store from a remote (a repository path, file://, git://, ssh:// or http(s):// URL), verifying everything",
		ArgsUsage: "URL [DIR]  (default: the store path, .readproof beside readproof.toml)",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, 2, "URL [DIR]"); err != nil {
				return err
			}
			max, err := maxFetchFlag(c)
			if err != nil {
				return err
			}
			return withEnv(c, func(e *env) error { return runClone(c.Context, e, c.Args().Slice(), max) })
		},
		Flags: []cli.Flag{maxFetchCLIFlag()},
	}
}

func conflictsCommand() *cli.Command {
	return &cli.Command{
		Name:  "conflicts",
		Usage: "list and settle what pulls left in conflict: run ids with two manifests, tags moved on both sides",
		Subcommands: []*cli.Command{
			{
				Name:    "list",
				Aliases: []string{"ls"},
				Usage:   "list run ids with more than one manifest and tags that moved on both sides",
				Description: "A pull that finds conflicts exits 0 (everything else was adopted). With --exit-code the exit\n" +
					"status is 6 while any conflict is pending, so a script can tell after `pull` and `push`.",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "exit-code", Usage: "exit with status 6 while a conflict is pending"},
				},
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 0, 0, "[--exit-code]"); err != nil {
						return err
					}
					return withEnv(c, func(e *env) error { return runConflictsList(c.Context, e, c.Bool("exit-code")) })
				},
			},
			{
				Name:      "show",
				Usage:     "list the moves of the remote side of a tag conflict, newest first",
				ArgsUsage: "URI TAG  (or URI@TAG)",
				Action: func(c *cli.Context) error {
					return withEnv(c, func(e *env) error { return runConflictsShow(c.Context, e, c.Args().Slice()) })
				},
			},
			{
				Name:      "resolve",
				Usage:     "settle a tag conflict with the local or the remote value (both histories are kept)",
				ArgsUsage: "URI TAG --take local|remote  (or URI@TAG)",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "take", Usage: "local or remote (required)"},
				},
				Action: func(c *cli.Context) error {
					opts := conflictsResolveOptions{Take: c.String("take")}
					return withEnv(c, func(e *env) error { return runConflictsResolve(c.Context, e, opts, c.Args().Slice()) })
				},
			},
			{
				Name:      "rename",
				Usage:     "give a committed run another id (the manifest is untouched); settles a run conflict",
				ArgsUsage: "RUN NEW-ID [--manifest ID]",
				Description: "Without --manifest, the local run RUN gets NEW-ID, and when exactly one other manifest waits\n" +
					"under RUN it takes the name RUN. With --manifest, that conflicting manifest gets NEW-ID and the\n" +
					"local run keeps RUN. Rename your own run to settle a conflict on every store.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "manifest", Usage: "the manifest to rename (an id listed by readproof conflicts list)"},
				},
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 2, 2, "RUN NEW-ID [--manifest ID]"); err != nil {
						return err
					}
					opts := conflictsRenameOptions{Manifest: c.String("manifest")}
					return withEnv(c, func(e *env) error { return runConflictsRename(c.Context, e, opts, c.Args().Slice()) })
				},
			},
		},
	}
}

// runRemoteAdd is `readproof remote add`.
func runRemoteAdd(ctx context.Context, e *env, args []string) error {
	return e.withStore(func(s *store.Store) error {
		name, url := args[0], args[1]
		if err := share.AddRemote(ctx, s, name, url); err != nil {
			return syncErr(err)
		}
		if err := share.SchemeTypo(name, url); err != nil {
			e.warn(err)
		}
		r := share.Remote{Name: name, URL: url}
		// say what was stored (a local path made absolute), as remote list will
		if list, err := share.ListRemotes(ctx, s); err == nil {
			for _, l := range list {
				if l.Name == name {
					r = l
				}
			}
		}
		if e.json {
			return printJSON(e.out, map[string]string{"name": name, "url": r.DisplayURL()})
		}
		fmt.Fprintf(e.out, "Added remote %s -> %s\n", name, r.DisplayURL())
		return nil
	})
}

// runRemoteList is `readproof remote list`.
func runRemoteList(ctx context.Context, e *env) error {
	return e.withStore(func(s *store.Store) error {
		list, err := share.ListRemotes(ctx, s)
		if err != nil {
			return err
		}
		for i := range list {
			list[i].URL = list[i].DisplayURL()
		}
		if e.json {
			return printJSON(e.out, list)
		}
		if len(list) == 0 {
			e.say("no remotes; add one with `readproof remote add origin URL`")
			return nil
		}
		tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
		for _, r := range list {
			fmt.Fprintf(tw, "%s\t%s\n", r.Name, r.URL)
		}
		return tw.Flush()
	})
}

// runRemoteRm is `readproof remote rm`.
func runRemoteRm(ctx context.Context, e *env, args []string) error {
	return e.withStore(func(s *store.Store) error {
		name := args[0]
		if err := share.RemoveRemote(ctx, s, name); err != nil {
			return syncErr(err)
		}
		if e.json {
			return printJSON(e.out, map[string]string{"removed": name})
		}
		fmt.Fprintf(e.out, "Removed remote %s\n", name)
		return nil
	})
}

// runPush is `readproof push`.
func runPush(ctx context.Context, e *env, args []string) error {
	return e.withStore(func(s *store.Store) error {
		remote := remoteArg(args, 0)
		res, err := share.Push(ctx, s, remote, shareOptions(e))
		if err != nil {
			return syncInterrupted(ctx, err, "the remote's refs moved all or none (one atomic push); run `readproof push"+argTail(remote)+"` again")
		}
		for _, w := range res.Warnings {
			e.say("readproof: warning: %s", text.Escape(w)) // names the remote's HEAD, any ref
		}
		for _, t := range res.Skipped {
			e.say("readproof: warning: %s not pushed: it moved on both sides; settle it with `readproof conflicts resolve %s --take local|remote`", t, t)
		}
		if e.json {
			return printJSON(e.out, res)
		}
		switch {
		case res.UpToDate:
			fmt.Fprintf(e.out, "Everything up to date with %s\n", remote)
		case res.Refs == 0:
			fmt.Fprintf(e.out, "Nothing else to push to %s\n", remote)
		default:
			fmt.Fprintf(e.out, "Pushed %s to %s (%d refs)\n", text.Count(len(res.Runs), "run", "runs"), remote, res.Refs)
		}
		for _, r := range res.Conflicts {
			e.say("readproof: warning: run %s (manifest %s) not pushed: %s's run %s names another manifest; share it under another id: readproof conflicts rename %s NEW-ID", r.RunID, r.Manifest, remote, r.RunID, r.RunID)
		}
		return nil
	})
}

// runPull is `readproof pull`.
func runPull(ctx context.Context, e *env, args []string, maxFetch int64) error {
	return e.withStore(func(s *store.Store) error {
		remote := remoteArg(args, 0)
		opts := shareOptions(e)
		opts.MaxFetchBytes = maxFetch
		// with the probe key, every verdict record pulled in is checked
		// against its MAC before anything is adopted
		keys, keyPath, keyWarn := proofread.CheckKeys(s)
		opts.ProbeKeys = keys
		res, err := share.Pull(ctx, s, remote, opts)
		if err != nil {
			return syncInterrupted(ctx, err, "run `readproof pull"+argTail(remote)+"` again: it fetches what is missing and moves the refs this one did not (`readproof verify` checks the store meanwhile)")
		}
		warnVerdictMACs(e, res, keys, keyPath, keyWarn)
		if res.JournalUnrelated {
			e.say("readproof: warning: %s's journal shared no history with this store's: its runs come from stores this one had never exchanged with, and are now part of it (a first exchange, or another team's remote: check its URL with `readproof remote list`); a push sends this store's runs there", remote)
		}
		reportConflicts(e, res.RunConflicts, res.TagConflicts)
		reportRefusedProposals(e, res.ProposalsRefused, res.ProposalsStale)
		if e.json {
			return printJSON(e.out, res)
		}
		printPull(e, "Pulled from "+remote, res)
		return nil
	})
}

// warnVerdictMACs says once that the verdict records a pull or clone
// adopted were not checked against their MACs, when no probe key was usable.
func warnVerdictMACs(e *env, res *share.PullResult, keys *probe.Keys, keyPath string, keyWarn error) {
	if keys != nil || len(res.Verdicts)+len(res.VerdictsMerged) == 0 {
		return
	}
	if keyWarn != nil {
		e.say("readproof: warning: %s", proofread.NotCheckedWarning(keyWarn))
		return
	}
	e.say("readproof: warning: verdict record MACs not checked: no probe key at %s; `readproof verify` checks them once the key is there", keyPathOrDefault(keyPath))
}

// keyPathOrDefault names the probe key file looked for, or says none could be
// named.
func keyPathOrDefault(p string) string {
	if p == "" {
		return "the default path (no user config directory)"
	}
	return p
}

// runConflictsList is `readproof conflicts list`; with exitCode, it fails
// with ExitConflicts while a conflict is pending.
func runConflictsList(_ context.Context, e *env, exitCode bool) error {
	return e.withStore(func(s *store.Store) error {
		rep, err := share.Conflicts(s)
		if err != nil {
			return err
		}
		if err := printConflicts(e, rep); err != nil || !exitCode || rep.Empty() {
			return err
		}
		return withCode(ExitConflicts, hint.With(fmt.Errorf("conflicts: %s and %s pending", text.Count(len(rep.Runs), "run id", "run ids"), text.Count(len(rep.Tags), "tag", "tags")),
			"give a run another id with `readproof conflicts rename RUN NEW-ID`, settle a tag with `readproof conflicts resolve URI TAG --take local|remote`, then push"))
	})
}

func printConflicts(e *env, rep *share.ConflictReport) error {
	if e.json {
		return printJSON(e.out, rep)
	}
	if rep.Empty() {
		e.say("no conflicts")
		return nil
	}
	tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
	if len(rep.Runs) > 0 {
		fmt.Fprintln(tw, "RUN\tLOCAL MANIFEST\tOTHER MANIFESTS")
		for _, r := range rep.Runs {
			local := r.Local
			if local == "" {
				local = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", r.RunID, local, strings.Join(r.Others, " "))
		}
	}
	if len(rep.Tags) > 0 {
		if len(rep.Runs) > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintln(tw, "TAG\tLOCAL\tREMOTE\tREMOTE SET_AT")
		for _, t := range rep.Tags {
			fmt.Fprintf(tw, "%s@%s\t%s\t%s\t%s\n", t.URI, t.Tag, tagValue(t.Local), tagValue(t.Remote), textTime(t.Remote.SetAt))
		}
	}
	return tw.Flush()
}

// runConflictsShow is `readproof conflicts show`.
func runConflictsShow(_ context.Context, e *env, args []string) error {

	u, tag, rest, err := uriAndTag(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError("conflicts show: too many arguments")
	}
	return e.withStore(func(s *store.Store) error {
		h, err := share.ConflictTagHistory(s, u, tag)
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.out, h)
		}
		return printTagHistory(e, movesOf(h))
	})
}

// conflictsResolveOptions are the flags of `readproof conflicts resolve`.
type conflictsResolveOptions struct {
	Take string // local or remote
}

// runConflictsResolve is `readproof conflicts resolve`.
func runConflictsResolve(_ context.Context, e *env, opts conflictsResolveOptions, args []string) error {

	u, tag, rest, err := uriAndTag(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError("conflicts resolve: too many arguments")
	}
	take := opts.Take
	if take == "" {
		// checked here, not by urfave/cli's Required, whose error exits 1
		return withCode(ExitUsage, hint.With(errors.New("conflicts resolve: missing --take"), "say --take local or --take remote"))
	}
	if take != share.TakeLocal && take != share.TakeRemote {
		return withCode(ExitUsage, hint.With(fmt.Errorf("conflicts resolve: --take %q", take), "say --take local or --take remote"))
	}
	return e.withStore(func(s *store.Store) error {
		t, err := share.ResolveTag(s, u, tag, take, time.Now())
		if err != nil {
			return err
		}
		return tagLine(e, "Resolved ("+take+")", t)
	})
}

// conflictsRenameOptions are the flags of `readproof conflicts rename`.
type conflictsRenameOptions struct {
	Manifest string // the manifest to rename (one listed by `conflicts list`)
}

// runConflictsRename is `readproof conflicts rename`.
func runConflictsRename(_ context.Context, e *env, opts conflictsRenameOptions, args []string) error {
	if m := opts.Manifest; m != "" && !identity.IsObjectID(m) {
		return usageError("conflicts rename: --manifest %q is not a 40-hex manifest id", m)
	}
	return e.withStore(func(s *store.Store) error {
		r, err := share.RenameRun(s, args[0], args[1], opts.Manifest, time.Now())
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.out, r)
		}
		fmt.Fprintf(e.out, "Renamed run %s to %s (manifest %s)\n", r.From, r.To, r.Manifest)
		if r.Promoted != "" {
			fmt.Fprintf(e.out, "Run %s now names manifest %s\n", r.From, r.Promoted)
		}
		return nil
	})
}

// runClone is `readproof clone`.
func runClone(ctx context.Context, e *env, args []string, maxFetch int64) error {
	dir := e.storePath
	if len(args) == 2 {
		dir = args[1]
	}
	url := args[0]
	opts := shareOptions(e)
	opts.MaxFetchBytes = maxFetch
	// with the probe key, every verdict record fetched is checked against
	// its MAC before the clone is kept
	pol, err := e.loadPolicy()
	if err != nil {
		return err
	}
	keys, keyPath, keyWarn := proofread.CheckKeysFor(dir, pol)
	opts.ProbeKeys = keys
	res, err := share.Clone(ctx, url, dir, opts)
	if err != nil {
		return syncInterrupted(ctx, err, "nothing was made at "+dir+" (a clone is built aside and renamed into place once verified); run the clone again")
	}
	warnVerdictMACs(e, res, keys, keyPath, keyWarn)
	reportConflicts(e, res.RunConflicts, nil)
	if e.json {
		// the store's path absolute, as init and gc print it: a script
		// may use it from another directory
		abs, err := filepath.Abs(dir)
		if err != nil {
			abs = dir
		}
		// the URL as origin records it, as remote list shows it
		origin := share.Remote{Name: "origin", URL: share.RecordedURL(url)}
		return printJSON(e.out, map[string]any{"store": abs, "url": origin.DisplayURL(), "result": res})
	}
	fmt.Fprintf(e.out, "Cloned %s from %s into %s (%s verified)\n", text.Count(len(res.NewRuns), "run", "runs"),
		text.Escape(gitstore.RedactURL(url)), text.Escape(dir), text.Count(res.Verified, "manifest", "manifests"))
	sayHowToUse(e, dir)
	return nil
}

// sayHowToUse tells, on stderr, how to reach a clone that the commands run
// here would not find: they look for .readproof beside readproof.toml, or
// use the working directory when it is a store itself. A clone that a
// readproof.toml encloses (DIR inside the project) is not used from inside
// it: the store beside that file wins, so only --store reaches it. The path
// is quoted for a person at a bash prompt (text.ShellArg): a control or
// bidi character in it is escaped, not sent to the terminal.
func sayHowToUse(e *env, dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil || abs == e.storePath {
		return
	}
	q := text.ShellArg(abs)
	if p, ok := findPolicyFrom(abs); ok && store.DefaultPath(filepath.Dir(p)) != abs {
		e.say("readproof: to use this store, name it with --store %s or READPROOF_STORE=%s; inside it, readproof finds %s first and uses the store beside that file", q, q, text.ShellArg(p))
		return
	}
	e.say("readproof: to use this store, run readproof inside it (cd %s), or name it from anywhere with --store %s or READPROOF_STORE=%s", q, q, q)
}

// argTail is " ARG" for a command line shown in a hint, or "" when arg is
// empty (the default remote).
func argTail(arg string) string {
	if arg == "" {
		return ""
	}
	return " " + text.ShellArg(arg)
}
