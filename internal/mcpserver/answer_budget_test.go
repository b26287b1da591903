package mcpserver_test

import (
	"errors"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/mcpserver"
)

// budgetProject declares one text document of n bytes, readproof://big/doc.
func budgetProject(t *testing.T, n int) (*project, string) {
	t.Helper()
	doc := strings.Repeat("0123456789abcdef\n", n/17+1)[:n]
	return newProject(t, "version = 1\n\n[defaults]\nmax_bytes = \"20MiB\"\n\n[[resource]]\nuri = \"readproof://big/doc\"\ncontent_type = \"text/plain\"\n"+
		"source = { type = \"filesystem\", path = \"doc.txt\" }\n", map[string]string{"doc.txt": doc}), doc
}

// mountTimes commits run id with the document mounted k times: one blob in
// the store, k entries in the manifest.
func (p *project) mountTimes(t *testing.T, id string, k int) {
	t.Helper()
	args := []string{"run", "--id", id}
	for range k {
		args = append(args, "readproof://big/doc")
	}
	p.cli(t, args...)
}

// TestHTTPAnswerBudgetDefault: over `readproof mcp --http` one answer
// carries at most DefaultMaxAnswerBytes of document bytes. Before, a write
// token's run of one 1 MiB document mounted 50 times made any read token's
// replay with include_content build 50 MiB of content several times over
// in the shared server (1.1 GiB allocated), and a few such calls at once
// ran it out of memory for every client. Now the call is refused from the
// manifest's sizes, naming the budget and the windows, and a window of an
// entry still returns it whole.
func TestHTTPAnswerBudgetDefault(t *testing.T) {
	t.Parallel()
	const k = mcpserver.DefaultMaxAnswerBytes/mib + 1 // 17 entries of 1 MiB: over the budget by 1 MiB
	p, doc := budgetProject(t, mib)
	p.mountTimes(t, "big", k)
	reader := p.token(t, "reader", "--scope", "read")
	r := p.serveHTTP(t).connect(t, reader)

	got := r.fail(t, "readproof_replay", map[string]any{"target": "big", "include_content": true})
	mustContain(t, "refusal", got, "include_content would return "+strconv.Itoa(k*mib)+" bytes of content ("+strconv.Itoa(k)+" entries)",
		"budget of "+strconv.Itoa(mcpserver.DefaultMaxAnswerBytes)+" bytes per answer (the operator's --max-answer)",
		"hint: take the content in windows: position (0 to "+strconv.Itoa(k-1)+") with max_bytes of at most "+strconv.Itoa(mcpserver.DefaultMaxAnswerBytes))
	got = r.fail(t, "readproof_evidence_export", map[string]any{"target": "big", "with_content": true})
	mustContain(t, "refusal", got, "the bundle would carry "+strconv.Itoa(k*mib)+" bytes", "budget of "+strconv.Itoa(mcpserver.DefaultMaxAnswerBytes),
		"readproof_replay windows", "bundle with content of run big is exported where the store is, by the operator")

	// The windowed route: one entry whole, and the replay still checks all.
	out := r.ok(t, "readproof_replay", map[string]any{"target": "big", "include_content": true, "position": k - 1})
	if out["all_match"] != true || num(t, out, "total_bytes") != k*mib {
		t.Fatalf("windowed replay: %v", out["all_match"])
	}
	e := obj(t, list(t, out["entries"])[k-1])
	if content, _ := e["content"].(string); content != doc || e["complete"] != true {
		t.Fatalf("position %d: %d bytes, complete %v", k-1, len(content), e["complete"])
	}
	// Without content the replay is not bounded by the budget.
	r.ok(t, "readproof_replay", map[string]any{"target": "big"})
	r.ok(t, "readproof_evidence_export", map[string]any{"target": "big"})
}

// TestAnswerBudgetWindowsReturnEveryByte: under a budget (--max-answer,
// Options.MaxAnswerBytes) every byte of a run over it still comes back
// through windows of at most the budget, concatenated; a call over it is
// refused, one within it is answered.
func TestAnswerBudgetWindowsReturnEveryByte(t *testing.T) {
	t.Parallel()
	const n, k, budget = 40_000, 3, 50_000
	p, doc := budgetProject(t, n)
	p.mountTimes(t, "r3", k)
	s := p.serveWith(t, mcpserver.Options{MaxAnswerBytes: budget})

	for _, args := range []map[string]any{
		{"target": "r3", "include_content": true},
		{"target": "r3", "include_content": true, "max_bytes": 20_000},              // 60,000 over 3 entries
		{"target": "r3", "include_content": true, "position": 1},                    // 40,000: within
		{"target": "r3", "include_content": true, "offset": 10_000, "max_bytes": 0}, // 90,000
	} {
		res := s.call(t, "readproof_replay", args)
		within := args["position"] != nil
		if res.IsError == within {
			t.Fatalf("%v: error %v, want %v: %s", args, res.IsError, !within, text(res))
		}
		if !within {
			mustContain(t, "refusal", text(res), "budget of 50000 bytes per answer", "max_bytes of at most 50000")
		}
	}
	s.ok(t, "readproof_replay", map[string]any{"target": "r3", "include_content": true, "max_bytes": 16_000}) // 48,000

	for pos := range k {
		var got strings.Builder
		for offset := int64(0); ; {
			out := s.ok(t, "readproof_replay", map[string]any{"target": "r3", "include_content": true, "position": pos, "offset": offset, "max_bytes": budget / 2})
			e := obj(t, list(t, out["entries"])[pos])
			got.WriteString(e["content"].(string))
			if e["complete"] == true {
				break
			}
			offset = num(t, e, "next_offset")
		}
		if got.String() != doc {
			t.Fatalf("position %d: windows give %d bytes, not the document's %d", pos, got.Len(), len(doc))
		}
	}
	mustContain(t, "refusal", s.fail(t, "readproof_evidence_export", map[string]any{"target": "r3", "with_content": true}),
		"the bundle would carry 120000 bytes of content (3 entries)", "budget of 50000 bytes")
	s.ok(t, "readproof_evidence_export", map[string]any{"target": "r3"})

	// No budget (stdio's default): every byte in one answer.
	out := p.serve(t).ok(t, "readproof_replay", map[string]any{"target": "r3", "include_content": true})
	if out["truncated"] != false || num(t, out, "total_bytes") != k*n {
		t.Fatalf("uncapped replay: truncated %v", out["truncated"])
	}
}

// TestMaxAnswerNegativeRefused: --max-answer takes bytes, or 0 for no
// limit; a negative number is a usage error (exit 2), on stdio and HTTP.
func TestMaxAnswerNegativeRefused(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	for _, args := range [][]string{{"mcp", "--max-answer", "-1"}, {"mcp", "--http", "127.0.0.1:0", "--max-answer", "-5"}} {
		_, stderr, err := p.run(args...)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Fatalf("%v: %v, want exit 2\n%s", args, err, stderr)
		}
		mustContain(t, "stderr", stderr, "must not be negative", "hint: give a number of bytes, or 0 for no limit")
	}
}

// TestReplayHoldsOneChunk: a replay over MCP holds about one chunk of a
// run's bytes at once, whatever the run's size. Before, it held every
// entry's bytes until the answer was built: a write token's run of a 1 MiB
// document mounted 200 times (one blob in the store) made any read token's
// replay, with no content asked for, raise the shared server's peak RSS by
// 200 MB. Not parallel: it reads the process's heap.
func TestReplayHoldsOneChunk(t *testing.T) {
	const k, chunk = 24, 2 * mib
	p, _ := budgetProject(t, mib)
	p.mountTimes(t, "r24", k)
	s := p.serveWith(t, mcpserver.WithReplayChunk(mcpserver.Options{}, chunk))
	// Collect often, so the heap follows what is live.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var most uint64
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			most = max(most, ms.HeapAlloc)
			select {
			case <-stop:
				peak <- most
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	out := s.ok(t, "readproof_replay", map[string]any{"target": "r24"})
	close(stop)
	grew := int64(<-peak) - int64(base.HeapAlloc)
	if out["all_match"] != true || num(t, out, "matched") != k {
		t.Fatalf("replay: all_match %v, matched %v", out["all_match"], out["matched"])
	}
	if grew > 12*mib {
		t.Fatalf("a replay of %d entries of 1 MiB grew the heap by %.1f MiB at peak; with chunks of %d MiB it holds about one", k, float64(grew)/mib, chunk/mib)
	}
	t.Logf("heap grew by %.1f MiB at peak", float64(grew)/mib)
}
