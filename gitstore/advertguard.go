package gitstore

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// ErrAdvertTooLarge: the remote's list of refs (its ref advertisement,
// the first answer of every fetch) is longer than the mirror's bound.
// go-git keeps every ref it is told of in memory, so a remote that never
// ends the list would fill the memory of the process until the fetch timed
// out.
var ErrAdvertTooLarge = errors.New("the remote advertises more refs than the size limit")

// advertGuard bounds the ref advertisement of one fetch to max bytes, over
// every transport: upload-pack's output for local, git:// and ssh
// remotes (localSession), the info/refs answer over http and https
// (advertRoundTripper). hit records that the bound stopped a read, since
// go-git's decoder does not keep the error it was given.
type advertGuard struct {
	max int64
	hit atomic.Bool
}

func (g *advertGuard) err() error {
	return fmt.Errorf("%w: its ref advertisement is over %d bytes", ErrAdvertTooLarge, g.max)
}

// reader is r ending in g.err() after g.max bytes.
func (g *advertGuard) reader(r io.Reader) io.Reader { return &advertReader{g: g, r: r} }

type advertReader struct {
	g *advertGuard
	r io.Reader
	n int64
}

func (a *advertReader) Read(p []byte) (int, error) {
	left := a.g.max - a.n
	if left <= 0 {
		a.g.hit.Store(true)
		return 0, a.g.err()
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := a.r.Read(p)
	a.n += int64(n)
	return n, err
}

// advertRoundTripper bounds the body of every info/refs answer (redirects
// included: each hop comes through it).
type advertRoundTripper struct {
	next http.RoundTripper
	g    *advertGuard
}

func (t advertRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil && req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/info/refs") {
		resp.Body = advertBody{Reader: t.g.reader(resp.Body), Closer: resp.Body}
	}
	return resp, err
}

type advertBody struct {
	io.Reader
	io.Closer
}

// guardedClient is c with its info/refs answers bounded by g.
func guardedClient(c *http.Client, g *advertGuard) *http.Client {
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	cc := *c
	cc.Transport = advertRoundTripper{next: next, g: g}
	return &cc
}
