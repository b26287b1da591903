package mcpserver_test

import (
	"testing"

	"github.com/readproof/readproof/probe"
)

// TestHTTPProbeCheckBelongsToTheRunsCaller: a proof-of-read check records
// the verdicts a run's manifest shows, so over HTTP only the token that
// ran the run may make one. Before, any write token's check of another's
// run was recorded: bob's "I did not read it." became alice's run's latest
// verdict, HALLUCINATED, over her READ_VERIFIED one.
func TestHTTPProbeCheckBelongsToTheRunsCaller(t *testing.T) {
	t.Parallel()
	p, _ := receiptsProject(t)
	alice, bob := p.token(t, "alice"), p.token(t, "bob")
	srv := p.serveHTTP(t)
	a, b := srv.connect(t, alice), srv.connect(t, bob)
	a.ok(t, "readproof_run_start", map[string]any{"run_id": "pr"})
	m := a.ok(t, "readproof_run_mount", map[string]any{"run_id": "pr", "uri": refundsURI, "probe": true})
	a.ok(t, "readproof_run_commit", map[string]any{"run_id": "pr"})
	sentinels := probe.FindSentinels(str(t, m, "content"))
	if len(sentinels) != 1 {
		t.Fatalf("sentinels: %v", sentinels)
	}
	refused := func() {
		t.Helper()
		mustContain(t, "probe check by bob", b.fail(t, "readproof_probe_check", map[string]any{"target": "pr", "answer": "I did not read it."}),
			`run pr was committed by caller "alice"`, `refused for caller "bob"`, "hint:")
	}
	refused()
	got := a.ok(t, "readproof_probe_check", map[string]any{"target": "pr", "answer": "30 days. Probe: " + sentinels[0]})
	if v := str(t, obj(t, list(t, obj(t, got["report"])["entries"])[0]), "verdict"); v != string(probe.ReadVerified) {
		t.Fatalf("alice's check: verdict %s: %s", v, jsonOf(got))
	}
	refused()
	// The run's manifest shows alice's one check, as she made it.
	por := obj(t, obj(t, a.ok(t, "readproof_manifest", map[string]any{"target": "pr"})["extra"])["proof_of_read"])
	if v := str(t, obj(t, list(t, por["entries"])[0]), "verdict"); v != string(probe.ReadVerified) || por["check"] != float64(1) {
		t.Fatalf("alice's manifest after bob's checks: %s", jsonOf(por))
	}
}

// TestHTTPMountRetryBelongsToTheRunsCaller: a mount that names its
// position (a retry) of another token's run is refused like any other
// mount of it. Before, when the position held the same document, bob got
// "Already mounted" and alice's entry, bytes included, as if the run were
// his.
func TestHTTPMountRetryBelongsToTheRunsCaller(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	alice, bob := p.token(t, "alice"), p.token(t, "bob")
	srv := p.serveHTTP(t)
	a, b := srv.connect(t, alice), srv.connect(t, bob)
	a.ok(t, "readproof_run_start", map[string]any{"run_id": "r1"})
	a.ok(t, "readproof_run_mount", map[string]any{"run_id": "r1", "uri": refundsURI, "position": 0})
	for _, pos := range []int{0, 1, 5} {
		mustContain(t, "retried mount by bob", b.fail(t, "readproof_run_mount", map[string]any{"run_id": "r1", "uri": refundsURI, "position": pos}),
			`run r1 was started by caller "alice"`, `refused for caller "bob"`)
	}
	// alice's own retry still answers with her entry
	got := a.ok(t, "readproof_run_mount", map[string]any{"run_id": "r1", "uri": refundsURI, "position": 0})
	if got["position"] != float64(0) {
		t.Fatalf("alice's retry: %s", jsonOf(got))
	}
}
