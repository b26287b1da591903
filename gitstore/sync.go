package gitstore

import "os"

// Helpers shared by sync_linux.go and sync_other.go; the per-file fsyncs
// themselves are in sync_files.go.

// syncUpdateEach makes the pending objects and the written lock files
// durable, their fsyncs issued together (fsyncEach).
func (s *repo) syncUpdateEach(pending []string, files []*os.File) error {
	ts := s.objectTargets(pending)
	for _, f := range files {
		ts = append(ts, syncTarget{f: f})
	}
	return fsyncEach(ts)
}

// syncForUpdate makes the pending objects and the written lock files
// durable (syncTaken, per platform), holding syncMu throughout; objects
// whose sync failed are put back for the next sync.
func (s *repo) syncForUpdate(files []*os.File) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	pending := s.takePending()
	if s.whileSyncing != nil {
		s.whileSyncing()
	}
	if err := s.syncTaken(pending, files); err != nil {
		s.restorePending(pending)
		return err
	}
	return nil
}

// takePending removes and returns the list of unsynced object files. The
// caller holds s.syncMu until they are synced or put back: an object taken
// here may be another writer's, whose Update must not rename its refs
// before that object is durable.
func (s *repo) takePending() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending
	s.pending, s.smallPacks = nil, s.smallPacks[:0]
	return p
}

// restorePending puts back object files whose sync failed.
func (s *repo) restorePending(p []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, p...)
}
