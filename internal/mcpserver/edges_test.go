package mcpserver_test

// Session 16 (mcp): protocol and HTTP edges an agent host meets.

import (
	"net/http"
	"strings"
	"testing"
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
