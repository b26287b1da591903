package share

import (
	"context"

	"github.com/readproof/readproof/gitstore"
)

// revListBudget is how many commits revList reads in-process before it
// leaves the question to `git rev-list`: a git process costs 2 to 5 ms of
// CPU here, a commit read from the store a few microseconds, and a pull
// brings a few commits at a time.
const revListBudget = 512

// revList is `git rev-list --parents tip ^exclude` (gitstore.Transport
// RevList: every commit reachable from tip and not from exclude, which
// holds at most one id here, with its parents), answered from the store's
// objects when that answer is certain within revListBudget commits, which
// is the common case of a pull: the new commits of a journal or a chain
// that was fast-forwarded on the remote. Otherwise, and for more than one
// exclude, git answers.
func revList(ctx context.Context, g gitstore.Store, t *gitstore.Transport, tip gitstore.OID, exclude []gitstore.OID) ([]gitstore.RevListCommit, error) {
	if len(exclude) <= 1 {
		var stop gitstore.OID
		if len(exclude) == 1 {
			stop = exclude[0]
		}
		if commits, ok := revListNear(g, tip, stop, revListBudget); ok {
			return commits, nil
		}
	}
	return t.RevList(ctx, []gitstore.OID{tip}, exclude)
}

// revListNear walks tip's history breadth first without going past stop
// ("" for none) and returns every commit it read, with its parents: the
// commits reachable from tip and not from stop, exactly, when the walk
// ends (ok) within budget commits without meeting a root commit while
// stop is set. A commit reachable from stop and met by the walk would have
// its whole history read, down to a root (stop is no ancestor of it:
// history has no cycles); a walk that meets no root therefore read none,
// and it read every commit reachable from tip by a path that avoids stop,
// which is every commit not reachable from stop. Without stop, the walk
// reads tip's whole history. A commit that cannot be read (not in the
// store, or not a commit: git would peel a tag) ends it with ok false, as
// does the budget: the caller asks git.
func revListNear(g gitstore.Store, tip, stop gitstore.OID, budget int) (commits []gitstore.RevListCommit, ok bool) {
	if tip == stop {
		return nil, true
	}
	queue := []gitstore.OID{tip}
	seen := map[gitstore.OID]bool{tip: true}
	for len(queue) > 0 {
		if len(commits) >= budget {
			return nil, false
		}
		id := queue[0]
		queue = queue[1:]
		c, err := commitFields(g, id)
		if err != nil {
			return nil, false
		}
		if len(c.Parents) == 0 && stop != "" {
			return nil, false
		}
		commits = append(commits, gitstore.RevListCommit{ID: id, Parents: c.Parents})
		for _, p := range c.Parents {
			if p != stop && !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return commits, true
}
