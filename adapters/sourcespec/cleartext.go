package sourcespec

import (
	"net/netip"
	"net/url"
	"strings"
)

// CleartextRemote reports whether a request to raw, a source's URL, would
// cross the network unencrypted: an http:// URL whose host is not this
// machine. This machine is "localhost" or a loopback address (127.0.0.0/8,
// ::1) written as such; any other name, even one that resolves to
// loopback, counts as remote, since what it resolves to can change. A
// secret (a header expanded from the environment, a GitHub token) is not
// sent to such a URL: every network hop could read and replay it.
// Malformed URLs are not its to judge (false).
func CleartextRemote(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || !strings.EqualFold(u.Scheme, "http") {
		return false
	}
	if IsLocalhost(u.Hostname()) {
		return false
	}
	if ip, err := netip.ParseAddr(strings.TrimSuffix(u.Hostname(), ".")); err == nil && ip.WithZone("").Unmap().IsLoopback() {
		return false
	}
	return true
}

// IsLocalhost reports whether host, a name as written (without port or
// brackets), is the name localhost in any case with at most one trailing
// dot: this machine by name (RFC 6761), never looked up. The one rule for
// the cleartext check here and the network guard's loopback refusal.
func IsLocalhost(host string) bool {
	return strings.EqualFold(strings.TrimSuffix(host, "."), "localhost")
}

// HintCleartext is what to do about a secret refused for a CleartextRemote
// URL.
const HintCleartext = "use https://, or reach the server through this machine (127.0.0.1: an ssh tunnel or a TLS proxy); a header that is not secret goes under public_headers"
