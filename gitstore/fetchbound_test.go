package gitstore

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/testproc"
)

// TestFetchBoundStopsGit: each git fetch of a transport (FetchObjects,
// Fetch, ProbeCommitAt) from a remote that sends more than MaxFetchBytes
// is stopped while the pack arrives, from stock git daemon and from
// git-http-backend (git-remote-http then runs under git fetch) on
// 127.0.0.1, each behind a front that sends about 400 KB/s, so the 1 MiB
// pack of random bytes arrives over seconds: ErrFetchTooLarge naming the
// remote and the limit, a hint naming the option, no ref written, and no
// pack, whole or temporary, left in the store. Before, git 2.39 fetched
// it all.
func TestFetchBoundStopsGit(t *testing.T) {
	t.Parallel()
	up := manyBlobs(t, 1, 1<<20)
	root := filepath.Dir(up)
	slow := func(target string) string {
		addr, stop, err := testproc.SlowFront(target, 4<<10, 10*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		return addr
	}
	urls := []string{"git://" + slow(serveGitDaemon(t, root)) + "/up"}
	if out, err := exec.Command("git", "--exec-path").Output(); err == nil {
		backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
		if _, err := os.Stat(backend); err == nil {
			srv := httptest.NewServer(&cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root}, Stderr: io.Discard, Logger: log.New(io.Discard, "", 0)})
			t.Cleanup(srv.Close)
			urls = append(urls, "http://"+slow(srv.Listener.Addr().String())+"/up/.git")
		}
	}
	tip := OID(strings.TrimSpace(mirrorGit(t, up, "rev-parse", "main")))
	const limit = 64 << 10
	for _, url := range urls {
		for name, fetch := range map[string]func(*Transport) error{
			"objects": func(tr *Transport) error { return tr.FetchObjects(context.Background(), url, []OID{tip}) },
			"refs": func(tr *Transport) error {
				return tr.Fetch(context.Background(), url, []string{"+refs/heads/*:refs/readproof-remotes/up/*"})
			},
			"probe": func(tr *Transport) error {
				_, err := tr.ProbeCommitAt(context.Background(), url, "refs/heads/main")
				return err
			},
		} {
			t.Run(url[:strings.Index(url, ":")]+"/"+name, func(t *testing.T) {
				s := NewTestStore(t)
				tr, err := NewTransport(s.Path(), TransportOptions{MaxFetchBytes: limit})
				if err != nil {
					t.Fatal(err)
				}
				err = fetch(tr)
				if !errors.Is(err, ErrFetchTooLarge) || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), "64KiB") {
					t.Fatalf("fetch of 1 MiB under a 64 KiB limit: got %v, want ErrFetchTooLarge naming %s and 64KiB", err, url)
				}
				if !strings.Contains(hint.Of(err), MaxFetchFlag) {
					t.Errorf("the hint names no option: %q", hint.Of(err))
				}
				if refs, err := s.Refs("refs/"); err != nil || len(refs) != 0 {
					t.Errorf("a stopped fetch wrote refs %v (%v)", refs, err)
				}
				var left []string
				filepath.WalkDir(filepath.Join(s.Path(), "objects"), func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						left = append(left, p)
					}
					return nil
				})
				if len(left) != 0 {
					t.Errorf("a stopped fetch left %v", left)
				}
			})
		}
	}
}

// TestCopyLocalObjectsBound: the copy of a local repository's objects (a
// path clone) meets the same bound as a fetch: a source of 1 MiB under a
// limit of 64 KiB is refused with ErrFetchTooLarge naming the source and
// the limit, the hint a limit that holds it, and nothing is written.
// Before, the copy took any size.
func TestCopyLocalObjectsBound(t *testing.T) {
	t.Parallel()
	up := manyBlobs(t, 1, 1<<20)
	src := filepath.Join(filepath.Dir(up), "up.git")
	mirrorGit(t, filepath.Dir(up), "clone", "-q", "--bare", up, src)
	dst := NewTestStore(t)
	tr, err := NewTransport(dst.Path(), TransportOptions{MaxFetchBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	copied, err := tr.CopyLocalObjects(context.Background(), src)
	if !copied || !errors.Is(err, ErrFetchTooLarge) || !strings.Contains(err.Error(), src) || !strings.Contains(err.Error(), "64KiB") {
		t.Fatalf("copy of 1 MiB under a 64 KiB limit: copied %v, %v; want ErrFetchTooLarge naming %s and 64KiB", copied, err, src)
	}
	if h := hint.Of(err); !strings.Contains(h, MaxFetchFlag+" 2MiB") {
		t.Errorf("the hint names no limit that holds the source: %q", h)
	}
	var left []string
	filepath.WalkDir(filepath.Join(dst.Path(), "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("a refused copy wrote %v", left)
	}
	// under the default bound the same source is copied
	tr, err = NewTransport(NewTestStore(t).Path(), TransportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if copied, err := tr.CopyLocalObjects(context.Background(), src); !copied || err != nil {
		t.Fatalf("copy under the default limit: copied %v, %v", copied, err)
	}
}

// TestFetchBoundDespiteTransferUnpackLimit: git 2.39 reads
// transfer.unpackLimit before fetch.unpackLimit, so a user's
// transfer.unpackLimit of 100000 (in the global config) had git unpack a
// fetch of fewer objects into loose files, which the bound does not
// measure: the read of a remote's main alone (ProbeCommitAt, whose fetch
// does not fsck, the one case where git 2.39 then unpacks) took 1 MiB
// under a limit of 64 KiB. Each fetch now keeps its pack whatever the
// user's config says.
func TestFetchBoundDespiteTransferUnpackLimit(t *testing.T) {
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[transfer]\n\tunpackLimit = 100000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	up := manyBlobs(t, 1, 1<<20)
	tip := OID(strings.TrimSpace(mirrorGit(t, up, "rev-parse", "main")))
	url := up
	for name, fetch := range map[string]func(*Transport) error{
		"objects": func(tr *Transport) error { return tr.FetchObjects(context.Background(), url, []OID{tip}) },
		"refs": func(tr *Transport) error {
			return tr.Fetch(context.Background(), url, []string{"+refs/heads/*:refs/readproof-remotes/up/*"})
		},
		"probe": func(tr *Transport) error {
			_, err := tr.ProbeCommitAt(context.Background(), url, "refs/heads/main")
			return err
		},
	} {
		s := NewTestStore(t)
		tr, err := NewTransport(s.Path(), TransportOptions{MaxFetchBytes: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if err := fetch(tr); !errors.Is(err, ErrFetchTooLarge) {
			t.Errorf("%s: fetch of 1 MiB under a 64 KiB limit with transfer.unpackLimit=100000: got %v, want ErrFetchTooLarge", name, err)
		}
	}
}
