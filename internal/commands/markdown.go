package commands

// --format markdown for diff, manifest, status and verify: text ready for a
// pull-request comment or a CI job summary ($GITHUB_STEP_SUMMARY). Every
// string a document, a source or the store controls is escaped by package
// markdown; the layout is pinned by testdata/golden/*.md.

import (
	"fmt"
	"io"
	"slices"
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

// defaultMaxChars is the default --max-chars: a GitHub comment holds
// 65,536 characters (the API refuses a longer one), a job summary 1 MiB, a
// GitLab note 1,000,000.
const defaultMaxChars = 60000

// minMaxChars is the smallest --max-chars but 0: room for the heading, the
// verdict and the closing line.
const minMaxChars = 1000

// maxCharsFlag is --max-chars of the commands that can print markdown.
func maxCharsFlag() cli.Flag {
	return &cli.IntFlag{Name: "max-chars", Value: defaultMaxChars, Usage: "with --format markdown: at most `N` characters, the verdict and what changed or failed first, then a line that says what was left out (0: no limit)"}
}

// formatOptions are --format and --max-chars.
type formatOptions struct {
	Format   string // text or markdown
	MaxChars int    // the markdown form's size limit in bytes, 0 for none
	maxSet   bool   // --max-chars was given
}

// formatOptionsOf reads --format and --max-chars.
func formatOptionsOf(c *cli.Context) formatOptions {
	return formatOptions{Format: c.String("format"), MaxChars: c.Int("max-chars"), maxSet: c.IsSet("max-chars")}
}

// checkFormat validates --format against --json, and --max-chars, and says
// whether markdown was asked for.
func checkFormat(o formatOptions, json bool) (bool, error) {
	md := false
	switch o.Format {
	case "", "text":
	case "markdown", "md":
		if json {
			return false, usageError("--format markdown and --json exclude each other")
		}
		md = true
	default:
		return false, usageError("--format %q: say text or markdown", o.Format)
	}
	if o.maxSet && !md {
		return false, usageError("--max-chars sizes the markdown form: add --format markdown")
	}
	if o.MaxChars < 0 || (o.MaxChars > 0 && o.MaxChars < minMaxChars) {
		return false, usageError("--max-chars %d: say 0 for no limit, or at least %d (the heading, the verdict and the closing line need room)", o.MaxChars, minMaxChars)
	}
	return md, nil
}

// mdLimit is the size limit of a markdown form: parts are taken whole, in
// order of importance, while they fit; what was left out is said in a
// closing line that names the command printing all of it.
type mdLimit struct {
	max    int    // bytes, 0 for no limit
	always int    // bytes written whatever the limit (heading, verdict, counts)
	cmd    string // the command that prints everything
}

// noteRoom is what the closing line may take: its words, counts and
// command, and a few of the documents it names.
func (l mdLimit) noteRoom() int {
	return 400 + len(markdown.Code(l.cmd))
}

// budget returns the budget left for the parts that may be left out, or
// nil when everything (total bytes) fits.
func (l mdLimit) budget(total int) *markdown.Budget {
	if l.max <= 0 || total <= l.max {
		return nil
	}
	return markdown.NewBudget(l.max - l.always - l.noteRoom())
}

// note returns the closing line of a cut markdown form: what was left out
// (parts, then the documents named, as many of them by name as keep the
// line within room bytes) and the command that prints all of it.
func (l mdLimit) note(parts []string, named string, names []string, room int) string {
	end := fmt.Sprintf(". %s prints all of it; `--max-chars 0` lifts the limit.\n", markdown.Code(l.cmd))
	line := fmt.Sprintf("\n**Shortened to fit %d characters**: left out %s", l.max, strings.Join(parts, " and "))
	if len(names) == 0 {
		return line + end
	}
	if len(parts) > 0 {
		line += " and "
	}
	line += named + " " + text.Count(len(names), "document", "documents")
	var list []string
	used := len(line) + len(end) + len(fmt.Sprintf(" (, and %d more)", len(names)))
	for _, n := range names {
		c := markdown.Code(n)
		if used+len(c)+len(", ") > room {
			break
		}
		list = append(list, c)
		used += len(c) + len(", ")
	}
	switch {
	case len(list) == len(names):
		line += " (" + strings.Join(list, ", ") + ")"
	case len(list) > 0:
		line += fmt.Sprintf(" (%s, and %d more)", strings.Join(list, ", "), len(names)-len(list))
	}
	return line + end
}

// sumLen is the length of the strings of parts.
func sumLen(parts []string) int {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return n
}

// takeByClass takes parts class by class (class 0 first; classOf(i) is
// part i's, -1 for none), in order within a class, while they fit, the
// table's head with the first taken; once one does not fit, every part after
// it is left out too. It returns which parts it took, and of each class how
// many were left out and how many there were.
func takeByClass(bud *markdown.Budget, head string, parts []string, classes int, classOf func(i int) int) (shown []bool, left, total []int) {
	shown, left, total = make([]bool, len(parts)), make([]int, classes), make([]int, classes)
	first, cut := true, false
	for c := range classes {
		for i, p := range parts {
			if classOf(i) != c {
				continue
			}
			total[c]++
			if first {
				p = head + p
			}
			if !cut && bud.Take(p) {
				shown[i], first = true, false
			} else {
				cut = true
				left[c]++
			}
		}
	}
	return shown, left, total
}

// takeRows takes rows[0], rows[1], ... while they fit, the table's head
// with the first; it returns how many it took.
func takeRows(bud *markdown.Budget, head string, rows []string) int {
	for i, r := range rows {
		if i == 0 {
			r = head + r
		}
		if !bud.Take(r) {
			return i
		}
	}
	return len(rows)
}

func mdShort(s string) string {
	if s == "" {
		return "-"
	}
	return markdown.Code(manifest.Short(s))
}

// leftOut says how many of total things were left out: "3 of 10 entries
// (the last ones)".
func leftOut(left, total int, things string) string {
	s := fmt.Sprintf("%d of %d %s", left, total, things)
	if left < total {
		s += " (the last ones)"
	}
	return s
}

// markdownDiff writes `diff A B --format markdown`, within maxChars (0: no
// limit): the heading and counts, the rows of the documents changed, added
// or removed, then the unified diffs. cmd is the diff command that prints
// all of it (the targets as given: a manifest's run id may name another).
func markdownDiff(w io.Writer, a, b *manifest.Manifest, d diffJSON, maxChars int, cmd string) {
	head := fmt.Sprintf("### readproof diff: run %s → run %s\n\n", markdown.Code(a.RunID), markdown.Code(b.RunID)) +
		fmt.Sprintf("Manifests %s → %s: **%d changed, %d added, %d removed, %d unchanged**\n\n",
			mdShort(d.A), mdShort(d.B), d.Counts["changed"], d.Counts["added"], d.Counts["removed"], d.Counts["unchanged"])
	// the unchanged entries are counted above, not listed: a row for each
	// made the comment of a large run longer than a git host accepts
	var rows []string
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
		rows = append(rows, markdown.Row(row))
	}
	fmt.Fprint(w, head)
	if len(rows) == 0 {
		fmt.Fprintln(w, "No document changed.")
		return
	}
	table := markdown.TableHead([]string{"change", "document", "run " + markdown.Code(a.RunID), "run " + markdown.Code(b.RunID), "why"})
	var diffs, diffURIs []string
	for _, ch := range d.Changes {
		if ch.Kind != manifest.Changed || ch.Unified == "" {
			continue
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "\n#### %s\n\n%s\n\n", markdown.Code(ch.URI), markdown.Text(ch.Why))
		markdown.Block(&sb, "diff of "+ch.URI, "diff", readableDiff(ch.Unified))
		diffs = append(diffs, sb.String())
		diffURIs = append(diffURIs, ch.URI)
	}
	lim := mdLimit{max: maxChars, always: len(head), cmd: cmd}
	bud := lim.budget(len(head) + len(table) + sumLen(rows) + sumLen(diffs))
	if bud == nil {
		fmt.Fprint(w, table+strings.Join(rows, "")+strings.Join(diffs, ""))
		return
	}
	n := takeRows(bud, table, rows)
	if n > 0 {
		fmt.Fprint(w, table+strings.Join(rows[:n], ""))
	}
	var parts, left []string
	if n < len(rows) {
		parts = append(parts, leftOut(len(rows)-n, len(rows), "table rows"))
		left = diffURIs
	} else {
		// a long diff left out leaves room for the shorter ones after it
		for i, s := range diffs {
			if bud.Take(s) {
				fmt.Fprint(w, s)
			} else {
				left = append(left, diffURIs[i])
			}
		}
	}
	fmt.Fprint(w, lim.note(parts, "the diffs of", left, lim.noteRoom()+bud.Left()))
}

// markdownManifest writes `manifest RUN --format markdown`, within
// maxChars (0: no limit): the heading, the entries, the proof-of-read lines.
// cmd is the manifest command that prints all of it.
func markdownManifest(w io.Writer, m *manifest.Manifest, porLines []string, maxChars int, cmd string) {
	head := fmt.Sprintf("### readproof manifest: run %s\n\n", markdown.Code(m.RunID)) +
		fmt.Sprintf("Manifest %s, created %s, %s\n\n", markdown.Code(m.ID), textTime(m.CreatedAt), text.Count(len(m.Entries), "entry", "entries"))
	var rows []string
	for _, en := range m.Entries {
		ref := "-"
		if en.Ref != "" {
			ref = markdown.Text(en.Ref)
		}
		rows = append(rows, markdown.Row([]string{fmt.Sprint(en.Position), markdown.Code(en.URI), ref, mdShort(en.Snapshot), mdShort(en.ContentHash),
			fmt.Sprint(en.Bytes), markdown.Text(en.Decision), markdown.Text(en.SourceRevision)}))
	}
	table := markdown.TableHead([]string{"#", "document", "tag", "snapshot", "content hash", "bytes", "decision", "source revision"})
	var por []string
	for _, l := range porLines {
		por = append(por, fmt.Sprintf("- %s\n", markdown.Text(l)))
	}
	fmt.Fprint(w, head)
	lim := mdLimit{max: maxChars, always: len(head), cmd: cmd}
	porLen := 0 // the proof-of-read lines and the blank line before them
	if len(por) > 0 {
		porLen = len("\n") + sumLen(por)
	}
	bud := lim.budget(len(head) + len(table) + sumLen(rows) + porLen)
	if bud == nil {
		fmt.Fprint(w, table+strings.Join(rows, ""))
		if len(por) > 0 {
			fmt.Fprint(w, "\n"+strings.Join(por, ""))
		}
		return
	}
	var parts []string
	n := takeRows(bud, table, rows)
	if n > 0 {
		fmt.Fprint(w, table+strings.Join(rows[:n], ""))
	}
	if n < len(rows) {
		parts = append(parts, leftOut(len(rows)-n, len(rows), "entries"))
	}
	k := 0
	if n == len(rows) {
		k = takeRows(bud, "\n", por)
		if k > 0 {
			fmt.Fprint(w, "\n"+strings.Join(por[:k], ""))
		}
	}
	if k < len(por) {
		parts = append(parts, leftOut(len(por)-k, len(por), "proof-of-read lines"))
	}
	fmt.Fprint(w, lim.note(parts, "", nil, 0))
}

// markdownStatus writes `status --format markdown`, within maxChars (0: no
// limit): the resources that drifted or failed first, then those up to
// date, then the counts (always written).
func markdownStatus(w io.Writer, list []store.ResourceStatus, policyPath string, maxChars int) {
	head := "### readproof status\n\n"
	fmt.Fprint(w, head)
	if len(list) == 0 {
		fmt.Fprintf(w, "No resources declared in %s.\n", markdown.Text(policyPath))
		return
	}
	drifted, failed := 0, 0
	// a resource's rows: its own and those of its pin and tags, whole
	groups := make([]string, len(list))
	flagged := make([]bool, len(list))
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
			flagged[i] = true
		}
		rows := markdown.Row([]string{mark, markdown.Code(r.URI), markdown.Text(r.Describe()), detail})
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
			if m != "✅" {
				flagged[i] = true
			}
			rows += markdown.Row([]string{m, "↳ " + markdown.Text(pt.what), state, "snapshot " + mdShort(pt.p.Snapshot)})
		}
		groups[i] = rows
	}
	table := markdown.TableHead([]string{"", "document", "state", "detail"})
	tail := fmt.Sprintf("\n%s: %d drifted, %d source error%s\n", text.Count(len(list), "resource", "resources"), drifted, failed, text.Plural(failed, "", "s"))
	lim := mdLimit{max: maxChars, always: len(head) + len(tail), cmd: "readproof status"}
	bud := lim.budget(len(head) + len(table) + sumLen(groups) + len(tail))
	shown := make([]bool, len(list))
	var parts []string
	if bud == nil {
		for i := range shown {
			shown[i] = true
		}
	} else {
		// what drifted or failed first, then what is up to date
		var left, total []int
		shown, left, total = takeByClass(bud, table, groups, 2, func(i int) int {
			if flagged[i] {
				return 0
			}
			return 1
		})
		for c, what := range []string{"resources that drifted or failed", "resources up to date"} {
			if left[c] > 0 {
				parts = append(parts, leftOut(left[c], total[c], what))
			}
		}
	}
	var b strings.Builder
	for i, g := range groups {
		if shown[i] {
			b.WriteString(g)
		}
	}
	if b.Len() > 0 {
		fmt.Fprint(w, table+b.String())
	}
	fmt.Fprint(w, tail)
	if len(parts) > 0 {
		fmt.Fprint(w, lim.note(parts, "", nil, 0))
	}
}

// markdownVerify writes `verify --format markdown`, within maxChars (0: no
// limit): the verdict, then the problems, broken ones first, then those
// that could not be checked, then warnings. cmd is the verify command
// that was run, to print every problem.
func markdownVerify(w io.Writer, rep *storecheck.Report, maxChars int, cmd string) {
	head := "### readproof verify\n\n"
	switch {
	case rep.Broken() > 0:
		head += fmt.Sprintf("❌ **broken**: %s\n\n", markdown.Text(rep.Summary()))
	case rep.CouldNotCheck() > 0:
		head += fmt.Sprintf("⚠️ **not fully checked**: %s\n\n", markdown.Text(rep.Summary()))
	default:
		head += fmt.Sprintf("✅ **ok**: %s\n\n", markdown.Text(rep.Summary()))
	}
	fmt.Fprint(w, head)
	if len(rep.Problems) == 0 {
		return
	}
	rows := make([]string, len(rep.Problems))
	for i, p := range rep.Problems {
		where := []string{}
		if p.Object != "" {
			where = append(where, mdShort(p.Object))
		}
		if p.Path != "" {
			where = append(where, markdown.Text(p.Path))
		}
		rows[i] = markdown.Row([]string{markdown.Text(string(p.Kind)), markdown.Text(p.Check), markdown.Text(p.Subject), strings.Join(where, " "), markdown.Text(p.Message)})
	}
	table := markdown.TableHead([]string{"kind", "check", "subject", "where", "message"})
	// the <details> around a long table: its summary is written last
	const wrapRoom = 100
	lim := mdLimit{max: maxChars, always: len(head) + wrapRoom, cmd: cmd}
	wrap := 0 // the <details> of the whole table, when it has one
	if len(rows) > markdown.CollapseLines {
		wrap = len(fmt.Sprintf("<details><summary>%d problems</summary>\n\n\n</details>\n", len(rows)))
	}
	bud := lim.budget(len(head) + wrap + len(table) + sumLen(rows))
	shown := make([]bool, len(rows))
	n := 0
	var parts []string
	if bud == nil {
		for i := range shown {
			shown[i] = true
		}
		n = len(rows)
	} else {
		order := []storecheck.Kind{storecheck.Broken, storecheck.CouldNotCheck, storecheck.Warning}
		var left []int
		shown, left, _ = takeByClass(bud, table, rows, len(order), func(i int) int { return slices.Index(order, rep.Problems[i].Kind) })
		for _, ok := range shown {
			if ok {
				n++
			}
		}
		var kinds []string
		for c, k := range order {
			if left[c] > 0 {
				kinds = append(kinds, fmt.Sprintf("%s: %d", k, left[c]))
			}
		}
		parts = append(parts, fmt.Sprintf("%d of %d problems (%s)", len(rows)-n, len(rows), strings.Join(kinds, ", ")))
	}
	var b strings.Builder
	if n > 0 {
		b.WriteString(table)
		for i, r := range rows {
			if shown[i] {
				b.WriteString(r)
			}
		}
	}
	switch {
	case n > markdown.CollapseLines && n < len(rows):
		fmt.Fprintf(w, "<details><summary>%d of %d problems</summary>\n\n%s\n</details>\n", n, len(rows), b.String())
	case n > markdown.CollapseLines:
		fmt.Fprintf(w, "<details><summary>%d problems</summary>\n\n%s\n</details>\n", n, b.String())
	default:
		fmt.Fprint(w, b.String())
	}
	if len(parts) > 0 {
		fmt.Fprint(w, lim.note(parts, "", nil, 0))
	}
}
