package commands

// docs/observability.md: a collector that is down, slow or hostile costs
// at most one plain line on stderr and a bounded wait at exit; it never
// changes a command's output or exit code, and the collector's API key
// (OTEL_EXPORTER_OTLP_HEADERS) goes to the configured endpoint only.

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
)

// rawCollector answers every request on 127.0.0.1 with the bytes of answer,
// written as they are (a status line no http.Server would write).
func rawCollector(t *testing.T, answer string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				req, err := http.ReadRequest(r)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				io.WriteString(c, answer)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

func TestOTelCollectorMisbehaves(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	const apiKey = "otlp-api-key-6f2d9e1a4c7b"
	dir, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "policy.md"), []byte("Refund within 30 days.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	for _, args := range [][]string{{"init"}, {"resource", "add", "readproof://demo/policy", "--source-type", "filesystem", "--path", "policy.md"}} {
		if _, stderr, err := readproofCmd(t, dir, base, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
	}

	// Elsewhere is another server the collector redirects to: it must never
	// see the collector's API key.
	var keyElsewhere atomic.Bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, apiKey) {
					keyElsewhere.Store(true)
				}
			}
		}
		io.Copy(io.Discard, r.Body)
	}))
	defer elsewhere.Close()
	status := func(code int, extra func(http.ResponseWriter)) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			if extra != nil {
				extra(w)
			}
			w.WriteHeader(code)
		}))
		t.Cleanup(s.Close)
		return s.URL
	}
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
		chunk := []byte(strings.Repeat("x", 32<<10))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer endless.Close()
	stall := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(stall)

	for _, c := range []struct {
		name     string
		endpoint string
		env      []string
		quiet    bool   // the export succeeds: nothing on stderr
		says     string // what stderr says, when it says why the export ended
		orSays   string // or this: whichever of the exit's flush and the batcher notices first
	}{
		{name: "401", endpoint: status(http.StatusUnauthorized, nil)},
		{name: "500", endpoint: status(http.StatusInternalServerError, nil)},
		{name: "429", endpoint: status(http.StatusTooManyRequests, func(w http.ResponseWriter) { w.Header().Set("Retry-After", "30") })},
		{name: "redirect", endpoint: status(http.StatusTemporaryRedirect, func(w http.ResponseWriter) { w.Header().Set("Location", elsewhere.URL+"/v1/traces") })},
		{name: "endless body", endpoint: endless.URL, quiet: true},
		{name: "slow", endpoint: slow.URL, env: []string{"OTEL_EXPORTER_OTLP_TIMEOUT=300"}, says: "not exported within 300ms", orSays: "processor export timeout"},
		{name: "hostile status", endpoint: rawCollector(t, "HTTP/1.1 503 \x1b]0;owned\x07\x1b[2Jgone\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := append(append(append([]string(nil), base...), c.env...),
				"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+c.endpoint+"/v1/traces",
				"OTEL_EXPORTER_OTLP_HEADERS=x-api-key="+apiKey)
			id := "r-" + strings.ReplaceAll(c.name, " ", "-")
			start := time.Now()
			stdout, stderr, err := readproofCmd(t, dir, env, "run", "--json", "--id", id, "readproof://demo/policy")
			took := time.Since(start)
			if err != nil {
				t.Fatalf("exit: %v\n%s", err, stderr)
			}
			var out struct {
				RunID      string `json:"run_id"`
				ManifestID string `json:"manifest_id"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil || out.RunID != id || len(out.ManifestID) != 40 {
				t.Errorf("stdout is not run's JSON (%v): %q", err, stdout)
			}
			if strings.Contains(stdout, "telemetry") || strings.Contains(stdout+stderr, apiKey) {
				t.Errorf("stdout %q stderr %q", stdout, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if c.quiet {
				if stderr != "" {
					t.Errorf("want nothing on stderr, got %q", stderr)
				}
			} else if len(lines) != 1 || !strings.HasPrefix(lines[0], "readproof: telemetry: ") {
				t.Errorf("want one telemetry line on stderr, got %q", stderr)
			}
			for _, r := range stderr {
				if r != '\n' && !unicode.IsPrint(r) {
					t.Errorf("stderr holds the control character %q: %q", r, stderr)
					break
				}
			}
			if !strings.Contains(stderr, c.says) && (c.orSays == "" || !strings.Contains(stderr, c.orSays)) {
				t.Errorf("stderr %q does not say %q", stderr, c.says)
			}
			// A timeout test: the slow export ended because of
			// OTEL_EXPORTER_OTLP_TIMEOUT (stderr says so, above); the
			// collectors that stall or never end their body do so until
			// the test ends, and the wall bound is wide, for loaded
			// machines.
			if took > 30*time.Second {
				t.Errorf("the command took %v", took)
			}
			t.Logf("%v: %s", took.Round(time.Millisecond), strings.TrimSpace(stderr))
		})
	}
	if keyElsewhere.Load() {
		t.Errorf("the collector's redirect carried OTEL_EXPORTER_OTLP_HEADERS' API key to %s", elsewhere.URL)
	}
}

// TestOTelSlowCollectorKeepsCommitSpan: when the collector is slower than
// spans come (a remote one, a large run), the batch queue fills and spans
// are dropped; the ones a user joins a run on, the command span and
// readproof.commit with the manifest id and Merkle root, are never among
// them. A queue of 4 and a collector taking 100 ms per export make a
// 12-document run what a 1,500-document one is with the defaults and a
// collector taking 300 ms (which lost both, measured).
func TestOTelSlowCollectorKeepsCommitSpan(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	recv := newOTLPReceiver(t)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
		recv.srv.Config.Handler.ServeHTTP(w, r)
	}))
	defer slow.Close()
	dir, home := t.TempDir(), t.TempDir()
	policy := "version = 1\n"
	var uris []string
	for i := range 12 {
		name := "d" + strconv.Itoa(i)
		if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte("document "+name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		policy += "[[resource]]\nuri = \"readproof://big/" + name + "\"\nsource = { type = \"filesystem\", path = \"" + name + ".md\" }\n"
		uris = append(uris, "readproof://big/"+name)
	}
	if err := os.WriteFile(filepath.Join(dir, "readproof.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	if _, stderr, err := readproofCmd(t, dir, base, "init"); err != nil {
		t.Fatalf("init: %v\n%s", err, stderr)
	}
	env := append(append([]string(nil), base...), "OTEL_EXPORTER_OTLP_ENDPOINT="+slow.URL,
		"OTEL_BSP_MAX_QUEUE_SIZE=4", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE=2")
	stdout, stderr, err := readproofCmd(t, dir, env, append([]string{"run", "--json", "--id", "big"}, uris...)...)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	var out struct {
		ManifestID string `json:"manifest_id"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("run --json: %v: %q", err, stdout)
	}
	spans, _ := recv.spans()
	var commit, root bool
	for _, s := range spans {
		id, _ := attrString(s.Attributes, "readproof.manifest_id")
		commit = commit || s.Name == "readproof.commit" && id == out.ManifestID
		root = root || s.Name == "run" && id == out.ManifestID
	}
	if !commit || !root {
		t.Errorf("exported %d spans without the commit span (%v) or the command span (%v): %v", len(spans), commit, root, spanNames(spans))
	}
}
