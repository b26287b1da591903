package share

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// relation is how a local tip relates to a remote one.
type relation int

const (
	same     relation = iota
	behind            // local is an ancestor of remote: fast-forward
	ahead             // remote is an ancestor of local: nothing to take
	diverged          // both moved
)

func (r relation) String() string {
	return [...]string{"same", "behind", "ahead", "diverged"}[r]
}

// walkBudget bounds the in-process history walk; beyond it stock git
// answers (it has commit-graph generation numbers).
const walkBudget = 20000

// relate compares two tips by walking both histories at once, one commit
// at a time each, so the common cases (a few commits ahead or behind) cost
// a few object reads whatever the length of the chain.
func relate(ctx context.Context, g gitstore.Store, t *gitstore.Transport, local, remote gitstore.OID) (relation, error) {
	if local == remote {
		return same, nil
	}
	type walker struct {
		queue  []gitstore.OID
		seen   map[gitstore.OID]bool
		target gitstore.OID
	}
	a := &walker{queue: []gitstore.OID{remote}, seen: map[gitstore.OID]bool{remote: true}, target: local}
	b := &walker{queue: []gitstore.OID{local}, seen: map[gitstore.OID]bool{local: true}, target: remote}
	step := func(w *walker) (bool, error) {
		id := w.queue[0]
		w.queue = w.queue[1:]
		if id == w.target {
			return true, nil
		}
		c, err := commitFields(g, id) // parents only; a huge object unread
		if err != nil {
			return false, fmt.Errorf("walk history: %w", err)
		}
		for _, p := range c.Parents {
			if !w.seen[p] {
				w.seen[p] = true
				w.queue = append(w.queue, p)
			}
		}
		return false, nil
	}
	for n := 0; len(a.queue) > 0 || len(b.queue) > 0; n++ {
		if n > walkBudget {
			if t == nil {
				return diverged, fmt.Errorf("walk history of %s and %s: more than %d commits", local, remote, walkBudget)
			}
			return relateWithGit(ctx, t, local, remote)
		}
		if len(a.queue) > 0 {
			found, err := step(a)
			if err != nil {
				return diverged, err
			}
			if found {
				return behind, nil
			}
		}
		if len(b.queue) > 0 {
			found, err := step(b)
			if err != nil {
				return diverged, err
			}
			if found {
				return ahead, nil
			}
		}
	}
	return diverged, nil
}

func relateWithGit(ctx context.Context, t *gitstore.Transport, local, remote gitstore.OID) (relation, error) {
	if ok, err := t.IsAncestor(ctx, local, remote); err != nil || ok {
		return behind, err
	}
	if ok, err := t.IsAncestor(ctx, remote, local); err != nil || ok {
		return ahead, err
	}
	return diverged, nil
}

// signature is the identity on every commit readproof writes.
func signature(t time.Time) gitstore.Signature {
	return gitstore.Signature{Name: "readproof", Email: "readproof@localhost", When: t.UTC()}
}

// sortedPair returns two ids in ascending order: merge commits built by two
// stores from the same pair of tips are then the same commit.
func sortedPair(a, b gitstore.OID) []gitstore.OID {
	p := []gitstore.OID{a, b}
	sort.Slice(p, func(i, j int) bool { return p[i] < p[j] })
	return p
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// mergeResource writes the merge of two observation chains of uri: both
// tips are parents, and the tree (observation.json, content, resource.json)
// is the tree of the tip observed last, so the chain's current snapshot is
// the newest observation of either side. The commit is deterministic.
func mergeResource(g gitstore.Store, uri string, a, b gitstore.OID) (gitstore.OID, error) {
	ao, ac, err := observationAt(g, a)
	if err != nil {
		return "", err
	}
	bo, bc, err := observationAt(g, b)
	if err != nil {
		return "", err
	}
	newer, tree := a, ac.Tree
	if bo.ObservedAt.After(ao.ObservedAt) || (bo.ObservedAt.Equal(ao.ObservedAt) && b > a) {
		newer, tree = b, bc.Tree
	}
	sig := signature(later(ac.Committer.When, bc.Committer.When))
	return g.PutCommit(gitstore.Commit{Tree: tree, Parents: sortedPair(a, b), Author: sig, Committer: sig,
		Message: fmt.Sprintf("merge observations of %s\n\nnewest %s\n", uri, newer)})
}

// mergeJournal writes a journal commit with both journal tips as parents
// and the journal view of every run either records (store.JournalTree). The
// commit is deterministic: two stores merging the same tips write the same
// commit, tree included.
func mergeJournal(g gitstore.Store, a, b gitstore.OID) (gitstore.OID, error) {
	ac, err := g.Commit(a)
	if err != nil {
		return "", fmt.Errorf("journal %s: %w", a, err)
	}
	bc, err := g.Commit(b)
	if err != nil {
		return "", fmt.Errorf("journal %s: %w", b, err)
	}
	tree, err := store.JournalTree(g, sortedPair(a, b), "")
	if err != nil {
		return "", err
	}
	sig := signature(later(ac.Committer.When, bc.Committer.When))
	return g.PutCommit(gitstore.Commit{Tree: tree, Parents: sortedPair(a, b), Author: sig, Committer: sig,
		Message: "merge journals\n"})
}

// recordOnJournal appends a journal commit recording a manifest (the format
// of store.CommitRun's journal commits), so the manifest is reachable from
// main.
func recordOnJournal(g gitstore.Store, tip gitstore.OID, runID string, m gitstore.OID, now time.Time) (gitstore.OID, error) {
	parents := []gitstore.OID{m}
	var journalParents []gitstore.OID
	if tip != "" {
		parents = []gitstore.OID{tip, m}
		journalParents = []gitstore.OID{tip}
	}
	tree, err := store.JournalTree(g, journalParents, m)
	if err != nil {
		return "", err
	}
	sig := signature(now)
	return g.PutCommit(gitstore.Commit{Tree: tree, Parents: parents, Author: sig, Committer: sig,
		Message: fmt.Sprintf("record run %s\n\nmanifest %s\n", runID, m)})
}
