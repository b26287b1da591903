package commands

import (
	"bytes"
	"encoding/json"
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

// TestExportJSONEscapes (session 28): `evidence export --json`'s stop
// object (its checks' detail) and its summary (warnings, which are the
// MCP tool's) hold a check's detail escaped as stderr says it: the decoded
// strings carry a backslash, never a control or bidi character. Before,
// only JSON's escaping, which decodes back to them. Pinned by golden files.
func TestExportJSONEscapes(t *testing.T) {
	stop := &store.ExportStopped{Err: errors.New("run run-b: store check journal failed: " + hostileDetail), Run: "run-b",
		First: evidence.Check{Name: store.CheckJournal, Detail: hostileDetail},
		More:  []evidence.Check{{Name: store.CheckReceipts, Detail: "receipt " + hostileDetail}}}
	st := &evidence.Statement{}
	st.Predicate.RunID, st.Predicate.ManifestID = "run-b", hex40('a')
	outcome := store.ExportOutcome{Keys: []store.ExportKeyWarning{{Text: "key " + hostileDetail, Hint: "hint"}},
		Warnings: []string{"warning " + hostileDetail}, Replay: "replay " + hostileDetail}
	sum := exportJSON{OK: true, Target: "run-b", RunID: "run-b", ManifestID: hex40('a'), MerkleRoot: strings.Repeat("b", 64), Entries: 1,
		Out: "/tmp/run-b.json", BundleBytes: 10, BundleSHA256: strings.Repeat("c", 64), Warnings: outcome.AllWarnings()}
	for name, v := range map[string]any{"export-stopped.json": exportStopJSON("run-b", st, stop, stop.Err), "export-summary.json": sum} {
		var b bytes.Buffer
		if err := printJSON(&b, v); err != nil {
			t.Fatal(err)
		}
		var decoded any
		if err := json.Unmarshal(b.Bytes(), &decoded); err != nil {
			t.Fatal(err)
		}
		var strs []string
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case string:
				strs = append(strs, v)
			case []any:
				for _, x := range v {
					walk(x)
				}
			case map[string]any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(decoded)
		escaped := 0
		for _, s := range strs {
			for _, r := range s {
				if !unicode.IsPrint(r) {
					t.Errorf("%s: a decoded string carries %U: %q", name, r, s)
				}
			}
			escaped += strings.Count(s, `/srv/st\u202eore\x1b[2K/.readproof/`)
		}
		if escaped < 3 {
			t.Errorf("%s: %d decoded strings name the path escaped, want 3 or more:\n%s", name, escaped, b.String())
		}
		golden(t, name, b.Bytes())
	}
}
