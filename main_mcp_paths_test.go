package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMCPHTTPPermissionDeniedHidesPaths: `readproof mcp --http` whose
// source file and probe key file the server's user may not read answers
// "permission denied" naming the source file as readproof.toml does and
// the key file under ~ (the server's home), never by the project's or the
// home's absolute path; its log (--verbose) keeps the key file's full path. Permission bits do not stop root,
// so as root the server runs as the user nobody (setpriv), as in
// TestStorePermissionMessages.
func TestMCPHTTPPermissionDeniedHidesPaths(t *testing.T) {
	t.Parallel()
	asUser, root, bin := permissionSandbox(t, "readproof-mcppaths-")
	proj := filepath.Join(root, "proj")
	probeKey := filepath.Join(root, "config", "readproof", "probe.key")
	for name, body := range map[string]string{
		filepath.Join(proj, "policies", "refunds.md"): "Products can be refunded within 30 days.\n",
		filepath.Join(proj, "policies", "secret.md"):  "Not for the server's user.\n",
		probeKey: strings.Repeat("k", 64) + "\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() == 0 {
		filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error {
			if p == bin {
				return nil
			}
			return os.Lchown(p, 65534, 65534)
		})
	}
	run := permRunner(t, asUser, root, bin, proj)
	for _, args := range [][]string{
		{"init"},
		{"resource", "add", "readproof://demo/policies/refunds", "--source-type", "filesystem", "--path", "policies/refunds.md"},
		{"resource", "add", "readproof://demo/policies/secret", "--source-type", "filesystem", "--path", "policies/secret.md"},
	} {
		if out, code := run(true, args...); code != 0 {
			t.Fatalf("readproof %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	out, code := run(true, "mcp", "token", "add", "agent")
	token := regexp.MustCompile(`(?m)^\S{20,}$`).FindString(out)
	if code != 0 || token == "" {
		t.Fatalf("mcp token add: exit %d\n%s", code, out)
	}
	for _, p := range []string{filepath.Join(proj, "policies", "secret.md"), probeKey} {
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
	}

	env := append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=", "HOME="+root, "XDG_CONFIG_HOME="+filepath.Join(root, "config"), "READPROOF_LOCK_TIMEOUT=50ms")
	argv := append(append([]string(nil), asUser...), bin, "mcp", "--http", "127.0.0.1:0", "--verbose")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = proj, env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	url := make(chan string, 1)
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := regexp.MustCompile(`on (http://127\.0\.0\.1:[0-9]+/)`).FindStringSubmatch(sc.Text()); m != nil {
				url <- m[1]
			}
		}
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-logged
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)
	var addr string
	select {
	case addr = <-url:
	case <-logged:
		t.Fatalf("readproof mcp --http exited before it listened")
	case <-time.After(30 * time.Second):
		t.Fatalf("readproof mcp --http did not say where it listens")
	}

	call := func(tool, args string) string {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
		req, _ := http.NewRequest(http.MethodPost, addr, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			b.WriteString(sc.Text())
		}
		return b.String()
	}
	secret := call("readproof_resolve", `{"uri":"readproof://demo/policies/secret"}`)
	if run := call("readproof_run_start", `{"run_id":"p1"}`); strings.Contains(run, `"isError":true`) || !strings.Contains(run, `"run_id":"p1"`) {
		t.Fatalf("run start: %s", run)
	}
	key := call("readproof_run_mount", `{"run_id":"p1","uri":"readproof://demo/policies/refunds","position":0,"probe":true}`)
	stop()
	for what, a := range map[string]string{"an unreadable source file": secret, "an unreadable probe key": key} {
		if !strings.Contains(a, "permission denied") || strings.Contains(a, root) {
			t.Errorf("%s over HTTP: want \"permission denied\" and no path under %s:\n%s", what, root, a)
		}
	}
	if !strings.Contains(secret, "secret.md") {
		t.Errorf("an unreadable source file over HTTP: want the file's base name:\n%s", secret)
	}
	if !strings.Contains(key, "~/config/readproof/probe.key") {
		t.Errorf("an unreadable probe key over HTTP: want the key file under ~:\n%s", key)
	}
	if !strings.Contains(log.String(), "probe key "+probeKey+":") {
		t.Errorf("the server's log does not name %s:\n%s", probeKey, log.String())
	}
}
