package commands

// `readproof status`: does every declared source still match what the store
// recorded? Reads sources, records nothing.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "compare every declared source, read now, with its latest snapshot and its tags (records nothing)",
		Description: "States: up to date, changed since snapshot X, no snapshot yet, source error; each tag (and a pinned\n" +
			"snapshot) is up to date or behind source. With --exit-code the exit status is 5 when anything drifted;\n" +
			"it is 1 when a source could not be read.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "exit-code", Usage: "exit with status 5 when a source no longer matches its snapshot, a tag or its pin"},
			formatFlag(),
			maxCharsFlag(),
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, 0, "[--exit-code]"); err != nil {
				return err
			}
			opts := statusOptions{ExitCode: c.Bool("exit-code"), formatOptions: formatOptionsOf(c)}
			return withEnv(c, func(e *env) error { return runStatus(c.Context, e, opts) })
		},
	}
}

func printStatus(e *env, list []store.ResourceStatus) {
	if len(list) == 0 {
		e.say("no resources declared in %s; add one with `readproof resource add`", e.policyPath)
		return
	}
	tw := tabwriter.NewWriter(e.out, 2, 4, 2, ' ', 0)
	counts := map[string]int{}
	behind := 0
	for _, r := range list {
		counts[r.State]++
		// A source error quotes the policy file's path or URL: format
		// characters escaped, as on stderr.
		line := text.Escape(r.Describe())
		if r.State == store.StatusChanged {
			line += " (source now " + manifest.Short(r.Source.ContentHash) + ")"
		}
		if r.State == store.StatusUpToDate {
			line += " (snapshot " + manifest.Short(r.Current.Snapshot) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\n", r.URI, line)
		type point struct {
			what string
			p    store.PointStatus
		}
		var points []point
		if r.Pinned != nil {
			points = append(points, point{"pinned snapshot", *r.Pinned})
		}
		for _, t := range r.Tags {
			points = append(points, point{"tag " + t.Name, t})
		}
		for _, pt := range points {
			state := "up to date"
			switch {
			case r.Source == nil:
				state = "not compared (source error)"
			case pt.p.Behind:
				state = "behind source"
				behind++
			}
			fmt.Fprintf(tw, "  %s\t%s (%s)\n", pt.what, state, manifest.Short(pt.p.Snapshot))
		}
	}
	tw.Flush()
	var parts []string
	for _, k := range []struct{ state, one, many string }{
		{store.StatusUpToDate, "up to date", "up to date"}, {store.StatusChanged, "changed", "changed"},
		{store.StatusNoSnapshot, "without snapshot", "without snapshot"}, {store.StatusSourceError, "source error", "source errors"},
	} {
		if n := counts[k.state]; n > 0 {
			parts = append(parts, text.Count(n, k.one, k.many))
		}
	}
	summary := fmt.Sprintf("%s: %s", text.Count(len(list), "resource", "resources"), strings.Join(parts, ", "))
	if behind > 0 {
		summary += fmt.Sprintf("; %s behind source", text.Count(behind, "tag or pin", "tags or pins"))
	}
	fmt.Fprintln(e.err, summary)
}

// statusOptions are the flags of `readproof status`.
type statusOptions struct {
	ExitCode bool // exit 5 when a resource drifted
	formatOptions
}

// runStatus is `readproof status`.
func runStatus(ctx context.Context, e *env, opts statusOptions) error {
	md, err := checkFormat(opts.formatOptions, e.json)
	if err != nil {
		return err
	}
	return e.withStore(func(s *store.Store) error {
		list, err := s.Status(ctx)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			// nothing declared because there is no policy file here: a
			// guard run in the wrong directory must not pass as up to date
			if _, serr := os.Stat(e.policyPath); errors.Is(serr, fs.ErrNotExist) {
				return hint.With(fmt.Errorf("status: no policy file at %s: there are no declared sources to compare", e.policyPath),
					"run readproof status in the project directory that holds readproof.toml, or name the file with --config")
			}
		}
		drifted, failed := 0, 0
		for _, r := range list {
			if r.Drift {
				drifted++
			}
			if r.State == store.StatusSourceError {
				failed++
			}
		}
		// open runs: an interrupted piece of work leaves one behind
		open := []string{}
		runs, err := s.Runs()
		if err != nil {
			return hint.With(fmt.Errorf("status: list open runs: %w", err),
				"readproof verify checks the store's refs")
		}
		for _, r := range runs {
			if r.Open {
				open = append(open, r.RunID)
			}
		}
		if e.json {
			if err := printJSON(e.out, map[string]any{"resources": list, "drifted": drifted, "source_errors": failed, "open_runs": open}); err != nil {
				return err
			}
		} else if md {
			markdownStatus(e.out, list, e.policyPath, opts.MaxChars)
		} else {
			printStatus(e, list)
			if len(open) > 0 {
				e.say("readproof: %s open: %s (readproof run show ID lists what each holds so far)", text.Count(len(open), "run", "runs"), strings.Join(open, ", "))
			}
		}
		if err := silencedHooks(filepath.Dir(e.policyPath)); err != nil {
			e.warn(err)
		}
		switch {
		case failed > 0:
			return withCode(ExitError, hint.With(fmt.Errorf("status: %s could not be read", text.Count(failed, "source", "sources")),
				"fix the sources named above (readproof inspect URI shows their definition)"))
		case drifted > 0 && opts.ExitCode:
			return withCode(ExitDrift, hint.With(fmt.Errorf("status: %s drifted from what the store recorded", text.Count(drifted, "resource", "resources")),
				"record the new content (readproof get URI), move the tags that should follow it (readproof tag set URI TAG), or restore the source"))
		}
		return nil
	})
}
