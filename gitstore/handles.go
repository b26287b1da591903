package gitstore

// NewReader returns a second handle on the same repository as g, for
// reading from another goroutine: a Store serializes its own reads (go-git
// is not goroutine-safe), so n goroutines need n handles to use n cores.
// Objects buffered in g are written and made durable first, so the new
// handle sees everything g wrote. It returns ok false when g is not a
// repository opened by Open or Init (a hook's reader, whose quarantined
// objects only g sees); the caller then reads through g alone. Close the
// handle when done.
func NewReader(g Store) (h Store, ok bool, err error) {
	s, isRepo := g.(*repo)
	if !isRepo {
		return nil, false, nil
	}
	if err := s.Sync(); err != nil {
		return nil, false, err
	}
	h, err = OpenWithOptions(s.path, s.opts)
	if err != nil {
		return nil, false, err
	}
	if r, ok := h.(*repo); ok {
		r.copied = s.copied // what a copy hashed, as g reads it (OpenLocalSourceWith)
	}
	return h, true, nil
}
