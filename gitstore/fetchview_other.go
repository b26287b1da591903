//go:build !unix

package gitstore

import "time"

// fetchViewStale is how old a fetch view must be before a sweep removes it
// here, where no flock tells whether its owner lives.
const fetchViewStale = 12 * time.Hour

// holdView: without flock, a view's owner is not told apart from a dead
// one; viewAbandoned goes by age instead.
func holdView(string) (func(), error) { return func() {}, nil }

// viewAbandoned reports a fetch view older than fetchViewStale as
// abandoned: no fetch takes that long.
func viewAbandoned(_ string, mod time.Time) (func(), bool) {
	return func() {}, time.Since(mod) > fetchViewStale
}
