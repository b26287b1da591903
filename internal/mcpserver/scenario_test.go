package mcpserver_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/probe"
	"github.com/readproof/readproof/receipts"
)

// TestTryIt runs the seed's "Try it" sequence through one MCP session:
// list, read, tag and read @prod, edit the source and read both, the run
// trio, diff, replay and export, then checks the CLI sees the same record.
// It keeps the real `readproof mcp` subprocess (docs/README-mcp.md says so).
func TestTryIt(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.start(t)
	const v30, v14 = "Products can be refunded within 30 days.\n", "Products can be refunded within 14 days.\n"

	// 1. List the resources.
	rl := s.ok(t, "readproof_resources_list", nil)
	if num(t, rl, "count") != 1 || str(t, obj(t, list(t, rl["resources"])[0]), "uri") != refundsURI {
		t.Fatalf("1. list: %s", jsonOf(rl))
	}
	// 2. Read it: a snapshot is recorded.
	c := s.read(t, refundsURI)
	if c.Text != v30 || c.Meta["decision"] != "fetch" {
		t.Fatalf("2. read: %s", jsonOf(c))
	}
	first := c.Meta["snapshot"].(string)
	// 3. Tag that snapshot as prod, then read @prod.
	ts := s.ok(t, "readproof_tag_set", map[string]any{"uri": refundsURI, "tag": "prod"})
	if str(t, ts, "snapshot") != first {
		t.Fatalf("3. tag_set: %s", jsonOf(ts))
	}
	if c = s.read(t, refundsURI+"@prod"); c.Text != v30 || c.Meta["decision"] != "use_tag" {
		t.Fatalf("3. read @prod: %s", jsonOf(c))
	}
	// 4. Edit the document: the plain read changes, @prod does not.
	p.write(t, "policies/refunds.md", v14)
	if c = s.read(t, refundsURI); c.Text != v14 || c.Meta["decision"] != "fetch" || c.Meta["snapshot"] == first {
		t.Fatalf("4. read after edit: %s", jsonOf(c))
	}
	if c = s.read(t, refundsURI+"@prod"); c.Text != v30 || c.Meta["decision"] != "use_tag" || c.Meta["ref"] != "prod" || c.Meta["snapshot"] != first {
		t.Fatalf("4. @prod after edit: %s", jsonOf(c))
	}
	// 5. The run trio: demo-1 reads what @prod says, demo-2 the live text.
	s.ok(t, "readproof_run_start", map[string]any{"run_id": "demo-1"})
	if m := s.ok(t, "readproof_run_mount", map[string]any{"run_id": "demo-1", "uri": refundsURI + "@prod"}); str(t, m, "content") != v30 {
		t.Fatalf("5. mount @prod: %s", jsonOf(m))
	}
	id1 := str(t, s.ok(t, "readproof_run_commit", map[string]any{"run_id": "demo-1"}), "manifest_id")
	s.ok(t, "readproof_run_start", map[string]any{"run_id": "demo-2"})
	s.ok(t, "readproof_run_mount", map[string]any{"run_id": "demo-2", "uri": refundsURI})
	id2 := str(t, s.ok(t, "readproof_run_commit", map[string]any{"run_id": "demo-2"}), "manifest_id")
	// 6. Diff: what changed and why.
	df := s.ok(t, "readproof_diff", map[string]any{"a": "demo-1", "b": "demo-2"})
	ch := obj(t, list(t, df["changes"])[0])
	if str(t, df, "a") != id1 || str(t, df, "b") != id2 || str(t, ch, "kind") != "changed" {
		t.Fatalf("6. diff: %s", jsonOf(df))
	}
	mustContain(t, "6. why", str(t, ch, "why"), "source revision", "observed", "ref @prod → (none)")
	mustContain(t, "6. unified", str(t, ch, "unified"), "-Products can be refunded within 30 days.", "+Products can be refunded within 14 days.")
	// 7. Replay demo-1 and export its evidence.
	rp := s.ok(t, "readproof_replay", map[string]any{"target": "demo-1", "include_content": true})
	if rp["all_match"] != true || str(t, obj(t, list(t, rp["entries"])[0]), "content") != v30 {
		t.Fatalf("7. replay: %s", jsonOf(rp))
	}
	ev := s.ok(t, "readproof_evidence_export", map[string]any{"target": "demo-1", "with_content": true})
	if str(t, ev, "manifest_id") != id1 || !strings.Contains(str(t, ev, "bundle"), base64.StdEncoding.EncodeToString([]byte(v30))) {
		t.Errorf("7. export: %s", tail([]byte(jsonOf(ev))))
	}
	bundlePath := filepath.Join(t.TempDir(), "demo-1.json")
	if err := os.WriteFile(bundlePath, []byte(str(t, ev, "bundle")), 0o644); err != nil {
		t.Fatal(err)
	}

	// Everything is reproducible from the CLI against the same store.
	var m struct {
		ManifestID string `json:"manifest_id"`
	}
	if err := json.Unmarshal([]byte(p.cli(t, "--json", "manifest", "demo-1")), &m); err != nil || m.ManifestID != id1 {
		t.Errorf("readproof manifest demo-1: %+v %v", m, err)
	}
	if out := p.cli(t, "replay", "demo-1"); out != v30 {
		t.Errorf("readproof replay demo-1: %q", out)
	}
	if out := p.cli(t, "get", refundsURI+"@prod"); out != v30 {
		t.Errorf("readproof get @prod: %q", out)
	}
	p.cli(t, "evidence", "verify", bundlePath)
}

// receiptsProject is the demo with a receipts key (and a probe key)
// outside the project.
func receiptsProject(t *testing.T) (*project, string) {
	t.Helper()
	keyDir := t.TempDir()
	key := filepath.Join(keyDir, "receipts.key")
	if err := receipts.CreateKey(key); err != nil {
		t.Fatal(err)
	}
	probeKey := filepath.Join(keyDir, "probe.key")
	if err := probe.CreateKeyFile(probeKey); err != nil {
		t.Fatal(err)
	}
	p := newProject(t, "version = 1\n\n[receipts]\nkey = \""+key+"\"\n\n[probe]\nkey = \""+probeKey+"\"\n\n[[resource]]\nuri = \""+refundsURI+"\"\n"+
		"source = { type = \"filesystem\", path = \"policies/refunds.md\" }\n",
		map[string]string{"policies/refunds.md": "Products can be refunded within 30 days.\n"})
	return p, key
}

func TestToolReceipts(t *testing.T) {
	t.Parallel()
	p, keyPath := receiptsProject(t)
	s := p.start(t, "--session", "agent-7")
	mustContain(t, "instructions", s.cs.InitializeResult().Instructions, "Tool receipts are on (session agent-7)")
	key, err := receipts.LoadKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}

	type callRec struct {
		tool   string
		args   map[string]any
		res    *mcp.CallToolResult
		run    string
		failed bool
	}
	var calls []callRec
	do := func(tool string, args map[string]any, run string) *mcp.CallToolResult {
		res := s.call(t, tool, args)
		calls = append(calls, callRec{tool, args, res, run, res.IsError})
		return res
	}
	do("readproof_resources_list", map[string]any{}, "")
	do("readproof_resolve", map[string]any{"uri": refundsURI}, "")
	do("readproof_run_start", map[string]any{"run_id": "r1"}, "r1")
	do("readproof_run_mount", map[string]any{"run_id": "r1", "uri": refundsURI}, "r1")
	do("readproof_run_commit", map[string]any{"run_id": "r1"}, "r1")
	do("readproof_run_mount", map[string]any{"run_id": "nope", "uri": refundsURI}, "nope")
	do("readproof_replay", map[string]any{"target": "r1", "include_content": true}, "r1")

	g, err := gitstore.Open(p.store)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ledger := receipts.NewLedger(g)
	var ids []string
	for _, c := range calls {
		var id string
		if c.failed {
			if c.res.StructuredContent != nil {
				t.Errorf("%s: error with structured content", c.tool)
			}
			i := strings.Index(text(c.res), "receipt: rcpt_")
			if i < 0 {
				t.Errorf("%s failed without naming its receipt: %s", c.tool, text(c.res))
				continue
			}
			id = strings.Fields(text(c.res)[i+len("receipt: "):])[0]
		} else {
			sc := obj(t, c.res.StructuredContent)
			id = str(t, sc, "receipt_id")
			if c.res.Meta["receipt_id"] != id || !strings.Contains(text(c.res), "Receipt: "+id) {
				t.Errorf("%s: receipt id %s not in _meta and text: %s / %s", c.tool, id, jsonOf(c.res.Meta), text(c.res))
			}
			// The receipt hashes the structured content without the
			// receipt members.
			delete(sc, "receipt_id")
			raw, _ := json.Marshal(sc)
			canon, err := receipts.Canonicalize(raw)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ledger.Get(id)
			if err != nil {
				t.Fatalf("%s: receipt %s: %v", c.tool, id, err)
			}
			if r.ResultSHA256 != receipts.BytesResult(canon).SHA256() {
				t.Errorf("%s: result hash does not cover the structured content", c.tool)
			}
		}
		if !receipts.ValidID(id) {
			t.Fatalf("%s: receipt id %q", c.tool, id)
		}
		r, err := ledger.Get(id)
		if err != nil {
			t.Fatalf("%s: receipt %s: %v", c.tool, id, err)
		}
		if err := receipts.Verify(r, key); err != nil {
			t.Errorf("%s: receipt does not verify: %v", c.tool, err)
		}
		argsJSON, _ := json.Marshal(c.args)
		want, _ := receipts.JSONArgs(argsJSON)
		if r.Tool != c.tool || r.Session != "agent-7" || r.Run != c.run || r.ArgsSHA256 != want.SHA256() {
			t.Errorf("%s: receipt %+v", c.tool, r)
		}
		if c.failed != (r.Error != "") {
			t.Errorf("%s: failed %v, receipt error %q", c.tool, c.failed, r.Error)
		}
		ids = append(ids, id)
	}

	// The agent cites two real receipts and one it made up.
	fake := "rcpt_" + strings.Repeat("a", 32)
	claims := "Manifest r1; receipts " + ids[3] + " and " + ids[4] + ", also " + fake + "."
	rep := s.ok(t, "readproof_receipts_verify_claims", map[string]any{"claims": claims})
	counts := obj(t, rep["counts"])
	if num(t, counts, "claims") != 3 || num(t, counts, "valid") != 2 || num(t, counts, "fabricated") != 1 ||
		num(t, counts, "omitted") != int64(len(ids)-2) || rep["strict_fail"] != true || str(t, rep, "session") != "agent-7" {
		t.Errorf("verify claims: %s", jsonOf(rep))
	}
	// Another session's view: the same ids are other_session.
	rep = s.ok(t, "readproof_receipts_verify_claims", map[string]any{"claims": `["` + ids[0] + `"]`, "session": "someone-else"})
	if v := str(t, obj(t, list(t, rep["claims"])[0]), "verdict"); v != "other_session" {
		t.Errorf("claim from another session: %s", v)
	}
}

func TestProbeOverMCP(t *testing.T) {
	t.Parallel()
	p, keyPath := receiptsProject(t)
	// receipts on, as `readproof mcp` has them with this policy
	key, err := receipts.LoadKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	s := p.serveWith(t, mcpserver.Options{ReceiptKey: key, Session: "probe-1"})
	s.ok(t, "readproof_run_start", map[string]any{"run_id": "pr"})
	m := s.ok(t, "readproof_run_mount", map[string]any{"run_id": "pr", "uri": refundsURI, "probe": true})
	content := str(t, m, "content")
	if !strings.HasPrefix(content, "Products can be refunded within 30 days.\n") || !strings.Contains(content, probe.ProbeLinePrefix) || m["probe"] == nil {
		t.Fatalf("probed mount: %s", jsonOf(m))
	}
	sentinels := probe.FindSentinels(content)
	if len(sentinels) != 1 {
		t.Fatalf("sentinels in the delivered text: %v", sentinels)
	}
	s.ok(t, "readproof_run_commit", map[string]any{"run_id": "pr"})
	rep := s.ok(t, "readproof_probe_check", map[string]any{"target": "pr", "answer": "30 days. Probe: " + sentinels[0]})
	entries := list(t, obj(t, rep["report"])["entries"])
	if len(entries) != 1 || str(t, obj(t, entries[0]), "verdict") != string(probe.ReadVerified) {
		t.Errorf("probe check: %s", jsonOf(rep))
	}
	rep = s.ok(t, "readproof_probe_check", map[string]any{"target": "pr", "answer": "30 days, I read it."})
	if v := str(t, obj(t, list(t, obj(t, rep["report"])["entries"])[0]), "verdict"); v == string(probe.ReadVerified) {
		t.Errorf("an answer without the sentinel was verified")
	}
	// The CLI sees the manifest with the probe record, and its verdicts.
	out := p.cli(t, "manifest", "pr")
	mustContain(t, "manifest pr", out, "proof")
}

func TestVerboseLogsToStderrOnly(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.start(t, "--verbose")
	s.fail(t, "readproof_run_mount", map[string]any{"run_id": "nope", "uri": refundsURI})
	s.ok(t, "readproof_resolve", map[string]any{"uri": refundsURI})
	s.stop(t)
	mustContain(t, "stderr", string(s.stderr.Bytes()), "serving store", "tool error", "unknown run")
}

func TestStartFailsWithoutStore(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	if err := os.RemoveAll(p.store); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := p.run("mcp")
	if err == nil || out != "" {
		t.Fatalf("mcp without a store: err %v, stdout %q", err, out)
	}
	mustContain(t, "stderr", errOut, "no readproof store", "hint: run `readproof init` first")
}
