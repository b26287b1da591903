package store

import (
	"context"
	"testing"
)

// TestRunOnceProgressHoldsNoContent (issue 14, memory): the CLI's
// single-shot run keeps each document's record, not its bytes; before, every
// delivery kept its content until the run was committed (40 MiB of a
// 10,000-document run). RunOnce still hands the content to its caller, and
// the manifest is the same either way.
func TestRunOnceProgressHoldsNoContent(t *testing.T) {
	toml, files, uris := manyDocs(5, 300)
	f := newFixture(t, toml, files)
	ctx := context.Background()
	m, err := f.s.RunOnceProgress(ctx, "lean", uris, nil)
	if err != nil {
		t.Fatal(err)
	}
	m2, ds2, err := f.s.RunOnce(ctx, "full", uris)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds2) != len(uris) || len(m.Entries) != len(uris) || len(m2.Entries) != len(uris) {
		t.Fatalf("%d documents: RunOnce delivered %d, the manifests hold %d and %d entries", len(uris), len(ds2), len(m.Entries), len(m2.Entries))
	}
	for i, d := range ds2 {
		if len(d.Content) != 300 {
			t.Fatalf("%s: RunOnce delivered %d bytes", d.URI, len(d.Content))
		}
		if m.Entries[i].Snapshot != m2.Entries[i].Snapshot || m.Entries[i].Bytes != 300 {
			t.Fatalf("entry %d differs: %+v vs %+v", i, m.Entries[i], m2.Entries[i])
		}
	}
}

// TestRunKeepsNoFilesystemSource (issue 14, memory): a run of filesystem
// documents keeps no source per resource once it is over (they held 3.5 MB
// of a 10,000-document run); a second run still reads each document.
func TestRunKeepsNoFilesystemSource(t *testing.T) {
	toml, files, uris := manyDocs(4, 100)
	f := newFixture(t, toml, files)
	ctx := context.Background()
	for _, id := range []string{"one", "two"} {
		m, err := f.s.RunOnceProgress(ctx, id, uris, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Entries) != len(uris) {
			t.Fatalf("run %s: %d entries", id, len(m.Entries))
		}
		if n := len(f.s.sources); n != 0 {
			t.Fatalf("run %s: %d sources kept", id, n)
		}
	}
}
