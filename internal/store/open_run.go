package store

// OpenRunNamed reads the open run id: when it started and the entries
// mounted so far, in position order. A committed run gives an error
// wrapping ErrRunCommitted, a run never started one wrapping ErrUnknownRun.
func (s *Store) OpenRunNamed(id string) (*OpenRun, error) {
	if err := validRun(id); err != nil {
		return nil, err
	}
	open, committed, err := s.runStatus(id)
	if err != nil {
		return nil, err
	}
	if open == "" {
		if committed != "" {
			return nil, committedErr(id, committed)
		}
		return nil, unknownRun(id)
	}
	return s.OpenRunAt(open)
}
