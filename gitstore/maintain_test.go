package gitstore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testsize"
)

// looseAndPacks runs git count-objects -v and returns loose objects and packs.
func looseAndPacks(t *testing.T, dir string) (loose, packs int) {
	t.Helper()
	for _, line := range strings.Split(git(t, dir, "count-objects", "-v"), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		n, _ := strconv.Atoi(v)
		switch k {
		case "count":
			loose = n
		case "packs":
			packs = n
		}
	}
	return loose, packs
}

// looseWrites makes s leave a write of a few objects loose, as every store
// did before small packs (writeSmallPack), for the tests of what is done
// with loose objects.
func looseWrites(s Store) Store {
	s.(*repo).looseOnly = true
	return s
}

// writeSmallUpdates makes n updates of ref, each with a fresh blob, tree
// and commit written loose.
func writeSmallUpdates(t *testing.T, s Store, ref string, n int) []OID {
	t.Helper()
	var out []OID
	tip, _ := s.Ref(ref)
	for i := 0; i < n; i++ {
		var parents []OID
		if tip != "" {
			parents = []OID{tip}
		}
		c := mkCommit(t, s, fmt.Sprintf("small write %d", i), parents...)
		mustUpdate(t, s, RefUpdate{Name: ref, Old: tip, New: c})
		tip = c
		out = append(out, c)
	}
	return out
}

// Issue 14 ("A store that maintains itself"): small writes pack their
// loose objects once about gc.auto of them piled up, into a few packs that
// git reads; gc.auto = 0 turns it off.
func TestAutoMaintenance(t *testing.T) {
	t.Parallel()
	const writes = 60 // 3 loose objects each
	s := NewTestStore(t)
	dir := s.Path()
	s.Close()
	git(t, dir, "config", "gc.auto", "16")
	s = looseWrites(reopen(t, dir)) // the loose objects' estimate (TestSmallPacksMaintained has the small packs)
	commits := writeSmallUpdates(t, s, "refs/heads/main", writes)
	loose, packs := looseAndPacks(t, dir)
	t.Logf("gc.auto 16: %d loose objects, %d packs after %d writes", loose, packs, writes)
	if packs == 0 || loose > 4*16 {
		t.Errorf("gc.auto 16: %d loose objects and %d packs after %d writes of 3 objects: not maintained", loose, packs, writes)
	}
	if packs > 8 {
		t.Errorf("%d packs: the geometric repack should keep them few", packs)
	}
	if fileExists(filepath.Join(dir, maintenanceLock)) {
		t.Error("maintenance lock left behind")
	}
	chain := chainSet(t, s, commits[len(commits)-1])
	for _, c := range commits {
		if !chain[c] {
			t.Fatalf("commit %s lost", c)
		}
	}
	Fsck(t, dir)

	off := NewTestStore(t)
	offDir := off.Path()
	off.Close()
	git(t, offDir, "config", "gc.auto", "0")
	off = reopen(t, offDir)
	writeSmallUpdates(t, off, "refs/heads/main", 40)
	if loose, packs := looseAndPacks(t, offDir); packs != 0 || loose != 120 {
		t.Errorf("gc.auto 0: %d loose objects and %d packs, want 120 and none", loose, packs)
	}
}

// lockedWithLoose makes a store holding 9 loose objects (3 small writes)
// and takes its maintenance lock, as another maintenance would hold it.
func lockedWithLoose(t *testing.T) (*repo, func()) {
	t.Helper()
	st := looseWrites(NewTestStore(t))
	writeSmallUpdates(t, st, "refs/heads/main", 3)
	s := st.(*repo)
	unlock, ok := lockMaintenance(s.path)
	if !ok {
		t.Fatal("could not take the maintenance lock")
	}
	return s, unlock
}

// One maintenance at a time: while another holds the maintenance lock, or
// git gc holds gc.pid, none runs; once the lock is free it does.
func TestMaintenanceLock(t *testing.T) {
	t.Parallel()
	s, unlock := lockedWithLoose(t)
	if s.maintain(context.Background()) {
		t.Error("maintenance ran while another held the lock")
	}
	if loose, _ := looseAndPacks(t, s.path); loose != 9 {
		t.Errorf("%d loose objects after a skipped maintenance, want 9", loose)
	}
	unlock()
	pid := filepath.Join(s.path, "gc.pid")
	os.WriteFile(pid, []byte("1 host\n"), 0o600)
	if s.maintain(context.Background()) {
		t.Error("maintenance ran while git gc holds gc.pid")
	}
	os.Remove(pid)
	// Once the lock is free, the next maintenance runs, even when a git
	// process another test forked meanwhile still holds a copy of the
	// lock's descriptor (TestMaintenanceUnlockWithChildCopy).
	if !s.maintain(context.Background()) {
		t.Error("maintenance did not run with the lock free")
	}
	if loose, packs := looseAndPacks(t, s.path); loose != 0 || packs != 1 {
		t.Errorf("after maintenance: %d loose objects, %d packs; want 0 and 1", loose, packs)
	}
	if _, again := lockMaintenance(s.path); !again {
		t.Error("the maintenance lock outlived the maintenance")
	}
}

// Writers in several processes, each packing loose objects almost every
// write (gc.auto 2), while readproof gc runs too: no append is lost, every
// object of every commit reads, git fsck is clean and no lock is left.
func TestMaintenanceWhileWriting(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	s := NewTestStore(t)
	dir := s.Path()
	const ref = "refs/heads/chain"
	root := mkCommit(t, s, "root")
	mustUpdate(t, s, RefUpdate{Name: ref, New: root})
	git(t, dir, "config", "gc.auto", "2")
	const procs = 3
	each := testsize.Pick(t, 10, 40)
	env := []string{"GITSTORE_PATH=" + dir, "GITSTORE_REF=" + ref, "GITSTORE_N=" + strconv.Itoa(each)}
	type proc struct {
		wait    func() error
		out, se fmt.Stringer
	}
	var ps []proc
	for i := 0; i < procs; i++ {
		cmd, out, errOut := helper(t, "heavyappend", env...)
		ps = append(ps, proc{cmd.Wait, out, errOut})
	}
	gcs := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 3; i++ {
			if _, err := GC(context.Background(), dir, GCOptions{Grace: time.Hour}); err == nil {
				gcs++
			}
		}
	}()
	var appended []OID
	for i, p := range ps {
		if err := p.wait(); err != nil {
			t.Errorf("writer %d: %v\n%s", i, err, p.se)
		}
		appended = append(appended, okIDs(p.out.String())...)
	}
	<-done
	if len(appended) != procs*each {
		t.Fatalf("%d appends reported, want %d", len(appended), procs*each)
	}
	s2 := reopen(t, dir)
	tip, err := s2.Ref(ref)
	if err != nil {
		t.Fatal(err)
	}
	chain := chainSet(t, s2, tip) // reads every commit, tree and blob
	for _, id := range appended {
		if !chain[id] {
			t.Errorf("append %s was lost", id)
		}
	}
	loose, packs := looseAndPacks(t, dir)
	t.Logf("%d appends, %d gc runs; %d loose objects, %d packs at the end", len(appended), gcs, loose, packs)
	assertNoLocks(t, dir)
	if fileExists(filepath.Join(dir, maintenanceLock)) {
		t.Error("maintenance lock left behind")
	}
	Fsck(t, dir)
}

// A gc.pid left by a process that died (a killed git gc, or a killed
// maintenance, which now holds gc.pid too) stops no maintenance, as it
// stops no git gc: only a live holder on this host, or one on another
// host, counts (gcPidHeld).
func TestMaintenanceIgnoresDeadGCPid(t *testing.T) {
	t.Parallel()
	st := NewTestStore(t)
	writeSmallUpdates(t, st, "refs/heads/main", 3)
	s := st.(*repo)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("cannot start a process:", err)
	}
	host, _ := os.Hostname()
	pid := filepath.Join(s.path, "gc.pid")
	if err := os.WriteFile(pid, []byte(fmt.Sprintf("%d %s", dead.Process.Pid, host)), 0o600); err != nil {
		t.Fatal(err)
	}
	ran := false
	for try := 0; try < 200 && !ran; try++ { // see TestMaintenanceLock
		if ran = s.maintain(context.Background()); !ran {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if !ran {
		t.Fatal("maintenance did not run past a dead process's gc.pid")
	}
	if loose, packs := looseAndPacks(t, s.path); loose != 0 || packs != 1 {
		t.Errorf("after maintenance: %d loose objects, %d packs; want 0 and 1", loose, packs)
	}
	if fileExists(pid) {
		t.Error("gc.pid left behind by the maintenance that replaced it")
	}
}
