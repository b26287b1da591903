package gitstore

import (
	"context"
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

// TestRefsWorthPacking: git's `pack-refs --auto` rule, 16 loose refs or
// 5 x log2(packed-refs size / 100), whichever is more.
func TestRefsWorthPacking(t *testing.T) {
	for _, c := range []struct {
		loose  int
		packed int64
		want   bool
	}{
		{15, 0, false}, {16, 0, true},
		{16, 140 << 10, false}, {50, 140 << 10, true}, // 2,000 runs: log2(1433) = 10
		{74, 3_700_000, false}, {75, 3_700_000, true}, // 50,000 runs: log2(37000) = 15
	} {
		if got := refsWorthPacking(c.loose, c.packed); got != c.want {
			t.Errorf("refsWorthPacking(%d, %d) = %v, want %v", c.loose, c.packed, got, c.want)
		}
	}
}

// TestMaintenanceLeavesFewLooseRefsBesideABigPackedRefs: a maintenance
// pass rewrote the whole packed-refs for whatever loose refs there were; in
// a store of 50,000 runs (3.7 MB) that was a 3.7 MB write for the one ref a
// `get` had just moved, and `run mount`/`get` there took 1.2-1.3x what they
// take in an empty store. Now a few loose refs stay loose beside a big
// packed-refs, and enough of them are packed.
func TestMaintenanceLeavesFewLooseRefsBesideABigPackedRefs(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	dir := s.Path()
	c := mkCommit(t, s, "refs/heads/base")
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/base", New: c})
	var b strings.Builder
	b.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "%s refs/tags/readproof/runs/run-%05d\n", c, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "packed-refs"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = reopen(t, dir)
	r := s.(*repo)
	before, err := os.Stat(filepath.Join(dir, "packed-refs"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(from, to int) {
		for i := from; i < to; i++ {
			mustUpdate(t, s, RefUpdate{Name: fmt.Sprintf("refs/tags/new-%03d", i), New: c})
		}
	}
	write(0, 20) // with refs/heads/base: 21 loose, under 5 x log2(144 KB / 100) = 50
	if !r.maintain(context.Background()) {
		t.Fatal("maintenance did not run")
	}
	after, err := os.Stat(filepath.Join(dir, "packed-refs"))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("packed-refs (%d bytes) was rewritten for %d loose refs", before.Size(), len(looseRefFiles(t, dir)))
	}
	write(20, 60)
	if !r.maintain(context.Background()) {
		t.Fatal("maintenance did not run")
	}
	if n := len(looseRefFiles(t, dir)); n != 0 {
		t.Errorf("%d loose refs left after maintenance with 61 of them", n)
	}
	if got, err := s.Ref("refs/tags/new-059"); err != nil || got != c {
		t.Errorf("refs/tags/new-059 = %s, %v", got, err)
	}
}
