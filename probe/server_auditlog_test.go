package probe_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/probe"
)

// auditFiles reads PATH, PATH.1, ... and returns their lines, oldest file
// first, failing on a file over max bytes or a line that is not JSON.
func auditFiles(t *testing.T, path string, keep int, max int64) [][]string {
	t.Helper()
	var files [][]string
	for i := keep; i >= 0; i-- {
		name := path
		if i > 0 {
			name = fmt.Sprintf("%s.%d", path, i)
		}
		fi, err := os.Stat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > max {
			t.Errorf("%s holds %d bytes, max %d", name, fi.Size(), max)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", name, fi.Mode().Perm())
		}
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var v map[string]any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				t.Errorf("%s: line %q is not JSON: %v", name, sc.Text(), err)
			}
			lines = append(lines, sc.Text())
		}
		f.Close()
		files = append(files, lines)
	}
	if _, err := os.Stat(fmt.Sprintf("%s.%d", path, keep+1)); err == nil {
		t.Errorf("%s.%d exists; only %d rotated files are kept", path, keep+1, keep)
	}
	return files
}

// Issue 13.10: the audit log no longer grows one line per request without
// bound. 300 requests through a server whose log rotates at 1,000 bytes
// keeping 2 old files leave three files of at most 1,000 bytes, whole JSON
// lines only, the newest requests in PATH.
func TestServerAuditLogRotates(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	const max, keep = 1000, 2
	alog, err := probe.OpenAuditLog(path, probe.AuditLogOptions{MaxBytes: max, Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	defer alog.Close()
	k := testKeys(t, "auditlog")
	fast := probe.RateLimit{Burst: 1000, Every: time.Millisecond}
	ts := startServer(t, probe.ServerOptions{Keys: &k, Audit: alog, ProbeRate: fast, VerifyRate: fast})
	c := &http.Client{}
	const n = 300
	for i := 0; i < n; i++ {
		resp, err := c.Get(fmt.Sprintf("%s/probe/rot-%03d", ts.url, i))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	ts.stop()
	files := auditFiles(t, path, keep, max)
	if len(files) != keep+1 {
		t.Fatalf("%d audit files, want %d", len(files), keep+1)
	}
	var all []string
	for _, f := range files {
		all = append(all, f...)
	}
	if len(all) >= n/2 {
		t.Fatalf("%d lines kept of %d; the log did not rotate", len(all), n)
	}
	// The files hold the newest lines, in order, ending with the last request.
	for i, l := range all {
		want := fmt.Sprintf(`"session_id":"rot-%03d"`, n-len(all)+i)
		if !strings.Contains(l, want) {
			t.Fatalf("line %d of the kept log is %s, want %s", i, l, want)
		}
	}
}

// A reopened log counts what the file already holds; a closed one refuses
// writes; negative bounds are refused.
func TestAuditLogReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	line := []byte(strings.Repeat("x", 99) + "\n")
	l, err := probe.OpenAuditLog(path, probe.AuditLogOptions{MaxBytes: 250, Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	l.Write(line)
	l.Close()
	l, err = probe.OpenAuditLog(path, probe.AuditLogOptions{MaxBytes: 250, Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	l.Write(line)
	l.Write(line) // 300 > 250: rotates first
	l.Close()
	if b, _ := os.ReadFile(path + ".1"); len(b) != 200 {
		t.Fatalf("rotated file holds %d bytes, want the first 200", len(b))
	}
	if b, _ := os.ReadFile(path); len(b) != 100 {
		t.Fatalf("current file holds %d bytes, want 100", len(b))
	}
	if _, err := l.Write(line); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}

	if _, err := probe.OpenAuditLog(path, probe.AuditLogOptions{MaxBytes: 150, Keep: -1}); !errors.Is(err, probe.ErrOptions) {
		t.Fatalf("negative keep: %v", err)
	}
}
