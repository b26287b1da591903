package store

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/readproof/readproof/evidence"
)

// TestExportOutcomeOf (session 26): the one sequence `evidence export` and
// the MCP export tool follow on an export's store checks. A record found
// forged is refused before a check that could not read the store stops
// it; each stop names every check that stops it; a key warning is kept
// only when its check ran; the warnings come in the tool's order (the
// store checks', the replay's, the keys').
func TestExportOutcomeOf(t *testing.T) {
	t.Parallel()
	st := &evidence.Statement{Predicate: evidence.Predicate{RunID: "r1", ManifestID: "m1",
		Replay: &evidence.BundleReplay{AllMatch: true, Entries: []evidence.BundleReplayEntry{{Match: true}}}}}
	perm := fmt.Errorf("open x: %w", fs.ErrPermission)
	unread := evidence.Check{Name: CheckReceipts, Detail: "receipt unread", Kind: KindCouldNotRead, Err: perm}
	unread2 := evidence.Check{Name: CheckProofOfRead, Detail: "verdict unread", Kind: KindCouldNotRead, Err: perm}
	forged := evidence.Check{Name: CheckStoreManifest, Detail: "forged"}
	replaced := evidence.Check{Name: CheckStoreReplace, Detail: "refs/replace/x"}
	signed := evidence.Check{Name: CheckCommitSignature, OK: true}

	_, err := ExportOutcomeOf("r1", st, []evidence.Check{unread, forged, unread2}, nil)
	stop := IsExportStopped(fmt.Errorf("wrapped: %w", err))
	if stop == nil || stop.CouldNotRead || stop.First.Name != CheckStoreManifest || len(stop.More) != 0 || errors.Is(err, ErrCouldNotRead) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a forged record and unread checks: %v (%+v), want refused, naming store_manifest alone", err, stop)
	}
	_, err = ExportOutcomeOf("r1", st, []evidence.Check{replaced, unread, unread2}, nil)
	if stop = IsExportStopped(err); stop == nil || !stop.CouldNotRead || stop.First.Name != CheckReceipts || len(stop.More) != 1 || stop.More[0].Name != CheckProofOfRead ||
		!errors.Is(err, ErrCouldNotRead) || stop.Run != "r1" {
		t.Fatalf("unread checks: %v (%+v), want could not read, naming receipts then proof_of_read", err, stop)
	}

	keys := []ExportKeyWarning{{Check: CheckCommitSignature, Text: "signers unread", Hint: "fix signers"},
		{Check: CheckReceipts, Text: "receipts key unread", Hint: "fix key"}, {Text: "always", Hint: "fix signers"}}
	bad := *st
	bad.Predicate.Replay = &evidence.BundleReplay{Entries: []evidence.BundleReplayEntry{{Match: false}}}
	o, err := ExportOutcomeOf("r1", &bad, []evidence.Check{signed, replaced}, keys)
	if err != nil {
		t.Fatal(err)
	}
	w, h := ExportWarnings("r1", []evidence.Check{signed, replaced})
	rw, rh := ExportReplayWarning("r1", bad.Predicate.Replay)
	if want := append(append(w, rw), "signers unread", "always"); !reflect.DeepEqual(o.AllWarnings(), want) {
		t.Errorf("AllWarnings = %q, want %q (no receipts check ran: its key's warning is left out)", o.AllWarnings(), want)
	}
	if want := append(append(h, rh), "fix signers"); !reflect.DeepEqual(o.AllHints(), want) {
		t.Errorf("AllHints = %q, want %q (each once)", o.AllHints(), want)
	}
	if o, err := ExportOutcomeOf("r1", st, []evidence.Check{signed}, nil); err != nil || len(o.AllWarnings()) != 0 || len(o.AllHints()) != 0 {
		t.Errorf("a clean export: %v, warnings %q, hints %q; want none", err, o.AllWarnings(), o.AllHints())
	}
}
