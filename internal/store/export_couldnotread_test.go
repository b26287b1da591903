package store

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/internal/hint"
)

// TestExportCouldNotRead: the decision the command and the MCP export tool
// share (session 25, revA: TestEvidenceCouldNotRead now stops at the
// replay, before the store checks, so this is what holds it). A failed
// check that refuses, of kind could_not_read, stops the export with
// ErrCouldNotRead, naming the first and counting the rest, with a hint
// about the read (the owner and mode for a permission); store_replace and
// journal, which only warn, do not stop it, and neither does a check that
// failed on what it read. ExportRefuses and ExportWarnings leave the
// stopping ones to it.
func TestExportCouldNotRead(t *testing.T) {
	t.Parallel()
	perm := fmt.Errorf("open x: %w", fs.ErrPermission)
	eio := fmt.Errorf("read x: %w", syscall.EIO)
	cnr := func(name string, err error) evidence.Check {
		return evidence.Check{Name: name, Detail: name + " detail: " + err.Error(), Kind: KindCouldNotRead, Err: err}
	}
	forged := evidence.Check{Name: CheckStoreManifest, Detail: "forged"}
	for _, c := range []struct {
		name   string
		checks []evidence.Check
		stops  bool
		more   int
		want   []string
	}{
		{"none", []evidence.Check{{Name: CheckStoreManifest, OK: true}}, false, 0, nil},
		{"warning checks only", []evidence.Check{cnr(CheckStoreReplace, perm), cnr(CheckJournal, eio)}, false, 0, nil},
		{"a check that read something wrong", []evidence.Check{forged}, false, 0, nil},
		{"permission", []evidence.Check{cnr(CheckJournal, eio), cnr(CheckReceipts, perm), cnr(CheckProofOfRead, eio)}, true, 1,
			[]string{"evidence export r1: could not read the store: run r1, manifest m1, store check receipts: receipts detail: open x: permission denied (and 1 more)", "owner and mode"}},
		{"i/o error", []evidence.Check{cnr(CheckStoreManifest, eio)}, true, 0, []string{"store check store_manifest", "file system failed"}},
	} {
		more, err := ExportCouldNotRead("r1", "r1", "m1", c.checks)
		if (err != nil) != c.stops || len(more) != c.more {
			t.Errorf("%s: ExportCouldNotRead = %d more, %v; want stops %v, %d more", c.name, len(more), err, c.stops, c.more)
			continue
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrCouldNotRead) || !strings.Contains(err.Error(), c.want[0]) || !strings.Contains(hint.Of(err), c.want[1]) {
			t.Errorf("%s: ExportCouldNotRead error %q, hint %q; want ErrCouldNotRead, %q, a hint with %q", c.name, err, hint.Of(err), c.want[0], c.want[1])
		}
		for _, ch := range c.checks {
			if ExportRefuses(ch) {
				t.Errorf("%s: ExportRefuses(%s of kind %s) = true: a read the store refused is not a forged record", c.name, ch.Name, ch.Kind)
			}
		}
		if w, _ := ExportWarnings("r1", c.checks); len(w) != len(c.checks)-1-len(more) {
			t.Errorf("%s: ExportWarnings = %q: want only the checks that do not stop it", c.name, w)
		}
	}
}
