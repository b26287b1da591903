package commands

// --format markdown for diff, manifest, status and verify: text ready for a
// pull-request comment or a CI job summary ($GITHUB_STEP_SUMMARY). Every
// string a document, a source or the store controls is escaped by package
// markdown; the layout is pinned by testdata/golden/*.md.

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/markdown"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
)

// formatFlag is --format of the commands that can print markdown.
func formatFlag() cli.Flag {
	return &cli.StringFlag{Name: "format", Value: "text", Usage: "text or markdown (for a pull-request comment or a CI job summary)"}
}

// checkFormat validates --format against --json and says whether markdown
// was asked for.
func checkFormat(format string, json bool) (bool, error) {
	switch format {
	case "", "text":
		return false, nil
	case "markdown", "md":
		if json {
			return false, usageError("--format markdown and --json exclude each other")
		}
		return true, nil
	}
	return false, usageError("--format %q: say text or markdown", format)
}

func mdShort(s string) string {
	if s == "" {
		return "-"
	}
	return markdown.Code(manifest.Short(s))
}

// markdownDiff writes `diff A B --format markdown`.
func markdownDiff(w io.Writer, a, b *manifest.Manifest, d diffJSON) {
	fmt.Fprintf(w, "### readproof diff: run %s → run %s\n\n", markdown.Code(a.RunID), markdown.Code(b.RunID))
	fmt.Fprintf(w, "Manifests %s → %s: **%d changed, %d added, %d removed, %d unchanged**\n\n",
		mdShort(d.A), mdShort(d.B), d.Counts["changed"], d.Counts["added"], d.Counts["removed"], d.Counts["unchanged"])
	// the unchanged entries are counted above, not listed: a row for each
	// made the comment of a large run longer than a git host accepts
	var rows [][]string
	for _, ch := range d.Changes {
		if ch.Kind == manifest.Unchanged {
			continue
		}
		row := []string{"", markdown.Code(ch.URI), "-", "-", ""}
		if ch.A != nil {
			row[2] = mdShort(ch.A.ContentHash)
		}
		if ch.B != nil {
			row[3] = mdShort(ch.B.ContentHash)
		}
		switch ch.Kind {
		case manifest.Changed:
			row[0], row[4] = "changed", markdown.Text(ch.Why)
		case manifest.Added:
			row[0], row[4] = "added", "new in run "+markdown.Code(b.RunID)
		case manifest.Removed:
			row[0], row[4] = "removed", "not in run "+markdown.Code(b.RunID)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "No document changed.")
		return
	}
	markdown.Table(w, []string{"change", "document", "run " + markdown.Code(a.RunID), "run " + markdown.Code(b.RunID), "why"}, rows)
	for _, ch := range d.Changes {
		if ch.Kind != manifest.Changed || ch.Unified == "" {
			continue
		}
		fmt.Fprintf(w, "\n#### %s\n\n%s\n\n", markdown.Code(ch.URI), markdown.Text(ch.Why))
		markdown.Block(w, "diff of "+ch.URI, "diff", readableDiff(ch.Unified))
	}
}

// markdownManifest writes `manifest RUN --format markdown`.
func markdownManifest(w io.Writer, m *manifest.Manifest, porLines []string) {
	fmt.Fprintf(w, "### readproof manifest: run %s\n\n", markdown.Code(m.RunID))
	fmt.Fprintf(w, "Manifest %s, created %s, %s\n\n", markdown.Code(m.ID), textTime(m.CreatedAt), text.Count(len(m.Entries), "entry", "entries"))
	var rows [][]string
	for _, en := range m.Entries {
		ref := "-"
		if en.Ref != "" {
			ref = markdown.Text(en.Ref)
		}
		rows = append(rows, []string{fmt.Sprint(en.Position), markdown.Code(en.URI), ref, mdShort(en.Snapshot), mdShort(en.ContentHash),
			fmt.Sprint(en.Bytes), markdown.Text(en.Decision), markdown.Text(en.SourceRevision)})
	}
	markdown.Table(w, []string{"#", "document", "tag", "snapshot", "content hash", "bytes", "decision", "source revision"}, rows)
	if len(porLines) > 0 {
		fmt.Fprintln(w)
		for _, l := range porLines {
			fmt.Fprintf(w, "- %s\n", markdown.Text(l))
		}
	}
}

// markdownStatus writes `status --format markdown`.
func markdownStatus(w io.Writer, list []store.ResourceStatus, policyPath string) {
	fmt.Fprint(w, "### readproof status\n\n")
	if len(list) == 0 {
		fmt.Fprintf(w, "No resources declared in %s.\n", markdown.Text(policyPath))
		return
	}
	drifted, failed := 0, 0
	var rows [][]string
	for i := range list {
		r := &list[i]
		if r.Drift {
			drifted++
		}
		if r.State == store.StatusSourceError {
			failed++
		}
		detail := ""
		switch r.State {
		case store.StatusChanged:
			detail = "source now " + mdShort(r.Source.ContentHash)
		case store.StatusUpToDate:
			detail = "snapshot " + mdShort(r.Current.Snapshot)
		}
		mark := "✅"
		if r.Drift || r.State == store.StatusSourceError {
			mark = "⚠️"
		}
		rows = append(rows, []string{mark, markdown.Code(r.URI), markdown.Text(r.Describe()), detail})
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
			state, m := "up to date", "✅"
			switch {
			case r.Source == nil:
				state, m = "not compared (source error)", "⚠️"
			case pt.p.Behind:
				state, m = "behind source", "⚠️"
			}
			rows = append(rows, []string{m, "↳ " + markdown.Text(pt.what), state, "snapshot " + mdShort(pt.p.Snapshot)})
		}
	}
	markdown.Table(w, []string{"", "document", "state", "detail"}, rows)
	fmt.Fprintf(w, "\n%s: %d drifted, %d source error%s\n", text.Count(len(list), "resource", "resources"), drifted, failed, text.Plural(failed, "", "s"))
}

// markdownVerify writes `verify --format markdown`.
func markdownVerify(w io.Writer, rep *storecheck.Report) {
	fmt.Fprint(w, "### readproof verify\n\n")
	switch {
	case rep.Broken() > 0:
		fmt.Fprintf(w, "❌ **broken**: %s\n\n", markdown.Text(rep.Summary()))
	case rep.CouldNotCheck() > 0:
		fmt.Fprintf(w, "⚠️ **not fully checked**: %s\n\n", markdown.Text(rep.Summary()))
	default:
		fmt.Fprintf(w, "✅ **ok**: %s\n\n", markdown.Text(rep.Summary()))
	}
	if len(rep.Problems) == 0 {
		return
	}
	var rows [][]string
	for _, p := range rep.Problems {
		where := []string{}
		if p.Object != "" {
			where = append(where, mdShort(p.Object))
		}
		if p.Path != "" {
			where = append(where, markdown.Text(p.Path))
		}
		rows = append(rows, []string{markdown.Text(string(p.Kind)), markdown.Text(p.Check), markdown.Text(p.Subject), strings.Join(where, " "), markdown.Text(p.Message)})
	}
	var b strings.Builder
	markdown.Table(&b, []string{"kind", "check", "subject", "where", "message"}, rows)
	if len(rows) > markdown.CollapseLines {
		fmt.Fprintf(w, "<details><summary>%d problems</summary>\n\n%s\n</details>\n", len(rows), b.String())
		return
	}
	fmt.Fprint(w, b.String())
}
