package commands

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/internal/store"
)

// hostileDetail is a check's detail that quotes an error naming a path of
// a store whose directory holds a bidi override and an escape sequence.
const hostileDetail = "reading refs/heads/main: open /srv/st\u202eore\x1b[2K/.readproof/refs/heads/main: input/output error"

// TestExportStderrEscapes (session 27): what `evidence export` says on
// stderr beside its error, the further checks that stop it and the
// warnings beside a bundle written, is escaped as the error line is
// (errorLines): a check's detail may quote an error that names a path of
// the store. Before, each went to the terminal as it was.
func TestExportStderrEscapes(t *testing.T) {
	var b bytes.Buffer
	e := &env{err: &b}
	stop := &store.ExportStopped{Err: errors.New("refused"), Run: "run-b",
		More: []evidence.Check{{Name: store.CheckJournal, Detail: hostileDetail}}}
	if err := stoppedExport(e, stop); err == nil {
		t.Fatal("a stopped export did not fail")
	}
	sayExportOutcome(e, store.ExportOutcome{Keys: []store.ExportKeyWarning{{Text: "key " + hostileDetail, Hint: "hint " + hostileDetail}},
		Warnings: []string{"warning " + hostileDetail}, Hints: []string{"hints " + hostileDetail},
		Replay: "replay " + hostileDetail, ReplayHint: "replay hint " + hostileDetail})
	got := b.String()
	for _, r := range got {
		if !unicode.IsPrint(r) && r != '\n' {
			t.Fatalf("export's stderr carries %U:\n%s", r, got)
		}
	}
	if n := strings.Count(got, `/srv/st\u202eore\x1b[2K/.readproof/`); n != 7 {
		t.Errorf("export's stderr names the path escaped %d times, want 7:\n%s", n, got)
	}
}
