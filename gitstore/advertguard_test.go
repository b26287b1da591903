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
	"os/exec"
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

// The bound is on the advertisement's bytes as upload-pack sends them
// (pkt-line headers and the final flush included): a remote whose
// advertisement is exactly the bound is fetched, one byte less refuses it.
// At the default 100 MiB that is 10^6 refs of names up to 58 bytes.
func TestMirrorAdvertisementAtTheBound(t *testing.T) {
	t.Parallel()
	_, dir, r := bareRemote(t, "--quiet", "--bare", "--initial-branch=main")
	a := mkCommit(t, r, "a")
	updates := []RefUpdate{{Name: "refs/heads/main", New: a}}
	for i := 0; i < 300; i++ {
		updates = append(updates, RefUpdate{Name: fmt.Sprintf("refs/tags/readproof/runs/run-%04d", i), New: a})
	}
	mustUpdate(t, r, updates...)
	// what upload-pack sends a fetch first (asked nothing, it then stops;
	// --advertise-refs would add http's no-done)
	cmd := exec.Command("git", "upload-pack", "--", dir)
	cmd.Env = (&Transport{}).env()
	advert, _ := cmd.Output()
	if !strings.HasSuffix(string(advert), "0000") || !strings.Contains(string(advert), "run-0299\n") {
		t.Fatalf("git upload-pack: %q", advert)
	}
	size := int64(len(advert))
	for _, max := range []int64{size, size - 1} {
		m, err := OpenMirror(t.TempDir(), dir, MirrorOptions{MaxObjectBytes: max})
		if err != nil {
			t.Fatal(err)
		}
		err = m.Fetch(context.Background())
		if max == size && err != nil {
			t.Errorf("an advertisement of %d bytes, bound %d: %v", size, max, err)
		}
		if max < size && !errors.Is(err, ErrAdvertTooLarge) {
			t.Errorf("an advertisement of %d bytes, bound %d: %v, want ErrAdvertTooLarge", size, max, err)
		}
	}
}
