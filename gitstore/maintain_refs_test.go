package gitstore

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// looseRefFiles lists the loose ref files under dir's refs/.
func looseRefFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(dir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.HasSuffix(p, ".lock") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAutoMaintenancePacksRefs (issue 14, acceptance 4: the store, not its
// objects alone): each single-run write leaves a loose ref file of its own
// (a run's tag), a 4 KiB block each on most file systems, so 2,000 runs held
// 8 MB of ref files against 140 KB of packed-refs after gc. A maintenance
// pass packs them as gc does; their values do not change, and a ref whose
// lock another writer holds stays loose.
func TestAutoMaintenancePacksRefs(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	dir := s.Path()
	s.Close()
	git(t, dir, "config", "gc.auto", "16")
	s = reopen(t, dir)
	held := "refs/tags/held"
	want := map[string]OID{}
	for i := 0; i < 40; i++ {
		name := fmt.Sprintf("refs/tags/run-%02d", i)
		c := mkCommit(t, s, name)
		mustUpdate(t, s, RefUpdate{Name: name, New: c})
		want[name] = c
		if i == 0 {
			mustUpdate(t, s, RefUpdate{Name: held, New: c})
			want[held] = c
			// another writer is changing it: its lock is taken
			if err := os.WriteFile(filepath.Join(dir, held+".lock"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, packs := looseAndPacks(t, dir); packs == 0 {
		t.Fatal("no maintenance pass ran: the test writes too little")
	}
	loose := looseRefFiles(t, dir)
	if len(loose) >= 20 {
		t.Errorf("%d loose ref files after 40 single-ref writes with maintenance: refs not packed (%v ...)", len(loose), loose[:3])
	}
	heldLoose := false
	for _, p := range loose {
		heldLoose = heldLoose || p == filepath.Join(dir, filepath.FromSlash(held))
	}
	if !heldLoose {
		t.Errorf("%s, whose lock is held, was packed and its file removed", held)
	}
	for name, id := range want {
		if got, err := s.Ref(name); err != nil || got != id {
			t.Errorf("%s = %s, %v after maintenance; want %s", name, got, err, id)
		}
		if got := strings.TrimSpace(git(t, dir, "rev-parse", name)); got != string(id) {
			t.Errorf("git rev-parse %s = %s, want %s", name, got, id)
		}
	}
	os.Remove(filepath.Join(dir, held+".lock"))
	Fsck(t, dir)
}
