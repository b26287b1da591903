package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
