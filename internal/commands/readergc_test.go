package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/policy"
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

// largePolicyGC raises GOGC to largePolicyGOGC for a `get` or a `run --id`
// of largePolicyDocs documents or fewer under a policy file of
// policy.CacheMinBytes or more, unless the user set GOGC or GOMEMLIMIT.
func TestLargePolicyGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	dir := t.TempDir()
	large, small := filepath.Join(dir, "large.toml"), filepath.Join(dir, "small.toml")
	if err := os.WriteFile(large, bytes.Repeat([]byte("# a comment line\n"), policy.CacheMinBytes/17+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(small, []byte("version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path           string
		docs           int
		gogc, memlimit string
		want           int
	}{
		{large, 1, "", "", largePolicyGOGC},
		{large, largePolicyDocs, "", "", largePolicyGOGC},
		{large, largePolicyDocs + 1, "", "", 100},
		{small, 1, "", "", 100},
		{filepath.Join(dir, "missing.toml"), 1, "", "", 100},
		{large, 1, "100", "", 100},
		{large, 1, "off", "", 100},
		{large, 1, "", "1GiB", 100},
	} {
		t.Setenv("GOGC", c.gogc)
		t.Setenv("GOMEMLIMIT", c.memlimit)
		debug.SetGCPercent(100)
		largePolicyGC(c.path, c.docs)
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("%s, %d documents, GOGC=%q GOMEMLIMIT=%q: GC percent %d, want %d", filepath.Base(c.path), c.docs, c.gogc, c.memlimit, got, c.want)
		}
	}
}
