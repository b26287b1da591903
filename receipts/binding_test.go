package receipts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// TestBindingMessages pins the append commit's message of a bound receipt
// (the golden of the form docs/receipts.md "Storage" gives), shows each
// of its lines in the docs, and reads the binding back.
func TestBindingMessages(t *testing.T) {
	r := Receipt{ID: "rcpt_zzqdvk5vnacrgxv6an2368gh03zyxqec", Session: "agent-7", Tool: "exec"}
	started := time.Date(2026, 11, 29, 21, 0, 0, 123456789, time.FixedZone("x", 3600))
	manifest := "9f2c4e1a7b3d5f60819a2b3c4d5e6f708192a3b4"
	doc, err := os.ReadFile(filepath.Join("..", "docs", "receipts.md"))
	if err != nil {
		t.Fatal(err)
	}
	docText := strings.Join(strings.Fields(string(doc)), " ")
	for _, tc := range []struct {
		b    Binding
		want string
		line string
	}{
		{Binding{}, "receipt rcpt_zzqdvk5vnacrgxv6an2368gh03zyxqec\n\nsession: agent-7\ntool: exec\n", ""},
		{Binding{Manifest: manifest}, "receipt rcpt_zzqdvk5vnacrgxv6an2368gh03zyxqec\n\nsession: agent-7\ntool: exec\nrun-manifest: 9f2c4e1a7b3d5f60819a2b3c4d5e6f708192a3b4\n", "`run-manifest: <manifest-id>`"},
		{Binding{RunStarted: started}, "receipt rcpt_zzqdvk5vnacrgxv6an2368gh03zyxqec\n\nsession: agent-7\ntool: exec\nrun-started: 2026-11-29T20:00:00.123456789Z\n", "`run-started: <started_at>`"},
	} {
		msg := appendMessage(r, tc.b)
		if msg != tc.want {
			t.Errorf("message of %+v:\n%q\nwant\n%q", tc.b, msg, tc.want)
		}
		back := parseBinding(msg)
		if back.Manifest != tc.b.Manifest || !back.RunStarted.Equal(tc.b.RunStarted) {
			t.Errorf("binding read back from %q: %+v, want %+v", msg, back, tc.b)
		}
		if tc.line != "" && !strings.Contains(docText, tc.line) {
			t.Errorf("docs/receipts.md does not show the line %s", tc.line)
		}
	}
	// what binds a receipt to which manifest
	if !(Binding{}).Of(manifest, started) || !(Binding{Manifest: manifest}).Of(manifest, time.Time{}) ||
		(Binding{Manifest: manifest}).Of(strings.Repeat("0", 40), started) ||
		!(Binding{RunStarted: started.UTC()}).Of(manifest, started) ||
		(Binding{RunStarted: started.Add(1)}).Of(manifest, started) {
		t.Error("Binding.Of decides otherwise than docs/receipts.md says")
	}
	// a trailer that does not parse binds nothing; a manifest trailer wins
	for _, msg := range []string{
		"receipt x\n\nrun-manifest: 9F2C\n", "receipt x\n\nrun-started: yesterday\n", "receipt x\n\nrun-manifest:" + manifest + "\n",
	} {
		if b := parseBinding(msg); !b.IsZero() {
			t.Errorf("binding of %q: %+v, want none", msg, b)
		}
	}
	if b := parseBinding("receipt x\n\nrun-started: 2026-11-29T20:00:00Z\nrun-manifest: " + manifest + "\n"); b.Manifest != manifest || !b.RunStarted.IsZero() {
		t.Errorf("both trailers: %+v, want the manifest's alone", b)
	}
}

// TestScanBindingsAcrossMerge: a receipt that a merge of two chains
// brought in keeps the binding its own append commit names, on the
// merge's second parent.
func TestScanBindingsAcrossMerge(t *testing.T) {
	f := newFixture(t)
	mine, theirs := strings.Repeat("1", 40), strings.Repeat("2", 40)
	f.ledger.Bind = func(string) Binding { return Binding{Manifest: mine} }
	r1, err := f.issuer.Issue(context.Background(), Call{Session: "s", Run: "r1", Tool: "a", Args: ArgvArgs(nil), Result: BytesResult(nil)})
	if err != nil {
		t.Fatal(err)
	}
	f.ledger.Bind = func(string) Binding { return Binding{Manifest: theirs} }
	r2, err := f.issuer.Issue(context.Background(), Call{Session: "other", Run: "r1", Tool: "b", Args: ArgvArgs(nil), Result: BytesResult(nil)})
	if err != nil {
		t.Fatal(err)
	}
	// merge "other" into "s" as a pull does: the union of the trees, both
	// tips as parents
	tipS, _ := f.ledger.ref(SessionRef("s"))
	tipO, _ := f.ledger.ref(SessionRef("other"))
	treeS, err := f.ledger.commitTree(tipS)
	if err != nil {
		t.Fatal(err)
	}
	blob, _, err := f.ledger.lookup(mustTree(t, f.ledger, tipO), sessionPath(r2.ID))
	if err != nil {
		t.Fatal(err)
	}
	union, err := f.ledger.insert(treeS, sessionPath(r2.ID), blob)
	if err != nil {
		t.Fatal(err)
	}
	sig := gitobj.Signature{Name: "readproof", Email: "readproof@localhost", When: time.Now().UTC()}
	merge, err := f.store.PutCommit(gitobj.Commit{Tree: union, Parents: []gitobj.OID{tipS, tipO}, Author: sig, Committer: sig, Message: "merge receipts of sessions/s\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.Update(gitobj.RefUpdate{Name: SessionRef("s"), Old: tipS, New: merge}); err != nil {
		t.Fatal(err)
	}
	entries, err := f.ledger.Scan("s")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		got[e.ID] = e.Binding.Manifest
	}
	if len(entries) != 2 || got[r1.ID] != mine || got[r2.ID] != theirs {
		t.Fatalf("bindings after the merge: %v, want %s -> %s, %s -> %s", got, r1.ID, mine, r2.ID, theirs)
	}
}

func mustTree(t *testing.T, l *Ledger, c gitobj.OID) gitobj.OID {
	t.Helper()
	tree, err := l.commitTree(c)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// FuzzParseBinding: reading an append commit's message never fails, binds
// a manifest only by a full object id, reads back what trailer writes, and
// a message appendMessage wrote for a valid receipt binds exactly what it
// was given, whatever its session and tool (a tool name cannot spell a
// trailer line of its own).
func FuzzParseBinding(f *testing.F) {
	manifest := "9f2c4e1a7b3d5f60819a2b3c4d5e6f708192a3b4"
	f.Add("receipt x\n\nsession: s\ntool: t\nrun-manifest: "+manifest+"\n", "t", "")
	f.Add("receipt x\n\nrun-started: 2026-11-29T20:00:00.123456789Z\n", "t\nrun-manifest: "+manifest, "2026-11-29T20:00:00Z")
	f.Add("run-manifest: 9F2C\nrun-started: yesterday", "tool: x", manifest)
	f.Fuzz(func(t *testing.T, msg, tool, bind string) {
		b := parseBinding(msg)
		if b.Manifest != "" && (len(b.Manifest) != 40 || !b.RunStarted.IsZero()) {
			t.Fatalf("binding of %q: %+v", msg, b)
		}
		if back := parseBinding(b.trailer()); back.Manifest != b.Manifest || !back.RunStarted.Equal(b.RunStarted) {
			t.Fatalf("trailer %q of %+v reads back as %+v", b.trailer(), b, back)
		}
		r := Receipt{ID: "rcpt_zzqdvk5vnacrgxv6an2368gh03zyxqec", Session: "agent-7", Tool: tool}
		if validateTool(tool) != nil {
			return
		}
		want := parseBinding("run-manifest: " + bind + "\n")
		if want.IsZero() {
			if ts, err := time.Parse(time.RFC3339Nano, bind); err == nil {
				want = Binding{RunStarted: ts}
			}
		}
		got := parseBinding(appendMessage(r, want))
		if got.Manifest != want.Manifest || !got.RunStarted.Equal(want.RunStarted) {
			t.Fatalf("tool %q, binding %+v: message %q reads as %+v", tool, want, appendMessage(r, want), got)
		}
	})
}

// TestBindingOf: receipts show reads a receipt's binding from its append
// commit on the index chain, however many receipts came after it; a
// receipt of no run has none.
func TestBindingOf(t *testing.T) {
	f := newFixture(t)
	var issued []Receipt
	for i := range 40 {
		m := strings.Repeat(string(rune('a'+i%6)), 40)
		f.ledger.Bind = func(string) Binding { return Binding{Manifest: m} }
		run := "r1"
		if i%5 == 4 {
			run = ""
		}
		r, err := f.issuer.Issue(context.Background(), Call{Session: "s", Run: run, Tool: "t", Args: ArgvArgs(nil), Result: BytesResult(nil)})
		if err != nil {
			t.Fatal(err)
		}
		issued = append(issued, r)
	}
	for i, r := range issued {
		b, err := f.ledger.BindingOf(r)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Repeat(string(rune('a'+i%6)), 40)
		if r.Run == "" {
			want = ""
		}
		if b.Manifest != want {
			t.Errorf("receipt %d (%s): bound to %q, want %q", i, r.ID, b.Manifest, want)
		}
	}
}
