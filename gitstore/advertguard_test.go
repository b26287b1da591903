package gitstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// endlessAdvert writes a ref advertisement that never ends (a branch after
// another) to w until a write fails, after the service line when service
// is set (smart http).
func endlessAdvert(w io.Writer, service bool) {
	bw := bufio.NewWriterSize(w, 64<<10)
	pkt := func(s string) { fmt.Fprintf(bw, "%04x%s", len(s)+4, s) }
	if service {
		pkt("# service=git-upload-pack\n")
		bw.WriteString("0000")
	}
	const id = "1111111111111111111111111111111111111111"
	pkt(id + " HEAD\x00multi_ack side-band-64k ofs-delta\n")
	for i := 0; ; i++ {
		pkt(fmt.Sprintf("%s refs/heads/b%09d\n", id, i))
		if i%256 == 0 && bw.Flush() != nil {
			return
		}
	}
}

// A remote whose list of refs never ends is refused once the list passes
// the mirror's bound, over every transport, instead of filling memory until
// the fetch times out (the deadline here is far beyond what the bound
// needs).
func TestMirrorRefusesEndlessAdvertisement(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/r.git/info/refs" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		endlessAdvert(w, true)
	}))
	t.Cleanup(srv.Close)
	daemon := listenOnce(t, func(c net.Conn) {
		var n [4]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		var size int
		fmt.Sscanf(string(n[:]), "%04x", &size)
		if _, err := io.ReadFull(c, make([]byte, max(size-4, 0))); err != nil {
			return
		}
		endlessAdvert(c, false)
	})
	var asked []string
	for _, tc := range []struct {
		url  string
		opts MirrorOptions
	}{
		{srv.URL + "/r.git", MirrorOptions{HTTPClient: &http.Client{}, MaxObjectBytes: limit}},
		{"git://git.example.test/r.git", MirrorOptions{Dial: dialTo(daemon, &asked), MaxObjectBytes: limit}},
	} {
		m, err := OpenMirror(t.TempDir(), tc.url, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err = m.Fetch(ctx)
		cancel()
		if !errors.Is(err, ErrAdvertTooLarge) {
			t.Fatalf("%s: %v, want ErrAdvertTooLarge", tc.url, err)
		}
		if want := fmt.Sprintf("over %d bytes", limit); !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not say %q", tc.url, err, want)
		}
	}
}
