package commands

// Issue 17, acceptance 3: `readproof run --id` with TRACEPARENT and an OTLP
// endpoint in its environment exports its command span, as a child of the
// caller's span, to a receiver on 127.0.0.1 that decodes the protobuf with
// the generated OTLP types; no exported value holds document bytes or a
// secret planted in the environment, a source's header or a document.
//
// These tests live here rather than beside main.go because the generated
// OTLP types link protobuf, whose package initialisation would otherwise run
// in every `exec readproof` of the root package's scripts (about 1,400
// processes); this package's test binary runs itself as readproof
// (main_test.go) for the few processes these tests start.

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver collects what exporters post to /v1/traces.
type otlpReceiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []*tracepb.TracesData
	headers  []http.Header
	problems []string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		fail := func(s string) {
			r.problems = append(r.problems, s)
			http.Error(w, s, http.StatusBadRequest)
		}
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
			fail(req.Method + " " + req.URL.Path)
			return
		}
		if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			fail("content type " + ct)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				fail(err.Error())
				return
			}
			body = zr
		}
		data, err := io.ReadAll(body)
		if err != nil {
			fail(err.Error())
			return
		}
		// An ExportTraceServiceRequest has the wire form of TracesData
		// (field 1: repeated ResourceSpans); decoding it as TracesData keeps
		// the collector package, and the gRPC it pulls in, out of this test
		// binary.
		var msg tracepb.TracesData
		if err := proto.Unmarshal(data, &msg); err != nil {
			fail("protobuf: " + err.Error())
			return
		}
		r.requests = append(r.requests, &msg)
		r.headers = append(r.headers, req.Header.Clone())
		// an empty ExportTraceServiceResponse is zero bytes
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// spans returns every span received, with its resource's attributes.
func (r *otlpReceiver) spans() (spans []*tracepb.Span, resources [][]*commonpb.KeyValue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, req := range r.requests {
		for _, rs := range req.ResourceSpans {
			resources = append(resources, rs.GetResource().GetAttributes())
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
	}
	return spans, resources
}

func attrString(kvs []*commonpb.KeyValue, key string) (string, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.GetValue().GetStringValue(), true
		}
	}
	return "", false
}

// attrValues lists every string an attribute holds (keys and values, into
// arrays and maps, numbers spelled out).
func attrValues(kvs []*commonpb.KeyValue) []string {
	var out []string
	var walk func(v *commonpb.AnyValue)
	walk = func(v *commonpb.AnyValue) {
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out = append(out, x.StringValue)
		case *commonpb.AnyValue_BytesValue:
			out = append(out, string(x.BytesValue))
		case *commonpb.AnyValue_ArrayValue:
			for _, e := range x.ArrayValue.Values {
				walk(e)
			}
		case *commonpb.AnyValue_KvlistValue:
			for _, kv := range x.KvlistValue.Values {
				out = append(out, kv.Key)
				walk(kv.Value)
			}
		default:
			out = append(out, v.String())
		}
	}
	for _, kv := range kvs {
		out = append(out, kv.Key)
		walk(kv.Value)
	}
	return out
}

// readproofCmd runs the test binary as `readproof` (TestMain in
// main_test.go dispatches on the name) in dir with exactly env.
func readproofCmd(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "readproof")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

func TestOTelRunExportsCommandSpan(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	const (
		sourceToken = "tok-otel-7d1e5c0b9a2f4e8d"     // a source's Authorization header, from the environment
		otlpToken   = "otlp-hdr-3c9f0a6b2e7d41a5"     // OTEL_EXPORTER_OTLP_HEADERS value
		envSecret   = "env-secret-58b2f1d0c4e9a7b3"   // an unrelated variable
		docSecret   = "doc-sentinel-a61f09c3e8b27d54" // inside the http document
		fsSecret    = "fs-sentinel-0e4d7b2a9c31f865"  // inside the file document
		traceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
		parentID    = "00f067aa0ba902b7"
	)
	docHTTP := "# Refunds\nRefunds within 30 days. " + docSecret + "\n"
	docFS := "Shipping takes five days; " + fsSecret + "\n"
	var authSeen atomic.Bool
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+sourceToken {
			authSeen.Store(true)
		}
		w.Header().Set("Content-Type", "text/markdown")
		io.WriteString(w, docHTTP)
	}))
	defer src.Close()
	recv := newOTLPReceiver(t)

	dir := t.TempDir()
	policy := `version = 1
[sources]
env = ["OTEL_TEST_SOURCE_TOKEN"]
[network]
allow_cidrs = ["127.0.0.1/32"]

[[resource]]
uri = "readproof://web/refunds"
source = { type = "http", url = "` + src.URL + `/refunds.md?key=` + envSecret + `", headers = { Authorization = "Bearer ${OTEL_TEST_SOURCE_TOKEN}" } }

[[resource]]
uri = "readproof://docs/shipping"
source = { type = "filesystem", path = "shipping.md" }
`
	if err := os.WriteFile(filepath.Join(dir, "readproof.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shipping.md"), []byte(docFS), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{
		"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"OTEL_TEST_SOURCE_TOKEN=" + sourceToken, "OTEL_TEST_UNRELATED_SECRET=" + envSecret,
	}
	if _, stderr, err := readproofCmd(t, dir, base, "init"); err != nil {
		t.Fatalf("init: %v\n%s", err, stderr)
	}

	env := append(append([]string(nil), base...),
		"TRACEPARENT=00-"+traceID+"-"+parentID+"-01",
		"TRACESTATE=rp=t61rcWkgMzE",
		"OTEL_EXPORTER_OTLP_ENDPOINT="+recv.srv.URL,
		"OTEL_EXPORTER_OTLP_HEADERS=x-otlp-key="+otlpToken,
		"OTEL_SERVICE_NAME=readproof-acceptance",
	)
	stdout, stderr, err := readproofCmd(t, dir, env, "run", "--json", "--id", "traced-run", "readproof://web/refunds", "readproof://docs/shipping")
	if err != nil {
		t.Fatalf("run --id: %v\n%s", err, stderr)
	}
	if strings.Contains(stderr, "telemetry") {
		t.Errorf("telemetry complained: %s", stderr)
	}
	var committed struct {
		ManifestID string `json:"manifest_id"`
	}
	if err := json.Unmarshal([]byte(stdout), &committed); err != nil || len(committed.ManifestID) != 40 {
		t.Fatalf("run --json printed %q (%v)", stdout, err)
	}
	if !authSeen.Load() {
		t.Fatal("the http source never saw the token: the secret was not exercised")
	}

	// The Merkle root as evidence export computes it.
	evOut, stderr, err := readproofCmd(t, dir, base, "evidence", "export", "traced-run")
	if err != nil {
		t.Fatalf("evidence export: %v\n%s", err, stderr)
	}
	root := regexp.MustCompile(`"root":\s*"([0-9a-f]{64})"`).FindStringSubmatch(evOut)
	if root == nil {
		t.Fatalf("no merkle root in the evidence:\n%s", evOut)
	}

	recv.mu.Lock()
	problems, headers := recv.problems, recv.headers
	recv.mu.Unlock()
	if len(problems) > 0 {
		t.Fatalf("the receiver refused exports: %v", problems)
	}
	if len(headers) == 0 {
		t.Fatal("nothing was exported")
	}
	for _, h := range headers {
		if h.Get("X-Otlp-Key") != otlpToken {
			t.Errorf("export without the OTEL_EXPORTER_OTLP_HEADERS header")
		}
	}

	spans, resources := recv.spans()
	t.Logf("spans: %v", spanNames(spans))
	byName := map[string][]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
		if got := hex.EncodeToString(s.TraceId); got != traceID {
			t.Errorf("span %s in trace %s, want the caller's %s", s.Name, got, traceID)
		}
	}
	if len(byName["run"]) != 1 {
		t.Fatalf("want one command span named run, got spans %v", spanNames(spans))
	}
	cmd := byName["run"][0]
	if got := hex.EncodeToString(cmd.ParentSpanId); got != parentID {
		t.Errorf("command span's parent %s, want TRACEPARENT's %s", got, parentID)
	}
	if cmd.TraceState != "rp=t61rcWkgMzE" {
		t.Errorf("command span's trace state %q, want TRACESTATE", cmd.TraceState)
	}
	if cmd.Flags&0x300 != 0x300 {
		t.Errorf("command span's flags %#x do not say its parent is remote", cmd.Flags)
	}
	for key, want := range map[string]string{
		"readproof.manifest_id": committed.ManifestID,
		"readproof.merkle_root": root[1],
		"readproof.command":     "run",
	} {
		if got, _ := attrString(cmd.Attributes, key); got != want {
			t.Errorf("command span %s = %q, want %q", key, got, want)
		}
	}
	if len(byName["readproof.resolve"]) != 2 || len(byName["readproof.commit"]) != 1 || len(byName["readproof.fetch"]) != 2 {
		t.Errorf("want 2 resolve, 2 fetch and 1 commit spans, got %v", spanNames(spans))
	}
	for _, s := range append(byName["readproof.resolve"], byName["readproof.commit"]...) {
		if !bytes.Equal(s.ParentSpanId, cmd.SpanId) {
			t.Errorf("span %s is not a child of the command span", s.Name)
		}
	}
	for _, s := range byName["readproof.resolve"] {
		// gen_ai.data_source.id names what was read, as Readproof v0.3.2's
		// resolve span did (the seed's Observability section): a query on it
		// finds CLI reads as well as MCP calls.
		uri, _ := attrString(s.Attributes, "readproof.uri")
		if got, _ := attrString(s.Attributes, "gen_ai.data_source.id"); uri == "" || got != uri {
			t.Errorf("resolve span of %q has gen_ai.data_source.id %q, want its URI", uri, got)
		}
		if got, _ := attrString(s.Attributes, "readproof.uri"); got == "readproof://web/refunds" {
			if src, _ := attrString(s.Attributes, "readproof.source"); !strings.Contains(src, "[REDACTED]") {
				t.Errorf("the http source is not redacted in its resolve span: %q", src)
			}
		}
	}
	if name, _ := attrString(resources[0], "service.name"); name != "readproof-acceptance" {
		t.Errorf("service.name %q, want OTEL_SERVICE_NAME", name)
	}

	// The manifest records the trace id.
	show, stderr, err := readproofCmd(t, dir, base, "manifest", "--json", "traced-run")
	if err != nil {
		t.Fatalf("manifest: %v\n%s", err, stderr)
	}
	blob, err := exec.Command("git", "--git-dir", filepath.Join(dir, ".readproof"), "show", committed.ManifestID+":manifest.json").Output()
	if err != nil {
		t.Fatalf("git show manifest.json: %v (manifest printed %s)", err, show)
	}
	if !bytes.Contains(blob, []byte(`"trace_id": "`+traceID+`"`)) {
		t.Errorf("manifest.json does not record the trace id:\n%s", blob)
	}

	// No exported string holds a secret or a document's bytes.
	forbidden := []string{sourceToken, otlpToken, envSecret, docSecret, fsSecret, "Refunds within 30 days", "Shipping takes five days"}
	// ... nor any value of the command's environment (except the service
	// name, the resource's name, and TRACESTATE, which W3C trace context
	// carries on every span by design).
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k != "OTEL_SERVICE_NAME" && k != "TRACESTATE" && len(v) >= 8 {
			forbidden = append(forbidden, v)
		}
	}
	all := exportedStrings(resources, spans)
	if len(all) < 20 {
		t.Fatalf("only %d exported strings: the scan would prove nothing", len(all))
	}
	noneHolds(t, all, forbidden)
}

// exportedStrings is every string an export carries: resource attributes,
// and each span's name, trace state, status message and attributes, its
// events' and its links'.
func exportedStrings(resources [][]*commonpb.KeyValue, spans []*tracepb.Span) []string {
	var all []string
	for _, kvs := range resources {
		all = append(all, attrValues(kvs)...)
	}
	for _, s := range spans {
		all = append(all, s.Name, s.TraceState, s.GetStatus().GetMessage())
		all = append(all, attrValues(s.Attributes)...)
		for _, ev := range s.Events {
			all = append(all, ev.Name)
			all = append(all, attrValues(ev.Attributes)...)
		}
		for _, l := range s.Links {
			all = append(all, l.TraceState)
			all = append(all, attrValues(l.Attributes)...)
		}
	}
	return all
}

// noneHolds fails t for each exported string that holds one of forbidden.
func noneHolds(t *testing.T, all, forbidden []string) {
	t.Helper()
	for _, v := range all {
		for _, f := range forbidden {
			if strings.Contains(v, f) {
				t.Errorf("an exported value holds %q: %q", f, v)
			}
		}
	}
}

func spanNames(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// TestOTelExecPassesTraceparent: `readproof exec` gives the command it runs
// a TRACEPARENT naming the exec span (exported, in the caller's trace);
// unconfigured, the command sees the TRACEPARENT readproof was given.
func TestOTelExecPassesTraceparent(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh")
	}
	const (
		traceID  = "0af7651916cd43dd8448eb211c80319c"
		parentID = "b7ad6b7169203331"
	)
	recv := newOTLPReceiver(t)
	dir, home := t.TempDir(), t.TempDir()
	base := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "TRACEPARENT=00-" + traceID + "-" + parentID + "-01"}
	for _, args := range [][]string{{"init"}, {"receipts", "key", "init"}} {
		if _, stderr, err := readproofCmd(t, dir, base, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
	}
	show := []string{"exec", "--session", "s1", "--", "sh", "-c", `echo "$TRACEPARENT"`}

	// Off: the incoming TRACEPARENT passes through unchanged.
	stdout, stderr, err := readproofCmd(t, dir, base, show...)
	if err != nil {
		t.Fatalf("exec: %v\n%s", err, stderr)
	}
	if got, want := strings.TrimSpace(stdout), "00-"+traceID+"-"+parentID+"-01"; got != want {
		t.Errorf("unconfigured: the command saw TRACEPARENT %q, want %q", got, want)
	}

	// On: the exec span's context.
	on := append(append([]string(nil), base...), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+recv.srv.URL+"/v1/traces")
	stdout, stderr, err = readproofCmd(t, dir, on, show...)
	if err != nil {
		t.Fatalf("exec: %v\n%s", err, stderr)
	}
	m := regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-01$`).FindStringSubmatch(strings.TrimSpace(stdout))
	if m == nil {
		t.Fatalf("the command saw TRACEPARENT %q", stdout)
	}
	spans, _ := recv.spans()
	var execSpan, cmdSpan *tracepb.Span
	for _, s := range spans {
		switch s.Name {
		case "readproof.exec":
			execSpan = s
		case "exec":
			cmdSpan = s
		}
	}
	if execSpan == nil || cmdSpan == nil {
		t.Fatalf("want the exec command span and its readproof.exec span, got %v", spanNames(spans))
	}
	if m[1] != traceID || m[2] != hex.EncodeToString(execSpan.SpanId) {
		t.Errorf("the command saw trace %s span %s, want trace %s span %s (readproof.exec)", m[1], m[2], traceID, hex.EncodeToString(execSpan.SpanId))
	}
	if !bytes.Equal(execSpan.ParentSpanId, cmdSpan.SpanId) || hex.EncodeToString(cmdSpan.ParentSpanId) != parentID {
		t.Errorf("spans not nested as caller > exec > readproof.exec")
	}
	if got, _ := attrString(execSpan.Attributes, "process.executable.name"); got != "sh" {
		t.Errorf("process.executable.name %q, want sh (never the arguments)", got)
	}
	if got, _ := attrString(cmdSpan.Attributes, "readproof.receipt_id"); !strings.HasPrefix(got, "rcpt_") {
		t.Errorf("the exec command span's readproof.receipt_id is %q", got)
	}
}

// TestOTelSyncSpans: push, pull and verify each export their span under the
// command span, in the caller's trace, with counts and the remote's name.
func TestOTelSyncSpans(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	const traceID = "5b8efff798038103d269b633813fc60c"
	recv := newOTLPReceiver(t)
	dir, home := t.TempDir(), t.TempDir()
	shared := filepath.Join(t.TempDir(), "shared.git")
	if out, err := exec.Command("git", "init", "--quiet", "--bare", "--initial-branch=main", shared).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "policy.md"), []byte("Refund within 30 days.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	on := append(append([]string(nil), base...), "TRACEPARENT=00-"+traceID+"-eee19b7ec3c1b174-01",
		"OTEL_EXPORTER_OTLP_ENDPOINT="+recv.srv.URL, "OTEL_EXPORTER_OTLP_COMPRESSION=gzip")
	for _, step := range []struct {
		env  []string
		args []string
	}{
		{base, []string{"init"}},
		{base, []string{"resource", "add", "readproof://demo/policy", "--source-type", "filesystem", "--path", "policy.md"}},
		{base, []string{"run", "--id", "a-1", "readproof://demo/policy"}},
		{base, []string{"remote", "add", "origin", shared}},
		{on, []string{"push", "origin"}},
		{on, []string{"pull", "origin"}},
		{on, []string{"verify"}},
	} {
		if _, stderr, err := readproofCmd(t, dir, step.env, step.args...); err != nil {
			t.Fatalf("%v: %v\n%s", step.args, err, stderr)
		}
	}
	spans, _ := recv.spans()
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	for cmd, child := range map[string]string{"push": "readproof.push", "pull": "readproof.pull", "verify": "readproof.verify"} {
		c, s := byName[cmd], byName[child]
		if c == nil || s == nil {
			t.Errorf("no %s command span or no %s span: got %v", cmd, child, spanNames(spans))
			continue
		}
		if !bytes.Equal(s.ParentSpanId, c.SpanId) || hex.EncodeToString(c.TraceId) != traceID {
			t.Errorf("%s is not a child of the %s command span in the caller's trace", child, cmd)
		}
	}
	if s := byName["readproof.push"]; s != nil {
		if got, _ := attrString(s.Attributes, "readproof.remote"); got != "origin" {
			t.Errorf("push span remote %q, want origin", got)
		}
		var runs int64 = -1
		for _, kv := range s.Attributes {
			if kv.Key == "readproof.runs" {
				runs = kv.GetValue().GetIntValue()
			}
		}
		if runs != 1 {
			t.Errorf("push span readproof.runs = %d, want 1", runs)
		}
	}
	if s := byName["readproof.verify"]; s != nil {
		if got, _ := attrString(s.Attributes, "readproof.verify.mode"); got == "" {
			t.Errorf("verify span without its mode")
		}
	}
}

// TestOTelOffRecordsTraceID: unconfigured, readproof exports nothing and
// prints nothing about telemetry, but a run started under TRACEPARENT
// records its trace id; without TRACEPARENT the manifest has no trace_id
// field at all.
func TestOTelOffRecordsTraceID(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "policy.md"), []byte("Refund within 30 days.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	traced := append(append([]string(nil), base...), "TRACEPARENT=00-6e0c63257de34c926f9efcd03927272e-f1e2d3c4b5a69788-01")
	for _, step := range []struct {
		env  []string
		args []string
	}{
		{base, []string{"init"}},
		{base, []string{"resource", "add", "readproof://demo/policy", "--source-type", "filesystem", "--path", "policy.md"}},
		{traced, []string{"run", "--id", "with-trace", "readproof://demo/policy"}},
		{base, []string{"run", "--id", "without", "readproof://demo/policy"}},
	} {
		_, stderr, err := readproofCmd(t, dir, step.env, step.args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", step.args, err, stderr)
		}
		if strings.Contains(stderr, "telemetry") {
			t.Errorf("%v: %s", step.args, stderr)
		}
	}
	show := func(run string) string {
		out, err := exec.Command("git", "--git-dir", filepath.Join(dir, ".readproof"), "show", "refs/tags/readproof/runs/"+run+":manifest.json").Output()
		if err != nil {
			t.Fatalf("git show %s: %v", run, err)
		}
		return string(out)
	}
	if m := show("with-trace"); !strings.Contains(m, `"trace_id": "6e0c63257de34c926f9efcd03927272e"`) {
		t.Errorf("the traced run's manifest has no trace id:\n%s", m)
	}
	if m := show("without"); strings.Contains(m, "trace_id") {
		t.Errorf("a run without a trace has a trace_id field:\n%s", m)
	}
	if out, _, err := readproofCmd(t, dir, base, "manifest", "with-trace"); err != nil || !strings.Contains(out, "\ntrace    6e0c63257de34c926f9efcd03927272e\n") {
		t.Errorf("manifest does not show the trace id (%v):\n%s", err, out)
	}
	if out, _, err := readproofCmd(t, dir, base, "manifest", "without"); err != nil || strings.Contains(out, "trace ") {
		t.Errorf("manifest shows a trace line for a run without one (%v):\n%s", err, out)
	}
	if _, stderr, err := readproofCmd(t, dir, base, "verify"); err != nil {
		t.Fatalf("verify: %v\n%s", err, stderr)
	}
}
