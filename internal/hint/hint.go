// Package hint attaches a suggestion for the user to an error without
// changing what the error matches: errors.Is and errors.As see through it.
// The CLI prints the message on one line and the hint on the next.
package hint

import "errors"

type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Unwrap() error { return h.err }
func (h *hinted) Hint() string  { return h.hint }

// With returns err carrying hint. A nil err stays nil.
func With(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &hinted{err: err, hint: hint}
}

// Of returns the outermost hint carried by err, or "".
func Of(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}
