package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/manifest"
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

// TestSpooledRunSameManifest (issue 14, memory): a run of spoolFrom or more
// documents through RunOnceProgress spools its entries to a scratch file
// and holds light entries; it writes the very manifest commit RunOnce
// writes, which holds every entry whole (same store, clock and documents:
// same commit id), and leaves no scratch file behind.
func TestSpooledRunSameManifest(t *testing.T) {
	toml, files, uris := manyDocs(spoolFrom+3, 200)
	uris = append(uris, uris[1], uris[0]) // a document mounted twice gets a file of its own
	ctx := context.Background()
	a := newFixture(t, toml, files)
	b := newFixture(t, toml, files)
	probe := a.s.newEntrySpool()
	if probe == nil {
		t.Fatal("no scratch file in the store: the run would not spool")
	}
	probe.close()
	ma, err := a.s.RunOnceProgress(ctx, "big", uris, nil)
	if err != nil {
		t.Fatal(err)
	}
	mb, _, err := b.s.RunOnce(ctx, "big", uris)
	if err != nil {
		t.Fatal(err)
	}
	if ma.ID != mb.ID {
		t.Fatalf("spooled run wrote manifest %s, RunOnce %s", ma.ID, mb.ID)
	}
	if len(ma.Entries) != len(uris) {
		t.Fatalf("%d entries returned for %d documents", len(ma.Entries), len(uris))
	}
	for i, e := range ma.Entries {
		want := mb.Entries[i]
		if e.Position != want.Position || e.URI != want.URI || e.Snapshot != want.Snapshot || e.ContentHash != want.ContentHash ||
			e.File != want.File || e.Bytes != want.Bytes || e.Provenance != nil {
			t.Fatalf("entry %d: %+v, RunOnce %+v", i, e, want)
		}
	}
	whole, err := a.s.ManifestAt(gitstore.OID(ma.ID))
	if err != nil {
		t.Fatal(err)
	}
	if got := whole.Entries[0].Provenance["source_type"]; got != "filesystem" {
		t.Fatalf("stored entry 0 provenance %v", whole.Entries[0].Provenance)
	}
	left, err := filepath.Glob(filepath.Join(a.s.Path(), "objects", "pack", "tmp_*"))
	if err != nil || len(left) != 0 {
		t.Fatalf("scratch files left: %v %v", left, err)
	}
}

// corruptVerifier is a store whose BlobVerifyingAtMost hands out a blob's
// bytes and then finds they do not match their id.
type corruptVerifier struct {
	gitstore.Store
	checked *bool
}

func (c corruptVerifier) BlobVerifyingAtMost(id gitstore.OID, max int64) ([]byte, func() error, error) {
	data, err := c.Store.BlobAtMost(id, max)
	return data, func() error {
		*c.checked = true
		return fmt.Errorf("read object %s: %w: content does not match its id", id, gitstore.ErrCorrupt)
	}, err
}

// TestManifestDecodedWhileCheckedFails (issue 14, reading a manifest): a
// manifest decoded while its bytes are checked is not returned when the
// check fails: the error is the one reading the blob gave before (a
// corrupt object, named as the manifest's: since session 22 not "not a
// readproof manifest", which sent the user looking for another id).
func TestManifestDecodedWhileCheckedFails(t *testing.T) {
	toml, files, uris := manyDocs(3, 50)
	f := newFixture(t, toml, files)
	m, _, err := f.s.RunOnce(context.Background(), "r", uris)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.ManifestAt(gitstore.OID(m.ID)); err != nil {
		t.Fatal(err)
	}
	checked := false
	f.s.git = corruptVerifier{f.s.git, &checked}
	got, err := f.s.ManifestAt(gitstore.OID(m.ID))
	if got != nil || !errors.Is(err, gitstore.ErrCorrupt) || !checked ||
		!strings.HasPrefix(err.Error(), "manifest "+m.ID+": ") || strings.Contains(err.Error(), "not a readproof manifest") {
		t.Fatalf("ManifestAt of a manifest that fails its check: %v, %v (checked %v)", got, err, checked)
	}
}

// TestWithRunLeavesEntries: the journal view reads a manifest's entries in
// position order; a manifest in that order is read in place, any other is
// sorted in a copy and left as it was.
func TestWithRunLeavesEntries(t *testing.T) {
	m := &manifest.Manifest{RunID: "r", Entries: []manifest.Entry{{Position: 1, URI: "b"}, {Position: 0, URI: "a"}}}
	b := viewBuilder{}.withRun("1234", m)
	if m.Entries[0].URI != "b" || b.known.entries[0].URI != "a" {
		t.Fatalf("unsorted: manifest %v, view %v", m.Entries, b.known.entries)
	}
	m.Entries[0], m.Entries[1] = m.Entries[1], m.Entries[0]
	b = viewBuilder{}.withRun("1234", m)
	if &b.known.entries[0] != &m.Entries[0] {
		t.Fatal("sorted entries were copied")
	}
}
