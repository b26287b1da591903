package gitstore

import (
	"testing"
	"time"
)

// An Update syncs every pending object of the store, including those
// another writer of the same Store put there. That writer's Update, finding
// the list empty, must wait for the sync in flight before it renames its
// ref: otherwise a crash could leave its ref naming an object that never
// reached the disk.
func TestUpdateWaitsForConcurrentSync(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	r := s.(*repo)
	// Both refs get a loose file first, so neither update below needs the
	// packed-refs lock, which would serialize them anyway.
	a0, b0 := mkCommit(t, s, "a0"), mkCommit(t, s, "b0")
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/a", New: a0})
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/b", New: b0})
	a := mkCommit(t, s, "a")
	b := mkCommit(t, s, "b") // pending with a's objects once A flushes
	inSync := make(chan struct{})
	release := make(chan struct{})
	r.whileSyncing = func() { // runs under syncMu, as B's reads of it do
		r.whileSyncing = nil
		close(inSync)
		<-release
	}
	doneA := make(chan error, 1)
	go func() { doneA <- s.Update(RefUpdate{Name: "refs/heads/a", Old: a0, New: a}) }()
	<-inSync
	doneB := make(chan error, 1)
	go func() { doneB <- s.Update(RefUpdate{Name: "refs/heads/b", Old: b0, New: b}) }()
	select {
	case err := <-doneB:
		close(release)
		<-doneA
		t.Fatalf("update of refs/heads/b returned (err %v) while the sync of its objects, taken by another update, was still in flight", err)
	case <-time.After(150 * time.Millisecond):
	}
	if got, err := s.Ref("refs/heads/b"); err != nil || got != b0 {
		t.Fatalf("refs/heads/b = %s, %v before its objects were synced; want still %s", got, err, b0)
	}
	close(release)
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
	if err := <-doneB; err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]OID{"refs/heads/a": a, "refs/heads/b": b} {
		if got, err := s.Ref(name); err != nil || got != want {
			t.Errorf("%s = %s, %v; want %s", name, got, err, want)
		}
	}
}
