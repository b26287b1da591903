package commands

// `readproof gc`: pack the store and remove old unreachable objects, with
// stock git (gitstore.GC).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
)

// minSafeGrace is the shortest grace period readproof gc accepts without a
// warning: shorter ones are only safe when nothing else writes.
const minSafeGrace = time.Hour

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "pack loose objects into delta-compressed packs and remove unreachable objects older than a grace period",
		Description: "Packs the store's refs, then runs stock `git gc` on it (git must be installed). Everything reachable from a ref is kept;\n" +
			"runs aborted (readproof run abort) longer ago than --grace are removed first, with their entries;\n" +
			"unreachable objects are removed only once older than --grace (default 2w), so gc is safe while other\n" +
			"readproof processes write. --grace takes s, m, h, d and w units; --grace now removes every unreachable\n" +
			"object and is only safe when nothing else uses the store.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "grace", Value: "2w", Usage: "keep unreachable objects younger than this (e.g. 1h, 3d, 2w, now)"},
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, 0, "[--grace 2w]"); err != nil {
				return err
			}
			opts := gcOptions{Grace: c.String("grace")}
			return withEnv(c, func(e *env) error { return runGC(c.Context, e, opts) })
		},
	}
}

// parseGrace reads a grace period: a Go duration (90m, 1h30m), whole or
// decimal days (3d) or weeks (2w), or "now" / "0".
func parseGrace(s string) (time.Duration, bool, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "now", "0":
		return 0, true, nil
	case "":
		return 0, false, errors.New("empty grace period")
	}
	unit := time.Duration(0)
	switch {
	case strings.HasSuffix(s, "w"):
		unit = 7 * 24 * time.Hour
	case strings.HasSuffix(s, "d"):
		unit = 24 * time.Hour
	}
	if unit != 0 {
		v, err := strconv.ParseFloat(s[:len(s)-1], 64)
		if err != nil || math.IsNaN(v) || v <= 0 || v > 100*365 {
			return 0, false, fmt.Errorf("grace period %q: want a positive number of days or weeks", s)
		}
		return time.Duration(v * float64(unit)), false, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, false, fmt.Errorf("grace period %q is not a positive duration", s)
	}
	return d, false, nil
}

func graceString(d time.Duration, now bool) string {
	switch {
	case now:
		return "now"
	case d%(7*24*time.Hour) == 0:
		return fmt.Sprintf("%dw", d/(7*24*time.Hour))
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

func sizeString(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// gcOptions are the flags of `readproof gc`.
type gcOptions struct {
	Grace string // keep unreachable objects younger than this (e.g. 1h, 3d, 2w, now)
}

// runGC is `readproof gc`.
func runGC(ctx context.Context, e *env, opts gcOptions) error {
	grace, now, err := parseGrace(opts.Grace)
	if err != nil {
		return withCode(ExitUsage, hint.With(err, "write a duration such as 1h, 3d or 2w, or now"))
	}
	return e.withStore(func(s *store.Store) error {
		if now || grace < minSafeGrace {
			e.say("readproof: warning: a grace period under %s can remove objects another readproof process is about to reference; use it only when nothing else writes to the store", minSafeGrace)
		}
		gopts := gitstore.GCOptions{Grace: grace, PruneNow: now}
		if isTerminal(e.err) && !e.json {
			gopts.Progress = e.err // git's own meter, drawn on the terminal
		}
		res, err := s.GC(ctx, gopts)
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.out, map[string]any{
				"store": s.Path(), "grace": graceString(grace, now), "cutoff": res.Cutoff,
				"before": res.Before, "after": res.After,
				"bytes_before": res.Before.Bytes(), "bytes_after": res.After.Bytes(),
				"dropped_aborted_runs": nonNil(res.Dropped),
				"recorded_runs":        nonNil(res.Recorded),
			})
		}
		removed := "unreachable objects older than " + graceString(grace, now)
		if now {
			removed = "every unreachable object"
		}
		fmt.Fprintf(e.out, "Packed the store: %d objects in %s, %d loose; %s -> %s; removed %s\n",
			res.After.Packed, text.Count(res.After.Packs, "pack", "packs"), res.After.Loose, sizeString(res.Before.Bytes()), sizeString(res.After.Bytes()), removed)
		for _, r := range res.Recorded {
			e.say("readproof: recorded run %s (manifest %s) on the journal: the writer that committed it stopped before recording it", r.RunID, r.Manifest)
		}
		for _, a := range res.Dropped {
			e.say("readproof: removed run %s, aborted %s (older than the grace period)", a.RunID, textTime(a.AbortedAt))
		}
		return nil
	})
}

// nonNil is s as a JSON list that is never null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
