package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testproc"
)

// serveGitDaemon serves the repositories under root over git:// with
// stock git daemon on 127.0.0.1, or skips the test.
func serveGitDaemon(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("git --exec-path failed")
	}
	if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(out)), "git-daemon")); err != nil {
		t.Skipf("git daemon unavailable: %v", err)
	}
	port, err := testproc.FreePort()
	if err != nil {
		t.Skipf("no free port: %v", err)
	}
	cmd := exec.Command("git", "daemon", "--verbose", "--export-all", "--base-path="+root, "--listen=127.0.0.1",
		"--port="+strconv.Itoa(port), "--reuseaddr", root)
	cmd.Env = append(gitEnv(), "HOME="+root, "GIT_CONFIG_NOSYSTEM=1")
	// git daemon runs git-daemon as its child: the group of both ends
	testproc.OwnGroup(cmd)
	done, err := testproc.StartGitDaemon(cmd, 10*time.Second)
	if err != nil {
		t.Fatalf("git daemon on port %d: %v", port, err)
	}
	t.Cleanup(func() {
		testproc.KillGroup(cmd)
		<-done
	})
	return "127.0.0.1:" + strconv.Itoa(port)
}

// The pack bounds hold on every transport a git source fetches over, as
// they sit on the pack stream whatever carries it: a path and a file://
// URL (stock git's upload-pack on a pipe), git:// and smart HTTP. Each
// refusal comes from the pack's header and leaves no pack behind. The
// pack of n objects is more than the pipes between upload-pack and the
// mirror hold: a refused local fetch that waited for upload-pack to end
// without stopping it would hang (Mirror.Fetch's ls.stop), and a remote
// one that read the rest would run into the deadline.
func TestMirrorPackBoundsEveryTransport(t *testing.T) {
	const n = 6000
	up := manyBlobs(t, n, 0)
	root := filepath.Dir(up)
	urls := [][2]string{
		{"path", up},
		{"file", "file://" + filepath.ToSlash(up)},
		{"daemon", "git://" + serveGitDaemon(t, root) + "/up"},
	}
	if out, err := exec.Command("git", "--exec-path").Output(); err == nil {
		backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
		if _, err := os.Stat(backend); err == nil {
			srv := httptest.NewServer(&cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root}, Stderr: io.Discard, Logger: log.New(io.Discard, "", 0)})
			t.Cleanup(srv.Close)
			urls = append(urls, [2]string{"http", srv.URL + "/up/.git"})
		}
	}
	for _, c := range urls {
		name, url := c[0], c[1]
		opts := MirrorOptions{MaxPackObjects: 1000}
		if name == "http" {
			opts.HTTPClient = &http.Client{}
		}
		m, err := OpenMirror(t.TempDir(), url, opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = m.Fetch(ctx)
		cancel()
		if !errors.Is(err, ErrRepoTooLarge) || !strings.Contains(err.Error(), "over the limit of 1000") {
			t.Errorf("%s: Fetch = %v, want ErrRepoTooLarge from the pack's header", name, err)
		}
		noPack(t, m)
		// The same fetch under a bound that admits the pack succeeds.
		opts.MaxPackObjects = n + 3
		m, _ = OpenMirror(t.TempDir(), url, opts)
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		if err := m.Fetch(ctx); err != nil {
			t.Errorf("%s: Fetch under a bound that admits the pack: %v", name, err)
		}
		cancel()
	}
	if len(urls) < 4 {
		t.Log("git http-backend unavailable: smart HTTP not tried")
	}
}

// pktLine is s as one pkt-line.
func pktLine(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }

// A remote that answers a fetch with progress messages and nothing else
// (sideband channel 2, which the pack bounds do not see, and which it was
// asked not to send) is stopped once it has sent maxProgress bytes of
// them, not when the fetch times out.
func TestMirrorRefusesEndlessProgress(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/info/refs"):
			w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
			io.WriteString(w, pktLine("# service=git-upload-pack\n")+"0000"+
				pktLine(strings.Repeat("1", 40)+" refs/heads/main\x00side-band-64k ofs-delta no-progress\n")+"0000")
		case strings.HasSuffix(r.URL.Path, "/git-upload-pack"):
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
			io.WriteString(w, pktLine("NAK\n"))
			noise := pktLine("\x02" + strings.Repeat("counting objects\r", 3000))
			// at most 64 MiB, so that a client that reads on ends too
			for sent.Load() < 64<<20 {
				if _, err := io.WriteString(w, noise); err != nil {
					return
				}
				sent.Add(int64(len(noise)))
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	m, err := OpenMirror(t.TempDir(), srv.URL+"/r.git", MirrorOptions{HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = m.Fetch(ctx)
	if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "bytes of progress messages") {
		t.Fatalf("Fetch = %v, want a refusal of the progress messages", err)
	}
	noPack(t, m)
}
