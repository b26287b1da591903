package adapters_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/readproof/readproof/adapters"
)

func TestScratchGzipBomb(t *testing.T) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for i := 0; i < 200; i++ {
		zw.Write(zero)
	}
	zw.Close()
	t.Logf("compressed %d bytes", buf.Len())
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", "")
		w.Write(buf.Bytes())
	})
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	env := adapters.Env{Network: loopback, MaxBytes: 1 << 20}
	start := time.Now()
	_, err := fetchSpec(t, httpSpec(srv.srv.URL+"/doc"), env)
	runtime.ReadMemStats(&ms)
	t.Logf("err %v; alloc %d MiB in %s; accept-encoding sent %q", err, (ms.TotalAlloc-before)>>20, time.Since(start), srv.headers[0].Get("Accept-Encoding"))
	// with a declared Accept-Encoding
	spec := httpSpec(srv.srv.URL + "/doc")
	spec.PublicHeaders = map[string]string{"Accept-Encoding": "gzip"}
	r, err := fetchSpec(t, spec, env)
	t.Logf("declared: %d bytes, err %v", len(r.Content), err)
}

func TestScratchTokenToAnyAPIBase(t *testing.T) {
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", 404) })
	env := adapters.Env{Network: loopback, EnvAllow: []string{"GITHUB_TOKEN"}, LookupEnv: func(n string) (string, bool) { return "ghp_secretsecret", n == "GITHUB_TOKEN" }}
	spec := adapters.Spec{Type: "github", Owner: "a", Repo: "b", Path: "x.md", APIBase: srv.srv.URL, TokenEnv: "GITHUB_TOKEN"}
	_, err := fetchSpec(t, spec, env)
	t.Logf("err %v; attacker got Authorization %q", err, srv.headers[0].Get("Authorization"))
}
