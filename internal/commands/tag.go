package commands

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/share"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
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
		return u, "", nil, hint.With(err, identity.URIHint(args[0], false))
	}
	if u.Tag != "" {
		t := u.Tag
		u.Tag = ""
		return u, t, args[1:], nil
	}
	if len(args) < 2 {
		return u, "", nil, withCode(ExitUsage, hint.With(fmt.Errorf("missing tag name after %s", u), "give it after the URI (URI TAG, or URI@TAG); its tags: readproof tag list "+u.String()))
	}
	if err := identity.ValidateTag(args[1]); err != nil {
		return u, "", nil, hint.With(err, "tag names match ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
	}
	return u, args[1], args[2:], nil
}

// nameAction fills in the kind of t's latest move when its record names
// none (tag.json of a move by `conflicts resolve` or a pull's merge, or of
// one recorded before tag.json had an action), as `tag history` names it
// from the move's commit. Only such tags pay for reading the history.
func nameAction(s *store.Store, u identity.URI, t *store.TagState) {
	if t == nil || t.Action != "" {
		return
	}
	if h, err := s.TagHistory(u, t.Tag); err == nil && len(h) > 0 && h[0].Commit == t.Commit {
		t.Action = h[0].Action
	}
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
				Name:      "promote",
				Usage:     "move tag TO to the snapshot tag FROM points at, in one recorded move (staging -> prod)",
				ArgsUsage: "URI FROM TO",
				Action: func(c *cli.Context) error {
					if err := needArgs(c, 3, 3, "URI FROM TO"); err != nil {
						return err
					}
					return withEnv(c, func(e *env) error { return runTagPromote(c.Context, e, c.Args().Slice()) })
				},
			},
			{
				Name:      "propose",
				Usage:     "write a move of a tag as a commit on a proposal branch and push it, for review as a pull request",
				ArgsUsage: "URI TAG [SNAPSHOT|--from TAG] [--remote R]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "from", Usage: "propose the snapshot this tag points at"},
					&cli.StringFlag{Name: "remote", Value: "origin", Usage: "the remote to push the proposal branch to"},
				},
				Action: func(c *cli.Context) error {
					opts := tagProposeOptions{From: c.String("from"), Remote: c.String("remote")}
					return withEnv(c, func(e *env) error { return runTagPropose(c.Context, e, opts, c.Args().Slice()) })
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

// historyEntry is one line of `tag history`: a move on the tag's chain, or
// a pending proposal (not on the chain yet).
type historyEntry struct {
	store.TagState
	Commit  string `json:"commit"`
	Pending bool   `json:"pending,omitempty"`
	// Stale marks a pending proposal whose base is no longer the tag's
	// position.
	Stale  bool   `json:"stale,omitempty"`
	Remote string `json:"remote,omitempty"`
}

// printTagHistory prints a tag's moves, newest first (pending proposals on
// top).
func printTagHistory(e *env, h []historyEntry) error {
	tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SET_AT\tACTION\tSNAPSHOT\tCONTENT_HASH\tCOMMIT\tNOTE")
	for _, t := range h {
		action, snap, hash := t.Action, manifest.Short(t.Snapshot), manifest.Short(t.ContentHash)
		if action == "" {
			action = store.ActionSet
			if t.Deleted {
				action = store.ActionDelete
			}
		}
		if t.Deleted {
			snap, hash = "-", "-"
		}
		// tag.json of a pulled move is the remote's: pull checks its
		// snapshot, not its action or notes
		var note []string
		if t.Caller != "" {
			// moved over mcp --http with this token
			note = append(note, "by "+t.Caller)
		}
		if t.From != "" {
			note = append(note, "from "+t.From)
		}
		if t.Proposal != "" {
			note = append(note, "proposal "+t.Proposal)
		}
		if t.Pending {
			p := "pending"
			if t.Stale {
				p = "pending, stale: the tag moved since"
			}
			if t.Remote != "" {
				p += ", on " + t.Remote
			}
			note = append(note, "("+p+")")
		}
		n := strings.Join(note, " ")
		if n == "" {
			n = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", textTime(t.SetAt), text.Printable(action), snap, hash, manifest.Short(t.Commit), text.Printable(n))
	}
	return tw.Flush()
}

// tagHistory is a tag's pending proposals (newest first) followed by its
// moves.
func tagHistory(s *store.Store, u identity.URI, tag string) ([]historyEntry, error) {
	h, err := s.TagHistory(u, tag)
	if err != nil {
		return nil, err
	}
	ps, err := share.Proposals(s, u, tag)
	if err != nil {
		return nil, err
	}
	out := make([]historyEntry, 0, len(ps)+len(h))
	for _, p := range ps {
		st := *p.State
		st.Action = store.ActionProposed
		out = append(out, historyEntry{TagState: st, Commit: p.Commit, Pending: true, Stale: p.Stale, Remote: p.Remote})
	}
	return append(out, movesOf(h)...), nil
}

// movesOf turns the moves of a chain into history entries.
func movesOf(h []store.TagState) []historyEntry {
	out := make([]historyEntry, 0, len(h))
	for _, t := range h {
		out = append(out, historyEntry{TagState: t, Commit: t.Commit})
	}
	return out
}

// runTagPromote is `readproof tag promote`.
func runTagPromote(_ context.Context, e *env, args []string) error {
	u, err := parsePlainURI(args[0])
	if err != nil {
		return err
	}
	from, to := args[1], args[2]
	for _, t := range []string{from, to} {
		if err := identity.ValidateTag(t); err != nil {
			return hint.With(err, "tag names match ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
		}
	}
	return e.withStore(func(s *store.Store) error {
		t, err := s.PromoteTag(u, from, to)
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.out, t)
		}
		fmt.Fprintf(e.out, "Promoted %s@%s to %s -> snapshot %s (%s)\n", u, from, to, t.Snapshot, manifest.Short(t.ContentHash))
		return nil
	})
}

// tagProposeOptions are the flags of `tag propose`.
type tagProposeOptions struct {
	From   string
	Remote string
}

// runTagPropose is `readproof tag propose`.
func runTagPropose(ctx context.Context, e *env, opts tagProposeOptions, args []string) error {
	u, tag, rest, err := uriAndTag(args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return usageError("tag propose: too many arguments")
	}
	snap := ""
	if len(rest) == 1 {
		snap = rest[0]
	}
	if snap != "" && opts.From != "" {
		return usageError("tag propose: give a SNAPSHOT or --from TAG, not both")
	}
	if opts.From != "" {
		if err := identity.ValidateTag(opts.From); err != nil {
			return withCode(ExitUsage, hint.With(err, "tag names match ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"))
		}
	}
	return e.withStore(func(s *store.Store) error {
		res, err := share.Propose(ctx, s, u, tag, snap, opts.From, opts.Remote, shareOptions(e))
		if err != nil {
			return syncErr(err)
		}
		if e.json {
			return printJSON(e.out, res)
		}
		fmt.Fprintf(e.out, "Proposed %s@%s -> snapshot %s (%s)\n", u, tag, res.State.Snapshot, manifest.Short(res.State.ContentHash))
		fmt.Fprintf(e.out, "branch: %s\n", res.Branch)
		fmt.Fprintf(e.out, "target: %s\n", res.Target)
		if res.Pushed {
			e.say("pushed %s to %s; open a pull request from %s into %s", res.Branch, res.Remote, res.Branch, res.Target)
		} else {
			e.say("%s already holds %s; open a pull request from it into %s", res.Remote, res.Branch, res.Target)
		}
		return nil
	})
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
	return e.withReadStore(func(s *store.Store) error {
		tags, err := s.ListTags(u)
		if err != nil {
			return err
		}
		if e.json {
			if tags == nil {
				tags = []store.TagState{}
			}
			for i := range tags {
				nameAction(s, u, &tags[i])
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
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Tag, manifest.Short(t.Snapshot), manifest.Short(t.ContentHash), textTime(t.SetAt), t.Reference())
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
	return e.withReadStore(func(s *store.Store) error {
		h, err := tagHistory(s, u, tag)
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

// reportRefusedProposals tells the user of every merged proposal a pull did
// not adopt, and of their own pending proposals the pull made stale (stderr;
// the --json result lists them under proposals_refused and
// proposals_stale).
func reportRefusedProposals(e *env, refused []share.ProposalRefusal, stale []store.Proposal) {
	for _, p := range stale {
		e.say("readproof: warning: your proposal %s for %s@%s is stale: the tag moved since it was proposed; merged as it is, it would be refused; propose again: readproof tag propose %s %s ...", text.Printable(p.Branch), p.URI, p.Tag, p.URI, p.Tag)
	}
	for _, r := range refused {
		name := r.Proposal
		if name == "" {
			name = "merge " + manifest.Short(r.Merge)
		}
		e.say("readproof: warning: %s@%s: %s not adopted: %s; the local value stays", r.URI, r.Tag, text.Printable(name), text.Printable(r.Reason))
		e.say("readproof: hint: propose the move again on the tag's current position (readproof tag propose %s %s ...), or adopt the merge as it is: readproof conflicts resolve %s %s --take remote", r.URI, r.Tag, r.URI, r.Tag)
	}
}
