package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/mcpserver"
)

func TestInitializeInstructions(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	init := s.cs.InitializeResult()
	if init.ServerInfo == nil || init.ServerInfo.Name != "readproof" {
		t.Errorf("server info %+v", init.ServerInfo)
	}
	mustContain(t, "instructions", init.Instructions, "readproof://", "@", "readproof_run_start", "readproof_run_mount",
		"readproof_run_commit", "manifest id", "side effects")
	if init.Capabilities.Resources == nil || init.Capabilities.Tools == nil {
		t.Errorf("capabilities %+v: want resources and tools", init.Capabilities)
	}
	if caps, err := json.Marshal(init.Capabilities); err != nil || strings.Contains(string(caps), `"logging"`) {
		t.Errorf("capabilities %s advertise logging; diagnostics go to stderr", caps)
	}
}

func TestResourcesListLive(t *testing.T) {
	t.Parallel()
	p := newProject(t, `version = 1

[sources]
env = ["POLICY_TOKEN"]

[[resource]]
uri = "readproof://demo/policies/refunds"
description = "Refund policy"
source = { type = "filesystem", path = "policies/refunds.md" }

[[resource]]
uri = "readproof://demo/policies/shipping"
policy = "allow_stale"
max_age = "15m"
content_type = "text/markdown"
source = { type = "http", url = "https://policies.example/shipping.md?token=s3cr3t", headers = { Authorization = "Bearer ${POLICY_TOKEN}" } }
`, map[string]string{"policies/refunds.md": "Products can be refunded within 30 days.\n"})
	s := p.serve(t)
	ctx := ctxT(t)

	res, err := s.cs.ListResources(ctx, &mcp.ListResourcesParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 2 {
		t.Fatalf("%d resources: %s", len(res.Resources), jsonOf(res))
	}
	r := res.Resources[0]
	if r.URI != refundsURI || r.Name != "policies/refunds" || r.Title != refundsURI {
		t.Errorf("resource %s", jsonOf(r))
	}
	if r.Description != "filesystem · require_fresh — policies/refunds.md" {
		t.Errorf("description %q", r.Description)
	}
	if r.MIMEType != "" || r.Size != 0 || r.Meta["current_snapshot"] != "" {
		t.Errorf("a resource never read has no snapshot: %s", jsonOf(r))
	}
	for _, k := range []string{"namespace", "path", "source", "policy", "current_snapshot"} {
		if _, ok := r.Meta[k]; !ok {
			t.Errorf("_meta lacks %q: %s", k, jsonOf(r.Meta))
		}
	}
	if r.Meta["namespace"] != "demo" || r.Meta["path"] != "policies/refunds" {
		t.Errorf("_meta %s", jsonOf(r.Meta))
	}
	http := res.Resources[1]
	mustContain(t, "http description", http.Description, "http · allow_stale (max_age 15m) — https://policies.example/shipping.md")
	all := jsonOf(res)
	if strings.Contains(all, "s3cr3t") || strings.Contains(all, "Bearer") || !strings.Contains(all, "[REDACTED]") {
		t.Errorf("credentials leak into resources/list: %s", all)
	}

	// A read records a snapshot; the next list shows it.
	c := s.read(t, refundsURI)
	res, err = s.cs.ListResources(ctx, &mcp.ListResourcesParams{})
	if err != nil {
		t.Fatal(err)
	}
	r = res.Resources[0]
	if r.MIMEType != "text/markdown" || r.Size != 41 || r.Meta["current_snapshot"] != c.Meta["snapshot"] {
		t.Errorf("after a read: %s", jsonOf(r))
	}

	// Another process declares a resource: it is listed without a restart.
	p.write(t, "runbooks/oncall.md", "Page the on-call engineer.\n")
	p.cli(t, "resource", "add", "readproof://ops/runbooks/oncall", "--source-type", "filesystem", "--path", "runbooks/oncall.md")
	res, err = s.cs.ListResources(ctx, &mcp.ListResourcesParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 3 || res.Resources[2].URI != "readproof://ops/runbooks/oncall" {
		t.Fatalf("after resource add in another process: %s", jsonOf(res))
	}
	// ... and readable.
	if got := s.read(t, "readproof://ops/runbooks/oncall").Text; got != "Page the on-call engineer.\n" {
		t.Errorf("new resource reads %q", got)
	}
}

func TestResourceTemplates(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	res, err := s.cs.ListResourceTemplates(ctxT(t), &mcp.ListResourceTemplatesParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ResourceTemplates) != 1 || res.ResourceTemplates[0].URITemplate != "readproof://{namespace}/{+path}" {
		t.Fatalf("templates %s", jsonOf(res))
	}
}

func TestResourcesRead(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)

	c := s.read(t, refundsURI)
	if c.Text != "Products can be refunded within 30 days.\n" || c.Blob != nil {
		t.Fatalf("read %s", jsonOf(c))
	}
	if c.URI != refundsURI || c.MIMEType != "text/markdown" {
		t.Errorf("uri %q mime %q", c.URI, c.MIMEType)
	}
	want := map[string]any{
		"uri": refundsURI, "ref": "", "content_hash": "sha256:c8b0bb212e93151d720746e36ff3b7076727cb577614feafa0d61f168965aedb",
		"decision": "fetch", "bytes": float64(41), "content_type": "text/markdown", "truncated": false, "total_bytes": float64(41),
	}
	for k, v := range want {
		if c.Meta[k] != v {
			t.Errorf("_meta[%s] = %v, want %v", k, c.Meta[k], v)
		}
	}
	for _, k := range []string{"snapshot", "source_revision", "observed_at"} {
		if v, _ := c.Meta[k].(string); v == "" {
			t.Errorf("_meta[%s] missing: %s", k, jsonOf(c.Meta))
		}
	}
	snap := c.Meta["snapshot"].(string)

	// Tag it (CLI in another process), then read @prod.
	p.cli(t, "tag", "set", refundsURI, "prod")
	c = s.read(t, refundsURI+"@prod")
	if c.Text != "Products can be refunded within 30 days.\n" || c.Meta["decision"] != "use_tag" || c.Meta["ref"] != "prod" || c.Meta["snapshot"] != snap {
		t.Errorf("@prod read %s", jsonOf(c))
	}
	if c.URI != refundsURI+"@prod" {
		t.Errorf("@prod content uri %q", c.URI)
	}

	// Unknown URI, unknown tag, invalid URI: resource not found, saying
	// which (issue 15), in the message and as the data's reason.
	for uri, reason := range map[string]string{
		"readproof://demo/policies/nope": "not registered",
		refundsURI + "@staging":          "unknown tag",
		"readproof://demo/../etc":        "not a readproof URI",
		"file:///etc/passwd":             "not a readproof URI", // outside the template
	} {
		e := s.readErr(t, uri)
		if e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: code %d (%s), want %d", uri, e.Code, e.Message, jsonrpc.CodeInvalidParams)
		}
		if !strings.HasPrefix(e.Message, "Resource not found: "+reason+": ") || !strings.Contains(e.Message, "(hint: ") {
			t.Errorf("%s: message %q, want the reason %q and a hint", uri, e.Message, reason)
		}
		var data struct{ URI, Reason string }
		if err := json.Unmarshal(e.Data, &data); err != nil || data.URI != uri || data.Reason != reason {
			t.Errorf("%s: data %s (%v), want the URI and reason %q", uri, e.Data, err, reason)
		}
		if strings.Contains(e.Message, "readproof resource add") && !strings.Contains(e.Message, "an operator's command") {
			t.Errorf("%s: the hint names a CLI command as if the model could run it: %s", uri, e.Message)
		}
	}

	// A source that fails is an error with the reason, not "not found".
	if err := os.Remove(filepath.Join(p.dir, "policies/refunds.md")); err != nil {
		t.Fatal(err)
	}
	e := s.readErr(t, refundsURI)
	if e.Code == jsonrpc.CodeInvalidParams || !strings.Contains(e.Message, "refunds") {
		t.Errorf("missing source file: code %d message %q", e.Code, e.Message)
	}
	// @prod still reads from the store.
	if got := s.read(t, refundsURI+"@prod").Text; got != "Products can be refunded within 30 days.\n" {
		t.Errorf("@prod after the source is gone: %q", got)
	}
}

func TestResourcesTextOrBlob(t *testing.T) {
	t.Parallel()
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	latin1 := "caf\xe9\n"
	p := newProject(t, `version = 1

[[resource]]
uri = "readproof://t/json"
source = { type = "filesystem", path = "doc.json" }

[[resource]]
uri = "readproof://t/png"
source = { type = "filesystem", path = "img.png" }

[[resource]]
uri = "readproof://t/unknown-utf8"
content_type = "application/octet-stream"
source = { type = "filesystem", path = "notes.bin" }

[[resource]]
uri = "readproof://t/png-but-utf8"
content_type = "image/png"
source = { type = "filesystem", path = "fake.png" }

[[resource]]
uri = "readproof://t/latin1"
content_type = "text/plain"
source = { type = "filesystem", path = "latin1.txt" }

[[resource]]
uri = "readproof://t/vnd"
content_type = "application/vnd.api+json"
source = { type = "filesystem", path = "api.json" }

[[resource]]
uri = "readproof://t/empty"
source = { type = "filesystem", path = "empty.md" }
`, map[string]string{"empty.md": "",
		"doc.json": `{"a":1}`, "img.png": png, "notes.bin": "plain words ✓\n", "fake.png": "not really a png\n",
		"latin1.txt": latin1, "api.json": `{"data":[]}`,
	})
	s := p.serve(t)
	for _, tc := range []struct {
		uri  string
		text bool
		body string
	}{
		{"readproof://t/json", true, `{"a":1}`},
		{"readproof://t/png", false, png},
		{"readproof://t/unknown-utf8", true, "plain words ✓\n"},
		{"readproof://t/png-but-utf8", false, "not really a png\n"},
		{"readproof://t/latin1", false, latin1},
		{"readproof://t/vnd", true, `{"data":[]}`},
		{"readproof://t/empty", false, ""}, // sent as an empty blob: an empty "text" is dropped on the wire
	} {
		c := s.read(t, tc.uri)
		if tc.text {
			if c.Text != tc.body || c.Blob != nil {
				t.Errorf("%s: want text %q, got text %q blob %q", tc.uri, tc.body, c.Text, c.Blob)
			}
		} else if !bytes.Equal(c.Blob, []byte(tc.body)) || c.Text != "" || c.Blob == nil {
			t.Errorf("%s: want blob %q, got text %q blob %q", tc.uri, tc.body, c.Text, c.Blob)
		}
		if c.Meta["bytes"] != float64(len(tc.body)) {
			t.Errorf("%s: _meta bytes %v", tc.uri, c.Meta["bytes"])
		}
	}
}

func TestIsText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ct   string
		body string
		want bool
	}{
		{"text/markdown", "# hi", true},
		{"text/plain; charset=utf-8", "hi", true},
		{"application/json", "{}", true},
		{"application/ld+json", "{}", true},
		{"application/xml", "<a/>", true},
		{"application/atom+xml", "<a/>", true},
		{"application/yaml", "a: 1", true},
		{"application/octet-stream", "words", true},
		{"", "words", true},
		{"application/octet-stream", "\xff\xfe", false},
		{"text/plain", "\xff", false},
		{"image/png", "words", false},
		{"application/pdf", "%PDF-1.7", false},
		{"application/zip", "PK", false},
	} {
		if got := mcpserver.IsText(tc.ct, []byte(tc.body)); got != tc.want {
			t.Errorf("IsText(%q, %q) = %v, want %v", tc.ct, tc.body, got, tc.want)
		}
	}
}

// TestResourceDescriptionEscaped: a resource's description names its
// source's path from readproof.toml (a cloned project's): a bidi override
// in it reaches the client's list escaped, as resource list and inspect
// show it, not as a character that turns the rest of the line around.
func TestResourceDescriptionEscaped(t *testing.T) {
	t.Parallel()
	p := newProject(t, "version = 1\n\n[[resource]]\nuri = \"readproof://x/fs\"\nsource = { type = \"filesystem\", path = \"a\u202egnp.md\" }\n", nil)
	s := p.serve(t)
	res, err := s.cs.ListResources(ctxT(t), &mcp.ListResourcesParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 1 || res.Resources[0].Description != `filesystem · require_fresh — a\u202egnp.md` {
		t.Fatalf("resources: %s", jsonOf(res))
	}
}

// TestResourcesReadPinnedNeverRecorded: a resource pinned to a snapshot
// never recorded for it is a resource-not-found error (-32602) saying so,
// with the hint, as the other not-found reads are; before session 28's
// follow-up it was an internal error (-32603) for every token, which a
// client retries.
func TestResourcesReadPinnedNeverRecorded(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	snap, _ := s.read(t, refundsURI).Meta["snapshot"].(string)
	if snap == "" {
		t.Fatal("no snapshot recorded for the refunds policy")
	}
	const pinned = "readproof://demo/policies/pinned"
	f, err := os.OpenFile(p.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fmt.Fprintf(f, "\n[[resource]]\nuri = %q\npolicy = \"pinned\"\nsnapshot = %q\nsource = { type = \"filesystem\", path = \"policies/refunds.md\" }\n", pinned, snap)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	e := s.readErr(t, pinned)
	if e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("code %d (%s), want %d", e.Code, e.Message, jsonrpc.CodeInvalidParams)
	}
	if !strings.HasPrefix(e.Message, "Resource not found: no snapshot recorded: ") || !strings.Contains(e.Message, "(hint: ") {
		t.Errorf("message %q, want the reason and a hint", e.Message)
	}
	var data struct{ URI, Reason string }
	if err := json.Unmarshal(e.Data, &data); err != nil || data.URI != pinned || data.Reason != "no snapshot recorded" {
		t.Errorf("data %s (%v), want the URI and the reason", e.Data, err)
	}
}
