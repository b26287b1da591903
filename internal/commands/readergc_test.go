package commands

import (
	"bytes"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// readerGC raises GOGC to 400 for manifest and diff, unless the user set
// GOGC or GOMEMLIMIT.
func TestReaderGCRespectsUserSettings(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, c := range []struct {
		gogc, memlimit string
		want           int
	}{
		{"", "", 400},
		{"100", "", 100},
		{"off", "", 100},
		{"", "1GiB", 100},
	} {
		t.Setenv("GOGC", c.gogc)
		t.Setenv("GOMEMLIMIT", c.memlimit)
		debug.SetGCPercent(100)
		readerGC()
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("GOGC=%q GOMEMLIMIT=%q: GC percent %d, want %d", c.gogc, c.memlimit, got, c.want)
		}
	}
}

// largeRunGC lowers GOGC to largeRunGOGC for a `run --id` of largeRun
// documents or more, and to hugeRunGOGC from hugeRun, unless the user set GOGC or GOMEMLIMIT; a smaller run keeps Go's
// default.
func TestLargeRunGCRespectsUserSettings(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, c := range []struct {
		docs           int
		gogc, memlimit string
		want           int
	}{
		{largeRun, "", "", largeRunGOGC},
		{hugeRun - 1, "", "", largeRunGOGC},
		{hugeRun, "", "", hugeRunGOGC},
		{10000, "", "", hugeRunGOGC},
		{hugeRun, "50", "", 100},
		{largeRun - 1, "", "", 100},
		{1, "", "", 100},
		{largeRun, "100", "", 100},
		{largeRun, "off", "", 100},
		{largeRun, "", "1GiB", 100},
	} {
		t.Setenv("GOGC", c.gogc)
		t.Setenv("GOMEMLIMIT", c.memlimit)
		debug.SetGCPercent(100)
		largeRunGC(c.docs)
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("%d documents, GOGC=%q GOMEMLIMIT=%q: GC percent %d, want %d", c.docs, c.gogc, c.memlimit, got, c.want)
		}
	}
}

// The commands that keep what they read until they exit raise GOGC to 400
// (readerGC): manifest, diff and replay, whose 1,000-document run keeps 4
// MB of blobs that two collections only rescanned.
func TestReaderCommandsRaiseGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("HOME", t.TempDir())
	store := filepath.Join(t.TempDir(), "none")
	for _, args := range [][]string{
		{"manifest", "r1"},
		{"diff", "r1", "r2"},
		{"replay", "r1"},
		{"replay", "--no-content", "r1"},
	} {
		debug.SetGCPercent(100)
		var out, errb bytes.Buffer
		Main(append([]string{"readproof", "--store", store}, args...), strings.NewReader(""), &out, &errb)
		if got := debug.SetGCPercent(100); got != 400 {
			t.Errorf("readproof %s: GC percent %d, want 400 (stderr: %s)", strings.Join(args, " "), got, errb.String())
		}
	}
}
