package mcpserver_test

import (
	"strings"
	"testing"
)

// TestReplayWindowHugeMaxBytes: a window's end is offset+max_bytes capped
// at the entry's size, whatever max_bytes is. Before, max_bytes near 2^63
// past an offset of a few KiB overflowed to a negative end, the slice
// panicked, and the whole `readproof mcp --http` process died: one call of
// a read token stopped the server for every client.
func TestReplayWindowHugeMaxBytes(t *testing.T) {
	t.Parallel()
	doc := strings.Repeat("Products can be refunded within 30 days.\n", 100) // 4,100 bytes
	p := newProject(t, "version = 1\n\n[[resource]]\nuri = \""+refundsURI+"\"\n"+
		"source = { type = \"filesystem\", path = \"policies/refunds.md\" }\n",
		map[string]string{"policies/refunds.md": doc})
	writer, reader := p.token(t, "writer"), p.token(t, "reader", "--scope", "read")
	srv := p.serveHTTP(t)
	w := srv.connect(t, writer)
	w.ok(t, "readproof_run_start", map[string]any{"run_id": "r1"})
	w.ok(t, "readproof_run_mount", map[string]any{"run_id": "r1", "uri": refundsURI})
	w.ok(t, "readproof_run_commit", map[string]any{"run_id": "r1"})
	r := srv.connect(t, reader)
	// 2^63-1024: the largest max_bytes below 2^63 that a JSON number
	// decoded as a float64 on the way keeps exactly.
	const huge = int64(1<<63 - 1024)
	for _, offset := range []int64{0, 1, 2048, 4100, 1 << 40} {
		got := r.ok(t, "readproof_replay", map[string]any{"target": "r1", "include_content": true, "offset": offset, "max_bytes": huge})
		e := obj(t, list(t, got["entries"])[0])
		want := doc[min(offset, int64(len(doc))):]
		if content, _ := e["content"].(string); content != want || e["complete"] != true {
			t.Fatalf("offset %d: %s", offset, jsonOf(e))
		}
	}
	// the server still serves
	w.ok(t, "readproof_manifest", map[string]any{"target": "r1"})
}
