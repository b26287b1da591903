package store

import (
	"fmt"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
)

// MigrateResult says what Migrate did.
type MigrateResult struct {
	// From is the format the journal was in (1 or 2); To is always
	// JournalFormatVersion.
	From int `json:"from_format"`
	To   int `json:"to_format"`
	// Changed is false when the journal already carried the right view
	// (or the store has no journal): nothing was written.
	Changed bool `json:"changed"`
	// Previous and Journal are main before and after.
	Previous string `json:"previous,omitempty"`
	Journal  string `json:"journal,omitempty"`
	// Runs is the number of runs (manifests) the view folds.
	Runs int `json:"runs"`
	// Tree is the view now on main.
	Tree string `json:"tree,omitempty"`
}

// Migrate brings the journal to the current store format
// (docs/store-format.md, "Migrating a store"): it computes the view of
// every run the journal records and, unless main already carries exactly
// that tree, appends one journal commit `rebuild journal view` with it.
// Nothing is rewritten or removed: main moves forward by one commit, so a
// shared remote accepts the push. The trees are written before main moves,
// main moves in a compare-and-swap (a concurrent writer makes it compute
// again on the new tip), and a second run finds nothing to do.
func (s *Store) Migrate() (*MigrateResult, error) {
	var out *MigrateResult
	err := retry("migrate", func() error {
		tip, err := s.ref(JournalRef)
		if err != nil {
			return err
		}
		res := &MigrateResult{To: JournalFormatVersion, From: JournalFormatVersion}
		if tip == "" {
			out = res
			return nil
		}
		if res.From, err = JournalFormat(s.git, tip); err != nil {
			return err
		}
		c, err := s.git.Commit(tip)
		if err != nil {
			return err
		}
		tree, n, err := writingBuilder(s.git).fullCount([]gitstore.OID{tip}, "")
		if err != nil {
			return hint.With(fmt.Errorf("migrate: %w", err),
				"nothing was changed; `readproof verify` names what cannot be read: restore it from a copy of the store (readproof pull), then migrate again")
		}
		res.Runs, res.Previous, res.Journal, res.Tree = n, string(tip), string(tip), string(tree)
		if tree == c.Tree {
			out = res
			return nil
		}
		sig := s.signature(s.now())
		j, err := s.git.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{tip}, Author: sig, Committer: sig,
			Message: fmt.Sprintf("%s\n\nformat %d\nruns %d\n", journalRebuildMessage, JournalFormatVersion, n)})
		if err != nil {
			return err
		}
		if err := s.git.Update(gitstore.RefUpdate{Name: JournalRef, Old: tip, New: j}); err != nil {
			return err
		}
		res.Journal, res.Changed = string(j), true
		out = res
		return nil
	})
	return out, err
}
