package share

import (
	"runtime"
	"sync"

	"github.com/readproof/readproof/gitstore"
)

// maxVerifyWorkers bounds the goroutines that check manifests: each reads
// through its own handle on the repository, and git objects are small, so
// more than a few buys nothing but memory.
const maxVerifyWorkers = 4

// verifyManifests checks every manifest in ids that has not passed yet
// (checkManifest: the manifest entry by entry, each snapshot hashed) on
// one goroutine per core, each reading through its own repository handle,
// and returns the failures in the order of ids. Progress is reported from
// the calling goroutine.
func verifyManifests(g gitstore.Store, ids []gitstore.OID, verified verifiedSet, opts Options) []string {
	var todo []gitstore.OID
	for _, id := range ids {
		if !verified[verifiedKey{"manifest", id}] {
			todo = append(todo, id)
		}
	}
	errs := make([]error, len(todo))
	readers := []gitstore.Store{g}
	workers := min(runtime.GOMAXPROCS(0), maxVerifyWorkers, 1+len(todo)/64)
	for len(readers) < workers {
		h, ok, err := gitstore.NewReader(g)
		if err != nil || !ok {
			break // g alone: slower, not less checked
		}
		defer h.Close()
		readers = append(readers, h)
	}
	jobs := make(chan int)
	done := make(chan int, len(todo))
	var wg sync.WaitGroup
	for _, r := range readers {
		wg.Add(1)
		go func(r gitstore.Store) {
			defer wg.Done()
			for i := range jobs {
				_, errs[i] = checkManifest(r, todo[i])
				done <- i
			}
		}(r)
	}
	go func() {
		for i := range todo {
			jobs <- i
		}
		close(jobs)
	}()
	for n := 1; n <= len(todo); n++ {
		<-done
		if opts.Progress != nil && (n%100 == 1 || n == len(todo)) {
			opts.say("\rVerifying manifests: %d/%d", n, len(todo))
			if n == len(todo) {
				opts.say(", done.\n")
			}
		}
	}
	wg.Wait()
	var failures []string
	for i, id := range todo {
		if errs[i] != nil {
			failures = append(failures, errs[i].Error())
		} else {
			verified[verifiedKey{"manifest", id}] = true
		}
	}
	return failures
}
