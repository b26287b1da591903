package commands

import (
	"runtime/debug"
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
