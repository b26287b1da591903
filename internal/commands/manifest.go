package commands

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/internal/progress"
	"github.com/readproof/readproof/internal/proofread"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
)

// manifestJSON is the --json shape of a manifest.
type manifestJSON struct {
	ManifestID string `json:"manifest_id"`
	*manifest.Manifest
	Extra map[string]any `json:"extra,omitempty"`
}

func manifestCommand() *cli.Command {
	return &cli.Command{
		Name:      "manifest",
		Usage:     "show a committed manifest by run id or manifest id",
		ArgsUsage: "RUN|MANIFEST",
		Flags:     []cli.Flag{formatFlag(), maxCharsFlag()},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, 1, "RUN|MANIFEST"); err != nil {
				return err
			}
			opts := formatOptionsOf(c)
			readerGC()
			return withEnv(c, func(e *env) error { return runManifest(c.Context, e, opts, c.Args().Slice()) })
		},
	}
}

// readerGC lets the garbage collector of a `manifest`, `diff` or `replay`
// process wait until the heap is five times what was live after the last
// collection (GOGC=400) instead of twice: the command keeps what it decodes
// until it exits, so collecting while it decodes only rescans the same live
// manifests (a tenth of the CPU of a 1,000-entry diff); `replay` keeps every
// blob it prints until the end (the two collections of a 1,000-document
// replay were 13% of its CPU). It is left alone when the user set GOGC or
// GOMEMLIMIT, and only these three commands' CLI actions call it: the MCP
// server, which runs the same actions' work for as long as it serves, and
// the commands that write keep Go's default.
func readerGC() { setGCPercentUnlessUserSet(400) }

// setGCPercentUnlessUserSet sets the collector's GOGC to percent, unless the
// user set GOGC or GOMEMLIMIT in the environment: theirs wins.
func setGCPercentUnlessUserSet(percent int) {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(percent)
	}
}

// runManifest prints the manifest args[0] names, with its proof-of-read
// verdicts.
func runManifest(_ context.Context, e *env, opts formatOptions, args []string) error {
	md, err := checkFormat(opts, e.json)
	if err != nil {
		return err
	}
	return e.withReadStore(func(s *store.Store) error {
		if !e.json && !md {
			return manifestText(e.out, s, args[0])
		}
		m, err := s.Manifest(args[0])
		if err != nil {
			return err
		}
		por, lines, err := proofread.ManifestPart(s, m)
		if err != nil {
			return err
		}
		if e.json {
			j := manifestJSON{ManifestID: m.ID, Manifest: m}
			if por != nil {
				j.Extra = map[string]any{proofread.ExtraKey: por}
			}
			return printJSON(e.out, j)
		}
		markdownManifest(e.out, m, lines, opts.MaxChars, "readproof manifest "+text.ShellArg(args[0]))
		return nil
	})
}

// manifestText writes `manifest RUN` as text: what it prints of the
// manifest is all it reads of it (store.ManifestView).
func manifestText(w io.Writer, s *store.Store, target string) error {
	v, err := s.ManifestView(target)
	if err != nil {
		return err
	}
	lines, err := proofread.ManifestViewLines(s, v)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "manifest %s\nrun      %s\ncreated  %s\n", v.ID, store.NamedRunPhrase(target, v.RunID), textTime(v.CreatedAt))
	if v.Caller != "" {
		fmt.Fprintf(w, "caller   %s\n", v.Caller)
	}
	fmt.Fprintf(w, "entries  %d\n", len(v.Entries))
	if v.TraceID != "" {
		fmt.Fprintf(w, "trace    %s\n", v.TraceID)
	}
	fmt.Fprintln(w)
	if err := writeEntryTable(w, v); err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return nil
}

// entryCells are the cells of an entry's row in the table of `manifest`
// after its position, appended to c.
func entryCells(c []string, en *manifest.ViewEntry, withRef bool) []string {
	c = append(c, en.URI)
	if withRef {
		ref := en.Ref
		if ref == "" {
			ref = "-"
		}
		c = append(c, ref)
	}
	return append(c, manifest.Short(en.Snapshot), manifest.Short(en.ContentHash), en.Decision)
}

// writeEntryTable writes the table of a manifest's entries: what
// writeTable writes of their rows, without making the rows (a slice and a
// position string per entry) when no cell sends writeTable to tabwriter.
func writeEntryTable(w io.Writer, v *manifest.View) error {
	withRef := slices.ContainsFunc(v.Entries, func(en manifest.ViewEntry) bool { return en.Ref != "" })
	head := entryHead(withRef)
	widths := make([]int, len(head))
	for j, h := range head {
		widths[j] = len(h)
	}
	var cells [6]string
	var num [20]byte
	for i := range v.Entries {
		en := &v.Entries[i]
		widths[0] = max(widths[0], len(strconv.AppendInt(num[:0], int64(en.Position), 10)))
		for j, c := range entryCells(cells[:0], en, withRef) {
			n, ok := plainCell(c)
			if !ok {
				return writeTable(w, entryRows(v, head, withRef))
			}
			if j+1 < len(head)-1 {
				widths[j+1] = max(widths[j+1], n)
			}
		}
	}
	const pad = 2
	row := make([]byte, 0, 256)
	cell := func(row []byte, j int, c []byte, runes int) []byte {
		row = append(row, c...)
		if j < len(head)-1 {
			for k := runes; k < widths[j]+pad; k++ {
				row = append(row, ' ')
			}
		}
		return row
	}
	for j, h := range head {
		row = cell(row, j, []byte(h), len(h))
	}
	if _, err := w.Write(append(row, '\n')); err != nil {
		return err
	}
	for i := range v.Entries {
		en := &v.Entries[i]
		p := strconv.AppendInt(num[:0], int64(en.Position), 10)
		row = cell(row[:0], 0, p, len(p))
		for j, c := range entryCells(cells[:0], en, withRef) {
			n, _ := plainCell(c)
			row = cell(row, j+1, []byte(c), n)
		}
		if _, err := w.Write(append(row, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// plainCell returns the runes of c, and false when it has a byte that
// sends writeTable to tabwriter (tabwriterCell). A cell of printable ASCII,
// as every cell of a valid manifest is (identity's rules for URIs and
// tags), is told eight bytes at a time: its runes are its bytes.
func plainCell(c string) (n int, ok bool) {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	s := c
	for len(s) >= 8 {
		// A high bit for a byte below 0x20 (the borrow) or from 0x80.
		if w := binary.LittleEndian.Uint64([]byte(s[:8])); (w-ones*0x20|w)&highs != 0 {
			return slowCell(c)
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= utf8.RuneSelf {
			return slowCell(c)
		}
	}
	return len(c), true
}

// slowCell is plainCell for a cell with other bytes.
func slowCell(c string) (int, bool) {
	return utf8.RuneCountInString(c), !tabwriterCell(c)
}

// entryHead is the head row of the entry table, with a REF column when
// some entry was delivered at a tag.
func entryHead(withRef bool) []string {
	if withRef {
		return []string{"POS", "URI", "REF", "SNAPSHOT", "CONTENT_HASH", "DECISION"}
	}
	return []string{"POS", "URI", "SNAPSHOT", "CONTENT_HASH", "DECISION"}
}

// entryRows are the rows writeEntryTable writes, head first.
func entryRows(v *manifest.View, head []string, withRef bool) [][]string {
	rows := make([][]string, 0, len(v.Entries)+1)
	rows = append(rows, head)
	for i := range v.Entries {
		en := &v.Entries[i]
		rows = append(rows, entryCells([]string{strconv.Itoa(en.Position)}, en, withRef))
	}
	return rows
}

// diffJSON is the --json shape of a diff.
type diffJSON struct {
	A       string         `json:"a"`
	B       string         `json:"b"`
	Changes []changeJSON   `json:"changes"`
	Counts  map[string]int `json:"counts"`
}

type changeJSON struct {
	manifest.Change
	Why     string `json:"why,omitempty"`
	Unified string `json:"unified,omitempty"`
}

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "compare two runs: which documents changed, why (source revision, observed time, tag), and how",
		ArgsUsage: "RUN-A RUN-B",
		Flags:     []cli.Flag{formatFlag(), maxCharsFlag()},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 2, 2, "RUN-A RUN-B"); err != nil {
				return err
			}
			opts := formatOptionsOf(c)
			readerGC()
			return withEnv(c, func(e *env) error { return runDiff(c.Context, e, opts, c.Args().Slice()) })
		},
	}
}

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "rebuild a run's bytes from the store alone and re-verify every hash; non-zero on any mismatch",
		ArgsUsage: "RUN|MANIFEST",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "no-content", Usage: "verify only; do not print the bytes"},
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 1, 1, "RUN|MANIFEST"); err != nil {
				return err
			}
			opts := replayOptions{NoContent: c.Bool("no-content")}
			readerGC()
			return withEnv(c, func(e *env) error { return runReplay(c.Context, e, opts, c.Args().Slice()) })
		},
	}
}

// replayOptions are the flags of `replay`.
type replayOptions struct {
	NoContent bool // verify only; do not print the bytes
}

// runReplay rebuilds the run args[0] names from the store and re-verifies
// every hash, the delivered hashes of probed entries included.
func runReplay(ctx context.Context, e *env, opts replayOptions, args []string) error {
	return e.withReadStoreCtx(ctx, func(s *store.Store) error {
		var res *store.ReplayResult
		var rerr error
		line := progress.Start(e.err, "replay", "entries", e.json)
		replay := s.ReplayContext
		if opts.NoContent || e.json {
			// the bytes are not printed: kept only where proof of read
			// needs them
			replay = s.ReplayNoContentContext
		}
		err := interruptible(ctx, func() error {
			res, rerr = replay(ctx, args[0], line.Update)
			return nil
		})
		line.Stop()
		if err != nil {
			return err
		}
		if res == nil {
			if uerr := store.ReplayCouldNotRead(args[0], res, rerr); uerr != nil {
				return withCode(ExitCannotCheck, uerr)
			}
			return rerr
		}
		extraLines, err := proofread.ReplayLines(s, res)
		if err != nil && rerr == nil {
			rerr = err
		}
		n := len(res.Entries)
		// an entry the store would not let read proves nothing either way:
		// a check that could not run (exit 4), not a mismatch
		code := ExitMismatch
		if uerr := store.ReplayCouldNotRead(args[0], res, rerr); uerr != nil {
			code, rerr = ExitCannotCheck, uerr
		}
		if e.json {
			if err := printJSON(e.out, map[string]any{"manifest_id": res.Manifest.ID, "run_id": res.Manifest.RunID, "all_match": res.AllMatch && rerr == nil, "matched": res.Matched, "entries": res.Entries}); err != nil {
				return err
			}
			return withCode(code, rerr)
		}
		if !opts.NoContent && rerr == nil {
			// The bytes in as few pieces as they were read into: each
			// larger than e.out's buffer goes out without a copy.
			for _, b := range res.Spans() {
				if ctx.Err() != nil {
					return interrupted(ctx)
				}
				if _, err := e.out.Write(b); err != nil {
					return err
				}
			}
		}
		for _, l := range extraLines {
			e.say("%s", l)
		}
		if rerr != nil {
			for _, en := range res.Entries {
				if en.Match {
					e.say("ok    [%d] %s %s", en.Position, en.URI, manifest.Short(en.Expected))
				} else if en.Error != "" {
					e.say("FAIL  [%d] %s: %s", en.Position, en.URI, en.Error)
				} else {
					e.say("FAIL  [%d] %s: bytes hash to %s, manifest records %s", en.Position, en.URI, en.Actual, en.Expected)
				}
			}
			return withCode(code, rerr)
		}
		// the bytes are out (withReadStoreCtx buffers stdout) before the
		// line that says so
		if f, ok := e.out.(interface{ Flush() error }); ok {
			if err := f.Flush(); err != nil {
				return err
			}
		}
		e.say("Replay verified: SHA256 match for %d/%d entries.", res.Matched, n)
		return nil
	})
}

// runDiff is `readproof diff`.
func runDiff(ctx context.Context, e *env, opts formatOptions, args []string) error {
	md, err := checkFormat(opts, e.json)
	if err != nil {
		return err
	}
	return e.withReadStoreCtx(ctx, func(s *store.Store) error {
		// The two manifests are read and decoded side by side (the store
		// is safe for concurrent readers); A's error comes first, as when
		// they were read one after the other.
		var b *manifest.Manifest
		var berr error
		bRead := make(chan struct{})
		go func() {
			defer close(bRead)
			b, berr = s.Manifest(args[1])
		}()
		a, err := s.Manifest(args[0])
		<-bRead
		if err != nil {
			return err
		}
		if berr != nil {
			return berr
		}
		cmp := manifest.Compare(a, b)
		out := diffJSON{A: a.ID, B: b.ID, Changes: []changeJSON{},
			Counts: map[string]int{"changed": cmp.Changed, "added": cmp.Added, "removed": cmp.Removed, "unchanged": cmp.Unchanged}}
		// The unified diffs read and compare document bytes: the long part,
		// drawn as progress and stopped by Ctrl-C (exit 130, nothing
		// printed: the output is written only once every diff is made).
		line := progress.Start(e.err, "diff", "entries", e.json)
		err = interruptible(ctx, func() error {
			for i, ch := range cmp.Changes {
				if err := ctx.Err(); err != nil {
					return err
				}
				line.Update(i, len(cmp.Changes))
				j := changeJSON{Change: ch}
				switch ch.Kind {
				case manifest.Changed:
					j.Why = ch.Why()
					if ch.A.ContentHash != ch.B.ContentHash {
						ab, err := s.Content(ch.A.Snapshot)
						if err != nil {
							return fmt.Errorf("diff: %s in %s: %w", ch.URI, a.RunID, err)
						}
						bb, err := s.Content(ch.B.Snapshot)
						if err != nil {
							return fmt.Errorf("diff: %s in %s: %w", ch.URI, b.RunID, err)
						}
						j.Unified = manifest.Unified("a/"+ch.A.File, "b/"+ch.B.File, ab, bb, 3)
					}
				}
				out.Changes = append(out.Changes, j)
			}
			return nil
		})
		line.Stop()
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.out, out)
		}
		if md {
			markdownDiff(e.out, a, b, out, opts.MaxChars, "readproof diff "+text.ShellArg(args[0])+" "+text.ShellArg(args[1]))
			return nil
		}
		for _, ch := range out.Changes {
			switch ch.Kind {
			case manifest.Changed:
				fmt.Fprintf(e.out, "~ %s\n  %s\n", ch.URI, text.Printable(ch.Why)) // a source chose the revisions
				fmt.Fprint(e.out, readableDiff(ch.Unified))
			case manifest.Added:
				fmt.Fprintf(e.out, "+ %s (snapshot %s, %s)\n", ch.URI, manifest.Short(ch.B.Snapshot), manifest.Short(ch.B.ContentHash))
			case manifest.Removed:
				fmt.Fprintf(e.out, "- %s (snapshot %s, %s)\n", ch.URI, manifest.Short(ch.A.Snapshot), manifest.Short(ch.A.ContentHash))
			}
		}
		fmt.Fprintf(e.out, "%d changed, %d added, %d removed, %d unchanged\n", cmp.Changed, cmp.Added, cmp.Removed, cmp.Unchanged)
		return nil
	})
}

// readableDiff is a unified diff from manifest.Unified as a reviewer reads
// it (the text and markdown forms of diff; --json keeps the bytes): each
// line of a document, after its ' ', '-' or '+', passes
// text.PrintableLine, so a document cannot put a terminal escape, a bidi
// control or a carriage return in front of the reader. The file header,
// hunk headers and "\ No newline at end of file" are readproof's own.
func readableDiff(u string) string {
	// b is started only when a line needs quoting: most diffs have none
	// and are given back as they are, with no copy.
	var b strings.Builder
	started := false
	header := 2 // "--- a/..." and "+++ b/...": names made from URIs
	for at := 0; at < len(u); {
		line, _, _ := strings.Cut(u[at:], "\n")
		lead, body := "", line // body is shown as PrintableLine has it
		switch {
		case header > 0:
			header--
		case line != "" && (line[0] == ' ' || line[0] == '-' || line[0] == '+'):
			lead, body = line[:1], text.PrintableLine(line[1:])
		}
		if !started && len(lead)+len(body) != len(line) { // quoted: longer
			started = true
			b.Grow(len(u) + len(body) - len(line) + 2)
			b.WriteString(u[:at])
		}
		if started {
			b.WriteString(lead)
			b.WriteString(body)
			b.WriteByte('\n')
		}
		at += len(line) + 1
	}
	switch {
	case started:
		return b.String()
	case u == "" || u[len(u)-1] == '\n':
		return u
	default:
		return u + "\n" // every line ends in a newline, the last included
	}
}
