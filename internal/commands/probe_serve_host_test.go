package commands

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testproc"
)

// TestProbeServeHostByPublic: `probe serve` on loopback refuses a request
// addressed to another host name (a DNS name rebound to 127.0.0.1) with
// 403; with --public or --trusted-proxy, as behind a proxy on the same
// machine that forwards under a public name, it serves it.
func TestProbeServeHostByPublic(t *testing.T) {
	t.Parallel()
	for _, o := range []probeServeOptions{{}, {Public: true}, {TrustedProxy: []string{"127.0.0.1/32"}}} {
		o.Addr = "127.0.0.1:0"
		public := o.Public || len(o.TrustedProxy) > 0
		ctx, cancel := context.WithCancel(context.Background())
		stderr := &testproc.SyncBuffer{}
		done := make(chan error, 1)
		go func() { done <- runProbeServe(ctx, stderr, o) }()
		listening := regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)`)
		var base string
		for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if m := listening.FindStringSubmatch(string(stderr.Bytes())); m != nil {
				base = m[1]
			}
		}
		if base == "" {
			cancel()
			t.Fatalf("probe serve %+v did not say where it listens:\n%s", o, stderr.Bytes())
		}
		req, _ := http.NewRequest(http.MethodGet, base+"/probe/sess-1", nil)
		req.Host = "probe.example.org"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := http.StatusForbidden
		if public {
			want = http.StatusOK
		}
		if resp.StatusCode != want {
			t.Errorf("probe serve %+v on loopback, Host probe.example.org: %d, want %d", o, resp.StatusCode, want)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("probe serve: %v", err)
		}
	}
}
