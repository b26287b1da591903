package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/mcpserver"
)

// repeatedMembers are messages that name a member twice in one object, with
// the id their refusal answers: the SDK ran each with the last of the two
// (the tool readproof_run_start, run dupB, URI B), while a proxy, a log
// reader or a policy check that keeps the first saw another call, and the
// call's receipt hashed both.
var repeatedMembers = []struct{ what, msg, id, name string }{
	{"a tool name", `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"readproof_resources_list","name":"readproof_run_start","arguments":{"run_id":"dupN"}}}`, "31", "name"},
	{"an argument", `{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"readproof_run_start","arguments":{"run_id":"dupA","run_id":"dupB"}}}`, "32", "run_id"},
	{"an escaped argument name", `{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"readproof_run_start","arguments":{"run_id":"dupC","run_\u0069d":"dupD"}}}`, `"s"`, "run_id"},
	{"the method", `{"jsonrpc":"2.0","id":33,"method":"ping","method":"tools/call","params":{"name":"readproof_run_start","arguments":{"run_id":"dupM"}}}`, "33", "method"},
	{"the id", `{"jsonrpc":"2.0","id":34,"id":35,"method":"tools/call","params":{"name":"readproof_run_start","arguments":{"run_id":"dupI"}}}`, "null", "id"},
	{"a resource URI", `{"jsonrpc":"2.0","id":36,"method":"resources/read","params":{"uri":"readproof://demo/policies/refunds","uri":"readproof://demo/x"}}`, "36", "uri"},
	// Refused too where the SDK reads nothing of it: _meta is the
	// client's to fill (a progress token, a host's own keys), a proxy or
	// a log reader may read it, and no JSON encoder writes a member twice,
	// so refusing costs a well-formed client nothing (session 28).
	{"_meta", `{"jsonrpc":"2.0","id":37,"method":"tools/call","params":{"name":"readproof_run_start","arguments":{"run_id":"dupT"},"_meta":{},"_meta":{"x":1}}}`, "37", "_meta"},
	{"a member of _meta", `{"jsonrpc":"2.0","id":38,"method":"tools/call","params":{"name":"readproof_run_start","arguments":{"run_id":"dupP"},"_meta":{"progressToken":1,"progressToken":2}}}`, "38", "progressToken"},
}

// TestRepeatedMembersRefused: over stdio, such a message is answered with
// an invalid-request error naming the member, and nothing runs.
func TestRepeatedMembersRefused(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	w := p.wire(t)
	w.initialize()
	for i, c := range repeatedMembers {
		w.send(c.msg)
		r := w.next()
		if string(r.ID) != c.id || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, `"`+c.name+`" appears twice`) {
			t.Errorf("%s named twice: answered id %s, result %.200s, error %+v; want an invalid request (-32600) with id %s naming %q",
				c.what, r.ID, r.Result, r.Error, c.id, c.name)
		}
		w.alive(700 + i)
	}
	// a member named once in each of two objects is no repetition
	w.send(`{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"readproof_run_start","arguments":{"run_id":"once"}}}`)
	if r := w.next(); string(r.ID) != "40" || r.Error != nil || !strings.Contains(string(r.Result), `"run_id":"once"`) {
		t.Fatalf("run_start once: %s %+v", r.Result, r.Error)
	}
	runs := p.cli(t, "run", "list")
	for _, id := range []string{"dupN", "dupA", "dupB", "dupC", "dupD", "dupM", "dupI", "dupT", "dupP"} {
		if strings.Contains(runs, id) {
			t.Errorf("run %s was started by a refused message: run list says\n%s", id, runs)
		}
	}
	if !strings.Contains(runs, "once") {
		t.Errorf("run list does not show run once:\n%s", runs)
	}
}

// TestHTTPRepeatedMembersRefused: over HTTP the answer is 400 with the same
// invalid-request error.
func TestHTTPRepeatedMembersRefused(t *testing.T) {
	t.Parallel()
	ts := demoHTTP(t, mcpserver.HTTPOptions{})
	for _, c := range repeatedMembers {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/", strings.NewReader(c.msg))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+anyToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var r struct {
			ID    json.RawMessage
			Error *struct {
				Code    int
				Message string
			}
		}
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &r) != nil || r.Error == nil || r.Error.Code != -32600 ||
			string(r.ID) != c.id || !strings.Contains(r.Error.Message, `"`+c.name+`" appears twice`) {
			t.Errorf("%s named twice: %d %.300s; want 400 with an invalid-request error (-32600), id %s, naming %q", c.what, resp.StatusCode, body, c.id, c.name)
		}
	}
}

// TestOtherCaseIDIsNotTheID: "ID" or "Id" is not a request's id, as the
// SDK reads it (member names are case-sensitive): a request with "id": 51
// and "ID": null is answered as request 51. The checks before the SDK read
// the id as encoding/json does, matching "ID" too and keeping the last, so
// such a request was refused as one with a null id, and an error's id
// could name another request than the one the SDK would have answered.
func TestOtherCaseIDIsNotTheID(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	w := p.wire(t)
	w.initialize()
	w.send(`{"jsonrpc":"2.0","id":51,"ID":null,"method":"ping"}`)
	if r := w.next(); string(r.ID) != "51" || r.Error != nil {
		t.Errorf(`ping with "id":51 and "ID":null: answered id %s, error %+v; want the ping answered as 51`, r.ID, r.Error)
	}
	w.send(`{"jsonrpc":"2.0","id":52,"Id":53,"method":"ping","method":"tools/list"}`)
	if r := w.next(); string(r.ID) != "52" || r.Error == nil || r.Error.Code != -32600 {
		t.Errorf(`a repeated method with "id":52 and "Id":53: answered id %s, error %+v; want an invalid request with id 52`, r.ID, r.Error)
	}
	w.alive(54)
}
