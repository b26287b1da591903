package store

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestReplayEachSeesEveryEntryOnce: ReplayEach calls each with every
// entry, in position order, with the bytes Replay gives it while the call
// lasts, and returns what ReplayNoContentContext returns, at any
// read-ahead bound (one blob at a time included).
func TestReplayEachSeesEveryEntryOnce(t *testing.T) {
	t.Parallel()
	const n = 40
	var toml strings.Builder
	files := map[string]string{}
	var uris []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("d%02d.md", i)
		fmt.Fprintf(&toml, "[[resource]]\nuri = \"readproof://each/docs/%s\"\nsource = { type = \"filesystem\", path = %q }\n\n", name, name)
		files[name] = fmt.Sprintf("%s %s\n", name, strings.Repeat("x", i*100))
		uris = append(uris, "readproof://each/docs/"+name)
	}
	f := newFixture(t, toml.String(), files)
	m, _, err := f.s.RunOnce(context.Background(), "run-each", uris)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := f.s.Replay("run-each")
	if err != nil {
		t.Fatal(err)
	}
	want, err := f.s.ReplayNoContentContext(context.Background(), "run-each", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ahead := range []int64{0, 1, 1 << 10, 1 << 30} {
		next := 0
		got, err := f.s.ReplayEach(context.Background(), m, ahead, func(i int, r *ReplayEntry) {
			if i != next || r.Position != i {
				t.Fatalf("ahead %d: entry %d (position %d) seen when %d was due", ahead, i, r.Position, next)
			}
			next++
			if w := whole.Entries[i]; string(r.Content) != string(w.Content) || r.Match != w.Match || r.Actual != w.Actual {
				t.Fatalf("ahead %d: entry %d seen as %+v, Replay has %+v", ahead, i, r, w)
			}
		})
		if err != nil || next != n {
			t.Fatalf("ahead %d: %v, %d entries seen", ahead, err, next)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ahead %d: ReplayEach returned %+v, ReplayNoContentContext %+v", ahead, got, want)
		}
	}
}

// TestReplayEachHoldsAboutAhead: a read-ahead bound under one entry's size
// reads one entry at a time, whatever the number of CPUs. Before (session
// 23, rereadb), ReplayEach lowered ReadBlobs' Ahead but not its workers,
// each of which reads blobs of its own ahead: on a machine of 8 CPUs a
// replay of entries over the bound held 8 of them (the MCP replay's 16 MiB
// bound, of 100 MB documents: 800 MB), where the chunked replay before it
// held one. Measured as the live heap while the first entry is looked at,
// the others having had the time to be read. Not parallel: it sets
// GOMAXPROCS and reads the process's heap.
func TestReplayEachHoldsAboutAhead(t *testing.T) {
	const n, size = 8, 1 << 20
	var toml strings.Builder
	files := map[string]string{}
	var uris []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("big%d.md", i)
		fmt.Fprintf(&toml, "[[resource]]\nuri = \"readproof://each/docs/%s\"\nsource = { type = \"filesystem\", path = %q }\n\n", name, name)
		files[name] = strings.Repeat(fmt.Sprintf("%d", i), size)
		uris = append(uris, "readproof://each/docs/"+name)
	}
	f := newFixture(t, toml.String(), files)
	m, _, err := f.s.RunOnce(context.Background(), "run-big", uris)
	if err != nil {
		t.Fatal(err)
	}
	held := func(procs int) uint64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var live uint64
		res, err := f.s.ReplayEach(context.Background(), m, 1, func(i int, _ *ReplayEntry) {
			if i == 0 {
				time.Sleep(100 * time.Millisecond) // the time to read ahead
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				live = ms.HeapAlloc
			}
		})
		if err != nil || !res.AllMatch {
			t.Fatalf("GOMAXPROCS %d: %v, all_match %v", procs, err, res != nil && res.AllMatch)
		}
		return live
	}
	one, many := held(1), held(n)
	t.Logf("%d entries of %d bytes, a bound of 1 byte: %d bytes live at the first entry at GOMAXPROCS 1, %d at %d", n, size, one, many, n)
	if many > one+3*size {
		t.Errorf("%d entries of %d bytes, a bound of 1 byte: %d bytes live at the first entry at GOMAXPROCS %d, %d at 1: it reads entries ahead past the bound, one per CPU",
			n, size, many, n, one)
	}
}
