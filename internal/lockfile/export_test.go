package lockfile

// WithJudged returns o calling judged each time a waiter has judged a lock
// stale, just before it takes the lock over.
func WithJudged(o Options, judged func()) Options {
	o.judged = judged
	return o
}

// AfterCreate makes f called between the create of each lock file and the
// take of its flock.
func AfterCreate(f func(path string)) { afterCreate = f }
