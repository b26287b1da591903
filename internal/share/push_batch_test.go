package share

import (
	"slices"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/store"
)

// TestPushBatchesRenameWithJournal: a push too large for one command line
// sends a run the journal records renamed (its manifest records another
// run id) in the journal's batch, not with the other runs first: a guarded
// remote takes such a run only with the journal that records the rename
// (CheckIncoming), so the first batch was refused.
func TestPushBatchesRenameWithJournal(t *testing.T) {
	t.Parallel()
	p := newProject(t, map[string]string{"doc": "the text\n"})
	for _, id := range []string{"a-1", "b-1", "c-1"} {
		p.run(t, id, "doc")
	}
	if _, err := RenameRun(p.s, "a-1", "a-2", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	g := p.s.Git()
	local, err := readState(g, localPrefixes())
	if err != nil {
		t.Fatal(err)
	}
	ps := &pusher{g: g, local: local, rem: newState(), res: &PushResult{}}
	immutable := ps.runSpecs()
	plain, renamed, err := ps.renamedRuns(immutable)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := local.runs.get("a-2")
	a2 := string(m) + ":" + store.RunsPrefix + "a-2"
	if !slices.Equal(renamed, []string{a2}) || len(plain) != 2 || slices.Contains(plain, a2) {
		t.Fatalf("plain %q, renamed %q: want a-2 alone renamed", plain, renamed)
	}
	journal := string(local.main) + ":" + store.JournalRef
	moving := []string{"x1:" + store.ResourcesPrefix + "demo/x1", "x2:" + store.ResourcesPrefix + "demo/x2", "x3:" + store.ResourcesPrefix + "demo/x3", journal}
	batches := pushBatches(plain, renamed, moving, 2)
	if last := batches[len(batches)-1]; !slices.Contains(last, a2) || !slices.Contains(last, journal) {
		t.Fatalf("batches %q: the renamed run is not in the journal's batch", batches)
	}
	var all []string
	for _, b := range batches {
		if len(b) > 2 {
			t.Fatalf("batch of %d specs: %q", len(b), b)
		}
		all = append(all, b...)
	}
	if want := append(append(slices.Clone(plain), renamed...), moving...); len(all) != len(want) {
		t.Fatalf("batches %q, want each of %q once", batches, want)
	}
	if b := pushBatches(plain, renamed, moving, 100); len(b) != 1 || len(b[0]) != 7 {
		t.Fatalf("a small push is one batch: %q", b)
	}
}
