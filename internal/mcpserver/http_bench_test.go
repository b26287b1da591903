package mcpserver_test

// Issue 17, acceptance 4 (MCP part): a tagged read over streamable HTTP on
// loopback, one client and 16 at once. Run:
//
//	go test ./internal/mcpserver/ -run '^$' -bench HTTPTaggedRead -benchtime 2s
//	READPROOF_LONG_TESTS=1 go test ./internal/mcpserver/ -run TestHTTPTaggedReadBudget -v
//
// The server runs in the test process (mcpserver.HTTPHandler behind an
// httptest server) on a real store; each read opens the store and the
// policy afresh, as `readproof mcp --http` does.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/testsize"
)

// inProcessHTTP serves p's store over HTTP in this process and returns the
// URL and a token.
func inProcessHTTP(tb testing.TB, p *project) (string, string) {
	tb.Helper()
	p.declare(tb, "readproof://demo/policies/refunds2", "policies/refunds.md")
	// `readproof get` and `readproof tag set URI prod`, in this process:
	// the store calls those commands make
	open := p.opener()
	st, err := open()
	if err != nil {
		tb.Fatal(err)
	}
	u, err := identity.ParseURI(refundsURI)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := st.Resolve(context.Background(), refundsURI); err != nil {
		tb.Fatal(err)
	}
	if _, err := st.SetTag(u, "prod", ""); err != nil {
		tb.Fatal(err)
	}
	st.Close()
	f := mcpauth.Empty()
	tok, err := f.Add("bench", mcpauth.ScopeRead, 0, time.Now(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := mcpserver.New(mcpserver.Options{Open: open})
	if err != nil {
		tb.Fatal(err)
	}
	h, err := s.HTTPHandler(mcpserver.HTTPOptions{
		Verify: func(t string) (mcpauth.Caller, error) { return f.Verify(t, time.Now()) },
		Rate:   1e6, Burst: 1e6,
	})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv.URL, tok
}

func dialHTTP(tb testing.TB, url, token string) *mcp.ClientSession {
	tb.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearer{token, &http.Transport{MaxIdleConnsPerHost: 64}}}}
	cs, err := client.Connect(context.Background(), tr, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cs.Close() })
	return cs
}

func taggedRead(tb testing.TB, cs *mcp.ClientSession) {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "readproof_resolve", Arguments: map[string]any{"uri": refundsURI + "@prod"}})
	if err != nil || res.IsError {
		tb.Fatalf("tagged read: %v %v", err, res)
	}
}

// readFigures are the measured figures of clients reading at once.
type readFigures struct {
	clients, reads int
	p50, p95       time.Duration
	perSecond      float64
}

func (f readFigures) String() string {
	return fmt.Sprintf("%d client(s), %d tagged reads: p50 %.2f ms, p95 %.2f ms, %.0f reads/s", f.clients, f.reads,
		float64(f.p50.Microseconds())/1000, float64(f.p95.Microseconds())/1000, f.perSecond)
}

func measureReads(tb testing.TB, url, token string, clients, perClient int) readFigures {
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		sessions[i] = dialHTTP(tb, url, token)
		taggedRead(tb, sessions[i]) // warm the connection
	}
	lat := make([]time.Duration, clients*perClient)
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < perClient; i++ {
				t0 := time.Now()
				taggedRead(tb, sessions[c])
				lat[c*perClient+i] = time.Since(t0)
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return readFigures{clients: clients, reads: len(lat), p50: lat[len(lat)/2], p95: lat[len(lat)*95/100], perSecond: float64(len(lat)) / elapsed.Seconds()}
}

// BenchmarkHTTPTaggedRead: ns/op of one client's round trip, and reads/s
// with 16 clients.
func BenchmarkHTTPTaggedRead(b *testing.B) {
	p := demoProject(b)
	url, tok := inProcessHTTP(b, p)
	b.Run("one-client", func(b *testing.B) {
		cs := dialHTTP(b, url, tok)
		taggedRead(b, cs)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			taggedRead(b, cs)
		}
	})
	b.Run("16-clients", func(b *testing.B) {
		per := b.N/16 + 1
		f := measureReads(b, url, tok, 16, per)
		b.ReportMetric(f.perSecond, "reads/s")
		b.ReportMetric(float64(f.p50.Microseconds())/1000, "p50-ms")
	})
}

// TestHTTPTaggedReadBudget measures the budget: a tagged read round
// trip under 5 ms on loopback (one client, median) and at least 500 reads/s
// from 16 clients. The figures are logged always; they are asserted only
// with READPROOF_LONG_TESTS=1, on a quiet machine.
func TestHTTPTaggedReadBudget(t *testing.T) {
	p := demoProject(t)
	url, tok := inProcessHTTP(t, p)
	one := measureReads(t, url, tok, 1, testsize.Pick(t, 20, 200))
	many := measureReads(t, url, tok, 16, testsize.Pick(t, 5, 64))
	t.Logf("%s", one)
	t.Logf("%s", many)
	if !testsize.Long() {
		return
	}
	if one.p50 > 5*time.Millisecond {
		t.Errorf("tagged read round trip p50 %s, budget 5 ms", one.p50)
	}
	if many.perSecond < 500 {
		t.Errorf("16 clients: %.0f reads/s, budget 500", many.perSecond)
	}
}
