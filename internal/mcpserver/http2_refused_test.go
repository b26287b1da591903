package mcpserver_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
)

// tlsFiles writes selfSigned's certificate and key in dir, and returns
// their paths and a pool that trusts the certificate.
func tlsFiles(t *testing.T, dir string) (certPath, keyPath string, pool *x509.CertPool) {
	t.Helper()
	certPEM, keyPEM := selfSigned(t)
	pool = x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certPath, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath, pool
}

// closeListener tells of each accepted connection's close.
type closeListener struct {
	net.Listener
	closed chan struct{}
}

func (l *closeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &closeConn{Conn: c, closed: l.closed}, nil
}

type closeConn struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (c *closeConn) Close() error {
	c.once.Do(func() { c.closed <- struct{}{} })
	return c.Conn.Close()
}

// TestHTTP2RefusedConnectionClosed: over TLS the server speaks HTTP/2
// (net/http's default), where a Connection header has no meaning; the
// Connection: close that every refusal carries (challengeWriter) is taken
// by net/http's HTTP/2 server as a graceful shutdown of the connection:
// a GOAWAY, then the connection closed once its streams are done. So a
// client refused over HTTP/2 loses its connection as one refused over
// HTTP/1.1 does, and a request body it left unsent holds nothing (its
// stream is reset when its handler returns). A client's answered call
// keeps its connection: a second call reuses it. Cleartext HTTP/2 (h2c)
// is not served: a client that speaks it with prior knowledge is refused.
func TestHTTP2RefusedConnectionClosed(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	srv, err := mcpserver.New(mcpserver.Options{Open: p.opener()})
	if err != nil {
		t.Fatal(err)
	}
	tt := newTokenTable()
	tt.add(tokW, "w", mcpauth.ScopeWrite)
	certPath, keyPath, pool := tlsFiles(t, t.TempDir())
	serve := func(tls bool) (string, chan struct{}) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cl := &closeListener{Listener: ln, closed: make(chan struct{}, 16)}
		ho := mcpserver.HTTPOptions{Verify: tt.Verify}
		scheme := "http"
		if tls {
			ho.TLSCert, ho.TLSKey, scheme = certPath, keyPath, "https"
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.ServeHTTP(ctx, ho, cl) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("ServeHTTP: %v", err)
			}
		})
		return scheme + "://" + ln.Addr().String() + "/", cl.closed
	}
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + mcpserver.ToolResourcesList + `","arguments":{}}}`
	post := func(c *http.Client, url, token string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(call))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	deadline := time.Now().Add(30 * time.Second)
	if d, ok := t.Deadline(); ok && d.Before(deadline) {
		deadline = d.Add(-time.Second)
	}

	url, closed := serve(true)
	h2 := func() *http.Client {
		var protos http.Protocols
		protos.SetHTTP2(true)
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Protocols: &protos}}
	}
	// a client's calls over HTTP/2 share its connection
	c := h2()
	for i := range 2 {
		resp, err := post(c, url, tokW)
		if err != nil || resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
			t.Fatalf("call %d over HTTP/2: %v %v", i+1, resp, err)
		}
	}
	select {
	case <-closed:
		t.Fatalf("a client's connection closed after its calls")
	default:
	}
	c.CloseIdleConnections()
	<-closed

	// a refused token's connection is closed by the server, the client
	// holding it open
	for _, token := range []string{"junk", "rpmcp_" + strings.Repeat("9", 64)} {
		c := h2()
		resp, err := post(c, url, token)
		if err != nil || resp.StatusCode != http.StatusUnauthorized || resp.ProtoMajor != 2 {
			t.Fatalf("token %.8s over HTTP/2: %v %v, want 401", token, resp, err)
		}
		select {
		case <-closed:
		case <-time.After(time.Until(deadline)):
			t.Fatalf("token %.8s: the refused HTTP/2 connection is still open", token)
		}
	}

	// a client that ignores the GOAWAY and holds the connection open
	// has it closed by the server all the same
	conn, err := tls.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "https://"), "/"), &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if conn.ConnectionState().NegotiatedProtocol != "h2" {
		t.Fatalf("TLS without h2: %q", conn.ConnectionState().NegotiatedProtocol)
	}
	conn.SetDeadline(deadline)
	frames := h2Request(strings.TrimSuffix(strings.TrimPrefix(url, "https://"), "/"), "junk", call)
	if _, err := conn.Write(frames); err != nil {
		t.Fatal(err)
	}
	var seen []string
	goaway := false
	for {
		var head [9]byte
		if _, err := io.ReadFull(conn, head[:]); err != nil {
			if !goaway || !slices.Contains(seen, "1") || errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("a raw HTTP/2 client refused: frames %v, then %v; want its answer's HEADERS (1), a GOAWAY (7) and the connection closed", seen, err)
			}
			break // closed by the server
		}
		n := int(head[0])<<16 | int(head[1])<<8 | int(head[2])
		if _, err := io.CopyN(io.Discard, conn, int64(n)); err != nil {
			t.Fatalf("frames %v: %v", seen, err)
		}
		seen = append(seen, strconv.Itoa(int(head[3])))
		switch head[3] {
		case 0x4: // SETTINGS: acknowledged, unless an ack itself
			if head[4]&0x1 == 0 {
				conn.Write([]byte{0, 0, 0, 0x4, 0x1, 0, 0, 0, 0})
			}
		case 0x7: // GOAWAY (before or after the answer's HEADERS)
			goaway = true
		}
	}

	// no h2c
	plain, _ := serve(false)
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	h2c := &http.Client{Transport: &http.Transport{Protocols: &protos}}
	if resp, err := post(h2c, plain, tokW); err == nil && resp.StatusCode == http.StatusOK {
		t.Errorf("HTTP/2 without TLS (h2c) was served: %s", resp.Proto)
	}
}

// h2Request is what an HTTP/2 client sends for one POST of body to
// authority with a bearer token: the connection preface, an empty
// SETTINGS frame, a HEADERS frame (HPACK literals, never indexed, no
// Huffman coding) and a DATA frame ending the stream.
func h2Request(authority, token, body string) []byte {
	frame := func(typ, flags byte, payload []byte) []byte {
		n := len(payload)
		return append([]byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags, 0, 0, 0, 1}, payload...)
	}
	var block []byte
	str := func(s string) {
		// a length below 127 fits the 7-bit prefix
		block = append(block, byte(len(s)))
		block = append(block, s...)
	}
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "https"}, {":authority", authority}, {":path", "/"},
		{"content-type", "application/json"}, {"accept", "application/json, text/event-stream"},
		{"mcp-protocol-version", "2025-06-18"}, {"authorization", "Bearer " + token}, {"content-length", strconv.Itoa(len(body))}} {
		block = append(block, 0x10) // literal, never indexed, new name
		str(f[0])
		str(f[1])
	}
	out := []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	settings := frame(0x4, 0, nil)
	settings[5], settings[6], settings[7], settings[8] = 0, 0, 0, 0 // stream 0
	out = append(out, settings...)
	out = append(out, frame(0x1, 0x4, block)...)        // HEADERS, END_HEADERS
	out = append(out, frame(0x0, 0x1, []byte(body))...) // DATA, END_STREAM
	return out
}
