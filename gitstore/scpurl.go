package gitstore

// git's bracketed scp-like ssh addresses, read as git's connect.c reads
// them: go-git takes "[user" of [user@host:port]:path for the user, or
// refuses the URL.

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode"
)

// SCPAddress is an scp-like ssh address as git reads it.
type SCPAddress struct {
	User string // "" when the address names none
	Host string // without brackets; an IPv6 address as written
	Port int    // 0 when the address gives none
	Path string
}

// ParseBracketedSCP reads git's bracketed scp-like ssh addresses,
// [user@host:port]:path, [host:port]:path, [host]:path and
// user@[host:port]:path, as git does (connect.c, git 2.39): the brackets
// hold the host, with the user and the port when they are given there;
// the path is all that follows the colon after the closing bracket; the
// user is what comes before the host's last "@", as ssh splits it. ok is
// false when url is not one: a scheme:// URL, a path (no colon, or a
// slash before the first one), an scp-like address without brackets.
//
// err refuses an address git would hand ssh as it reads it but ssh cannot
// use, naming the part: a port that is not a port number (0, 70000), a
// host with a colon that is not an IPv6 address ([host:2222x]), text
// between "]" and ":" (git drops it), an "@" with no user before it, no
// host, no path, a host or user that starts with "-" (git refuses it),
// or a "@[" in the path (git reads it as the bracketed host).
func ParseBracketedSCP(url string) (a SCPAddress, ok bool, err error) {
	colon := strings.IndexByte(url, ':')
	if strings.Contains(url, "://") || colon < 0 || strings.Contains(url[:colon], "/") {
		return a, false, nil
	}
	start := 0
	if i := strings.Index(url, "@["); i >= 0 {
		start = i + 1
	}
	if url[start] != '[' {
		return a, false, nil
	}
	end := strings.IndexByte(url[start:], ']')
	if end < 0 {
		return a, false, nil // no closing bracket: git reads no brackets either
	}
	end += start
	refuse := func(format string, args ...any) (SCPAddress, bool, error) {
		// the address itself is the caller's to show, redacted
		return SCPAddress{}, true, fmt.Errorf("bracketed ssh address: "+format+"; write it as [USER@HOST:PORT]:PATH or ssh://USER@HOST:PORT/PATH", args...)
	}
	if start > colon {
		return refuse("its path holds \"@[\", which git reads as the start of a bracketed host")
	}
	after := url[end+1:]
	switch {
	case after == "" || after == ":":
		return refuse("no path after the host")
	case after[0] != ':':
		return refuse("%q stands between \"]\" and the \":\" before the path, which git drops", strings.SplitN(after, ":", 2)[0])
	}
	a.Path = after[1:]
	hostport := url[:start] + url[start+1:end]
	if c := strings.IndexByte(hostport, ':'); c >= 0 {
		// digits after the first colon are the port; anything else
		// stays in the host, as git leaves it ([::1], or a mistake)
		if rest := hostport[c+1:]; rest != "" && strings.Trim(rest, "0123456789") == "" {
			p, err := strconv.Atoi(rest)
			if err != nil || p < 1 || p > 65535 {
				return refuse("port %s is not a port number (1 to 65535)", rest)
			}
			a.Port, hostport = p, hostport[:c]
		}
	}
	a.Host = hostport
	if at := strings.LastIndexByte(hostport, '@'); at >= 0 {
		a.User, a.Host = hostport[:at], hostport[at+1:]
		if a.User == "" {
			return refuse("no user before \"@\"")
		}
	}
	if err := checkSCPHost(a.Host); err != nil {
		return refuse("%v", err)
	}
	switch {
	case strings.HasPrefix(a.User, "-"):
		return refuse("user %q starts with \"-\", which ssh would read as an option (git refuses it too)", a.User)
	case strings.IndexFunc(a.User, notInSSHName) >= 0:
		return refuse("user %q is not a user name", a.User)
	}
	return a, true, nil
}

// checkSCPHost is nil for a host an ssh address can name: a name or an
// address, an IPv6 one being the only one with colons.
func checkSCPHost(host string) error {
	switch {
	case host == "":
		return errors.New("no host")
	case strings.HasPrefix(host, "-"):
		return fmt.Errorf("host %q starts with \"-\", which ssh would read as an option (git refuses it too)", host)
	case strings.IndexFunc(host, notInSSHName) >= 0 || strings.Contains(host, "/"):
		return fmt.Errorf("host %q is not a host name", host)
	case strings.Contains(host, ":") && strings.Contains(host, "%") && net.ParseIP(host[:strings.IndexByte(host, '%')]) != nil:
		// a zone is only needed by a link-local address, which the
		// network check refuses unless [network] allows it, and it
		// names no address that check could compare
		return fmt.Errorf("host %q is an IPv6 address with a zone (%s), which readproof does not dial: give the host a name, or an address that needs no zone", host, host[strings.IndexByte(host, '%'):])
	case strings.Contains(host, ":") && net.ParseIP(host) == nil:
		return fmt.Errorf("host %q is not a host name, and what follows its \":\" is not a port number (1 to 65535)", host)
	}
	return nil
}

// notInSSHName is whether r is a character no host or user name of an
// ssh address holds: a space, a control character, a bracket or a quote.
func notInSSHName(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("[]\\'\"`", r)
}
