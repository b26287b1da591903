package store

// OpenRunNamed reads the open run id: when it started and the entries
// mounted so far, in position order. A committed run gives an error
// wrapping ErrRunCommitted, a run never started one wrapping ErrUnknownRun.
// Through a handle of another caller than the one that started the run it
// is refused (ErrRunCaller), as a mount into it is: its entries are that
// caller's until the run is committed.
func (s *Store) OpenRunNamed(id string) (*OpenRun, error) {
	if err := validRun(id); err != nil {
		return nil, err
	}
	open, committed, err := s.runStatus(id)
	if err != nil {
		return nil, err
	}
	// committed first: an open ref beside the run's ref is one that a
	// killed commit left (HalfDone)
	if committed != "" {
		return nil, committedErr(id, committed)
	}
	if open == "" {
		return nil, s.unknownRun(id)
	}
	st, entries, c, err := s.openEntries(open)
	if err != nil {
		return nil, err
	}
	if isAbortCommit(c, id) {
		return nil, abortedErr(id) // a killed abort: the run is aborted
	}
	if err := s.ownRun(id, st); err != nil {
		return nil, err
	}
	return &OpenRun{RunID: st.RunID, StartedAt: st.StartedAt, Entries: entries}, nil
}
