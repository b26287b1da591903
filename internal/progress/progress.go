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

// WaitNotice is how long every wait for a lock that another process holds
// lasts before the terminal hears of it (Waiter): a ref's or packed-refs'
// lock (a receipt's preflight included), the store's maintenance lock, a
// git mirror's, the policy file's and the MCP token file's. A lock that
// comes free sooner is never mentioned.
const WaitNotice = time.Second

// Wait is a wait for a lock that another process holds, as the terminal
// hears of it (Waiter); String spells the line.
type Wait struct {
	Path string // the lock (a file, or a directory an flock is held on)
	// Lock says in words what the lock guards ("the store's refs"); ""
	// when Path says enough.
	Lock string
	// Holder is who holds it ("another git or readproof"); "" means
	// another process.
	Holder string
	// Find says how to find the holder, when there is a way ("" when
	// not).
	Find string
	// Held is how long it has been held, by the lock file's modification
	// time; 0 when the lock has no such time (an flock).
	Held time.Duration
	// Left is how much longer the wait lasts at most; then, when Stale,
	// the lock is taken over as left by a crashed process, else the
	// command fails. Negative: the wait lasts until the holder is done.
	Left  time.Duration
	Stale bool
}

// String is the line a terminal shows: "waiting for PATH (LOCK), held by
// HOLDER for HELD: up to LEFT more, then THEN; FIND".
func (w Wait) String() string {
	s := "waiting for " + w.Path
	if w.Lock != "" {
		s += " (" + w.Lock + ")"
	}
	holder := w.Holder
	if holder == "" {
		holder = "another process"
	}
	s += ", held by " + holder
	if w.Held > 0 {
		s += " for " + w.Held.Round(100*time.Millisecond).String()
	}
	switch {
	case w.Left < 0:
		s += ": until it is done"
	case w.Stale:
		s += ": up to " + w.Left.Round(100*time.Millisecond).String() + " more, then it is taken over as left by a crashed process"
	default:
		s += ": up to " + w.Left.Round(100*time.Millisecond).String() + " more, then the command fails"
	}
	if w.Find != "" {
		s += "; " + w.Find
	}
	return s
}

// FileWait is the wait, at now, for the lock file path that holder took
// at mod (its modification time): it lasts until deadline, or until the
// lock is older than stale and taken over as left by a crashed process,
// whichever comes first.
func FileWait(path, holder string, mod, now, deadline time.Time, stale time.Duration) Wait {
	w := Wait{Path: path, Holder: holder, Held: max(now.Sub(mod), 0), Left: deadline.Sub(now)}
	if staleIn := stale - w.Held; staleIn < w.Left {
		w.Left, w.Stale = max(staleIn, 0), true
	}
	return w
}

// Waiter is the one clock of every lock wait: a loop that waits for a lock
// makes one when the lock is first found held and calls Check after each
// attempt. Its zero value tells nobody.
type Waiter struct {
	tell   func(Wait)
	notice time.Duration
	start  time.Time
	told   bool
}

// NewWaiter starts the clock of a wait that tell hears of once it has
// lasted notice (0: WaitNotice). A nil tell is never called.
func NewWaiter(tell func(Wait), notice time.Duration) Waiter {
	if notice <= 0 {
		notice = WaitNotice
	}
	return Waiter{tell: tell, notice: notice, start: time.Now()}
}

// Check tells of the wait once it has lasted the notice, and only once:
// describe gives the wait as it is at now, or false when the lock is gone
// meanwhile (then nothing is told yet).
func (w *Waiter) Check(now time.Time, describe func() (Wait, bool)) {
	if w.told || w.tell == nil || now.Sub(w.start) < w.notice {
		return
	}
	if info, ok := describe(); ok {
		w.told = true
		w.tell(info)
	}
}
