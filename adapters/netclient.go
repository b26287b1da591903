package adapters

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// netClient is the guarded HTTP client shared by the http and github
// sources.
type netClient struct {
	g *guard
	c *http.Client
}

func newNetClient(p NetPolicy) *netClient {
	g := newGuard(p)
	return &netClient{g: g, c: g.client()}
}

// response is a fetched HTTP response with its body read.
type response struct {
	status   int
	header   http.Header
	body     []byte
	finalURL *url.URL
}

// errorBodyLimit bounds what is read of a non-2xx body (for messages).
const errorBodyLimit = 4 << 10

// bound returns ctx limited by the policy's per-fetch timeout.
func (n *netClient) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, n.g.timeout)
}

// get sends one GET for target and reads the body: at most max bytes of a
// successful one (more is ErrTooLarge), at most errorBodyLimit of any other.
// parent is the caller's context (before the timeout was applied), used to
// tell a cancellation from a timeout. what names the target in messages.
func (n *netClient) get(parent, ctx context.Context, uri string, target *url.URL, hdr http.Header, max int64, what string) (*response, error) {
	if err := n.g.checkURL(target); err != nil {
		return nil, withURI(uri, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return nil, fail(uri, ErrConfig, nil, "cannot build a request for %s; check the url", what)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "readproof")
	}
	resp, err := n.c.Do(req)
	if err != nil {
		return nil, n.netErr(parent, uri, what, err)
	}
	defer resp.Body.Close()
	out := &response{status: resp.StatusCode, header: resp.Header, finalURL: resp.Request.URL}
	limit := int64(errorBodyLimit)
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if ok {
		if resp.ContentLength > max {
			return nil, fail(uri, ErrTooLarge, nil, "%s is %d bytes (Content-Length), over the %d-byte limit; %s", what, resp.ContentLength, max, hintMaxBytes)
		}
		limit = max
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, n.netErr(parent, uri, what, err)
	}
	if int64(len(body)) > limit {
		if ok {
			return nil, fail(uri, ErrTooLarge, nil, "%s is over the %d-byte limit; %s", what, max, hintMaxBytes)
		}
		body = body[:limit]
	}
	out.body = body
	return out, nil
}

// netErr explains a failed request: cancelled by the caller, timed out, a
// policy refusal from the dialer or a redirect check, or a network failure.
// It never quotes a URL with user information or a header.
func (n *netClient) netErr(parent context.Context, uri, what string, err error) error {
	if perr := parent.Err(); perr != nil {
		return cancelled(uri, "fetching "+what, perr)
	}
	var ae *Error
	if errors.As(err, &ae) {
		return withURI(uri, ae)
	}
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return fail(uri, nil, context.DeadlineExceeded, "no complete answer from %s within %s; %s", what, n.g.timeout, hintTimeout)
	}
	inner := err
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err
	}
	return fail(uri, nil, inner, "cannot fetch %s: %v; check the url and that the server is reachable", what, inner)
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// statusText is the standard phrase for code; the server's own reason
// phrase is never shown (it is the server's to choose, and could echo a
// header).
func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return strconv.Itoa(code) + " " + t
	}
	return "status " + strconv.Itoa(code)
}
