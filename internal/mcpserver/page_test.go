package mcpserver_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/mcpserver"
)

// pagesOf calls tool with args and entry_offset = next_entry_offset until
// an answer has none, checking each page's total_entries and size, and
// returns the concatenated list under key.
func pagesOf(t *testing.T, s *server, tool, key string, args map[string]any, total, page int) []any {
	t.Helper()
	var all []any
	off := 0
	for calls := 0; ; calls++ {
		if calls > total+1 {
			t.Fatalf("%s: more pages than entries", tool)
		}
		a := map[string]any{"entry_offset": off}
		for k, v := range args {
			a[k] = v
		}
		out := s.ok(t, tool, a)
		if got := num(t, out, "total_entries"); got != int64(total) {
			t.Fatalf("%s at %d: total_entries %d, want %d", tool, off, got, total)
		}
		items := list(t, out[key])
		if len(items) > page {
			t.Fatalf("%s at %d: %d entries in a page of at most %d", tool, off, len(items), page)
		}
		all = append(all, items...)
		next, ok := out["next_entry_offset"]
		if !ok {
			return all
		}
		if int(next.(float64)) != off+len(items) {
			t.Fatalf("%s at %d: next_entry_offset %v after %d entries", tool, off, next, len(items))
		}
		off = int(next.(float64))
	}
}

// TestEntryPages: readproof_manifest, readproof_diff and readproof_replay
// list a run's entries in pages of at most the server's bound, and the
// pages concatenated are the whole list a server without a bound answers
// in one call. Before, every entry was answered at once: a write token's
// run of 20,000 entries made any read token's diff of two such runs
// answer 19 MB at 335 MB of peak RSS over `readproof mcp --http`.
func TestEntryPages(t *testing.T) {
	t.Parallel()
	const n, page = 7, 3
	p, _ := budgetProject(t, 100)
	p.mountTimes(t, "r1", n)
	p.mountTimes(t, "r2", n)
	whole := p.serve(t)
	paged := p.serveWith(t, mcpserver.WithPageEntries(mcpserver.Options{}, page))

	for _, c := range []struct {
		tool, key string
		args      map[string]any
	}{
		{"readproof_manifest", "entries", map[string]any{"target": "r1"}},
		{"readproof_diff", "changes", map[string]any{"a": "r1", "b": "r2"}},
		{"readproof_replay", "entries", map[string]any{"target": "r1"}},
		{"readproof_replay", "entries", map[string]any{"target": "r1", "include_content": true}},
	} {
		all := whole.ok(t, c.tool, c.args)
		want := list(t, all[c.key])
		if len(want) != n {
			t.Fatalf("%s without a bound: %d entries, want %d", c.tool, len(want), n)
		}
		if _, ok := all["next_entry_offset"]; ok {
			t.Errorf("%s without a bound: next_entry_offset %v", c.tool, all["next_entry_offset"])
		}
		got := pagesOf(t, paged, c.tool, c.key, c.args, n, page)
		if jsonOf(got) != jsonOf(want) {
			t.Errorf("%s: pages give\n%s\nwant\n%s", c.tool, jsonOf(got), jsonOf(want))
		}
		// A limit over the bound gets a page of the bound; under it, a
		// page of the limit, also on a server without a bound.
		a := map[string]any{"entry_limit": 100}
		for k, v := range c.args {
			a[k] = v
		}
		if got := list(t, paged.ok(t, c.tool, a)[c.key]); len(got) != page {
			t.Errorf("%s with entry_limit 100: %d entries, want the bound %d", c.tool, len(got), page)
		}
		a["entry_limit"] = 2
		if got := list(t, whole.ok(t, c.tool, a)[c.key]); len(got) != 2 {
			t.Errorf("%s with entry_limit 2: %d entries", c.tool, len(got))
		}
		a["entry_offset"] = n + 1
		mustContain(t, c.tool+" past the end", whole.fail(t, c.tool, a), "entry_offset 8 is past the last entry (there are 7)", "hint: pass an entry_offset from 0 to 6")
	}
	// The text summary says where to continue.
	mustContain(t, "manifest summary", text(paged.call(t, "readproof_manifest", map[string]any{"target": "r1"})),
		"Manifest ", "7 entries", "This answer lists entries 0 to 2 of 7; continue with entry_offset = 3.")
	mustContain(t, "diff summary", text(paged.call(t, "readproof_diff", map[string]any{"a": "r1", "b": "r2", "entry_offset": 6})),
		"0 changed, 0 added, 0 removed, 7 unchanged.", "This answer lists entry 6 of 7.")
	// all_match counts the whole run on every page.
	out := paged.ok(t, "readproof_replay", map[string]any{"target": "r1", "entry_offset": 6})
	if out["all_match"] != true || num(t, out, "matched") != n || len(list(t, out["entries"])) != 1 {
		t.Errorf("last page of replay: %s", jsonOf(out))
	}
	// A position outside the page asked for names the page's first and
	// last entries, as the past-the-end hint does ("from 0 to 6").
	mustContain(t, "position outside the page", paged.fail(t, "readproof_replay", map[string]any{"target": "r1", "include_content": true, "position": 2, "entry_offset": 3}),
		"position 2 is not in the page of entries 3 to 5")
	mustContain(t, "position outside an empty page", paged.fail(t, "readproof_replay", map[string]any{"target": "r1", "include_content": true, "position": 2, "entry_offset": 7}),
		"position 2 is not in the page at entry_offset 7, which lists no entry")
	// A content window of an entry past the first page is answered.
	out = paged.ok(t, "readproof_replay", map[string]any{"target": "r1", "include_content": true, "position": 5})
	if e := obj(t, list(t, out["entries"])[0]); num(t, e, "position") != 5 || e["content"] == "" {
		t.Errorf("window of position 5: %s", jsonOf(out))
	}
}

// TestEntryPageBoundedByAnswerBudget: a server with an answer budget (as
// `readproof mcp --http` has by default) lists at most DefaultPageEntries
// entries per answer, without entry_limit, and says where to continue.
func TestEntryPageBoundedByAnswerBudget(t *testing.T) {
	t.Parallel()
	const n = mcpserver.DefaultPageEntries + 1
	p, _ := budgetProject(t, 10)
	p.mountTimes(t, "big", n)
	s := p.serveWith(t, mcpserver.Options{MaxAnswerBytes: mcpserver.DefaultMaxAnswerBytes})
	for _, tool := range []string{"readproof_manifest", "readproof_replay"} {
		out := s.ok(t, tool, map[string]any{"target": "big"})
		if got := len(list(t, out["entries"])); got != mcpserver.DefaultPageEntries || num(t, out, "total_entries") != n || num(t, out, "next_entry_offset") != mcpserver.DefaultPageEntries {
			t.Errorf("%s of %d entries: %d entries, total_entries %v, next_entry_offset %v", tool, n, got, out["total_entries"], out["next_entry_offset"])
		}
	}
	out := s.ok(t, "readproof_diff", map[string]any{"a": "big", "b": "big"})
	if got := len(list(t, out["changes"])); got != mcpserver.DefaultPageEntries || num(t, out, "next_entry_offset") != mcpserver.DefaultPageEntries {
		t.Errorf("diff of %d entries: %d changes, next_entry_offset %v", n, got, out["next_entry_offset"])
	}
}

// TestDiffPagesPairAcrossPositions: pages of a diff whose runs hold their
// documents in other orders, with changes, additions and removals (the
// earlier run's entries of a page elsewhere than the page's positions,
// read again for it), are the changes one call without a bound answers,
// both ways.
func TestDiffPagesPairAcrossPositions(t *testing.T) {
	t.Parallel()
	var toml strings.Builder
	toml.WriteString("version = 1\n")
	files := map[string]string{}
	for _, d := range []string{"a", "b", "c", "d"} {
		fmt.Fprintf(&toml, "\n[[resource]]\nuri = \"readproof://order/%s\"\nsource = { type = \"filesystem\", path = \"%s.txt\" }\n", d, d)
		files[d+".txt"] = "document " + d + "\n"
	}
	p := newProject(t, toml.String(), files)
	run := func(id string, ds ...string) {
		args := []string{"run", "--id", id}
		for _, d := range ds {
			args = append(args, "readproof://order/"+d)
		}
		p.cli(t, args...)
	}
	run("x", "a", "b", "c", "a", "b", "a")
	p.write(t, "b.txt", "document b, edited\n")
	run("y", "d", "c", "b", "a", "d", "b", "b")
	whole := p.serve(t)
	paged := p.serveWith(t, mcpserver.WithPageEntries(mcpserver.Options{}, 2))
	for _, args := range []map[string]any{{"a": "x", "b": "y"}, {"a": "y", "b": "x"}} {
		want := list(t, whole.ok(t, "readproof_diff", args)["changes"])
		got := pagesOf(t, paged, "readproof_diff", "changes", args, len(want), 2)
		if jsonOf(got) != jsonOf(want) {
			t.Errorf("diff %v: pages give\n%s\nwant\n%s", args, jsonOf(got), jsonOf(want))
		}
	}
}
