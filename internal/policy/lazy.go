package policy

import "sync"

// Lazy is a policy file read on first use: commands that never consult the
// policy (manifest, diff, replay, history, verify without a signer list)
// then never pay for reading and parsing it, and a broken file is reported
// by the first command that needs it. Get is safe for concurrent use and
// loads at most once; the error, if any, is returned by every call.
type Lazy struct {
	once sync.Once
	load func() (*File, error)
	f    *File
	err  error
}

// NewLazy returns a Lazy that calls load on the first Get.
func NewLazy(load func() (*File, error)) *Lazy { return &Lazy{load: load} }

// Loaded returns a Lazy holding f, already parsed.
func Loaded(f *File) *Lazy {
	l := &Lazy{f: f}
	l.once.Do(func() {})
	return l
}

// Get returns the policy file, loading it on the first call.
func (l *Lazy) Get() (*File, error) {
	l.once.Do(func() {
		l.f, l.err = l.load()
		l.load = nil
	})
	return l.f, l.err
}
