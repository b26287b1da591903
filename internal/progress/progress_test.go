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
