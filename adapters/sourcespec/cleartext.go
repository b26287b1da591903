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
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if h == "localhost" {
		return false
	}
	if ip, err := netip.ParseAddr(h); err == nil && ip.WithZone("").Unmap().IsLoopback() {
		return false
	}
	return true
}

// HintCleartext is what to do about a secret refused for a CleartextRemote
// URL.
const HintCleartext = "use https://, or reach the server through this machine (127.0.0.1: an ssh tunnel or a TLS proxy); a header that is not secret goes under public_headers"
