package mcpserver_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var allTools = []string{
	"readproof_resources_list", "readproof_resolve", "readproof_history", "readproof_run_start", "readproof_run_mount",
	"readproof_run_commit", "readproof_manifest", "readproof_diff", "readproof_replay", "readproof_tag_set",
	"readproof_tag_list", "readproof_tag_delete", "readproof_evidence_export",
	"readproof_probe_check", "readproof_receipts_verify_claims",
}

var readOnlyTools = map[string]bool{
	"readproof_resources_list": true, "readproof_history": true, "readproof_manifest": true, "readproof_diff": true,
	"readproof_replay": true, "readproof_tag_list": true, "readproof_evidence_export": true, "readproof_receipts_verify_claims": true,
}

// sideEffectReads read the source and may record a snapshot.
var sideEffectReads = map[string]bool{"readproof_resolve": true, "readproof_run_mount": true}

var hex40 = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}$`) })

func TestToolsSchemasAndAnnotations(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	res, err := s.cs.ListTools(ctxT(t), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		byName[tool.Name] = tool
	}
	want := append([]string(nil), allTools...)
	sort.Strings(want)
	sort.Strings(names)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("tools:\n got %v\nwant %v", names, want)
	}
	required := map[string][]string{
		"readproof_resources_list": nil, "readproof_resolve": {"uri"}, "readproof_history": {"uri"},
		"readproof_run_start": {"run_id"}, "readproof_run_mount": {"run_id", "uri"}, "readproof_run_commit": {"run_id"},
		"readproof_manifest": {"target"}, "readproof_diff": {"a", "b"}, "readproof_replay": {"target"},
		"readproof_tag_set": {"uri"}, "readproof_tag_list": {"uri"}, "readproof_tag_delete": {"uri"},
		"readproof_evidence_export": {"target"}, "readproof_probe_check": {"target", "answer"},
		"readproof_receipts_verify_claims": {"claims"},
	}
	optional := map[string][]string{
		"readproof_replay": {"include_content", "position", "offset", "max_bytes", "entry_offset", "entry_limit"}, "readproof_run_mount": {"probe", "position"},
		"readproof_manifest": {"entry_offset", "entry_limit"}, "readproof_diff": {"entry_offset", "entry_limit"},
		"readproof_tag_set": {"tag", "snapshot"}, "readproof_tag_delete": {"tag"}, "readproof_evidence_export": {"with_content"},
		"readproof_receipts_verify_claims": {"session"},
	}
	for _, name := range want {
		tool := byName[name]
		if tool.Description == "" {
			t.Errorf("%s: no description", name)
		}
		in := obj(t, tool.InputSchema)
		if in["type"] != "object" || in["additionalProperties"] != false {
			t.Errorf("%s: input schema %s", name, jsonOf(in))
		}
		props, _ := in["properties"].(map[string]any)
		var req []string
		if r, ok := in["required"].([]any); ok {
			for _, x := range r {
				req = append(req, x.(string))
			}
		}
		sort.Strings(req)
		wantReq := append([]string(nil), required[name]...)
		sort.Strings(wantReq)
		if strings.Join(req, ",") != strings.Join(wantReq, ",") {
			t.Errorf("%s: required %v, want %v", name, req, wantReq)
		}
		for _, k := range append(append([]string(nil), required[name]...), optional[name]...) {
			prop, ok := props[k].(map[string]any)
			if !ok {
				t.Errorf("%s: no input property %q", name, k)
				continue
			}
			if d, _ := prop["description"].(string); d == "" {
				t.Errorf("%s: input %q has no description", name, k)
			}
		}
		if len(props) != len(required[name])+len(optional[name]) {
			t.Errorf("%s: input properties %v", name, jsonOf(props))
		}
		out := obj(t, tool.OutputSchema)
		outProps := obj(t, out["properties"])
		if _, ok := outProps["receipt_id"]; !ok {
			t.Errorf("%s: output schema has no receipt_id", name)
		}
		a := tool.Annotations
		if a == nil {
			t.Errorf("%s: no annotations", name)
			continue
		}
		switch {
		case readOnlyTools[name]:
			if !a.ReadOnlyHint || !a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
				t.Errorf("%s: read-only tool annotated %s", name, jsonOf(a))
			}
		case sideEffectReads[name]:
			if a.ReadOnlyHint || a.OpenWorldHint == nil || !*a.OpenWorldHint || a.DestructiveHint == nil || *a.DestructiveHint {
				t.Errorf("%s: reading tool annotated %s", name, jsonOf(a))
			}
			mustContain(t, name+" description", tool.Description, "Side effect", "record a new snapshot")
		default:
			if a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint || a.DestructiveHint == nil {
				t.Errorf("%s: writing tool annotated %s", name, jsonOf(a))
			}
			if wantDestructive := name == "readproof_tag_delete"; *a.DestructiveHint != wantDestructive {
				t.Errorf("%s: destructiveHint %v", name, *a.DestructiveHint)
			}
		}
	}
	// Document outputs say how they were cut.
	for _, name := range []string{"readproof_resolve", "readproof_run_mount"} {
		props := obj(t, obj(t, byName[name].OutputSchema)["properties"])
		for _, k := range []string{"content", "content_b64", "encoding", "truncated", "total_bytes", "shown_bytes", "content_hash", "snapshot", "decision"} {
			if _, ok := props[k]; !ok {
				t.Errorf("%s: output schema lacks %q", name, k)
			}
		}
	}
}

// TestToolsValidAndInvalid calls every tool with valid arguments and with
// arguments it must refuse, checking results, errors and hints.
func TestToolsValidAndInvalid(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)

	// Schema violations are tool errors for every tool.
	for _, name := range allTools {
		msg := s.fail(t, name, map[string]any{"no_such_argument": 1})
		if msg == "" {
			t.Errorf("%s: empty error", name)
		}
	}
	// An unknown tool is a protocol error.
	if _, err := s.cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "readproof_nope", Arguments: map[string]any{}}); err == nil {
		t.Errorf("unknown tool: want a protocol error")
	}

	// readproof_resources_list
	rl := s.ok(t, "readproof_resources_list", nil)
	if num(t, rl, "count") != 1 {
		t.Fatalf("resources_list %s", jsonOf(rl))
	}
	item := obj(t, list(t, rl["resources"])[0])
	if str(t, item, "uri") != refundsURI || str(t, item, "description") != "filesystem · require_fresh — policies/refunds.md" ||
		str(t, item, "note") != "Refund policy" || str(t, obj(t, item["policy"]), "strategy") != "require_fresh" {
		t.Errorf("resources_list item %s", jsonOf(item))
	}

	// readproof_resolve
	d := s.ok(t, "readproof_resolve", map[string]any{"uri": refundsURI})
	if str(t, d, "content") != "Products can be refunded within 30 days.\n" || str(t, d, "encoding") != "text" ||
		str(t, d, "decision") != "fetch" || num(t, d, "total_bytes") != 41 || num(t, d, "shown_bytes") != 41 || d["truncated"] != false ||
		!hex40().MatchString(str(t, d, "snapshot")) || str(t, d, "content_hash") != "sha256:c8b0bb212e93151d720746e36ff3b7076727cb577614feafa0d61f168965aedb" {
		t.Errorf("resolve %s", jsonOf(d))
	}
	snap := str(t, d, "snapshot")
	msg := s.fail(t, "readproof_resolve", map[string]any{"uri": "readproof://demo/policies/nope"})
	mustContain(t, "resolve unknown", msg, "not registered", "register it: `readproof resource add readproof://demo/policies/nope", "(an operator's command: no tool does this)")
	msg = s.fail(t, "readproof_resolve", map[string]any{"uri": "https://example.com/x"})
	mustContain(t, "resolve bad uri", msg, "hint: resource URIs look like readproof://")
	s.fail(t, "readproof_resolve", map[string]any{})
	msg = s.fail(t, "readproof_resolve", map[string]any{"uri": refundsURI + "@nope"})
	mustContain(t, "resolve unknown tag", msg, "unknown tag", "hint: list the tags with: the tool readproof_tag_list (readproof://demo/policies/refunds)")

	// readproof_history
	h := s.ok(t, "readproof_history", map[string]any{"uri": refundsURI})
	snaps := list(t, h["snapshots"])
	if len(snaps) != 1 || str(t, obj(t, snaps[0]), "snapshot") != snap {
		t.Errorf("history %s", jsonOf(h))
	}
	mustContain(t, "history @tag", s.fail(t, "readproof_history", map[string]any{"uri": refundsURI + "@prod"}), "without @tag")
	mustContain(t, "history unknown", s.fail(t, "readproof_history", map[string]any{"uri": "readproof://demo/x"}), "not registered")

	// readproof_run_start
	r := s.ok(t, "readproof_run_start", map[string]any{"run_id": "run-a"})
	if str(t, r, "run_id") != "run-a" || r["open"] != true {
		t.Errorf("run_start %s", jsonOf(r))
	}
	mustContain(t, "run_start twice", s.fail(t, "readproof_run_start", map[string]any{"run_id": "run-a"}), "already open", "hint:")
	mustContain(t, "run_start bad id", s.fail(t, "readproof_run_start", map[string]any{"run_id": "../x"}), "hint: run ids are")
	s.fail(t, "readproof_run_start", map[string]any{"run_id": 7})

	// readproof_run_mount
	m := s.ok(t, "readproof_run_mount", map[string]any{"run_id": "run-a", "uri": refundsURI})
	if num(t, m, "position") != 0 || str(t, m, "run_id") != "run-a" || str(t, m, "content") != "Products can be refunded within 30 days.\n" {
		t.Errorf("run_mount %s", jsonOf(m))
	}
	mustContain(t, "mount unknown run", s.fail(t, "readproof_run_mount", map[string]any{"run_id": "run-x", "uri": refundsURI}),
		"unknown run", "hint: start it first")
	mustContain(t, "mount unknown uri", s.fail(t, "readproof_run_mount", map[string]any{"run_id": "run-a", "uri": "readproof://demo/x"}), "not registered")
	// Without a probe key configured, a probed mount says what to do.
	mustContain(t, "probed mount without key", s.fail(t, "readproof_run_mount", map[string]any{"run_id": "run-a", "uri": refundsURI, "probe": true}), "hint:")

	// readproof_run_commit
	c := s.ok(t, "readproof_run_commit", map[string]any{"run_id": "run-a"})
	id := str(t, c, "manifest_id")
	if !hex40().MatchString(id) || num(t, c, "entries") != 1 {
		t.Fatalf("run_commit %s", jsonOf(c))
	}
	var cliManifest struct {
		ManifestID string `json:"manifest_id"`
		RunID      string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(p.cli(t, "--json", "manifest", "run-a")), &cliManifest); err != nil || cliManifest.ManifestID != id {
		t.Errorf("readproof manifest run-a: %+v %v, want %s", cliManifest, err, id)
	}
	mustContain(t, "commit twice", s.fail(t, "readproof_run_commit", map[string]any{"run_id": "run-a"}), "already committed")
	mustContain(t, "commit unknown", s.fail(t, "readproof_run_commit", map[string]any{"run_id": "run-x"}), "unknown run")

	// readproof_manifest by run id and by manifest id
	for _, target := range []string{"run-a", id} {
		mf := s.ok(t, "readproof_manifest", map[string]any{"target": target})
		entries := list(t, mf["entries"])
		if str(t, mf, "manifest_id") != id || str(t, mf, "run_id") != "run-a" || len(entries) != 1 ||
			str(t, obj(t, entries[0]), "snapshot") != snap || str(t, obj(t, entries[0]), "file") != "content/demo/policies/refunds" {
			t.Errorf("manifest %s: %s", target, jsonOf(mf))
		}
	}
	mustContain(t, "manifest unknown", s.fail(t, "readproof_manifest", map[string]any{"target": "run-x"}), "no such run", "hint:")
	mustContain(t, "manifest unknown id", s.fail(t, "readproof_manifest", map[string]any{"target": strings.Repeat("1", 40)}), "no such run")

	// A second run over changed bytes, for diff.
	p.write(t, "policies/refunds.md", "Products can be refunded within 14 days.\n")
	s.ok(t, "readproof_run_start", map[string]any{"run_id": "run-b"})
	s.ok(t, "readproof_run_mount", map[string]any{"run_id": "run-b", "uri": refundsURI})
	s.ok(t, "readproof_run_commit", map[string]any{"run_id": "run-b"})

	// readproof_diff
	df := s.ok(t, "readproof_diff", map[string]any{"a": "run-a", "b": "run-b"})
	counts := obj(t, df["counts"])
	ch := obj(t, list(t, df["changes"])[0])
	if num(t, counts, "changed") != 1 || str(t, ch, "kind") != "changed" || str(t, df, "a") != id {
		t.Errorf("diff %s", jsonOf(df))
	}
	mustContain(t, "diff why", str(t, ch, "why"), "source revision", "observed")
	mustContain(t, "diff unified", str(t, ch, "unified"), "-Products can be refunded within 30 days.", "+Products can be refunded within 14 days.")
	mustContain(t, "diff unknown", s.fail(t, "readproof_diff", map[string]any{"a": "run-a", "b": "run-x"}), "no such run")
	s.fail(t, "readproof_diff", map[string]any{"a": "run-a"})

	// readproof_replay
	rp := s.ok(t, "readproof_replay", map[string]any{"target": "run-a"})
	re := obj(t, list(t, rp["entries"])[0])
	if rp["all_match"] != true || num(t, rp, "matched") != 1 || re["match"] != true || re["content"] != nil {
		t.Errorf("replay %s", jsonOf(rp))
	}
	rp = s.ok(t, "readproof_replay", map[string]any{"target": "run-a", "include_content": true})
	re = obj(t, list(t, rp["entries"])[0])
	if str(t, re, "content") != "Products can be refunded within 30 days.\n" || re["complete"] != true || rp["truncated"] != false {
		t.Errorf("replay include_content %s", jsonOf(rp))
	}
	mustContain(t, "replay offset without content", s.fail(t, "readproof_replay", map[string]any{"target": "run-a", "offset": 3}), "hint: set include_content")
	mustContain(t, "replay position", s.fail(t, "readproof_replay", map[string]any{"target": "run-a", "include_content": true, "position": 5}), "no entry at position 5")
	mustContain(t, "replay negative", s.fail(t, "readproof_replay", map[string]any{"target": "run-a", "include_content": true, "offset": -1}), "negative")
	mustContain(t, "replay unknown", s.fail(t, "readproof_replay", map[string]any{"target": "run-x"}), "no such run")

	// readproof_tag_set, both spellings; list; delete
	ts := s.ok(t, "readproof_tag_set", map[string]any{"uri": refundsURI, "tag": "prod", "snapshot": snap[:8]})
	if str(t, ts, "reference") != refundsURI+"@prod" || str(t, ts, "snapshot") != snap {
		t.Errorf("tag_set %s", jsonOf(ts))
	}
	ts = s.ok(t, "readproof_tag_set", map[string]any{"uri": refundsURI + "@latest"})
	if str(t, ts, "tag") != "latest" || str(t, ts, "snapshot") == snap {
		t.Errorf("tag_set uri@tag (current snapshot) %s", jsonOf(ts))
	}
	mustContain(t, "tag_set conflict", s.fail(t, "readproof_tag_set", map[string]any{"uri": refundsURI + "@a", "tag": "b"}), "hint: give the tag once")
	mustContain(t, "tag_set no tag", s.fail(t, "readproof_tag_set", map[string]any{"uri": refundsURI}), "no tag given")
	mustContain(t, "tag_set bad tag", s.fail(t, "readproof_tag_set", map[string]any{"uri": refundsURI, "tag": "-bad"}), "hint: tag names")
	mustContain(t, "tag_set unknown snapshot", s.fail(t, "readproof_tag_set", map[string]any{"uri": refundsURI, "tag": "x", "snapshot": "ffffffff"}), "no snapshot")
	tl := s.ok(t, "readproof_tag_list", map[string]any{"uri": refundsURI})
	tags := list(t, tl["tags"])
	if len(tags) != 2 || str(t, obj(t, tags[0]), "reference") != refundsURI+"@latest" || str(t, obj(t, tags[1]), "snapshot") != snap {
		t.Errorf("tag_list %s", jsonOf(tl))
	}
	mustContain(t, "tag_list with tag", s.fail(t, "readproof_tag_list", map[string]any{"uri": refundsURI + "@prod"}), "without @tag")
	td := s.ok(t, "readproof_tag_delete", map[string]any{"uri": refundsURI, "tag": "latest"})
	if td["deleted"] != true || str(t, td, "reference") != refundsURI+"@latest" {
		t.Errorf("tag_delete %s", jsonOf(td))
	}
	mustContain(t, "tag_delete again", s.fail(t, "readproof_tag_delete", map[string]any{"uri": refundsURI + "@latest"}), "unknown tag")
	if got := str(t, s.ok(t, "readproof_resolve", map[string]any{"uri": refundsURI + "@prod"}), "content"); got != "Products can be refunded within 30 days.\n" {
		t.Errorf("@prod after tag_delete of another tag: %q", got)
	}

	// readproof_evidence_export: the bundle `readproof evidence export` writes.
	ev := s.ok(t, "readproof_evidence_export", map[string]any{"target": "run-a", "with_content": true})
	var bundle struct {
		Type      string `json:"_type"`
		Predicate struct {
			ManifestID string `json:"manifest_id"`
			Merkle     struct {
				Root string `json:"root"`
			} `json:"merkle"`
			Entries []struct {
				ContentB64 string `json:"content_b64"`
			} `json:"entries"`
		} `json:"predicate"`
	}
	if err := json.Unmarshal([]byte(str(t, ev, "bundle")), &bundle); err != nil {
		t.Fatalf("bundle is not JSON: %v", err)
	}
	sum := sha256.Sum256([]byte(str(t, ev, "bundle")))
	if bundle.Predicate.ManifestID != id || str(t, ev, "manifest_id") != id || str(t, ev, "merkle_root") != bundle.Predicate.Merkle.Root ||
		len(bundle.Predicate.Entries) != 1 || bundle.Predicate.Entries[0].ContentB64 == "" || num(t, ev, "bundle_bytes") != int64(len(str(t, ev, "bundle"))) ||
		str(t, ev, "bundle_sha256") != hex.EncodeToString(sum[:]) {
		t.Errorf("evidence export %s", tail([]byte(jsonOf(ev))))
	}
	var cliBundle struct {
		Predicate struct {
			Merkle struct {
				Root string `json:"root"`
			} `json:"merkle"`
		} `json:"predicate"`
	}
	if err := json.Unmarshal([]byte(p.cli(t, "evidence", "export", "run-a", "--with-content")), &cliBundle); err != nil || cliBundle.Predicate.Merkle.Root != bundle.Predicate.Merkle.Root {
		t.Errorf("the CLI's bundle has Merkle root %q, the tool's %q (%v)", cliBundle.Predicate.Merkle.Root, bundle.Predicate.Merkle.Root, err)
	}
	// The tool's bundle verifies with the CLI.
	bundlePath := filepath.Join(t.TempDir(), "bundle.json")
	if err := os.WriteFile(bundlePath, []byte(str(t, ev, "bundle")), 0o644); err != nil {
		t.Fatal(err)
	}
	p.cli(t, "evidence", "verify", bundlePath)
	mustContain(t, "evidence unknown", s.fail(t, "readproof_evidence_export", map[string]any{"target": "run-x"}), "run-x", "hint:")

	// readproof_receipts_verify_claims without receipts configured.
	mustContain(t, "verify claims", s.fail(t, "readproof_receipts_verify_claims", map[string]any{"claims": "rcpt_x"}),
		"not configured", "hint: the operator sets [receipts] key", "`readproof receipts key init` (an operator's command: no tool does this)")

	// readproof_probe_check: a run without probed entries.
	mustContain(t, "probe check", s.fail(t, "readproof_probe_check", map[string]any{"target": "run-a", "answer": "30 days"}),
		"no probed entries", "hint:")
	mustContain(t, "probe check unknown", s.fail(t, "readproof_probe_check", map[string]any{"target": "run-x", "answer": "x"}), "no such run")
}
