package store

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/testsize"
	"github.com/readproof/readproof/manifest"
)

// TestManifestTooLargeNotWritten: a run whose manifest.json would be over
// manifest.MaxBytes is refused, naming its size and with a hint to split
// the run, and its manifest blob, tree and commit are not written (the
// whole write with READPROOF_LONG_TESTS=1).
func TestManifestTooLargeNotWritten(t *testing.T) {
	t.Parallel()
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": v1, "policies/cached.md": "c\n"})
	ctx := context.Background()
	if err := f.s.StartRun("r1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Mount(ctx, "r1", "readproof://demo/policies/refunds"); err != nil {
		t.Fatal(err)
	}
	m, err := f.s.CommitRun("r1")
	if err != nil {
		t.Fatal(err)
	}
	big := *m
	big.RunID = "r-big"
	if err := checkManifestSize(&big, manifest.MaxBytes); err != nil {
		t.Fatalf("a manifest of exactly MaxBytes: %v", err)
	}
	if err := checkManifestSize(&big, manifest.MaxBytes+1); err == nil || !strings.Contains(err.Error(), "run r-big: manifest.json would be 67108865 bytes (1 documents), more than the 67108864") {
		t.Fatalf("a manifest one byte over MaxBytes: %v", err)
	}
	if !testsize.Long() {
		return // the whole write encodes 64 MiB: 0.7 s of CPU, 500 MB
	}
	big.Entries = append([]manifest.Entry(nil), m.Entries...)
	big.Entries[0].Provenance = map[string]string{"padding": strings.Repeat("a", manifest.MaxBytes)}
	if err := f.s.git.Sync(); err != nil {
		t.Fatal(err)
	}
	objects := countObjects(t, f.s.Path())
	_, err = f.s.writeManifest(&big)
	if err == nil || !strings.Contains(err.Error(), "run r-big: manifest.json would be ") || !strings.Contains(err.Error(), "more than the 67108864 a manifest may hold") {
		t.Fatalf("write of a manifest over the limit: %v", err)
	}
	if h := hint.Of(err); !strings.Contains(h, "split the run") {
		t.Fatalf("hint %q does not say to split the run", h)
	}
	if err := f.s.git.Sync(); err != nil {
		t.Fatal(err)
	}
	if n := countObjects(t, f.s.Path()); n != objects {
		t.Fatalf("a refused manifest wrote objects: %d before, %d after", objects, n)
	}
}

// countObjects is `git count-objects -v`'s count and in-pack, summed.
func countObjects(t *testing.T, dir string) int {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", dir, "count-objects", "-v").Output()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		if k == "count" || k == "in-pack" {
			i, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			n += i
		}
	}
	return n
}
