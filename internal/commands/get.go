package commands

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
)

// deliveryJSON is the --json shape of a delivered document.
type deliveryJSON struct {
	manifest.Entry
	Text      *string `json:"text,omitempty"`
	ContentB6 string  `json:"content_b64"`
}

func toDeliveryJSON(d *store.Delivery) deliveryJSON {
	out := deliveryJSON{Entry: d.Entry, ContentB6: base64.StdEncoding.EncodeToString(d.Content)}
	if utf8.Valid(d.Content) {
		t := string(d.Content)
		out.Text = &t
	}
	return out
}

func provenanceLine(d *store.Delivery) string {
	ref := d.URI
	if d.Ref != "" {
		ref += "@" + d.Ref
	}
	return fmt.Sprintf("%s: decision %s, snapshot %s, %s, source revision %s, observed %s",
		ref, d.Decision, manifest.Short(d.Snapshot), manifest.Short(d.ContentHash), text.Printable(d.SourceRevision), textTime(d.ObservedAt))
}

func getCommand() *cli.Command {
	return &cli.Command{
		Name:      "get",
		Usage:     "resolve a document and print its bytes (records a snapshot when the source is read)",
		ArgsUsage: "URI[@TAG]",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, 1, "URI[@TAG]"); err != nil {
				return err
			}
			return withEnv(c, func(e *env) error {
				largePolicyGC(e.policyPath, 1)
				return runGet(c.Context, e, c.Args().Slice())
			})
		},
	}
}

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "show a resource's definition (redacted), policy, current snapshot and what `get` would decide",
		ArgsUsage: "URI[@TAG]",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, 1, "URI[@TAG]"); err != nil {
				return err
			}
			return withEnv(c, func(e *env) error { return runInspect(c.Context, e, c.Args().Slice()) })
		},
	}
}

func historyCommand() *cli.Command {
	return &cli.Command{
		Name:      "history",
		Usage:     "list a resource's snapshots, newest first, with the tags pointing at each",
		ArgsUsage: "URI",
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, 1, "URI"); err != nil {
				return err
			}
			return withEnv(c, func(e *env) error { return runHistory(c.Context, e, c.Args().Slice()) })
		},
	}
}

func parsePlainURI(s string) (identity.URI, error) {
	u, err := identity.ParseURI(s)
	if err != nil {
		return u, hint.With(err, identity.URIHint(s, false))
	}
	if u.Tag != "" {
		return u, usageError("%s: this command takes a URI without @tag", s)
	}
	return u, nil
}

// runGet is `readproof get`.
func runGet(ctx context.Context, e *env, args []string) error {
	return e.withReadStore(func(s *store.Store) error {
		d, err := s.Resolve(ctx, args[0])
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.out, toDeliveryJSON(d))
		}
		e.say("readproof: %s", provenanceLine(d))
		_, err = e.out.Write(d.Content)
		return err
	})
}

// runInspect is `readproof inspect`.
func runInspect(_ context.Context, e *env, args []string) error {
	return e.withReadStore(func(s *store.Store) error {
		in, err := s.Inspect(args[0])
		if err != nil {
			return err
		}
		if !in.Declared && in.Current == nil && in.Tag == nil && len(in.Tags) == 0 {
			// neither declared nor ever recorded: a typo, most likely
			pol, err := s.Policy()
			if err != nil {
				return err
			}
			h := "check the URI's spelling (`readproof resource list`), or register it: readproof resource add " + in.URI + " --source-type filesystem --path FILE"
			if u, err := identity.ParseURI(in.URI); err == nil {
				h = store.NotRegisteredHint(pol, u, h)
			}
			return hint.With(fmt.Errorf("%s: %w in %s, and nothing recorded for it", in.URI, store.ErrNotRegistered, pol.Path), h)
		}
		if e.json {
			if u, err := identity.ParseURI(in.URI); err == nil {
				nameAction(s, u, in.Tag)
			}
			return printJSON(e.out, in)
		}
		tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
		ref := in.URI
		if in.Ref != "" {
			ref += "@" + in.Ref
		}
		fmt.Fprintf(tw, "uri:\t%s\n", ref)
		if in.Definition != nil {
			src := in.Definition.Source // redacted when stored
			// The policy file's text: format characters escaped.
			fmt.Fprintf(tw, "source:\t%s · %s\n", src.Type, text.Escape(src.Describe()))
			for _, k := range manifest.SortedKeys(src.Headers) {
				fmt.Fprintf(tw, "header:\t%s: %s\n", k, text.Escape(src.Headers[k]))
			}
			if src.TokenEnv != "" {
				fmt.Fprintf(tw, "token:\tfrom $%s\n", src.TokenEnv)
			}
			fmt.Fprintf(tw, "policy:\t%s\n", describePolicy(in.Definition.Policy))
			if in.Definition.ContentType != "" {
				fmt.Fprintf(tw, "content type:\t%s (declared)\n", in.Definition.ContentType)
			}
			if in.Definition.Description != "" {
				fmt.Fprintf(tw, "description:\t%s\n", in.Definition.Description)
			}
		} else {
			fmt.Fprintf(tw, "declared:\tno\n")
		}
		if in.Current != nil {
			o := in.Current
			fmt.Fprintf(tw, "current:\tsnapshot %s\n", o.Snapshot)
			fmt.Fprintf(tw, "\t%s, %d bytes, %s\n", o.ContentHash, o.Bytes, text.Printable(o.ContentType))
			fmt.Fprintf(tw, "\tsource revision %s, observed %s\n", text.Printable(o.SourceRevision), textTime(o.ObservedAt))
		} else {
			fmt.Fprintf(tw, "current:\tnone recorded\n")
		}
		if in.Tag != nil {
			fmt.Fprintf(tw, "tag:\t%s -> snapshot %s (set %s)\n", in.Ref, in.Tag.Snapshot, textTime(in.Tag.SetAt))
		}
		tags := strings.Join(in.Tags, ", ")
		if tags == "" {
			tags = "none"
		}
		fmt.Fprintf(tw, "tags:\t%s\n", tags)
		if in.Decision != "" {
			fmt.Fprintf(tw, "decision:\t%s (%s)\n", in.Decision, in.Reason)
		} else {
			fmt.Fprintf(tw, "decision:\tnone (%s)\n", in.Reason)
		}
		return tw.Flush()
	})
}

// runHistory is `readproof history`.
func runHistory(_ context.Context, e *env, args []string) error {
	return e.withReadStore(func(s *store.Store) error {
		u, err := parsePlainURI(args[0])
		if err != nil {
			return err
		}
		h, err := s.History(u)
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.out, h)
		}
		if len(h) == 0 {
			e.say("%s: no snapshots recorded yet; read it with `readproof get %s`", u, u)
			return nil
		}
		tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SNAPSHOT\tCONTENT_HASH\tBYTES\tLAST_OBSERVED\tSOURCE_REVISION\tTAGS")
		for _, sn := range h {
			tags := strings.Join(sn.Tags, ",")
			if tags == "" {
				tags = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", manifest.Short(sn.Snapshot), manifest.Short(sn.ContentHash), sn.Bytes,
				textTime(sn.LastObserved), text.Printable(sn.SourceRevision), tags)
		}
		return tw.Flush()
	})
}
