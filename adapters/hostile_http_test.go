package adapters_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/readproof/readproof/adapters"
)

// What a hostile document host can send an http source, and what holds.

// A gzip body is bounded by what it decodes to, not by what it weighs on
// the wire: a bomb of a few KiB that inflates past max_bytes is refused,
// and a small one is recorded decoded.
func TestHTTPGzipBoundedDecoded(t *testing.T) {
	t.Parallel()
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	bomb, small := gz(make([]byte, 64<<20)), gz([]byte("plain text, gzipped on the wire\n"))
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		if r.URL.Path == "/bomb" {
			w.Write(bomb)
			return
		}
		w.Write(small)
	})
	env := adapters.Env{Network: loopback, MaxBytes: 1 << 20}
	_, err := fetchSpec(t, httpSpec(srv.srv.URL+"/bomb"), env)
	if !errors.Is(err, adapters.ErrTooLarge) {
		t.Fatalf("a %d-byte gzip body of 64 MiB: %v, want ErrTooLarge", len(bomb), err)
	}
	r, err := fetchSpec(t, httpSpec(srv.srv.URL+"/small"), env)
	if err != nil || string(r.Content) != "plain text, gzipped on the wire\n" {
		t.Fatalf("small gzip body: %q, %v", r.Content, err)
	}
}

// Headers are bounded in all (64 KiB), informational answers (1xx)
// included: a flood of 103s, or one header of a MiB, is refused.
func TestHTTPHeadersBounded(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		bw := bufio.NewWriter(c)
		switch r.URL.Path {
		case "/1xx":
			for range 10000 {
				bw.WriteString("HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n")
			}
			bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		case "/header":
			bw.WriteString("HTTP/1.1 200 OK\r\nX-Padding: " + strings.Repeat("a", 1<<20) + "\r\nContent-Length: 2\r\n\r\nok")
		}
		bw.Flush()
	})
	for _, p := range []string{"/1xx", "/header"} {
		r, err := fetchSpec(t, httpSpec(srv.srv.URL+p), adapters.Env{Network: loopback})
		if err == nil || !strings.Contains(err.Error(), "headers exceeded") || !strings.Contains(err.Error(), uri) {
			t.Errorf("%s: %q, %v; want a refusal of the headers", p, r.Content, err)
		}
	}
}

// No proxy from the environment is used: the address dialled is the one
// checked.
func TestHTTPIgnoresProxyEnvironment(t *testing.T) {
	proxy := newRecorder(t, ok("through the proxy"))
	for _, v := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"} {
		t.Setenv(v, proxy.srv.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	r, err := fetchSpec(t, httpSpec("http://docs.example.invalid/doc"), adapters.Env{Network: loopback})
	if err == nil || proxy.n.Load() != 0 {
		t.Fatalf("%q, %v: the proxy got %d requests", r.Content, err, proxy.n.Load())
	}
}

// A server whose certificate does not verify is not read.
func TestHTTPRefusesBadCertificate(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(ok("over tls"))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake fails, as it should
	srv.StartTLS()
	t.Cleanup(srv.Close)
	r, err := fetchSpec(t, httpSpec(srv.URL+"/doc"), adapters.Env{Network: loopback})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("self-signed certificate: %q, %v", r.Content, err)
	}
}
