package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// noSidebandFront forwards git:// connections to target as a remote that
// offers no side-band would: the client's request loses its
// "version=2" (so the daemon answers in protocol 0) and the daemon's
// first line its side-band capabilities, so git fetch hands the socket
// itself to index-pack, which reads the pack from it. Of the daemon's
// answer after that line, only the first hold bytes are sent, slowly;
// then the connection is kept open, sending nothing, until the client
// closes it. closed receives once the client side is closed.
func noSidebandFront(t *testing.T, target string, hold int) (addr string, closed <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	done := make(chan struct{}, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { done <- struct{}{} }()
				defer c.Close()
				s, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer s.Close()
				req, err := readPkt(c)
				if err != nil {
					return
				}
				if i := bytes.Index(req, []byte("\x00\x00")); i >= 0 {
					req = req[:i+1]
				}
				writePkt(s, req)
				clientGone := make(chan struct{})
				go func() {
					io.Copy(s, c)
					close(clientGone)
				}()
				first, err := readPkt(s)
				if err != nil {
					return
				}
				first = bytes.Replace(first, []byte(" side-band-64k"), nil, 1)
				first = bytes.Replace(first, []byte(" side-band"), nil, 1)
				writePkt(c, first)
				buf := make([]byte, 4<<10)
				sent := 0
				for sent < hold {
					n, err := s.Read(buf)
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
						sent += n
						time.Sleep(5 * time.Millisecond)
					}
					if err != nil {
						break
					}
				}
				<-clientGone
			}()
		}
	}()
	return l.Addr().String(), done
}

func readPkt(r io.Reader) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n, err := strconv.ParseUint(string(head[:]), 16, 16)
	if err != nil || n < 4 {
		return nil, fmt.Errorf("pkt-line %q", head)
	}
	b := make([]byte, n-4)
	_, err = io.ReadFull(r, b)
	return b, err
}

func writePkt(w io.Writer, b []byte) {
	fmt.Fprintf(w, "%04x%s", len(b)+4, b)
}

// TestFetchBoundStopsIndexPack: a remote that offers no side-band has git
// fetch hand the connection itself to its child index-pack, which writes
// the pack. Stopping git fetch alone left index-pack reading the remote
// and writing the pack, past the bound, into a file already removed (the
// disk still filling); a remote that then sent nothing held it, and the
// connection, for ever. Once the bound is passed, git's children are
// stopped with it: the remote sees the connection closed, and no process
// holds a file of the store open.
func TestFetchBoundStopsIndexPack(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc")
	}
	t.Parallel()
	up := manyBlobs(t, 1, 1<<20)
	addr, closed := noSidebandFront(t, serveGitDaemon(t, filepath.Dir(up)), 256<<10)
	url := "git://" + addr + "/up"
	s := NewTestStore(t)
	tr, err := NewTransport(s.Path(), TransportOptions{MaxFetchBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	err = tr.Fetch(context.Background(), url, []string{"+refs/heads/*:refs/readproof-remotes/up/*"})
	if !errors.Is(err, ErrFetchTooLarge) {
		t.Fatalf("fetch of 1 MiB under a 64 KiB limit: got %v, want ErrFetchTooLarge", err)
	}
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatalf("the remote's connection is still open after the stopped fetch; processes holding the store: %v", storeHolders(s.Path()))
	}
	if h := storeHolders(s.Path()); len(h) != 0 {
		t.Errorf("processes still hold files of the store: %v", h)
	}
	if left := gitTempFiles(s.Path(), nil); len(left) != 0 {
		t.Errorf("the stopped fetch left %v", left)
	}
}

// storeHolders lists the processes (pid: file) with a file under dir open.
func storeHolders(dir string) []string {
	var out []string
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name())); err == nil && strings.HasPrefix(l, dir+string(filepath.Separator)) {
				out = append(out, p.Name()+": "+l)
			}
		}
	}
	return out
}

// packfileURIFront forwards git:// connections to target, adding
// "packfile-uris http" to each fetch command of protocol v2, as if git had
// asked for packfile URIs: the daemon then answers with the URL its
// uploadpack.blobPackfileUri names, as a hostile remote may unasked.
func packfileURIFront(t *testing.T, target string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer s.Close()
				go func() {
					io.Copy(c, s)
					c.Close()
				}()
				inFetch := false
				for {
					var head [4]byte
					if _, err := io.ReadFull(c, head[:]); err != nil {
						return
					}
					n, err := strconv.ParseUint(string(head[:]), 16, 16)
					if err != nil {
						return
					}
					body := []byte{}
					if n > 4 {
						body = make([]byte, n-4)
						if _, err := io.ReadFull(c, body); err != nil {
							return
						}
					}
					s.Write(append(head[:], body...))
					if bytes.HasPrefix(body, []byte("command=fetch")) {
						inFetch = true
					}
					if inFetch && n == 1 { // the delimiter before the fetch's arguments
						writePkt(s, []byte("packfile-uris http\n"))
						inFetch = false
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// TestFetchBoundMeasuresPackfileURIs: a protocol v2 remote may answer a
// fetch with the URL of a pack (here on its own server, the one place
// readproof lets git download it from), which git 2.39 downloads (git http-fetch,
// a child of git fetch) into objects/pack/pack-HASH.pack.temp whether or
// not it asked for packfile URIs. The bound measured only index-pack's
// tmp_pack_XXXXXX, so the download went on to its end (and was refused
// only once whole); it is now measured too, and stopped with git: of a
// 1 MiB pack sent at about 400 KB/s under a limit of 64 KiB, less than
// half is sent, and no part of it is left in the store.
func TestFetchBoundMeasuresPackfileURIs(t *testing.T) {
	t.Parallel()
	up := manyBlobs(t, 1, 1<<20)
	blob, hash, pack := blobURIPack(t, up)
	var sent atomic.Int64
	// on the remote's own server: a pack URL elsewhere is refused before
	// anything is downloaded (TestFetchRefusesPackfileURIs)
	remote := packfileURIHTTP(t, filepath.Dir(up), true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(pack)))
		for off := 0; off < len(pack); off += 4 << 10 {
			n, err := w.Write(pack[off:min(off+4<<10, len(pack))])
			sent.Add(int64(n))
			if err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
		}
	}))
	url := remote + "/up/.git"
	mirrorGit(t, up, "config", "uploadpack.blobPackfileUri", blob+" "+hash+" "+url+"/uri.pack")
	mirrorGit(t, up, "config", "uploadpack.allowSidebandAll", "true")
	tip := OID(strings.TrimSpace(mirrorGit(t, up, "rev-parse", "main")))
	// FetchObjects writes into a ref view's object directory of its own,
	// removed whole with the view; Fetch writes into the store's, where
	// what the stopped fetch left is removed file by file
	fetches := map[string]func(tr *Transport) error{
		"objects": func(tr *Transport) error { return tr.FetchObjects(context.Background(), url, []OID{tip}) },
		"refs": func(tr *Transport) error {
			return tr.Fetch(context.Background(), url, []string{"+refs/heads/*:refs/readproof-remotes/up/*"})
		},
	}
	for name, fetch := range fetches {
		s := NewTestStore(t)
		tr, err := NewTransport(s.Path(), TransportOptions{MaxFetchBytes: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		before := sent.Load()
		err = fetch(tr)
		if !errors.Is(err, ErrFetchTooLarge) {
			t.Fatalf("%s: fetch of a 1 MiB pack by its URI under a 64 KiB limit: got %v, want ErrFetchTooLarge", name, err)
		}
		if n := sent.Load() - before; n == 0 {
			t.Fatalf("%s: git did not download the pack by its URI (%v)", name, err)
		} else if n > int64(len(pack))/2 {
			t.Errorf("%s: %d of the pack's %d bytes were sent before the fetch stopped", name, n, len(pack))
		}
		// the pack git received itself, before the download, is whole and
		// stays, unreachable, for gc
		if left := incomingFiles(s.Path(), nil); len(left) != 0 {
			t.Errorf("%s: a stopped fetch left %v", name, left)
		}
		// nor a .keep file, which would keep that pack from gc for ever
		if keeps, _ := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "*.keep")); len(keeps) != 0 {
			t.Errorf("%s: a stopped fetch left %v", name, keeps)
		}
	}
}
