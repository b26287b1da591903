package adapters

import (
	"container/list"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/readproof/readproof/adapters/sourcespec"
)

// The address policy. Every network source (http, github, git over http,
// git:// and ssh) talks through a guard: the URL (for git:// and ssh, the
// host's addresses) is checked before a request is built and on every
// redirect hop, and the address actually connected is checked in the
// dialer's Control hook, after DNS resolution, so a name that resolves (or
// re-resolves) to a forbidden address is refused at connect time. Proxies
// from the environment are not used.

var (
	prefixCGNAT      = netip.MustParsePrefix("100.64.0.0/10")
	prefixThisNet    = netip.MustParsePrefix("0.0.0.0/8")
	prefixReserved4  = netip.MustParsePrefix("240.0.0.0/4")
	prefixIETF4      = netip.MustParsePrefix("192.0.0.0/24")
	prefixNAT64      = netip.MustParsePrefix("64:ff9b::/96")
	prefixNAT64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	prefix6to4       = netip.MustParsePrefix("2002::/16")
	prefixCompat     = netip.MustParsePrefix("::/96")
	prefixSiteLocal  = netip.MustParsePrefix("fec0::/10")
	prefixDiscard6   = netip.MustParsePrefix("100::/64")
)

// classifyIP returns the rule that refuses ip and a description, or "" for an
// ordinary public unicast address. IPv4 addresses embedded in IPv6 ones
// (mapped, compatible, NAT64, 6to4) are judged by their IPv4 part.
func classifyIP(ip netip.Addr) (rule, what string) {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		return classifyIP(ip.Unmap())
	}
	if ip.Is6() {
		b := ip.As16()
		switch {
		case prefixNAT64.Contains(ip) || prefixNAT64Local.Contains(ip):
			return classifyIP(netip.AddrFrom4([4]byte(b[12:16])))
		case prefix6to4.Contains(ip):
			return classifyIP(netip.AddrFrom4([4]byte(b[2:6])))
		case prefixCompat.Contains(ip) && !ip.IsUnspecified() && !ip.IsLoopback():
			return classifyIP(netip.AddrFrom4([4]byte(b[12:16])))
		}
	}
	switch {
	case !ip.IsValid():
		return RuleReserved, "not a valid address"
	case ip.IsUnspecified() || prefixThisNet.Contains(ip):
		return RuleUnspecified, "an unspecified address"
	case ip.IsLoopback():
		return RuleLoopback, "a loopback address"
	case ip == netip.AddrFrom4([4]byte{169, 254, 169, 254}):
		return RuleLinkLocal, "a link-local address (the cloud metadata endpoint)"
	case ip.IsLinkLocalUnicast():
		return RuleLinkLocal, "a link-local address"
	case ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast():
		return RuleMulticast, "a multicast address"
	case ip.Is4() && ip.IsPrivate():
		return RulePrivate, "a private (RFC 1918) address"
	case prefixCGNAT.Contains(ip):
		return RulePrivate, "a shared (carrier-grade NAT) address"
	case ip.Is6() && ip.IsPrivate():
		return RuleUniqueLocal, "a unique-local address"
	case prefixSiteLocal.Contains(ip):
		return RuleUniqueLocal, "a site-local address"
	case prefixReserved4.Contains(ip) || prefixIETF4.Contains(ip) || prefixDiscard6.Contains(ip):
		return RuleReserved, "a reserved address"
	}
	return "", ""
}

// guard applies a NetPolicy to URLs and connections.
type guard struct {
	hosts        map[string]bool
	cidrs        []netip.Prefix
	timeout      time.Duration
	maxRedirects int
	// secretHeaders are dropped from a redirected request that leaves the
	// first request's origin.
	secretHeaders []string
	// dial replaces the real connect in tests; the policy checks that run
	// before it are the same.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// lookup replaces the resolver in tests, checkHost's and the
	// dialer's (a DNS answer that changes between the check and the
	// connection, a resolver that lies about localhost).
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

func newGuard(p NetPolicy) *guard {
	g := &guard{hosts: map[string]bool{}, cidrs: p.AllowCIDRs, timeout: p.Timeout, maxRedirects: p.MaxRedirects}
	for _, h := range p.AllowHosts {
		g.hosts[normHost(h)] = true
	}
	if g.timeout <= 0 {
		g.timeout = DefaultTimeout
	}
	if g.maxRedirects == 0 {
		g.maxRedirects = DefaultMaxRedirects
	} else if g.maxRedirects < 0 {
		g.maxRedirects = 0
	}
	return g
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(strings.TrimSpace(h), "[]")), ".")
}

// hostAllowed reports whether host (or host:port) is allow-listed by name.
func (g *guard) hostAllowed(host, port string) bool {
	h := normHost(host)
	if g.hosts[h] {
		return true
	}
	if port != "" {
		return g.hosts[net.JoinHostPort(h, port)]
	}
	return false
}

// checkIP refuses ip unless it is public or allow-listed. host is the name it
// was reached by, for the message.
func (g *guard) checkIP(host string, ip netip.Addr) error {
	for _, p := range g.cidrs {
		if p.Contains(ip.Unmap().WithZone("")) || p.Contains(ip.WithZone("")) {
			return nil
		}
	}
	rule, what := classifyIP(ip)
	if rule == "" {
		return nil
	}
	from := ""
	if h := normHost(host); h != "" && h != ip.String() && h != ip.Unmap().String() {
		from = fmt.Sprintf(" (resolved from %q)", h)
	}
	return refuse("", rule, "%s%s is %s; %s", ip, from, what, hintNetwork)
}

// checkURL refuses a URL whose scheme is not http(s), or whose host is an IP
// literal the policy refuses. Names are checked again when dialled.
func (g *guard) checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return refuse("", RuleScheme, "%s is a %s: URL; write an http or https URL (local files are read by a filesystem source)", sourcespec.RedactURL(u.String()), strings.ToLower(u.Scheme))
	}
	host := u.Hostname()
	if host == "" {
		return fail("", ErrConfig, nil, "%s has no host; write a full URL such as https://example.com/doc.md", sourcespec.RedactURL(u.String()))
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if g.hostAllowed(host, port) {
		return nil
	}
	if isLocalhost(host) {
		return g.checkLocalhost()
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return g.checkIP(host, ip)
	}
	return nil
}

// loopbackAddrs are the addresses the name localhost is dialled at, in
// this order.
var loopbackAddrs = []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}

// isLocalhost reports whether host, as written, is the name localhost
// (one trailing dot allowed, any case). RFC 6761 (6.3) makes it this
// machine: readproof decides so without a lookup, and dials 127.0.0.1 or
// ::1 for it, whatever a hosts file or a resolver answers. A longer name
// (localhost.evil.example, 127.0.0.1.nip.io) is a name like any other.
func isLocalhost(host string) bool {
	return sourcespec.IsLocalhost(strings.Trim(strings.TrimSpace(host), "[]"))
}

// checkLocalhost refuses the name localhost unless the policy allows one
// of loopbackAddrs (the name itself allowed is hostAllowed's).
func (g *guard) checkLocalhost() error {
	for _, ip := range loopbackAddrs {
		if g.checkIP("", ip) == nil {
			return nil
		}
	}
	return refuse("", RuleLoopback, "localhost is a loopback address (this machine: the name is not looked up); %s", hintNetwork)
}

// checkHost resolves host and checks every address: the early answer for
// git:// and ssh sources (a name that cannot be resolved, or whose
// addresses are all refused, is said so before a mirror is made). Their
// connection is checked again when dialled (dialContext), which catches a
// name that re-resolves in between.
func (g *guard) checkHost(ctx context.Context, host, port string) error {
	if g.hostAllowed(host, port) {
		return nil
	}
	if isLocalhost(host) {
		return g.checkLocalhost()
	}
	if ip, err := netip.ParseAddr(normHost(host)); err == nil {
		return g.checkIP(host, ip)
	}
	lookup := g.lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	ips, err := lookup(ctx, host)
	if err != nil {
		return fail("", nil, err, "cannot resolve %s: %v; check the host name", host, err)
	}
	for _, ip := range ips {
		if err := g.checkIP(host, ip); err != nil {
			return err
		}
	}
	return nil
}

// dialContext connects to addr, refusing any connection whose peer address
// the policy forbids, whatever name led to it. The name localhost is
// dialled at loopbackAddrs, never looked up.
func (g *guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if isLocalhost(host) {
		return g.dialLocalhost(ctx, network, host, port)
	}
	return g.dialAddr(ctx, network, host, port, addr)
}

// dialLocalhost dials the name localhost at 127.0.0.1, then at ::1 (those
// network allows), under the checks of dialAddr: the name allowed allows
// both; otherwise each address must be, and one the policy refuses is not
// dialled (a failure to reach ::1, the one allowed, is the answer, not
// 127.0.0.1's refusal).
func (g *guard) dialLocalhost(ctx context.Context, network, host, port string) (net.Conn, error) {
	named := g.hostAllowed(host, port)
	if !named {
		if err := g.checkLocalhost(); err != nil {
			return nil, err
		}
	}
	var first, refused error
	for _, ip := range loopbackAddrs {
		if (network == "tcp4" && !ip.Is4()) || (network == "tcp6" && !ip.Is6()) {
			continue
		}
		if !named {
			if err := g.checkIP("", ip); err != nil {
				if refused == nil {
					refused = err
				}
				continue
			}
		}
		c, err := g.dialAddr(ctx, network, host, port, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if first == nil {
		first = refused
	}
	if first == nil {
		first = &net.AddrError{Err: "no loopback address for network " + network, Addr: host}
	}
	return nil, first
}

// dialAddr connects to addr (host:port, or for the name localhost one of
// its addresses), checking the address connected unless host:port is
// allowed by name.
func (g *guard) dialAddr(ctx context.Context, network, host, port, addr string) (net.Conn, error) {
	dialled, _, _ := net.SplitHostPort(addr)
	if _, err := netip.ParseAddr(normHost(dialled)); err != nil && g.lookup != nil {
		// a test's resolver stands in for the dialer's: the name's
		// addresses in turn, each checked as the dialer's would be
		ips, err := g.lookup(ctx, dialled)
		if err != nil {
			return nil, err
		}
		var first error = &net.AddrError{Err: "no address", Addr: dialled}
		for i, ip := range ips {
			c, err := g.dialAddr(ctx, network, host, port, net.JoinHostPort(ip.String(), port))
			if err == nil {
				return c, nil
			}
			if i == 0 {
				first = err
			}
		}
		return nil, first
	}
	allowed := g.hostAllowed(host, port)
	d := &net.Dialer{Timeout: g.timeout, KeepAlive: 30 * time.Second}
	if !allowed {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return refuse("", RuleReserved, "cannot check the address %q; %s", address, hintNetwork)
			}
			return g.checkIP(host, ap.Addr())
		}
	}
	if g.dial != nil {
		if !allowed {
			ip, err := netip.ParseAddr(normHost(dialled))
			if err != nil {
				return nil, fmt.Errorf("test dial hook needs an IP literal, got %q", host)
			}
			if err := g.checkIP(host, ip); err != nil {
				return nil, err
			}
		}
		return g.dial(ctx, network, addr)
	}
	return d.DialContext(ctx, network, addr)
}

// checkRedirect bounds redirects, refuses loops and forbidden hops, drops
// headers expanded from the environment when a hop leaves the original
// origin, and sends no Referer the source did not declare.
func (g *guard) checkRedirect(req *http.Request, via []*http.Request) error {
	target := req.URL.String()
	if len(target) > maxRedirectURL {
		// recorded as final_url in every observation and manifest entry
		return fail("", nil, nil, "redirect to a URL of %d bytes, longer than the %d readproof records; point url at the final location", len(target), maxRedirectURL)
	}
	for _, v := range via {
		if v.URL.String() == target {
			chain := make([]string, 0, len(via)+1)
			for _, v := range via {
				chain = append(chain, sourcespec.RedactURL(v.URL.String()))
			}
			chain = append(chain, sourcespec.RedactURL(target))
			return fail("", nil, nil, "redirect loop: %s; fix the URL or the server's redirects", strings.Join(chain, " -> "))
		}
	}
	if len(via) > g.maxRedirects {
		return fail("", nil, nil, "stopped after %d redirects (last to %s); point url at the final location or raise [network] max_redirects in readproof.toml", g.maxRedirects, sourcespec.RedactURL(target))
	}
	if err := g.checkURL(req.URL); err != nil {
		return err
	}
	if len(via) > 0 && !sameOrigin(via[0].URL, req.URL) {
		for _, h := range g.secretHeaders {
			req.Header.Del(h)
		}
	}
	// net/http adds a Referer naming the previous hop, query included: a
	// signed or token-bearing URL would reach the next host, whatever its
	// origin. readproof sends only the Referer a source declares.
	if len(via) > 0 && via[0].Header.Get("Referer") == "" {
		req.Header.Del("Referer")
	}
	return nil
}

func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if u.Scheme == "https" {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && normHost(a.Hostname()) == normHost(b.Hostname()) && port(a) == port(b)
}

// maxRedirectURL bounds the URL a redirect leads to: the final one is
// recorded (final_url) in every observation and manifest entry that reads
// it, as the validators are (maxETag). Signed URLs of object stores stay
// well below it.
const maxRedirectURL = 8 << 10

// maxResponseHeaderBytes bounds the headers of one response.
const maxResponseHeaderBytes = 64 << 10

// client returns an HTTP client that applies the guard. It has no overall
// timeout: callers bound each fetch with a context deadline.
//
// Its transport, and so its pool of idle connections, is shared within
// the process by every guard whose dial settings (allowed hosts and
// CIDRs, timeout) are the same: N resources on one server hold one
// connection, not N, each for IdleConnTimeout. The dial is still the
// requesting source's own (the guard rides in the request's context, and
// the shared dialer calls that guard's dialContext), and a connection
// pooled by one guard is reused only by guards that would have allowed
// the same address. Redirects (their bound, the secret headers they drop,
// Referer) are per client, so per source.
func (g *guard) client() *http.Client {
	return &http.Client{Transport: guardRoundTripper{g: g, next: sharedTransports.get(g.dialKey())}, CheckRedirect: g.checkRedirect}
}

// maxSharedTransports bounds the transports kept for sharing: a process
// reads through a few sets of dial settings at a time (one per [network]
// table), but a long-lived one (mcp serve) that reloads policies whose
// settings change would otherwise keep every set it ever saw, each with
// its idle connections.
const maxSharedTransports = 16

// sharedTransports holds the transport of each set of dial settings
// (dialKey) used in the process, the maxSharedTransports used last.
var sharedTransports = newTransportCache(maxSharedTransports)

// transportCache is a least-recently-used map from dial settings to their
// shared transport. An evicted transport's idle connections are closed;
// the clients made with it keep working (a connection they open later
// idles for IdleConnTimeout, then closes), and the next client with its
// settings gets a new transport.
type transportCache struct {
	mu    sync.Mutex
	max   int
	byKey map[string]*list.Element // of *transportEntry
	order *list.List               // the last used first
}

type transportEntry struct {
	key string
	tr  *http.Transport
}

func newTransportCache(max int) *transportCache {
	return &transportCache{max: max, byKey: map[string]*list.Element{}, order: list.New()}
}

// get returns the transport of key, made if it has none, and marks it
// used last.
func (c *transportCache) get(key string) *http.Transport {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*transportEntry).tr
	}
	tr := newSharedTransport()
	c.byKey[key] = c.order.PushFront(&transportEntry{key: key, tr: tr})
	for c.order.Len() > c.max {
		old := c.order.Remove(c.order.Back()).(*transportEntry)
		delete(c.byKey, old.key)
		old.tr.CloseIdleConnections()
	}
	return tr
}

// len is the number of transports kept.
func (c *transportCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// dialKey names what dialContext's decision depends on, so that guards
// with the same key decide every address alike, and only those.
func (g *guard) dialKey() string {
	hosts := make([]string, 0, len(g.hosts))
	for h := range g.hosts {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	cidrs := make([]string, 0, len(g.cidrs))
	for _, p := range g.cidrs {
		cidrs = append(cidrs, p.String())
	}
	sort.Strings(cidrs)
	// each name quoted: a caller's name may hold any byte, a ',' among
	// them, and two lists must not read as one
	return fmt.Sprintf("%s %q %q", g.timeout, hosts, cidrs)
}

// guardKey is the context key of the guard a request is sent under.
type guardKey struct{}

// guardRoundTripper sends a request through a shared transport with its
// source's guard in its context, where sharedDial finds it.
type guardRoundTripper struct {
	g    *guard
	next http.RoundTripper
}

func (rt guardRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	return rt.next.RoundTrip(req.WithContext(context.WithValue(req.Context(), guardKey{}, rt.g)))
}

// sharedDial dials for a shared transport under the guard of the request
// that asked for the connection. A dial without one is refused.
func sharedDial(ctx context.Context, network, addr string) (net.Conn, error) {
	g, ok := ctx.Value(guardKey{}).(*guard)
	if !ok {
		return nil, refuse("", RuleReserved, "a connection to %s was asked for without an address policy; report this as a bug", addr)
	}
	return g.dialContext(ctx, network, addr)
}

func newSharedTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           sharedDial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		// Go's default is 10 MiB; no server a source reads needs more
		// than a few KiB.
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
	}
}
