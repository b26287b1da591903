package gitstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/hint"
)

// cruftPackFiles lists the .mtimes files of the store at dir (one per
// cruft pack).
func cruftPackFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.mtimes"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGCDoesNotLoosenYoungGarbage (session 24): objects that became
// unreachable a moment ago (an aborted run's, a failed write's) while they
// sat in a pack stay packed through gc, in a cruft pack, and the store does
// not grow. Before, gc ran `git repack -A`, which wrote each of them out of
// its pack as a loose file: here 600 loose objects, and the objects took
// several times the bytes they took before gc.
func TestGCDoesNotLoosenYoungGarbage(t *testing.T) {
	t.Parallel()
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	keep := mkCommit(t, s, "always reachable")
	var tip OID
	for i := 0; i < 200; i++ {
		var parents []OID
		if tip != "" {
			parents = []OID{tip}
		}
		tip = mkCommit(t, s, fmt.Sprintf("a run's document, version %d", i), parents...)
	}
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: keep}, RefUpdate{Name: "refs/heads/gone", New: tip})
	if _, err := GC(context.Background(), s.Path(), GCOptions{}); err != nil {
		t.Fatal(err)
	}
	// The 600 objects of the chain become unreachable, young.
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/gone", Old: tip})
	res, err := GC(context.Background(), s.Path(), GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.After.Loose != 0 {
		t.Errorf("gc left %d loose objects (young unreachable ones written out of their pack)", res.After.Loose)
	}
	// (a second pack and its index cost a few KiB)
	if res.After.Bytes() > res.Before.Bytes()+res.Before.Bytes()/10 {
		t.Errorf("gc made the objects larger: %d bytes before, %d after", res.Before.Bytes(), res.After.Bytes())
	}
	if res.After.Packed != res.Before.Packed {
		t.Errorf("%d objects packed before gc, %d after; want all kept", res.Before.Packed, res.After.Packed)
	}
	if c := cruftPackFiles(t, s.Path()); len(c) != 1 {
		t.Errorf("cruft packs %v, want one", c)
	}
	mustHave(t, s, tip, true, "young unreachable commit")
	mustHave(t, s, keep, true, "reachable commit")
	Fsck(t, s.Path())
	// gc again: the cruft pack is written again, no larger, nothing loose.
	again, err := GC(context.Background(), s.Path(), GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.After != res.After {
		t.Errorf("a second gc changed the store: %+v, then %+v", res.After, again.After)
	}
	Fsck(t, s.Path())
}

// TestGCCruftGraceIsExact (session 24): with cruft packs, an unreachable
// object is kept exactly while younger than the grace period, by its own
// time: its pack's time when gc packs it into the cruft pack, its loose
// file's, or the time the cruft pack recorded (.mtimes) in later gcs,
// though each gc writes that pack anew. A writer that reuses an object
// only a cruft pack holds writes a loose copy, which makes it young again.
func TestGCCruftGraceIsExact(t *testing.T) {
	t.Parallel()
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	const grace = 10 * time.Hour
	s := looseWrites(NewTestStore(t))
	t0 := time.Now()
	at := func(d time.Duration) GCOptions {
		return GCOptions{Grace: grace, Now: func() time.Time { return t0.Add(d) }}
	}
	gc := func(opts GCOptions) {
		t.Helper()
		res, err := GC(context.Background(), s.Path(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.After.Loose != 0 {
			t.Errorf("gc (cutoff %v) left %d loose objects", res.Cutoff, res.After.Loose)
		}
		Fsck(t, s.Path())
	}
	keep := mkCommit(t, s, "always reachable")
	reused := mkCommit(t, s, "unreachable, reused by a writer")
	dropped := mkCommit(t, s, "unreachable, never reused")
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: keep}, RefUpdate{Name: "refs/heads/a", New: reused}, RefUpdate{Name: "refs/heads/b", New: dropped})
	gc(GCOptions{Grace: grace})
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/a", Old: reused}, RefUpdate{Name: "refs/heads/b", Old: dropped})
	packs, _ := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs %v", packs)
	}
	age(t, packs[0], 8*time.Hour) // both unreachable commits: t0-8h
	loose := putBlob(t, s, "unreachable, loose")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	age(t, loosePath(s, loose), 4*time.Hour) // t0-4h

	gc(GCOptions{Grace: grace}) // cutoff t0-10h: all kept, in a cruft pack
	if c := cruftPackFiles(t, s.Path()); len(c) != 1 {
		t.Fatalf("cruft packs %v, want one", c)
	}
	for _, id := range []OID{keep, reused, dropped, loose} {
		mustHave(t, s, id, true, "object younger than the grace")
	}

	// A writer reuses the commit (and its tree and blob) that only the
	// cruft pack holds: it writes loose copies, young.
	forceRefresh(s)
	if again := mkCommit(t, s, "unreachable, reused by a writer"); again != reused {
		t.Fatalf("the same commit written again has another id: %s, %s", again, reused)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	c, err := s.Commit(reused)
	if err != nil {
		t.Fatal(err)
	}
	blob := OID(strings.TrimSpace(string(hashBlob(t, "unreachable, reused by a writer"))))
	for _, id := range []OID{reused, c.Tree, blob} {
		if _, err := os.Lstat(loosePath(s, id)); err != nil {
			t.Errorf("a reused object only a cruft pack holds was not written loose: %v", err)
		}
	}

	gc(at(4 * time.Hour)) // cutoff t0-6h
	mustHave(t, s, dropped, false, "unreachable object older than the grace (t0-8h, its pack's time)")
	mustHave(t, s, loose, true, "unreachable object younger than the grace (t0-4h, its loose file's time)")
	mustHave(t, s, reused, true, "object a writer reused (t0)")

	gc(at(8 * time.Hour)) // cutoff t0-2h; the cruft pack itself is younger
	mustHave(t, s, loose, false, "unreachable object older than the grace (t0-4h, recorded in the cruft pack)")
	mustHave(t, s, reused, true, "object a writer reused (t0, recorded in the cruft pack)")

	gc(at(11 * time.Hour)) // cutoff t0+1h
	mustHave(t, s, reused, false, "reused object left alone past the grace")
	mustHave(t, s, keep, true, "reachable commit")
	if c := cruftPackFiles(t, s.Path()); len(c) != 0 {
		t.Errorf("cruft packs %v left with nothing unreachable", c)
	}
}

// TestGCAfterKilledRepack (session 24): git 2.39's repack --cruft names
// every *.pack of objects/pack to pack-objects, which dies on a pack with
// no index. The temporary pack a git gc killed a moment ago left
// (.tmp-PID-pack-*.pack) is removed first, whatever its age, when no gc
// runs; a pack-*.pack without its index goes once as old as maintenance
// lets it get (a writer installing it renames its index next), and a
// younger one stops gc before anything is removed, with a hint naming it.
func TestGCAfterKilledRepack(t *testing.T) {
	t.Parallel()
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	tip := mkCommit(t, s, "tip")
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: tip})
	garbage := putBlob(t, s, "young garbage\n")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	killed := plantPackTemp(t, s, ".tmp-4242-pack-"+strings.Repeat("d", 40)+".pack", time.Now())
	if _, err := GC(context.Background(), s.Path(), GCOptions{}); err != nil {
		t.Fatalf("gc after a killed gc: %v", err)
	}
	if _, err := os.Lstat(killed); err == nil {
		t.Error("the temporary pack of a killed git repack is still there")
	}
	mustHave(t, s, garbage, true, "young unreachable object")

	orphan := plantPackTemp(t, s, "pack-"+strings.Repeat("e", 40)+".pack", time.Now())
	_, err := GC(context.Background(), s.Path(), GCOptions{})
	if err == nil {
		t.Fatal("gc with a pack without its index succeeded")
	}
	if h := hint.Of(err); !strings.Contains(h, orphan) || !strings.Contains(h, "nothing was removed") {
		t.Errorf("hint %q does not name %s", h, orphan)
	}
	mustHave(t, s, garbage, true, "young unreachable object")
	mustHave(t, s, tip, true, "reachable commit")
	// one older than maintenance's stale age goes before gc
	age(t, orphan, maintenanceStaleAge+time.Minute)
	if _, err := GC(context.Background(), s.Path(), GCOptions{}); err != nil {
		t.Fatalf("gc with an old pack without its index: %v", err)
	}
	if _, err := os.Lstat(orphan); err == nil {
		t.Error("an old pack without its index is still there")
	}
	Fsck(t, s.Path())
}

// TestRollUpLeavesCruftPacks (session 24): automatic maintenance never
// rolls gc's cruft pack up with the small packs of writes: the rolled-up
// pack would have no .mtimes, so every unreachable object in it would be
// young again, and a store maintained more often than the grace period
// would never lose its garbage.
func TestRollUpLeavesCruftPacks(t *testing.T) {
	t.Parallel()
	s := maintenanceOff(t)
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	var tip OID
	write := func(n int, what string) {
		t.Helper()
		for i := 0; i < n; i++ {
			var parents []OID
			if tip != "" {
				parents = []OID{tip}
			}
			c := mkCommit(t, s, fmt.Sprintf("%s %d", what, i), parents...)
			mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", Old: tip, New: c})
			tip = c
		}
	}
	write(40, "reachable") // 120 objects
	garbage := putBlob(t, s, "garbage 1\n")
	putBlob(t, s, "garbage 2\n")
	putBlob(t, s, "garbage 3\n")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := GC(context.Background(), s.path, GCOptions{}); err != nil {
		t.Fatal(err)
	}
	cruft := cruftPackFiles(t, s.path)
	if len(cruft) != 1 {
		t.Fatalf("cruft packs %v, want one", cruft)
	}
	cruftPack := strings.TrimSuffix(cruft[0], ".mtimes") + ".pack"
	// two small packs of writes: 3 (cruft), 6 and 9 objects break the
	// geometric progression
	for _, n := range []int{2, 3} {
		write(n, fmt.Sprintf("a write of %d", n))
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := s.packLoose(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if _, packs := looseAndPacks(t, s.path); packs != 4 {
		t.Fatalf("%d packs before the roll-up, want 4", packs)
	}
	if err := s.rollUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, packs := looseAndPacks(t, s.path); packs != 3 {
		t.Errorf("%d packs after the roll-up, want 3 (gc's, the cruft pack, the rolled one)", packs)
	}
	if !fileExists(cruftPack) || !fileExists(cruft[0]) {
		t.Error("the roll-up took the cruft pack")
	}
	mustHave(t, s, garbage, true, "young unreachable object")
	Fsck(t, s.path)
}

// TestGCCruftPackSkipsDeltaSearch (session 25): gc writes the cruft pack
// without searching for deltas (repack.cruftWindow=0), which cost a
// quarter of its CPU where the garbage was loose; the pack of reachable
// objects is still searched. Here twenty versions of a document that
// delta well against each other are reachable and twenty more, loose,
// are not: the first pack has deltas, the cruft pack none, and every
// unreachable version is in it.
func TestGCCruftPackSkipsDeltaSearch(t *testing.T) {
	t.Parallel()
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s := looseWrites(NewTestStore(t))
	doc := func(v int) string {
		var b strings.Builder
		for i := 0; i < 100; i++ {
			fmt.Fprintf(&b, "line %d of a document that changes little from one version to the next\n", i)
		}
		fmt.Fprintf(&b, "version %d\n", v)
		return b.String()
	}
	var tip OID
	for v := 0; v < 20; v++ {
		var parents []OID
		if tip != "" {
			parents = []OID{tip}
		}
		tip = mkCommit(t, s, doc(v), parents...)
	}
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: tip})
	gone := map[string]bool{}
	for v := 20; v < 40; v++ {
		gone[string(putBlob(t, s, doc(v)))] = true
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := GC(context.Background(), s.Path(), GCOptions{}); err != nil {
		t.Fatal(err)
	}
	Fsck(t, s.Path())
	cruft := cruftPackFiles(t, s.Path())
	if len(cruft) != 1 {
		t.Fatalf("cruft packs %v, want one", cruft)
	}
	idxs, err := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "pack-*.idx"))
	if err != nil || len(idxs) != 2 {
		t.Fatalf("pack indexes %v (%v), want two", idxs, err)
	}
	for _, idx := range idxs {
		out, err := GitCommand(t, s.Path(), "verify-pack", "-v", idx).Output()
		if err != nil {
			t.Fatalf("git verify-pack %s: %v", idx, err)
		}
		// "<id> <type> <size> <size in pack> <offset> [<depth> <base>]"
		deltas, found := 0, 0
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 5 || len(f[0]) != 40 {
				continue
			}
			if len(f) == 7 {
				deltas++
			}
			if gone[f[0]] {
				found++
			}
		}
		isCruft := strings.TrimSuffix(idx, ".idx")+".mtimes" == cruft[0]
		switch {
		case isCruft && deltas != 0:
			t.Errorf("cruft pack %s: %d deltas, want none (no delta search)", idx, deltas)
		case isCruft && found != len(gone):
			t.Errorf("cruft pack %s holds %d of the %d unreachable versions", idx, found, len(gone))
		case !isCruft && deltas == 0:
			t.Errorf("pack of reachable objects %s: no deltas, want the versions stored as deltas", idx)
		}
	}
}
