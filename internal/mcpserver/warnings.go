package mcpserver

// The warnings a source gives while a tool reads it (an ssh source's
// ~/.ssh/config line readproof does not apply): the command says them on
// stderr; a tool says them in its answer, where the caller reads, and the
// server logs them (--verbose).

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/readproof/readproof/internal/hint"
)

// Warned is embedded in the outputs of the tools that may read a source.
type Warned struct {
	Warnings []string `json:"warnings,omitempty" jsonschema:"what the source warned of while it was read, as the command says it on stderr: a line of the server's ~/.ssh/config that readproof does not apply, or the file not read; each ends in its hint and is also in the text"`
}

func (w *Warned) setWarnings(ws []string) { w.Warnings = ws }

// warnable is an output that carries the sources' warnings.
type warnable interface {
	setWarnings([]string)
}

// sourceWarnings gathers the warnings a store handle's sources give
// during one request (store.SetSourceWarn), each already said once.
type sourceWarnings struct {
	log  *slog.Logger
	what string // the tool or method, for the log
	// clean words a warning for the client (forClient); nil leaves it
	clean func(string) string
	mu    sync.Mutex
	said  []string
}

func (w *sourceWarnings) add(err error) {
	msg := forModel(err.Error())
	if h := hint.Of(err); h != "" {
		msg += "; " + forModel(h)
	}
	if w.clean != nil {
		msg = w.clean(msg)
	}
	w.log.Info("source warning", "request", w.what, "warning", err)
	w.mu.Lock()
	w.said = append(w.said, msg)
	w.mu.Unlock()
}

func (w *sourceWarnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.said...)
}

// text is the warnings as sentences for the answer's text.
func (w *sourceWarnings) text() string {
	var b strings.Builder
	for _, m := range w.list() {
		b.WriteString(" Warning: " + strings.TrimSuffix(m, ".") + ".")
	}
	return b.String()
}

// onError is err with the warnings said after its message (the hint stays
// err's): a source that warned and then failed says both.
func (w *sourceWarnings) onError(err error) error {
	ws := w.list()
	if len(ws) == 0 {
		return err
	}
	return &warnedError{err: err, warnings: ws}
}

type warnedError struct {
	err      error
	warnings []string
}

func (e *warnedError) Error() string {
	return e.err.Error() + " (warning: " + strings.Join(e.warnings, "; warning: ") + ")"
}

func (e *warnedError) Unwrap() error { return e.err }
