package lockfile

// WithJudged returns o calling judged each time a waiter has judged a lock
// stale, just before it takes the lock over.
func WithJudged(o Options, judged func()) Options {
	o.judged = judged
	return o
}
