package mcpserver_test

import (
	"fmt"
	"sort"
	"sync"
	"testing"
)

// TestConcurrentCalls sends many calls at once over one session (the SDK
// handles them concurrently, each on its own store handle): mounts into one
// run all land, at distinct positions, and the manifest lists them all.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	for i := 0; i < 4; i++ {
		p.write(t, fmt.Sprintf("docs/d%d.md", i), fmt.Sprintf("document %d\n", i))
		p.declare(t, fmt.Sprintf("readproof://demo/docs/d%d", i), fmt.Sprintf("docs/d%d.md", i))
	}
	s := p.serve(t)
	s.ok(t, "readproof_run_start", map[string]any{"run_id": "many"})
	const n = 16
	var wg sync.WaitGroup
	positions := make([]int, n)
	errs := make(chan string, 2*n)
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func(i int) {
			defer wg.Done()
			res := s.call(t, "readproof_run_mount", map[string]any{"run_id": "many", "uri": fmt.Sprintf("readproof://demo/docs/d%d", i%4)})
			if res.IsError {
				errs <- text(res)
				return
			}
			positions[i] = int(obj(t, res.StructuredContent)["position"].(float64))
		}(i)
		go func(i int) {
			defer wg.Done()
			if res := s.call(t, "readproof_resolve", map[string]any{"uri": refundsURI}); res.IsError {
				errs <- text(res)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent call failed: %s", e)
	}
	sort.Ints(positions)
	for i, pos := range positions {
		if pos != i {
			t.Fatalf("positions %v, want 0..%d each once", positions, n-1)
		}
	}
	c := s.ok(t, "readproof_run_commit", map[string]any{"run_id": "many"})
	if num(t, c, "entries") != n {
		t.Errorf("commit: %d entries, want %d", num(t, c, "entries"), n)
	}
	if rp := s.ok(t, "readproof_replay", map[string]any{"target": "many"}); rp["all_match"] != true || num(t, rp, "matched") != n {
		t.Errorf("replay: %s", jsonOf(rp))
	}
}

// BenchmarkToolCall measures one readproof_resolve round trip through a
// real `readproof mcp` subprocess (the store is opened per request).
func BenchmarkToolCall(b *testing.B) {
	p := demoProject(b)
	s := p.start(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res := s.call(b, "readproof_resolve", map[string]any{"uri": refundsURI}); res.IsError {
			b.Fatal(text(res))
		}
	}
}

// BenchmarkToolCallTagged is BenchmarkToolCall for URI@TAG, which writes
// nothing: the cost of the MCP round trip and the per-request store open.
func BenchmarkToolCallTagged(b *testing.B) {
	p := demoProject(b)
	p.cli(b, "run", "--id", "seed", refundsURI)
	p.cli(b, "tag", "set", refundsURI, "prod")
	s := p.start(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res := s.call(b, "readproof_resolve", map[string]any{"uri": refundsURI + "@prod"}); res.IsError {
			b.Fatal(text(res))
		}
	}
}

// BenchmarkResourcesList measures resources/list, which re-reads
// readproof.toml and the store each time.
func BenchmarkResourcesList(b *testing.B) {
	p := demoProject(b)
	for i := 0; i < 50; i++ {
		p.write(b, fmt.Sprintf("docs/d%d.md", i), "x\n")
	}
	toml := "version = 1\n"
	for i := 0; i < 50; i++ {
		toml += fmt.Sprintf("\n[[resource]]\nuri = \"readproof://bench/d%d\"\nsource = { type = \"filesystem\", path = \"docs/d%d.md\" }\n", i, i)
	}
	p.write(b, "readproof.toml", toml)
	s := p.start(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := s.cs.ListResources(ctxT(b), nil)
		if err != nil || len(res.Resources) != 50 {
			b.Fatal(err)
		}
	}
}
