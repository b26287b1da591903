package mcpserver_test

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestHTTPTokenFileBrokenWhileServing: the token file made unreadable
// while `readproof mcp --http` runs (here: opened to group and others by
// a chmod) refuses every request, since no token can be checked, and the
// operator learns why on stderr, without --verbose, once: the server is
// otherwise silent, and the client's answer named "the server's log",
// which without --verbose did not exist. Once the file is fixed, requests
// are served again.
func TestHTTPTokenFileBrokenWhileServing(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	live := p.token(t, "live")
	srv := p.serveHTTP(t)
	if c := srv.post(t, live, listTools); c != http.StatusOK {
		t.Fatalf("before the chmod: %d", c)
	}
	if err := os.Chmod(p.tokens(), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		resp, body := srv.postRaw(t, live, listTools)
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "stderr") || strings.Contains(body, p.tokens()) {
			body = body[:min(len(body), 200)]
			t.Errorf("token file mode 0644: %d %q; want 500 pointing the client at the operator (the server's stderr), without the file's path", resp.StatusCode, body)
		}
	}
	var got string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got = string(srv.stderr.Bytes()); strings.Contains(got, "chmod 600") {
			break
		}
	}
	if strings.Count(got, "mode 0644") != 1 || !strings.Contains(got, "chmod 600") {
		t.Errorf("stderr after 3 refused requests:\n%s\nwant the reason (mode 0644, chmod 600) once", got)
	}
	if err := os.Chmod(p.tokens(), 0o600); err != nil {
		t.Fatal(err)
	}
	if c := srv.post(t, live, listTools); c != http.StatusOK {
		t.Errorf("after the file was fixed: %d, want 200", c)
	}
	// An editor that left the file half-written: refused the same way,
	// and said once more, since it is another problem.
	good, err := os.ReadFile(p.tokens())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.tokens(), good[:len(good)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if c := srv.post(t, live, listTools); c != http.StatusInternalServerError {
			t.Errorf("half a token file: %d, want 500", c)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got = string(srv.stderr.Bytes()); strings.Contains(got, "invalid MCP token file") {
			break
		}
	}
	if strings.Count(got, "invalid MCP token file") != 1 || strings.Count(got, "refusing every request") != 2 {
		t.Errorf("stderr after a half-written token file:\n%s\nwant its reason once more", got)
	}
	if err := os.WriteFile(p.tokens(), good, 0o600); err != nil {
		t.Fatal(err)
	}
	if c := srv.post(t, live, listTools); c != http.StatusOK {
		t.Errorf("after the file was written whole: %d, want 200", c)
	}
	t.Logf("stderr:\n%s", srv.stderr.Bytes())
	if strings.Contains(string(srv.stderr.Bytes()), live[6:]) {
		t.Error("the server printed a token")
	}
}
