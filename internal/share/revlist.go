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

// revList is `git rev-list --parents tip ^stop` (gitstore.Transport
// RevList: every commit reachable from tip and not from stop, "" for none,
// with its parents), answered from the store's objects when that answer is
// certain within revListBudget commits, which is the common case of a
// pull: the new commits of a journal or a chain that was fast-forwarded on
// the remote. Otherwise git answers.
func revList(ctx context.Context, g gitstore.Store, t *gitstore.Transport, tip, stop gitstore.OID) ([]gitstore.RevListCommit, error) {
	if commits, ok := revListNear(g, tip, stop, revListBudget); ok {
		return commits, nil
	}
	var exclude []gitstore.OID
	if stop != "" {
		exclude = []gitstore.OID{stop}
	}
	return t.RevList(ctx, []gitstore.OID{tip}, exclude)
}

// revListNear answers revList from the store's objects, reading at most
// budget commits a walk (ok false otherwise: the caller asks git). It walks
// tip's history breadth first without going past stop ("" for none). When
// that walk meets no root commit while stop is set, the commits it read are
// exactly those reachable from tip and not from stop: a commit stop
// reaches, met by the walk, would have led it down to a root (stop is no
// ancestor of it: history has no cycles), and every commit tip reaches by
// a path that avoids stop was read, which is every commit stop does not
// reach. When it meets a root (two histories that diverged, or journals
// begun apart), stop's whole history is read, and the walk from tip made
// again, going past none of it: a commit tip reaches that stop does not is
// reached by a path through no commit stop reaches (its descendants on the
// path would be reached by stop too). Without stop, the walk reads tip's
// whole history. A commit that cannot be read (not in the store, or not a
// commit: git would peel a tag) ends it with ok false.
func revListNear(g gitstore.Store, tip, stop gitstore.OID, budget int) (commits []gitstore.RevListCommit, ok bool) {
	if tip == stop {
		return nil, true
	}
	commits, root, ok := walkNew(g, tip, func(id gitstore.OID) bool { return id == stop }, stop != "", budget)
	if !ok || !root || stop == "" {
		return commits, ok
	}
	reached, ok := ancestry(g, stop, budget)
	if !ok {
		return nil, false
	}
	commits, _, ok = walkNew(g, tip, func(id gitstore.OID) bool { return reached[id] }, false, budget)
	return commits, ok
}

// walkNew reads tip's history breadth first, going past no commit that
// known says is known (nor reading it), and returns the commits read with
// their parents; root reports that it met a root commit, where it stops at
// once (no commits) when stopAtRoot is set. More than budget commits, or
// one that cannot be read, give ok false.
func walkNew(g gitstore.Store, tip gitstore.OID, known func(gitstore.OID) bool, stopAtRoot bool, budget int) (commits []gitstore.RevListCommit, root, ok bool) {
	if known(tip) {
		return nil, false, true
	}
	queue := []gitstore.OID{tip}
	seen := map[gitstore.OID]bool{tip: true}
	for len(queue) > 0 {
		if len(commits) >= budget {
			return nil, root, false
		}
		id := queue[0]
		queue = queue[1:]
		c, err := commitFields(g, id)
		if err != nil {
			return nil, root, false
		}
		if len(c.Parents) == 0 {
			if root = true; stopAtRoot {
				return nil, true, true
			}
		}
		commits = append(commits, gitstore.RevListCommit{ID: id, Parents: c.Parents})
		for _, p := range c.Parents {
			if !seen[p] && !known(p) {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return commits, root, true
}

// ancestry returns every commit reachable from tip (tip included), or ok
// false beyond budget commits or at one that cannot be read.
func ancestry(g gitstore.Store, tip gitstore.OID, budget int) (map[gitstore.OID]bool, bool) {
	commits, _, ok := walkNew(g, tip, func(gitstore.OID) bool { return false }, false, budget)
	if !ok {
		return nil, false
	}
	reached := make(map[gitstore.OID]bool, len(commits))
	for _, c := range commits {
		reached[c.ID] = true
	}
	return reached, true
}
