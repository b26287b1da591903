// Package progress draws one progress line on a terminal for work that can
// take more than a second: "replay: 12/40 entries, 3.1/s, 4s", redrawn in
// place (\r) at most ten times a second, and erased when the work ends.
//
// A Line is only drawn when its writer is a terminal and the caller did not
// ask for machine output (--json): piped stderr and JSON runs never see a
// progress byte. A nil *Line is valid and draws nothing, so callers need no
// conditionals.
//
// It imports nothing of the module.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
)

// Terminal reports whether w is a terminal.
func Terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Line is one progress line.
type Line struct {
	w     io.Writer
	what  string // "replay"
	unit  string // "entries"
	every time.Duration
	now   func() time.Time

	mu    sync.Mutex
	start time.Time
	last  time.Time
	drawn bool
}

// Start returns a Line for what (counting unit) on w when w is a terminal
// and machine is false, else nil.
func Start(w io.Writer, what, unit string, machine bool) *Line {
	if machine || !Terminal(w) {
		return nil
	}
	return New(w, what, unit, time.Now)
}

// New returns a Line drawn on w whatever w is (tests, and callers that
// decided already).
func New(w io.Writer, what, unit string, now func() time.Time) *Line {
	return &Line{w: w, what: what, unit: unit, every: 100 * time.Millisecond, now: now, start: now()}
}

// Update reports done of total units (total <= 0: unknown). It draws at
// most every 100 ms, and always the last update (done == total).
func (l *Line) Update(done, total int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.last) < l.every && (total <= 0 || done != total) {
		return
	}
	l.last = now
	l.drawn = true
	fmt.Fprint(l.w, Erase+l.text(done, total, now))
}

func (l *Line) text(done, total int, now time.Time) string {
	elapsed := now.Sub(l.start)
	s := fmt.Sprintf("%s: %d", l.what, done)
	if total > 0 {
		s += fmt.Sprintf("/%d", total)
	}
	s += " " + l.unit
	if secs := elapsed.Seconds(); secs >= 0.5 {
		s += fmt.Sprintf(", %.1f/s", float64(done)/secs)
	}
	return s + ", " + elapsed.Round(time.Second).String()
}

// Stop erases the line; the next output starts on a clean line.
func (l *Line) Stop() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drawn {
		fmt.Fprint(l.w, Erase)
		l.drawn = false
	}
}

// Erase moves to the start of the terminal's line and clears it: a Line's
// text is drawn after it, and a message printed while a Line may be drawn
// (a lock wait's) starts with it, so it does not run on from the count.
const Erase = "\r\033[K"
