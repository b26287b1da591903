package commands

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
)

// tabwriterTable is the `receipts list` table as it was written before it
// was streamed: every row held in a text/tabwriter until its Flush.
func tabwriterTable(rows []receiptJSON) string {
	var b bytes.Buffer
	withCaller, withRun := false, false
	for _, r := range rows {
		withCaller = withCaller || r.Caller != ""
		withRun = withRun || r.Run != ""
	}
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	head := "ID\tTOOL\t"
	if withCaller {
		head += "CALLER\t"
	}
	if withRun {
		head += "RUN\tBOUND\t"
	}
	fmt.Fprintln(tw, head+"START\tEND\tEXIT\tVALID")
	for _, r := range rows {
		caller := ""
		if withCaller {
			caller = "-\t"
			if r.Caller != "" {
				caller = r.Caller + "\t"
			}
		}
		if withRun {
			run := "-"
			if r.Run != "" {
				run = r.Run
			}
			caller += run + "\t" + bindingText(r, false) + "\t"
		}
		if r.Tool == "" {
			fmt.Fprintf(tw, "%s\t-\t%s-\t-\t-\t%s\n", r.ID, caller, r.Check)
			continue
		}
		exit := "-"
		if r.ExitCode != nil {
			exit = strconv.Itoa(*r.ExitCode)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s\t%s\t%s\t%s\n", r.ID, receiptText(r.Tool), caller, receiptTableTime(r.Start), receiptTableTime(r.End), exit, r.Check)
	}
	tw.Flush()
	return b.String()
}

// rowsOf gives rows one at a time, counting the passes over them.
func rowsOf(rows []receiptJSON, passes *int) func(func(receiptJSON) error) error {
	return func(fn func(receiptJSON) error) error {
		*passes++
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestReceiptTableStreamed: the `receipts list` table, written from rows
// given one at a time (two passes, no row kept), is the table a tabwriter
// holding them all wrote, byte for byte: with and without the CALLER, RUN
// and BOUND columns, unreadable receipts' rows, tools of letters of other
// scripts and quoted ones, exit codes of any width.
func TestReceiptTableStreamed(t *testing.T) {
	exit := func(n int) *int { return &n }
	id := func(c byte) string { return "rcpt_" + string(bytes.Repeat([]byte{c}, 32)) }
	plain := []receiptJSON{
		{ID: id('a'), Tool: "search", Start: "2026-01-01T00:00:00.123456789Z", End: "2026-01-01T00:00:01.000000000Z", Check: "valid"},
		{ID: id('b'), Tool: "exec", Start: "2026-01-01T00:00:00.000000000Z", End: "2026-01-01T00:00:00.000000000Z", ExitCode: exit(130), Check: "tampered"},
		{ID: "0/1/stray.json", Check: "tampered", Detail: "not a receipt"},
		{ID: id('c'), Tool: "récupérer-文書", Start: "bad time", End: "2026-01-01T00:00:00.000000000Z", ExitCode: exit(0), Check: "?"},
		{ID: id('d'), Tool: "two words", Start: "2026-01-01T00:00:00.000000000Z", End: "2026-01-01T00:00:00.000000000Z", Check: "unknown_key"},
	}
	withCaller := append(append([]receiptJSON{}, plain...), receiptJSON{ID: id('e'), Tool: "t", Caller: "ci-bot", Start: "x", End: "y", Check: "valid"})
	withRun := append(append([]receiptJSON{}, withCaller...),
		receiptJSON{ID: id('f'), Tool: "t", Run: "run-1", Binding: &bindingJSON{Kind: "manifest", ManifestID: "0123456789abcdef0123456789abcdef01234567"}, Start: "x", End: "y", Check: "valid"},
		receiptJSON{ID: id('g'), Tool: "t", Run: "r2", Binding: &bindingJSON{Kind: "unbound"}, Start: "x", End: "y", Check: "valid"})
	onlyRun := append(append([]receiptJSON{}, plain...), withRun[len(withRun)-1])
	for name, rows := range map[string][]receiptJSON{"plain": plain, "caller": withCaller, "run": withRun, "run only": onlyRun, "one": plain[:1]} {
		passes := 0
		var b bytes.Buffer
		if err := writeReceiptTable(&b, rowsOf(rows, &passes)); err != nil {
			t.Fatal(err)
		}
		if want := tabwriterTable(rows); b.String() != want {
			t.Errorf("%s: the table is\n%s\nwant\n%s", name, b.String(), want)
		}
		if passes != 2 {
			t.Errorf("%s: %d passes over the rows, want 2", name, passes)
		}
	}
}

// TestPrintJSONArrayStreamed: an array printed a value at a time is what
// printJSON prints of the whole slice: empty, one value, several, with
// characters encoding/json escapes or leaves to escapeJSONControls.
func TestPrintJSONArrayStreamed(t *testing.T) {
	for _, rows := range [][]receiptJSON{
		{},
		{{ID: "a", Check: "valid"}},
		{{ID: "a <b> & c", Tool: "\u202e\x7f\u0085", Check: "valid", Binding: &bindingJSON{Kind: "unbound"}}, {ID: "b", Detail: "line\nbreak\t\"q\""}},
	} {
		var want, got bytes.Buffer
		if err := printJSON(&want, rows); err != nil {
			t.Fatal(err)
		}
		passes := 0
		if err := printJSONArray(&got, rowsOf(rows, &passes)); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() || passes != 1 {
			t.Errorf("streamed (%d passes):\n%s\nwant:\n%s", passes, got.String(), want.String())
		}
	}
}

// TestReceiptTableSecondPassDiffers: a row the second pass gives wider
// than the first measured (a receipt that could not be read for the
// widths and was read for its line: a pack a gc was writing meanwhile)
// is written with its cells two spaces apart at least, not a panic.
func TestReceiptTableSecondPassDiffers(t *testing.T) {
	id := "rcpt_" + string(bytes.Repeat([]byte{'a'}, 32))
	tool := "a-tool-wider-than-its-column"
	unread := receiptJSON{ID: id, Check: "tampered", Detail: "reading receipt: object not found"}
	read := receiptJSON{ID: id, Tool: tool, Start: "2026-01-01T00:00:00.000000000Z", End: "2026-01-01T00:00:01.000000000Z", Check: "valid"}
	pass := 0
	each := func(fn func(receiptJSON) error) error {
		if pass++; pass == 1 {
			return fn(unread)
		}
		return fn(read)
	}
	var b bytes.Buffer
	if err := writeReceiptTable(&b, each); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	want := id + "  " + tool + "  " + receiptTableTime(read.Start) + "  " + receiptTableTime(read.End) + "  -     valid"
	if len(lines) != 3 || lines[1] != want || lines[2] != "" {
		t.Fatalf("the table is\n%s\nwant its second line\n%s", b.String(), want)
	}
}
