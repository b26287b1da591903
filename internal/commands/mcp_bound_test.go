package commands

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/mcpserver"
)

// elsewhere is a listener on 127.0.0.1 that reports another address, as
// net.Listen("tcp", "localhost:PORT") binds when a hosts file or resolver
// maps localhost off loopback.
type elsewhere struct{ net.Listener }

func (l elsewhere) Addr() net.Addr {
	a := *l.Listener.Addr().(*net.TCPAddr)
	a.IP = net.ParseIP("192.0.2.7")
	return &a
}

// TestMCPHTTPBoundOffLoopback: `mcp --http localhost:PORT` passes the name
// check, but when the listener it gets is bound off loopback it closes it
// and refuses, naming the address and the way out, instead of serving
// without --public.
func TestMCPHTTPBoundOffLoopback(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, st, tokens := filepath.Join(dir, "readproof.toml"), filepath.Join(dir, ".readproof"), filepath.Join(t.TempDir(), "mcp-tokens.json")
	var out, errb bytes.Buffer
	for _, args := range [][]string{{"init"}, {"mcp", "token", "add", "t1", "--tokens", tokens}} {
		if code := Main(append([]string{"readproof", "--config", cfg, "--store", st}, args...), strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("readproof %v: exit %d\n%s", args, code, errb.String())
		}
	}
	e, err := envFor(strings.NewReader(""), &out, &errb, cfg, st, false)
	if err != nil {
		t.Fatal(err)
	}
	var bound net.Listener
	o := mcpOptions{
		HTTP: "localhost:0", Tokens: tokens,
		MaxBody: mcpserver.DefaultMaxBodyBytes, MaxConcurrent: mcpserver.DefaultMaxConcurrent,
		Rate: mcpserver.DefaultRate, Burst: mcpserver.DefaultBurst, ShutdownTimeout: time.Second,
		listen: func(network, _ string) (net.Listener, error) {
			ln, err := net.Listen(network, "127.0.0.1:0")
			bound = ln
			return elsewhere{ln}, err
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	errb.Reset()
	err = runMCP(ctx, e, o)
	if err == nil || !strings.Contains(err.Error(), "192.0.2.7") || !strings.Contains(err.Error(), "not loopback") {
		t.Fatalf("mcp --http localhost:0 bound on 192.0.2.7: err %v, want a refusal naming the address\nstderr: %s", err, errb.String())
	}
	if h := hint.Of(err); !strings.Contains(h, "--public") || !strings.Contains(h, "127.0.0.1") {
		t.Errorf("hint %q: want --public or an IP literal", h)
	}
	if strings.Contains(errb.String(), "serving") {
		t.Errorf("stderr says it serves: %s", errb.String())
	}
	if c, err := net.Dial("tcp", bound.Addr().String()); err == nil {
		c.Close()
		t.Errorf("the listener on %s was left open", bound.Addr())
	}
}
