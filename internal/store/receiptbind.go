package store

import (
	"github.com/readproof/readproof/receipts"
)

// receiptBinding binds a receipt issued for run id run to the run that id
// names in this store: its manifest when the run is committed, its start
// when it is open (the manifest it is committed as records that start). A
// run id this store does not know, or cannot read, binds nothing.
func (s *Store) receiptBinding(run string) receipts.Binding {
	if validRun(run) != nil {
		return receipts.Binding{}
	}
	open, committed, err := s.runStatus(run)
	switch {
	case err != nil:
		return receipts.Binding{}
	case committed != "":
		return receipts.Binding{Manifest: string(committed)}
	case open != "":
		c, err := s.git.Commit(open)
		if err != nil {
			return receipts.Binding{}
		}
		st, err := s.runStateOf(open, c)
		if err != nil && !isBadRunCaller(err) || st.StartedAt.IsZero() {
			return receipts.Binding{}
		}
		return receipts.Binding{RunStarted: st.StartedAt}
	}
	return receipts.Binding{}
}
