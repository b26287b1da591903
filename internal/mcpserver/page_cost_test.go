package mcpserver_test

import (
	"runtime"
	"testing"

	"github.com/readproof/readproof/internal/mcpserver"
)

// TestEntryPageCostsItsEntries: one page of readproof_manifest or
// readproof_diff reads whole only the entries it answers: the others are
// checked and kept as a View (position, document, tag, snapshot, hash).
// Before, every call decoded the whole manifest of each run (a 20,000-entry
// diff peaked at 116 MB for a 1,000-entry page). The cost is measured as
// the bytes a page of one entry allocates beyond the same page of a
// one-entry run, per byte of the large run's manifest.json: reading it is
// about one, decoding it whole was two more. Not parallel: it reads the
// process's allocation count.
func TestEntryPageCostsItsEntries(t *testing.T) {
	const n = 2000
	p, _ := budgetProject(t, 10)
	p.mountTimes(t, "big", n)
	p.mountTimes(t, "one", 1)
	size := float64(len(p.cli(t, "manifest", "big", "--json")))
	s := p.serveWith(t, mcpserver.Options{MaxAnswerBytes: mcpserver.DefaultMaxAnswerBytes})
	allocated := func(tool string, args map[string]any) float64 {
		var before, after runtime.MemStats
		s.ok(t, tool, args) // once, so that what is set up once is not counted
		runtime.ReadMemStats(&before)
		s.ok(t, tool, args)
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc - before.TotalAlloc)
	}
	for _, c := range []struct {
		tool      string
		big, one  map[string]any
		manifests float64 // the large manifests the call reads
	}{
		{"readproof_manifest", map[string]any{"target": "big", "entry_offset": n / 2, "entry_limit": 1}, map[string]any{"target": "one", "entry_limit": 1}, 1},
		{"readproof_diff", map[string]any{"a": "big", "b": "big", "entry_offset": n / 2, "entry_limit": 1}, map[string]any{"a": "one", "b": "one", "entry_limit": 1}, 2},
	} {
		per := (allocated(c.tool, c.big) - allocated(c.tool, c.one)) / (c.manifests * size)
		t.Logf("%s: %.2f bytes allocated per byte of manifest.json (%.0f bytes, %d entries)", c.tool, per, size, n)
		if per > 2.5 {
			t.Errorf("%s of a page of 1 entry of %d allocated %.2f bytes per byte of each manifest.json read: it decodes every entry whole", c.tool, n, per)
		}
	}
}

// TestReplayIsOnePass: a replay re-hashes the run in one pass, whatever
// the read-ahead bound (WithReplayChunk): what it allocates does not grow
// with the number of chunks. Before, it replayed the run in chunks of
// at most that many recorded bytes, each a store.ReplayManifest that read
// the commit and listed the run's whole tree again: a run of n entries
// each over the bound listed n trees of n files. Not parallel: it reads
// the process's allocation count.
func TestReplayIsOnePass(t *testing.T) {
	const n = 400
	p, _ := budgetProject(t, 10)
	p.mountTimes(t, "big", n)
	allocated := func(opts mcpserver.Options) float64 {
		s := p.serveWith(t, opts)
		args := map[string]any{"target": "big", "entry_limit": 1}
		s.ok(t, "readproof_replay", args)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out := s.ok(t, "readproof_replay", args)
		runtime.ReadMemStats(&after)
		if out["all_match"] != true || num(t, out, "matched") != n {
			t.Fatalf("replay: all_match %v, matched %v", out["all_match"], out["matched"])
		}
		return float64(after.TotalAlloc - before.TotalAlloc)
	}
	one, each := allocated(mcpserver.Options{}), allocated(mcpserver.WithReplayChunk(mcpserver.Options{}, 1))
	t.Logf("replay of %d entries: %.0f bytes allocated at the default bound, %.0f with a bound under every entry", n, one, each)
	if each > 2*one {
		t.Errorf("a replay of %d entries with a bound under every entry allocated %.1f times what it does at the default bound: it replays chunk by chunk", n, each/one)
	}
}
