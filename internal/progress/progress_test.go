package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLineThrottlesAndErases(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	l := New(&buf, "replay", "entries", func() time.Time { return clock })
	l.Update(1, 10)
	clock = clock.Add(10 * time.Millisecond)
	l.Update(2, 10) // within 100 ms: not drawn
	clock = clock.Add(2 * time.Second)
	l.Update(5, 10)
	l.Update(10, 10) // the last one is always drawn
	l.Stop()
	want := "\r\033[Kreplay: 1/10 entries, 0s" +
		"\r\033[Kreplay: 5/10 entries, 2.5/s, 2s" +
		"\r\033[Kreplay: 10/10 entries, 5.0/s, 2s" +
		"\r\033[K"
	if got := buf.String(); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if strings.Contains(buf.String(), "\n") {
		t.Fatal("a progress line must not end lines")
	}
}

func TestStartOnlyOnATerminal(t *testing.T) {
	var buf bytes.Buffer
	if l := Start(&buf, "x", "y", false); l != nil {
		t.Fatal("a buffer is not a terminal")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if l := Start(f, "x", "y", false); l != nil {
		t.Fatal("a regular file is not a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if Terminal(w) {
		t.Fatal("a pipe is not a terminal")
	}
	var nilLine *Line
	nilLine.Update(1, 2) // a nil Line draws nothing
	nilLine.Stop()
}

// TestWaitLine: the one spelling of every lock wait's line, and the one
// clock that tells of a wait once, after its notice.
func TestWaitLine(t *testing.T) {
	for _, c := range []struct {
		w    Wait
		want string
	}{
		{Wait{Path: "/s/packed-refs.lock", Holder: "another git or readproof", Held: 1230 * time.Millisecond, Left: 8800 * time.Millisecond, Stale: true},
			"waiting for /s/packed-refs.lock, held by another git or readproof for 1.2s: up to 8.8s more, then it is taken over as left by a crashed process"},
		{Wait{Path: "/s/x.lock", Held: time.Second, Left: 0, Stale: true},
			"waiting for /s/x.lock, held by another process for 1s: up to 0s more, then it is taken over as left by a crashed process"},
		{Wait{Path: "/s/objects/pack", Lock: "the store's maintenance lock", Holder: "a maintenance", Find: "lslocks names it", Left: time.Minute},
			"waiting for /s/objects/pack (the store's maintenance lock), held by a maintenance: up to 1m0s more, then the command fails; lslocks names it"},
		{Wait{Path: "/c/m.lock", Lock: "the git mirror of u", Left: -1},
			"waiting for /c/m.lock (the git mirror of u), held by another process: until it is done"},
	} {
		if got := c.w.String(); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.w, got, c.want)
		}
	}

	var heard []Wait
	w := NewWaiter(func(x Wait) { heard = append(heard, x) }, time.Hour)
	w.Check(time.Now(), func() (Wait, bool) { t.Fatal("described before the notice"); return Wait{}, false })
	later := time.Now().Add(2 * time.Hour)
	w.Check(later, func() (Wait, bool) { return Wait{}, false }) // the lock went meanwhile
	w.Check(later, func() (Wait, bool) { return Wait{Path: "a"}, true })
	w.Check(later, func() (Wait, bool) { return Wait{Path: "b"}, true })
	if len(heard) != 1 || heard[0].Path != "a" {
		t.Errorf("heard %+v, want the one wait a", heard)
	}
	var zero Waiter
	zero.Check(later, func() (Wait, bool) { t.Fatal("a zero Waiter described a wait"); return Wait{}, false })
}

// TestFileWait: a lock file's wait ends at the deadline or when the lock
// turns stale, whichever comes first; a lock dated in the future is held
// for 0.
func TestFileWait(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, c := range []struct {
		name          string
		mod, deadline time.Time
		stale         time.Duration
		want          Wait
	}{
		{"deadline first", now.Add(-time.Second), now.Add(2 * time.Second), time.Hour,
			Wait{Path: "p", Holder: "h", Held: time.Second, Left: 2 * time.Second}},
		{"stale first", now.Add(-3 * time.Second), now.Add(time.Minute), 10 * time.Second,
			Wait{Path: "p", Holder: "h", Held: 3 * time.Second, Left: 7 * time.Second, Stale: true}},
		{"stale already", now.Add(-time.Minute), now.Add(time.Minute), 10 * time.Second,
			Wait{Path: "p", Holder: "h", Held: time.Minute, Left: 0, Stale: true}},
		{"dated ahead", now.Add(time.Second), now.Add(2 * time.Second), time.Hour,
			Wait{Path: "p", Holder: "h", Held: 0, Left: 2 * time.Second}},
	} {
		if got := FileWait("p", "h", c.mod, now, c.deadline, c.stale); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}
