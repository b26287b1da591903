package commands

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOTelMCPTokenInURIMasked (session 28, follow-up of the MCP re-read):
// a client that names its own bearer token in a URI it reads (a resource
// URI's path, as a tool argument and in resources/read) has it exported
// to the OTLP collector as rpmcp_[REDACTED], as the --verbose log masks
// it: the URI is recorded on the call's span and on the store's resolve
// span. Before, the collector received the token whole.
func TestOTelMCPTokenInURIMasked(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	recv := newOTLPReceiver(t)
	dir, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "policy.md"), []byte("Refunds within 30 days.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
	on := append(append([]string(nil), base...), "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.srv.URL)
	run := func(args ...string) string {
		t.Helper()
		stdout, stderr, err := readproofCmd(t, dir, base, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		return stdout
	}
	run("init")
	run("resource", "add", "readproof://demo/policy", "--source-type", "filesystem", "--path", "policy.md")
	token := strings.TrimSpace(run("mcp", "token", "add", "agent"))
	hexPart := strings.TrimPrefix(token, "rpmcp_")
	if token == hexPart || len(hexPart) < 16 {
		t.Fatalf("token add printed %q", token)
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "readproof")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	srv := exec.Command(bin, "mcp", "--http", "127.0.0.1:0")
	srv.Dir, srv.Env = dir, on
	errPipe, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	sc := bufio.NewScanner(errPipe)
	var addr string
	for addr == "" && sc.Scan() {
		if m := regexp.MustCompile(` on (http://127\.0\.0\.1:\d+/)$`).FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatal("mcp --http printed no address")
	}
	drained := make(chan struct{})
	go func() {
		for sc.Scan() {
		}
		close(drained)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: addr, HTTPClient: &http.Client{Transport: headerRT{"Authorization": "Bearer " + token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{"readproof://demo/" + token, "readproof://demo/" + strings.ToUpper(token)} {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "readproof_resolve", Arguments: map[string]any{"uri": uri}}); err != nil || !res.IsError {
			t.Fatalf("resolve of an undeclared URI: %v %v", err, res)
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Fatal("resources/read of an undeclared URI answered")
		}
	}
	cs.Close()
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-drained
	if err := srv.Wait(); err != nil {
		t.Fatalf("mcp --http: %v", err)
	}

	spans, resources := recv.spans()
	all := exportedStrings(resources, spans)
	masked := 0
	for _, v := range all {
		if strings.Contains(v, "readproof://demo/rpmcp_[REDACTED]") || strings.Contains(v, "readproof://demo/RPMCP_[REDACTED]") {
			masked++
		}
	}
	if masked < 4 {
		t.Errorf("%d exported values name the masked URI, want one per call at least (spans %v): the check proves nothing", masked, spanNames(spans))
	}
	noneHolds(t, all, []string{hexPart, strings.ToUpper(hexPart)})
}
