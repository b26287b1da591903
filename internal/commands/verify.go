package commands

// `readproof verify`: the whole-store check (package storecheck).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/progress"
	"github.com/readproof/readproof/internal/proofread"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/internal/text"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:  "verify",
		Usage: "check the whole store: complete object graphs, manifests that replay, tags, signatures",
		Description: "By default every commit, tree and record is read and decoded, every snapshot is checked to exist, and a\n" +
			"deterministic sample of snapshots is re-hashed. --read-data re-hashes every blob; --read-data-subset N/M\n" +
			"(or P%) re-hashes one share, so N=1..M over M checks covers everything.\n\n" +
			"Exit codes: 0 healthy, 3 broken (a problem was found), 4 could not check (unreadable store, I/O error,\n" +
			"allowed_signers configured but unusable).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "read-data", Usage: "read and re-hash every blob"},
			&cli.StringFlag{Name: "read-data-subset", Usage: "re-hash one share of the snapshots: N/M or P%"},
			&cli.StringFlag{Name: "allowed-signers", Usage: "an allowed_signers `FILE` that vouches for manifest commit signatures (default: [signing] allowed_signers)"},
			formatFlag(),
			maxCharsFlag(),
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, 0, "[--read-data | --read-data-subset N/M]"); err != nil {
				return err
			}
			opts := verifyOptions{ReadData: c.Bool("read-data"), Subset: c.String("read-data-subset"), AllowedSigners: c.String("allowed-signers"), formatOptions: formatOptionsOf(c)}
			return withEnv(c, func(e *env) error { return runVerify(c.Context, e, opts) })
		},
	}
}

// verifyOptions are the flags of `readproof verify`.
type verifyOptions struct {
	ReadData bool   // re-hash every blob
	Subset   string // re-hash one share of the snapshots: N/M or P%
	// AllowedSigners vouches for manifest commit signatures; "" means
	// [signing] allowed_signers of the policy file
	AllowedSigners string
	formatOptions
}

// runVerify is `readproof verify`: it checks the store and reports; a
// store that cannot be opened cannot be checked (exit 4).
func runVerify(ctx context.Context, e *env, vo verifyOptions) error {
	opts := storecheck.Options{ReadData: vo.ReadData, Subset: vo.Subset, AllowedSigners: vo.AllowedSigners}
	md, err := checkFormat(vo.formatOptions, e.json)
	if err != nil {
		return err
	}
	if opts.ReadData && opts.Subset != "" {
		return usageError("verify: --read-data and --read-data-subset exclude each other: --read-data already reads everything")
	}
	if opts.Subset != "" {
		if err := storecheck.ParseSubset(opts.Subset); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	s, err := e.open()
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return err
		}
		return withCode(ExitCannotCheck, err)
	}
	defer s.Close()
	// verdict record MACs are checked when the key is at hand; a key file
	// that is there but unusable is reported as a warning
	opts.ProbeKeys, _, opts.ProbeKeyUnusable = proofread.CheckKeys(s)
	mdMax := -1 // no markdown
	if md {
		mdMax = vo.MaxChars
	}
	return checkStore(ctx, e, s, opts, mdMax)
}

// checkStore runs storecheck on s and prints the report (as markdown
// within mdMax characters, 0 for no limit, when mdMax >= 0).
func checkStore(ctx context.Context, e *env, s *store.Store, opts storecheck.Options, mdMax int) error {
	var stop func()
	if isTerminal(e.err) && !e.json {
		opts.Progress, stop = progressLine(e.err, "verify")
	}
	rep, err := storecheck.Check(ctx, s, opts)
	if stop != nil {
		stop()
	}
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(ctx)
		}
		err = fmt.Errorf("verify %s: %w", s.Path(), err)
		if hint.Of(err) == "" {
			// a damaged file's own hint (packed-refs: which line) says more
			err = hint.With(err, "check that the store is readable; `git fsck` on it gives git's view")
		}
		return withCode(ExitCannotCheck, err)
	}
	if e.json {
		if err := printJSON(e.out, rep); err != nil {
			return err
		}
	} else if mdMax >= 0 {
		cmd := "readproof verify"
		switch {
		case opts.ReadData:
			cmd += " --read-data"
		case opts.Subset != "":
			cmd += " --read-data-subset " + opts.Subset
		}
		markdownVerify(e.out, rep, mdMax, cmd)
	} else {
		for _, p := range rep.Problems {
			if p.Kind == storecheck.Warning && rep.OK() {
				fmt.Fprintln(e.err, "readproof: "+p.String())
			} else {
				fmt.Fprintln(e.out, p.String())
			}
		}
		fmt.Fprintln(e.out, rep.Summary())
	}
	switch {
	case rep.Broken() > 0:
		h := "each problem above names the run, resource or tag affected; restore the objects from a clone (readproof pull) or a backup"
		if onlyReplaced(rep) {
			h = "every problem above is a refs/replace/ ref, info/grafts or commondir, which stock git follows and readproof does not: remove each as its line says, then verify again"
		}
		return withCode(ExitMismatch, hint.With(fmt.Errorf("store %s failed verification: %s", s.Path(), text.Count(rep.Broken(), "problem", "problems")), h))
	case rep.CouldNotCheck() > 0:
		h := "fix what the lines above name and run readproof verify again"
		if oh, ok := hint.OpenFiles(errors.Join(rep.Causes()...)); ok {
			// the store is not at fault: the limit is what to fix
			h = oh
		}
		return withCode(ExitCannotCheck, hint.With(fmt.Errorf("store %s could not be fully checked: %s could not run", s.Path(), text.Count(rep.CouldNotCheck(), "check", "checks")), h))
	}
	return nil
}

// progressLine returns a progress callback that redraws one line on w at
// most ten times a second, and a function that clears the line.
func progressLine(w io.Writer, what string) (func(done, total int), func()) {
	l := progress.New(w, what, "checked", time.Now)
	return l.Update, l.Stop
}

// onlyReplaced reports whether every broken problem of rep is check
// "replace": nothing is missing or damaged, and restoring objects would not
// help.
func onlyReplaced(rep *storecheck.Report) bool {
	for _, p := range rep.Problems {
		if p.Kind == storecheck.Broken && p.Check != "replace" {
			return false
		}
	}
	return true
}
