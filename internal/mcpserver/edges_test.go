package mcpserver_test

// Session 16 (mcp): protocol and HTTP edges an agent host meets.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
	rptext "github.com/readproof/readproof/internal/text"
)

// postRaw sends one raw JSON-RPC body with token (none when "") and returns
// the response, body read and closed.
func (s *httpServer) postRaw(t testing.TB, token, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, b.String()
}

// TestHTTP401Challenge: every 401 carries a WWW-Authenticate challenge
// (RFC 6750 section 3, which docs/README-mcp.md promises): the scheme
// Bearer, and error="invalid_token" when a token was presented. The SDK
// sends the header only with OAuth resource metadata, so hosts got a bare
// 401.
func TestHTTP401Challenge(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	live := p.token(t, "live")
	srv := p.serveHTTPIn(t)
	for name, tok := range map[string]string{"none": "", "unknown": "rpmcp_" + strings.Repeat("0", 64), "garbage": "x"} {
		resp, _ := srv.postRaw(t, tok, listTools)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s token: status %d, want 401", name, resp.StatusCode)
			continue
		}
		got := resp.Header.Get("WWW-Authenticate")
		if !strings.HasPrefix(got, "Bearer ") || !strings.Contains(got, `realm="readproof"`) {
			t.Errorf("%s token: WWW-Authenticate %q, want a Bearer challenge with realm=\"readproof\"", name, got)
		}
		if wantErr := tok != ""; strings.Contains(got, `error="invalid_token"`) != wantErr {
			t.Errorf("%s token: WWW-Authenticate %q: error=\"invalid_token\" should be there exactly when a token was sent", name, got)
		}
	}
	if resp, _ := srv.postRaw(t, live, listTools); resp.StatusCode != http.StatusOK || resp.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("live token: %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// TestRequestIDs: an id of every JSON type over stdio. A string or an
// integer comes back as sent. An id the server cannot return exactly gets
// an invalid-request error instead of a hang or an answer to another id:
// null (MCP: a request id must not be null) used to get no answer at
// all, so the client waited forever, and a fraction (1.5) or an integer
// beyond 2^53 came back changed (1, 9007199254740992), matching no
// request or the wrong one.
func TestRequestIDs(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	w := p.wire(t)
	w.initialize()
	for i, id := range []string{`"s"`, `""`, `0`, `-1`, `9007199254740991`, `"9007199254740993"`} {
		w.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if r := w.next(); string(r.ID) != id || r.Error != nil {
			t.Errorf("ping with id %s: answered id %s, error %+v", id, r.ID, r.Error)
		}
		w.alive(500 + i)
	}
	for i, c := range []struct{ id, want string }{
		{`null`, `null`},
		{`1.5`, `1.5`},
		{`9007199254740993`, `9007199254740993`},
		{`-1e300`, `-1e300`},
	} {
		// a ping the server surely answers goes right after, so a
		// missing answer shows as the wrong id rather than a wait
		w.send(`{"jsonrpc":"2.0","id":` + c.id + `,"method":"ping"}`)
		w.send(`{"jsonrpc":"2.0","id":` + itoa(600+i) + `,"method":"ping"}`)
		r := w.next()
		if string(r.ID) != c.want || r.Error == nil || r.Error.Code != -32600 {
			t.Errorf("ping with id %s: answered id %s, result %s, error %+v; want an invalid request (-32600) with id %s", c.id, r.ID, r.Result, r.Error, c.want)
		}
		if r.Error != nil && !strings.Contains(r.Error.Message, "string or an integer") {
			t.Errorf("ping with id %s: message %q does not say what an id must be", c.id, r.Error.Message)
		}
		if string(r.ID) != itoa(600+i) {
			if r = w.next(); string(r.ID) != itoa(600+i) || r.Error != nil {
				t.Fatalf("the ping after id %s: answered id %s, error %+v", c.id, r.ID, r.Error)
			}
		}
	}
}

// TestHugeURIArgument: a URI of 1 MiB, as a tool argument and as a
// resource to read, is refused with an error that says how long it is and
// the limit, in a few hundred bytes: the error used to quote the whole
// argument back (twice for resources/read: message and data), a 1 MiB
// tool result the host would pass to the model.
func TestHugeURIArgument(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	huge := "readproof://demo/" + strings.Repeat("a", 1<<20)
	msg := s.fail(t, "readproof_resolve", map[string]any{"uri": huge})
	if len(msg) > 2048 {
		t.Errorf("readproof_resolve of a 1 MiB URI: the error is %d bytes: %s", len(msg), tail([]byte(msg)))
	}
	mustContain(t, "readproof_resolve error", msg, "longer than", "hint:")
	e := s.readErr(t, huge)
	if len(e.Message) > 2048 || len(e.Data) > 2048 {
		t.Errorf("resources/read of a 1 MiB URI: message %d bytes, data %d bytes: %s", len(e.Message), len(e.Data), tail([]byte(e.Message)))
	}
	mustContain(t, "resources/read error", e.Message, "Resource not found: not a readproof URI", "longer than")
}

// TestRemoteTextEscapedInSummaries: the text block of a tool result is
// readproof's own words around names and values; a value the source chose
// (here an ETag holding U+202E, the right-to-left override, which the
// source revision records) is escaped there as the CLI escapes it
// (`readproof get` prints "\u202e"), while structuredContent carries it
// unaltered as data. The summary used to carry the raw character, which a
// host shows to its user as it shows the model.
func TestRemoteTextEscapedInSummaries(t *testing.T) {
	t.Parallel()
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("ETag", "\"ab\u202edc\"")
		fmt.Fprintln(w, "a document")
	}))
	defer src.Close()
	p := newProject(t, "version = 1\n\n[network]\nallow_cidrs = [\"127.0.0.0/8\"]\n\n[[resource]]\nuri = \"readproof://web/doc\"\nsource = { type = \"http\", url = \""+src.URL+"/doc\" }\n", nil)
	s := p.serve(t)
	res := s.call(t, "readproof_resolve", map[string]any{"uri": "readproof://web/doc"})
	if res.IsError {
		t.Fatalf("resolve: %s", text(res))
	}
	if got := str(t, obj(t, res.StructuredContent), "source_revision"); got != "\"ab\u202edc\"" {
		t.Errorf("structuredContent source_revision %q, want the ETag unaltered", got)
	}
	summary := text(res)
	for _, line := range strings.Split(summary, "\n") {
		if rptext.Escape(line) != line {
			t.Errorf("the text block carries unescaped remote text: %q", line)
		}
	}
	mustContain(t, "the text block", summary, `\u202e`)
}

// TestReadIsPrivateToCache: what resources/read returns is a document of
// this store, delivered to one caller (over HTTP, one token); its cache
// scope is "private", as resources/list's already was. The SDK's default,
// which resources/read used to get, is "public": any intermediary may
// cache it and serve it to other users.
func TestReadIsPrivateToCache(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	res, err := s.cs.ReadResource(ctxT(t), &mcp.ReadResourceParams{URI: refundsURI})
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheScope != "private" {
		t.Errorf("resources/read: cacheScope %q, want private", res.CacheScope)
	}
	list, err := s.cs.ListResources(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if list.CacheScope != "private" {
		t.Errorf("resources/list: cacheScope %q, want private", list.CacheScope)
	}
}

// TestErrorCodes: every JSON-RPC error carries a code of the
// specification, never 0: a second initialize is an invalid request
// (-32600), and a resource whose source fails is an internal error
// (-32603, as MCP names it for resources/read) whose message says why.
// Both used to come back with code 0, which the SDK gives an error that
// is not a *jsonrpc.Error.
func TestErrorCodes(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	w := p.wire(t)
	w.initialize()
	w.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`)
	if r := w.next(); string(r.ID) != "2" || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "initialize") {
		t.Errorf("a second initialize: id %s, error %+v; want -32600 naming initialize", r.ID, r.Error)
	}
	w.alive(3)
	if err := os.Remove(filepath.Join(p.dir, "policies/refunds.md")); err != nil {
		t.Fatal(err)
	}
	w.send(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"` + refundsURI + `"}}`)
	if r := w.next(); string(r.ID) != "4" || r.Error == nil || r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "refunds") {
		t.Errorf("resources/read of a missing source file: id %s, error %+v; want -32603 naming the file", r.ID, r.Error)
	}
	w.alive(5)
	// a policy file that no longer parses: resources/list cannot open the store
	p.write(t, "readproof.toml", "version = 1\n[[resource]]\nuri = 5\n")
	w.send(`{"jsonrpc":"2.0","id":6,"method":"resources/list"}`)
	if r := w.next(); string(r.ID) != "6" || r.Error == nil || r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "readproof.toml") {
		t.Errorf("resources/list with a broken readproof.toml: id %s, error %+v; want -32603 naming the file", r.ID, r.Error)
	}
}

// TestArgumentErrorsHint: a call the input schema refuses (a wrong type, a
// missing or an unknown argument) is a tool error that names the argument,
// as the SDK's validator words it, and hints at the fix: the arguments the
// tool takes, with their types and which are required. It used to end at
// the validator's words.
func TestArgumentErrorsHint(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	for _, c := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"readproof_resolve", map[string]any{"uri": 5}, []string{`/properties/uri`, "hint: readproof_resolve takes uri (string, required)"}},
		{"readproof_resolve", map[string]any{}, []string{`missing properties: ["uri"]`, "hint: readproof_resolve takes uri (string, required)"}},
		{"readproof_run_mount", map[string]any{"run_id": "r", "uri": refundsURI, "probes": true}, []string{`"probes"`, "hint: readproof_run_mount takes position (integer), probe (boolean), run_id (string, required), uri (string, required)"}},
		{"readproof_resources_list", map[string]any{"x": 1}, []string{`"x"`, "hint: readproof_resources_list takes no arguments"}},
	} {
		msg := s.fail(t, c.tool, c.args)
		mustContain(t, c.tool+" "+jsonOf(c.args), msg, c.want...)
	}
}

// TestHTTPRequestIDs: over HTTP as over stdio, a request whose id cannot
// be returned as sent (a fraction, an integer beyond 2^53, null) gets an
// invalid-request error carrying the id as sent; 1.5 used to be answered
// as id 1 and 9007199254740993 as 9007199254740992.
func TestHTTPRequestIDs(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	tok := p.token(t, "w")
	srv := p.serveHTTPIn(t)
	for _, id := range []string{`1.5`, `9007199254740993`, `null`} {
		resp, body := srv.postRaw(t, tok, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
		var r wireReply
		if err := json.Unmarshal([]byte(body), &r); err != nil || resp.StatusCode != http.StatusBadRequest || string(r.ID) != id || r.Error == nil || r.Error.Code != -32600 {
			t.Errorf("id %s: status %d, body %q; want 400 with an invalid request (-32600) for id %s", id, resp.StatusCode, body, id)
		}
	}
	for _, id := range []string{`"s"`, `7`, `9007199254740991`} {
		resp, body := srv.postRaw(t, tok, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
		var r wireReply
		if err := json.Unmarshal([]byte(body), &r); err != nil || resp.StatusCode != http.StatusOK || string(r.ID) != id || r.Error != nil {
			t.Errorf("id %s: status %d, body %q", id, resp.StatusCode, body)
		}
	}
}

// TestHTTPBrowserPages: what keeps a web page from driving a loopback
// server (docs/README-mcp.md, "Browsers and DNS rebinding"). A request
// that reached the loopback listener under another host name (a rebound
// DNS name) is refused with 403 even with a valid token; a cross-origin
// preflight gets no CORS grant, so a page cannot send the Authorization
// header at all; a token in the query string is not a token.
func TestHTTPBrowserPages(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	tok := p.token(t, "w")
	srv := p.serveHTTPIn(t)
	send := func(method, url, host string, hdr map[string]string) *http.Response {
		req, _ := http.NewRequest(method, url, strings.NewReader(listTools))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	auth := map[string]string{"Authorization": "Bearer " + tok}
	if r := send(http.MethodPost, srv.url, "rebound.example:80", auth); r.StatusCode != http.StatusForbidden {
		t.Errorf("Host rebound.example with a valid token: %d, want 403", r.StatusCode)
	}
	if r := send(http.MethodPost, srv.url, "localhost", auth); r.StatusCode != http.StatusOK {
		t.Errorf("Host localhost with a valid token: %d, want 200", r.StatusCode)
	}
	pre := send(http.MethodOptions, srv.url, "", map[string]string{"Origin": "http://page.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"})
	if pre.StatusCode/100 == 2 || pre.Header.Get("Access-Control-Allow-Origin") != "" || pre.Header.Get("Access-Control-Allow-Headers") != "" {
		t.Errorf("cross-origin preflight: %d, Allow-Origin %q, Allow-Headers %q; want no grant", pre.StatusCode, pre.Header.Get("Access-Control-Allow-Origin"), pre.Header.Get("Access-Control-Allow-Headers"))
	}
	if r := send(http.MethodPost, srv.url+"?access_token="+tok, "", nil); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("token in the query string: %d, want 401", r.StatusCode)
	}
}

// TestStdioSIGTERMFinishesCallsInFlight: SIGTERM (how a host stops a
// stdio server) while a mount is fetching a slow source: the server reads
// no more requests, answers the mount once the source answers, records
// it, and exits 0, as --http does. It used to cancel the fetch, send no
// answer and exit 130 with "readproof: error: context canceled".
func TestStdioSIGTERMFinishesCallsInFlight(t *testing.T) {
	t.Parallel()
	p, arrived, release := slowSource(t)
	w := p.wire(t)
	w.initialize()
	w.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"readproof_run_start","arguments":{"run_id":"slow"}}}`)
	if r := w.next(); string(r.ID) != "2" || r.Error != nil || strings.Contains(string(r.Result), `"isError":true`) {
		t.Fatalf("run_start: %s %+v", r.Result, r.Error)
	}
	w.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"readproof_run_mount","arguments":{"run_id":"slow","uri":"readproof://web/slow"}}}`)
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the mount never reached the source")
	}
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the signal lands while the source still holds the answer
	release()
	r := w.next()
	if string(r.ID) != "3" || r.Error != nil || strings.Contains(string(r.Result), `"isError":true`) {
		t.Fatalf("the mount in flight at SIGTERM: id %s, result %s, error %+v", r.ID, tail(r.Result), r.Error)
	}
	p.cli(t, "run", "commit", "slow")
}

// TestUnknownToolHint: a call to a tool this server does not have is the
// SDK's invalid-params error naming it; the message now ends with a hint:
// the nearest tool name when one is close, and that tools/list names them
// all.
func TestUnknownToolHint(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	for name, want := range map[string]string{
		"readproof_reslove":   "did you mean readproof_resolve?",
		"readproof_run_comit": "did you mean readproof_run_commit?",
		"get":                 "tools/list names the tools",
	} {
		_, err := s.cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: %v, want a JSON-RPC invalid-params error", name, err)
			continue
		}
		mustContain(t, name, we.Message, `unknown tool "`+name+`"`, "hint:", want)
	}
}

// TestHTTPSlowBodyHoldsNoSlot: a client that sends its headers and then
// trickles (or stalls) its body does not take one of the --max-concurrent
// slots while it does: the body is read before a slot is taken, so the
// other clients are served. With one slot, a stalled body used to make
// every other request wait for the queue timeout and get 503.
func TestHTTPSlowBodyHoldsNoSlot(t *testing.T) {
	t.Parallel()
	url, _ := stalledBody(t, mcpserver.HTTPOptions{MaxConcurrent: 1, QueueWait: 500 * time.Millisecond})
	time.Sleep(100 * time.Millisecond) // the stalled request is in the handler
	s := &httpServer{url: url}
	if resp, body := s.postRaw(t, anyToken, listTools); resp.StatusCode != http.StatusOK {
		t.Errorf("another client while one body stalls: %d %s, want 200", resp.StatusCode, body)
	}
}

// TestCancelledGetsNoAnswer: after notifications/cancelled for a call in
// flight the server sends no response for it (MCP: the receiver SHOULD
// NOT), and answers what comes next. The cancelled mount used to be
// answered with a tool error ("cancelled (context canceled)") that the
// client no longer expected.
func TestCancelledGetsNoAnswer(t *testing.T) {
	t.Parallel()
	p, arrived, _ := slowSource(t)
	w := p.wire(t)
	w.initialize()
	w.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"readproof_run_start","arguments":{"run_id":"c"}}}`)
	w.next()
	w.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"readproof_run_mount","arguments":{"run_id":"c","uri":"readproof://web/slow"}}}`)
	<-arrived
	w.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"the user stopped it"}}`)
	w.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	// At the end of input the server answers every request it read
	// before it exits, the cancelled call's included if it answered it at
	// all: everything it wrote is read, however late the call ended (a
	// pause here let an answer written after it go unseen).
	w.in.Close()
	var ids []string
	for w.out.Scan() {
		var r wireReply
		if err := json.Unmarshal(w.out.Bytes(), &r); err != nil {
			t.Fatalf("stdout line %q: %v", w.out.Bytes(), err)
		}
		ids = append(ids, string(r.ID))
	}
	if !slices.Equal(ids, []string{"4"}) {
		t.Errorf("after cancelling request 3 and pinging as 4, the answers are for ids %v, want [4]", ids)
	}
}

// TestManifestSameAsCLI: readproof_manifest answers what `readproof --json
// manifest` prints, member for member (the receipt id aside). The tool
// used to leave out "format" (readproof-manifest/1), the one member that
// tells a reader which version of the format it holds.
func TestManifestSameAsCLI(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	s.ok(t, "readproof_run_start", map[string]any{"run_id": "same"})
	s.ok(t, "readproof_run_mount", map[string]any{"run_id": "same", "uri": refundsURI})
	s.ok(t, "readproof_run_commit", map[string]any{"run_id": "same"})
	got := s.ok(t, "readproof_manifest", map[string]any{"target": "same"})
	var want map[string]any
	if err := json.Unmarshal([]byte(p.cli(t, "--json", "manifest", "same")), &want); err != nil {
		t.Fatal(err)
	}
	delete(got, "receipt_id")
	for k, v := range want {
		if jsonOf(got[k]) != jsonOf(v) {
			t.Errorf("%q: MCP %s, CLI %s", k, jsonOf(got[k]), jsonOf(v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%q: only in MCP's answer", k)
		}
	}
}

// TestSummariesStayShort: the text block is "one short text summary";
// the structured content has every item. With 200 resources in a run,
// the summaries of readproof_resources_list, readproof_manifest and
// readproof_diff used to name every one (5 to 8 KB of text the model pays
// for twice); they now name the first few and say how many more the
// structured content holds.
func TestSummariesStayShort(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	var uris []string
	var toml strings.Builder
	for i := 0; i < 200; i++ {
		p.write(t, fmt.Sprintf("docs/d%03d.md", i), fmt.Sprintf("document %d\n", i))
		uri := fmt.Sprintf("readproof://demo/docs/d%03d", i)
		fmt.Fprintf(&toml, "\n[[resource]]\nuri = %q\nsource = { type = \"filesystem\", path = \"docs/d%03d.md\" }\n", uri, i)
		uris = append(uris, uri)
	}
	f, err := os.OpenFile(p.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(toml.String()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	p.cli(t, append([]string{"run", "--id", "big"}, uris...)...)
	p.cli(t, "run", "--id", "small", refundsURI)
	s := p.serve(t)
	for _, c := range []struct {
		tool  string
		args  map[string]any
		count string
	}{
		{"readproof_resources_list", nil, "201 resources"},
		{"readproof_manifest", map[string]any{"target": "big"}, "200 entries"},
		{"readproof_diff", map[string]any{"a": "small", "b": "big"}, "200 added"},
	} {
		res := s.call(t, c.tool, c.args)
		if res.IsError {
			t.Fatalf("%s: %s", c.tool, text(res))
		}
		summary := text(res)
		if len(summary) > 4096 {
			t.Errorf("%s: the text block is %d bytes, want a short summary", c.tool, len(summary))
		}
		mustContain(t, c.tool, summary, c.count, "more")
	}
}

// TestHTTPStalledBodyCutOff: a client that sends its headers and then
// stalls its body is answered 400 and its connection closed once the body
// timeout passes, instead of holding the connection and a goroutine of the
// server for as long as it likes (the server sets no ReadTimeout, so that
// long calls are not cut off). Before, the read below waited out its own
// five-second deadline.
func TestHTTPStalledBodyCutOff(t *testing.T) {
	t.Parallel()
	_, conn := stalledBody(t, mcpserver.HTTPOptions{BodyTimeout: 100 * time.Millisecond})
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("the stalled request got no answer and its connection stayed open: %v (read %q)", err, got)
	}
	if !strings.HasPrefix(string(got), "HTTP/1.1 400 ") {
		t.Fatalf("answer %q, want a 400", got)
	}
}

// slowSource is a project whose one resource, readproof://web/slow, is an
// http source that holds each answer until release is called (or the
// request is given up): arrived is closed when the first request comes.
// release may be called any number of times; the test's end calls it.
func slowSource(t *testing.T) (p *project, arrived <-chan struct{}, release func()) {
	t.Helper()
	came := make(chan struct{})
	free := make(chan struct{})
	var once, freed sync.Once
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(came) })
		select {
		case <-free:
		case <-r.Context().Done():
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintln(w, "slow document")
	}))
	t.Cleanup(src.Close)
	release = func() { freed.Do(func() { close(free) }) }
	t.Cleanup(release) // before src.Close, which waits for the answers
	p = newProject(t, "version = 1\n\n[network]\nallow_cidrs = [\"127.0.0.0/8\"]\n\n[[resource]]\nuri = \"readproof://web/slow\"\nsource = { type = \"http\", url = \""+src.URL+"/slow\" }\n", nil)
	return p, came, release
}

// stalledBody serves the demo project over HTTP with o (any token writes)
// and sends one request whose headers promise a body of which only ten
// bytes follow: the server's URL, and the connection of the stalled
// request.
func stalledBody(t *testing.T, o mcpserver.HTTPOptions) (string, net.Conn) {
	t.Helper()
	ts := demoHTTP(t, o)
	return ts.URL + "/", stall(t, ts, len(listTools))
}

// stall sends ts a request whose headers promise a body of n bytes (at
// least ten) of which only ten follow, and returns its connection.
func stall(t *testing.T, ts *httptest.Server, n int) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Authorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", ts.Listener.Addr(), anyToken, n, listTools[:10])
	return conn
}

// anyToken is a token demoHTTP's server accepts: any token shaped as the
// server's (a string of any other shape is refused before any check).
const anyToken = "rpmcp_" + "f0f0f0f0f0f0f0f0" + "f0f0f0f0f0f0f0f0" + "f0f0f0f0f0f0f0f0" + "f0f0f0f0f0f0f0f0"

// demoHTTP serves the demo project over HTTP with o, any token writing.
func demoHTTP(t *testing.T, o mcpserver.HTTPOptions) *httptest.Server {
	t.Helper()
	p := demoProject(t)
	srv, err := mcpserver.New(mcpserver.Options{Open: p.opener()})
	if err != nil {
		t.Fatal(err)
	}
	o.Verify = func(string) (mcpauth.Caller, error) { return mcpauth.Caller{Name: "w", Scope: mcpauth.ScopeWrite}, nil }
	h, err := srv.HTTPHandler(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// TestHTTPBodiesBounded: request bodies are read before a slot is taken
// (a slow sender holds none), so what they hold in memory is bounded on
// its own: twice what --max-concurrent bodies of --max-body could hold.
// Beyond it a request is answered 503 at once. Before the budget, one token
// within its rate could hold some 600 bodies of 4 MiB waiting for slots
// (2.4 GiB); here the third request was answered 200.
func TestHTTPBodiesBounded(t *testing.T) {
	t.Parallel()
	ts := demoHTTP(t, mcpserver.HTTPOptions{MaxBodyBytes: 100, MaxConcurrent: 1})
	// The budget is 2 x 1 x 101 bytes: two stalled bodies of 100 take it.
	stall(t, ts, 100)
	stall(t, ts, 100)
	s := &httpServer{url: ts.URL + "/"}
	// Asked until the stalled two are in the handler (at once, unless the
	// machine is slow); a server without the budget answers 200 throughout.
	// A stalled request that the server read while one of these held part
	// of the budget was refused (its 503 waits unsent while net/http reads
	// the rest of the body, which never comes): after each 200 another is
	// stalled, so that two come to hold the budget together.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, body := s.postRaw(t, anyToken, listTools)
		if resp.StatusCode == http.StatusServiceUnavailable {
			if resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "--max-body") {
				t.Fatalf("503 %q without Retry-After or the flags to change", body)
			}
			return
		}
		stall(t, ts, 100)
		if time.Now().After(deadline) {
			t.Fatalf("a third body while two hold the budget: %d %.80q..., want 503 with Retry-After", resp.StatusCode, body)
		}
	}
}

// TestHTTPRefusedStallAnswered: a request refused for the body budget is
// answered at once and its connection closed, also when its body never
// comes. Before, net/http read the rest of the body before it sent the 503
// (to reuse the connection), so a client that stalled its body held the
// connection and a goroutine for as long as it liked, and never saw why.
func TestHTTPRefusedStallAnswered(t *testing.T) {
	t.Parallel()
	ts := demoHTTP(t, mcpserver.HTTPOptions{MaxBodyBytes: 100, MaxConcurrent: 1})
	s := &httpServer{url: ts.URL + "/"}
	// two stalled bodies hold the budget (2 x 1 x 101 bytes); one more is
	// stalled until the budget turns a request away
	stall(t, ts, 100)
	stall(t, ts, 100)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, _ := s.postRaw(t, anyToken, listTools); resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		stall(t, ts, 100)
		if time.Now().After(deadline) {
			t.Fatal("the budget never filled")
		}
	}
	c := stall(t, ts, 100)
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a stalled request refused for the budget: no answer within 3 s (%v)", err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || !resp.Close {
		t.Fatalf("a stalled request refused for the budget: %s, close %v; want 503 and the connection closed", resp.Status, resp.Close)
	}
}

// TestHTTPRefusedTokenStallAnswered: a request whose token is refused is
// answered 401 at once and its connection closed, also when its body never
// comes (as TestHTTPRefusedStallAnswered for the budget).
func TestHTTPRefusedTokenStallAnswered(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	srv, err := mcpserver.New(mcpserver.Options{Open: p.opener()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := srv.HTTPHandler(mcpserver.HTTPOptions{Verify: func(string) (mcpauth.Caller, error) {
		return mcpauth.Caller{}, mcpauth.ErrUnknown
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	c := stall(t, ts, 1000)
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a stalled request with a refused token: no answer within 3 s (%v)", err)
	}
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("a stalled request with a refused token: %s, close %v; want 401 and the connection closed", resp.Status, resp.Close)
	}
}
