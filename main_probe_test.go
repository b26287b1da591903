package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/readproof/readproof/probe"
)

var probeLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(probe.ProbeLinePattern) })

// extractProbeLineCmd copies a probe line printed by `run mount --probe`
// into an answer file, as an agent quoting it would, and optionally puts
// its sentinel in an environment variable so the script can search for it:
// `extract-probe-line [-n N] FILE OUT [VAR]` (N counts probe lines from 0).
func extractProbeLineCmd(ts *testscript.TestScript, neg bool, args []string) {
	n := 0
	if len(args) > 1 && args[0] == "-n" {
		var err error
		if n, err = strconv.Atoi(args[1]); err != nil {
			ts.Fatalf("extract-probe-line: -n %q: %v", args[1], err)
		}
		args = args[2:]
	}
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: extract-probe-line [-n N] FILE OUT [VAR]")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	lines := probeLineRE().FindAllStringSubmatch(string(data), -1)
	if n >= len(lines) {
		ts.Fatalf("extract-probe-line: %s holds %d probe lines, want line %d", args[0], len(lines), n)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(lines[n][0]+"\n"), 0o644))
	if len(args) == 3 {
		ts.Setenv(args[2], lines[n][1])
	}
}

// TestProbeServeRefusesPublicAddresses: without --public the server never
// listens beyond loopback.
func TestProbeServeRefusesPublicAddresses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0"} {
		_, errs, err := rp(t, dir, "probe", "serve", "--addr", addr)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Fatalf("probe serve --addr %s: %v, want exit 2\n%s", addr, err, errs)
		}
		if !strings.Contains(errs, "oracles") || !strings.Contains(errs, "--public") {
			t.Fatalf("probe serve --addr %s: refusal does not say why or what to do:\n%s", addr, errs)
		}
		if strings.Contains(errs, "listening") {
			t.Fatalf("probe serve --addr %s listened:\n%s", addr, errs)
		}
	}
}

// TestProbeServeLoopback runs `readproof probe serve` as a process on a free
// loopback port: a probe round trip is READ_VERIFIED, a second report
// REPLAY_SUSPECT, a made-up value HALLUCINATED; SIGTERM shuts it down
// cleanly; the audit log holds neither the address nor the sentinel.
func TestProbeServeLoopback(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	auditPath := filepath.Join(dir, "audit.jsonl")
	cmd := exec.Command("readproof", "probe", "serve", "--addr", "127.0.0.1:0", "--audit-log", auditPath)
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	// The first stderr lines announce the address; keep the rest for later.
	var rest bytes.Buffer
	addrc := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			rest.WriteString(line + "\n")
			if a, ok := strings.CutPrefix(line, "readproof: probe server listening on http://"); ok && !sent {
				addrc <- a
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a
	case <-time.After(20 * time.Second):
		t.Fatal("probe serve did not print its address")
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") || strings.HasSuffix(base, ":0") {
		t.Fatalf("listening address %q, want 127.0.0.1 and the chosen port", base)
	}

	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(base + "/probe/sess-1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Cache-Control"), "no-store") {
		t.Fatalf("GET probe: %s, Cache-Control %q\n%s", resp.Status, resp.Header.Get("Cache-Control"), body)
	}
	m := probeLineRE().FindStringSubmatch(string(body))
	if m == nil {
		t.Fatalf("probe document has no probe line:\n%s", body)
	}
	sentinel := m[1]

	verify := func(report string) string {
		t.Helper()
		resp, err := client.Post(base+"/probe/verify", "application/json", strings.NewReader(report))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Verdict string `json:"verdict"`
		}
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil {
			t.Fatalf("POST verify: %s\n%s", resp.Status, raw)
		}
		if strings.Contains(string(raw), sentinel) {
			t.Fatalf("verify response echoes the sentinel: %s", raw)
		}
		return out.Verdict
	}
	if v := verify(`{"session_id": "sess-1", "sentinel": "` + sentinel + `"}`); v != "READ_VERIFIED" {
		t.Fatalf("own sentinel: %s, want READ_VERIFIED", v)
	}
	if v := verify(`{"session_id": "sess-1", "sentinel": "` + sentinel + `"}`); v != "REPLAY_SUSPECT" {
		t.Fatalf("second report: %s, want REPLAY_SUSPECT", v)
	}
	if v := verify(`{"session_id": "sess-1", "sentinel": "AAAAAAAAAAAAAAAAAAAAAA"}`); v != "HALLUCINATED" {
		t.Fatalf("made-up value: %s, want HALLUCINATED", v)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe serve after SIGTERM: %v\n%s", err, rest.String())
	}
	if !strings.Contains(rest.String(), "probe server stopped") {
		t.Fatalf("no shutdown line:\n%s", rest.String())
	}
	audit, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(auditPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("audit log mode: %v %v", fi.Mode(), err)
	}
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(string(audit)), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		events = append(events, l["event"].(string))
	}
	if got := strings.Join(events, " "); got != "issued verified verified verified" {
		t.Fatalf("audit events %q", got)
	}
	for _, secret := range []string{"127.0.0.1", sentinel} {
		if strings.Contains(string(audit), secret) || strings.Contains(rest.String(), sentinel) {
			t.Fatalf("audit log or stderr holds %q:\n%s\n%s", secret, audit, rest.String())
		}
	}
}

// rpEnv runs readproof in dir with extra environment variables.
func rpEnv(t testing.TB, dir string, env []string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command("readproof", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG="), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// TestProbeConcurrentMountsDeliverWhatIsRecorded: processes mounting with
// --probe into one run at once each print exactly the bytes whose hash the
// manifest records at the position they were given, even when a mount had
// to retry at another position; replay confirms every delivered hash.
func TestProbeConcurrentMountsDeliverWhatIsRecorded(t *testing.T) {
	t.Parallel()
	requireGit(t)
	dir, uris := project(t, 3, 200)
	env := []string{"XDG_CONFIG_HOME=" + filepath.Join(t.TempDir(), "config")}
	if out, errs, err := rpEnv(t, dir, env, "probe", "key", "init"); err != nil {
		t.Fatalf("probe key init: %v\n%s%s", err, out, errs)
	}
	mustRP(t, dir, "run", "start", "c")
	const procs = 8
	type result struct {
		out, errs string
		err       error
	}
	results := make(chan result, procs)
	for p := 0; p < procs; p++ {
		go func(p int) {
			out, errs, err := rpEnv(t, dir, env, "run", "mount", "--probe", "c", uris[p%len(uris)])
			results <- result{out, errs, err}
		}(p)
	}
	delivered := map[int]string{}
	posRE := regexp.MustCompile(`mounted at position (\d+):`)
	for p := 0; p < procs; p++ {
		r := <-results
		if r.err != nil {
			t.Fatalf("mount --probe: %v\n%s", r.err, r.errs)
		}
		m := posRE.FindStringSubmatch(r.errs)
		if m == nil || !strings.Contains(r.errs, "session c."+m[1]+".c") {
			t.Fatalf("mount output does not name its position and session:\n%s", r.errs)
		}
		pos, _ := strconv.Atoi(m[1])
		if _, dup := delivered[pos]; dup {
			t.Fatalf("two mounts report position %d", pos)
		}
		delivered[pos] = r.out
	}
	mustRP(t, dir, "run", "commit", "c")
	var man struct {
		Entries []struct {
			Position    int    `json:"position"`
			ContentHash string `json:"content_hash"`
			Probe       *struct {
				DeliveredHash string `json:"delivered_hash"`
				Bytes         int    `json:"delivered_bytes"`
			} `json:"probe"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(mustRP(t, dir, "manifest", "--json", "c")), &man); err != nil {
		t.Fatal(err)
	}
	if len(man.Entries) != procs {
		t.Fatalf("%d entries, want %d", len(man.Entries), procs)
	}
	for _, e := range man.Entries {
		out := delivered[e.Position]
		if e.Probe == nil || sha256Text(out) != e.Probe.DeliveredHash || len(out) != e.Probe.Bytes {
			t.Fatalf("entry %d: printed %d bytes hashing to %s, manifest records %+v", e.Position, len(out), sha256Text(out), e.Probe)
		}
		if sha256Text(out) == e.ContentHash || !probeLineRE().MatchString(out) {
			t.Fatalf("entry %d: printed bytes lack the probe line", e.Position)
		}
	}
	_, errs, err := rpEnv(t, dir, env, "replay", "--no-content", "c")
	if err != nil || strings.Count(errs, "delivered bytes verified") != procs {
		t.Fatalf("replay: %v\n%s", err, errs)
	}
	fsck(t, filepath.Join(dir, ".readproof"))
}

func sha256Text(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}
