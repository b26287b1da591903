package commands

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
)

// uriAndTag accepts "URI TAG" or "URI@TAG" at the front of args and returns
// the rest.
func uriAndTag(args []string) (identity.URI, string, []string, error) {
	if len(args) == 0 {
		return identity.URI{}, "", nil, usageError("missing URI")
	}
	u, err := identity.ParseURI(args[0])
	if err != nil {
		return u, "", nil, hint.With(err, "resource URIs look like readproof://NAMESPACE/PATH")
	}
	if u.Tag != "" {
		t := u.Tag
		u.Tag = ""
		return u, t, args[1:], nil
	}
	if len(args) < 2 {
		return u, "", nil, usageError("missing tag name after %s", u)
	}
	if err := identity.ValidateTag(args[1]); err != nil {
		return u, "", nil, hint.With(err, "tag names match ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
	}
	return u, args[1], args[2:], nil
}

func tagLine(e *env, verb string, t *store.TagState) error {
	if e.json {
		return printJSON(e.out, t)
	}
	if t.Deleted {
		fmt.Fprintf(e.out, "%s %s (the snapshot stays; manifests that mounted it still replay)\n", verb, t.Reference())
		return nil
	}
	fmt.Fprintf(e.out, "%s %s -> snapshot %s (%s)\n", verb, t.Reference(), t.Snapshot, manifest.Short(t.ContentHash))
	return nil
}

func tagCommand() *cli.Command {
	return &cli.Command{
		Name:  "tag",
		Usage: "name snapshots: uri@tag delivers exactly the tagged snapshot",
		Subcommands: []*cli.Command{
			{
				Name:      "set",
				Usage:     "point a tag at a snapshot (default: the current one); the move is recorded",
				ArgsUsage: "URI TAG [SNAPSHOT]  (or URI@TAG [SNAPSHOT])",
				Action: func(c *cli.Context) error {
					return withEnv(c, func(e *env) error { return runTagSet(c.Context, e, c.Args().Slice()) })
				},
			},
			{
				Name:      "list",
				Usage:     "list a resource's tags and the uri@tag reference of each",
				ArgsUsage: "URI",
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 1, 1, "URI"); err != nil {
						return err
					}
					return withEnv(c, func(e *env) error { return runTagList(c.Context, e, c.Args().Slice()) })
				},
			},
			{
				Name:      "rm",
				Aliases:   []string{"delete"},
				Usage:     "remove a tag (recorded in its history; snapshots and manifests are untouched)",
				ArgsUsage: "URI TAG",
				Action: func(c *cli.Context) error {
					return withEnv(c, func(e *env) error { return runTagRm(c.Context, e, c.Args().Slice()) })
				},
			},
			{
				Name:      "history",
				Usage:     "list every move of a tag, newest first",
				ArgsUsage: "URI TAG",
				Action: func(c *cli.Context) error {
					return withEnv(c, func(e *env) error { return runTagHistory(c.Context, e, c.Args().Slice()) })
				},
			},
			{
				Name:      "revert",
				Usage:     "move a tag back to where it pointed before its latest move",
				ArgsUsage: "URI TAG",
				Action: func(c *cli.Context) error {
					return withEnv(c, func(e *env) error { return runTagRevert(c.Context, e, c.Args().Slice()) })
				},
			},
		},
	}
}

// printTagHistory prints a tag's moves, newest first.
func printTagHistory(e *env, h []store.TagState) error {
	// The BY column appears when a move names its caller (a move made
	// over mcp --http with a token).
	withCaller := false
	for _, t := range h {
		if t.Caller != "" {
			withCaller = true
		}
	}
	tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
	if withCaller {
		fmt.Fprintln(tw, "SET_AT\tACTION\tSNAPSHOT\tCONTENT_HASH\tCOMMIT\tBY")
	} else {
		fmt.Fprintln(tw, "SET_AT\tACTION\tSNAPSHOT\tCONTENT_HASH\tCOMMIT")
	}
	for _, t := range h {
		action, snap, hash := "set", manifest.Short(t.Snapshot), manifest.Short(t.ContentHash)
		if t.Deleted {
			action, snap, hash = "delete", "-", "-"
		}
		by := ""
		if withCaller {
			by = "\t-"
			if t.Caller != "" {
				by = "\t" + t.Caller
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s%s\n", t.SetAt.Format(time.RFC3339Nano), action, snap, hash, manifest.Short(t.Commit), by)
	}
	return tw.Flush()
}

// runTagSet is `readproof tag set`.
func runTagSet(_ context.Context, e *env, args []string) error {

	u, tag, rest, err := uriAndTag(args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return usageError("tag set: too many arguments")
	}
	snap := ""
	if len(rest) == 1 {
		snap = rest[0]
	}
	return e.withStore(func(s *store.Store) error {
		t, err := s.SetTag(u, tag, snap)
		if err != nil {
			return err
		}
		return tagLine(e, "Tagged", t)
	})
}

// runTagList is `readproof tag list`.
func runTagList(_ context.Context, e *env, args []string) error {
	u, err := parsePlainURI(args[0])
	if err != nil {
		return err
	}
	return e.withStore(func(s *store.Store) error {
		tags, err := s.Tags(u)
		if err != nil {
			return err
		}
		if e.json {
			if tags == nil {
				tags = []store.TagState{}
			}
			return printJSON(e.out, tags)
		}
		if len(tags) == 0 {
			e.say("%s has no tags; set one with `readproof tag set %s TAG`", u, u)
			return nil
		}
		tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TAG\tSNAPSHOT\tCONTENT_HASH\tSET_AT\tREFERENCE")
		for _, t := range tags {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Tag, manifest.Short(t.Snapshot), manifest.Short(t.ContentHash), t.SetAt.Format(time.RFC3339), t.Reference())
		}
		return tw.Flush()
	})
}

// runTagRm is `readproof tag rm`.
func runTagRm(_ context.Context, e *env, args []string) error {

	u, tag, rest, err := uriAndTag(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError("tag rm: too many arguments")
	}
	return e.withStore(func(s *store.Store) error {
		t, err := s.DeleteTag(u, tag)
		if err != nil {
			return err
		}
		return tagLine(e, "Deleted", t)
	})
}

// runTagHistory is `readproof tag history`.
func runTagHistory(_ context.Context, e *env, args []string) error {

	u, tag, rest, err := uriAndTag(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError("tag history: too many arguments")
	}
	return e.withStore(func(s *store.Store) error {
		h, err := s.TagHistory(u, tag)
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.out, h)
		}
		return printTagHistory(e, h)
	})
}

// runTagRevert is `readproof tag revert`.
func runTagRevert(_ context.Context, e *env, args []string) error {

	u, tag, rest, err := uriAndTag(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError("tag revert: too many arguments")
	}
	return e.withStore(func(s *store.Store) error {
		t, err := s.RevertTag(u, tag)
		if err != nil {
			return err
		}
		return tagLine(e, "Reverted", t)
	})
}
