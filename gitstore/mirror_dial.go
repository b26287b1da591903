package gitstore

// The mirror's transports for git:// and ssh URLs: upload-pack reached over
// a connection the mirror's dial function makes (MirrorOptions.Dial), and
// spoken to in protocol v0 as the local transport speaks to a process.
// go-git's own git and ssh transports dial by themselves (net.Dial, and
// x/net/proxy for ssh) with no hook, so a caller that checks the address it
// connects to could check only an earlier DNS answer for the same name.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/utils/ioutil"
	"github.com/readproof/readproof/internal/hint"
	"golang.org/x/crypto/ssh"
)

// Default ports of the git and ssh protocols.
const (
	gitDaemonPort = 9418
	sshPort       = 22
)

// dialTransport opens upload-pack sessions on git:// and ssh remotes over
// connections made by dial.
type dialTransport struct {
	ctx  context.Context
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	ssh  *SSHConfig // nil: read for each ssh session
}

func (m *Mirror) dialTransport(ctx context.Context) dialTransport {
	dial := m.opts.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	return dialTransport{ctx: ctx, dial: dial, ssh: m.opts.SSHConfig}
}

func (t dialTransport) NewUploadPackSession(ep *transport.Endpoint, _ transport.AuthMethod) (transport.UploadPackSession, error) {
	switch ep.Protocol {
	case "git":
		return t.daemonSession(ep)
	case "ssh":
		return t.sshSession(ep)
	}
	return nil, fmt.Errorf("unsupported scheme %q", ep.Protocol)
}

func (dialTransport) NewReceivePackSession(*transport.Endpoint, transport.AuthMethod) (transport.ReceivePackSession, error) {
	return nil, errors.New("the mirror never pushes")
}

// endpointHost is the endpoint's host without the brackets go-git puts
// around an IPv6 address.
func endpointHost(ep *transport.Endpoint) string {
	return strings.TrimSuffix(strings.TrimPrefix(ep.Host, "["), "]")
}

// daemonSession connects to a git daemon and asks for upload-pack. The
// request names the host as the URL does (git daemon's virtual hosting,
// --interpolated-path, reads it), whatever address the name was dialled at.
func (t dialTransport) daemonSession(ep *transport.Endpoint) (transport.UploadPackSession, error) {
	host, port := endpointHost(ep), ep.Port
	if port <= 0 {
		port = gitDaemonPort
	}
	conn, err := t.dial(t.ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	named := host
	if strings.Contains(named, ":") {
		named = "[" + named + "]"
	}
	if port != gitDaemonPort {
		named = net.JoinHostPort(host, strconv.Itoa(port))
	}
	req := packp.GitProtoRequest{RequestCommand: transport.UploadPackServiceName, Pathname: ep.Path, Host: named}
	if err := req.Encode(conn); err != nil {
		conn.Close()
		return nil, err
	}
	// The connection is both ways of the exchange: closing the session's
	// input must not close it before the pack is read.
	closeConn := func() { _ = conn.Close() }
	return &localSession{stop: closeConn, reap: closeConn, stdin: ioutil.WriteNopCloser(conn), stdout: conn}, nil
}

// sshSession connects to an ssh server and runs git-upload-pack there,
// following the ssh configuration (the transport's, else the user's read
// now) for the host: the user from the URL, else the configuration's
// User, else the local user, as OpenSSH has it; the keys OpenSSH would
// offer (the agent's, then the IdentityFile keys for the host or the
// default key files); the Hostname when it has one, and the URL's port,
// else the Port it gives, else 22. The host
// key is checked against the known_hosts files ssh reads for the host
// (SSH_KNOWN_HOSTS, else its UserKnownHostsFile and GlobalKnownHostsFile
// or their defaults: knownHostsFor) under the host name, or the
// HostKeyAlias the configuration gives (hostKeyAddr). The
// address dialled is the one dial checks.
//
// The server is asked for a host key of the types known_hosts lists for the
// host, as OpenSSH does: without that, a server holding keys of several
// types offers the one Go prefers (ecdsa before ed25519), and a host listed
// by another of its keys reads as a changed key (go-git issue 411).
func (t dialTransport) sshSession(ep *transport.Endpoint) (transport.UploadPackSession, error) {
	conf := t.sshConfig()
	alias := endpointHost(ep)
	if err := conf.Check(alias); err != nil {
		return nil, err
	}
	user, userFrom, err := conf.remoteUser(ep.User, alias)
	if err != nil {
		return nil, err
	}
	addr := conf.sshAddr(ep)
	host, port, _ := net.SplitHostPort(addr)
	known, err := conf.hostKeys(t.ctx, alias, host, port, user)
	if err != nil {
		return nil, err
	}
	keys, err := conf.keysAt(t.ctx, alias, host, port, user)
	if err != nil {
		return nil, err
	}
	defer keys.close()
	// the host key is looked up under the HostKeyAlias, when given
	keyAddr, check := conf.hostKeyAddr(alias, addr), known.HostKeyCallback()
	algos, err := known.hostKeyAlgorithms(keyAddr)
	if err != nil {
		return nil, err
	}
	cfg := &ssh.ClientConfig{
		User: user,
		Auth: []ssh.AuthMethod{ssh.PublicKeys(keys.signers...)},
		HostKeyCallback: func(_ string, remote net.Addr, key ssh.PublicKey) error {
			return check(keyAddr, remote, key)
		},
		HostKeyAlgorithms: algos,
	}
	s, err := t.sshSessionAt(ep, addr, cfg)
	if errors.Is(err, transport.ErrAuthorizationFailed) {
		return nil, &SSHAuthError{User: user, UserFrom: userFrom, Host: addr, Offered: keys.offered, Skipped: keys.skipped, Err: err}
	}
	return s, err
}

// sshConfig is the transport's ssh configuration, else the user's read now.
func (t dialTransport) sshConfig() *SSHConfig {
	if t.ssh != nil {
		return t.ssh
	}
	return ReadSSHConfig()
}

// sshSessionAt is sshSession with the client configuration given, dialling
// addr, the endpoint's sshAddr, which the caller has already looked up in
// the ssh configuration.
func (t dialTransport) sshSessionAt(ep *transport.Endpoint, addr string, cfg *ssh.ClientConfig) (transport.UploadPackSession, error) {
	if strings.HasPrefix(ep.Path, "-") {
		// quoting keeps it one word, not a non-option: git refuses it too
		return nil, fmt.Errorf("repository path %q starts with \"-\", which upload-pack would read as an option; check the url", ep.Path)
	}
	conn, err := t.dial(t.ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	// The handshake, the channel and the command have no context of
	// their own: the context's end closes the connection under them.
	unbind := context.AfterFunc(t.ctx, func() { _ = conn.Close() })
	s, err := t.startUploadPack(conn, addr, cfg, ep.Path)
	if !unbind() {
		if s != nil {
			s.stop()
		}
		return nil, t.ctx.Err()
	}
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return s, nil
}

// startUploadPack makes the ssh handshake on conn (the host key checked
// under addr's host name) and starts git-upload-pack on path.
func (t dialTransport) startUploadPack(conn net.Conn, addr string, cfg *ssh.ClientConfig, path string) (*localSession, error) {
	c, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		if strings.Contains(err.Error(), "ssh: unable to authenticate") {
			// x/crypto/ssh has no error type for it: the server took
			// none of the keys offered
			return nil, fmt.Errorf("%w (%v)", transport.ErrAuthorizationFailed, err)
		}
		if strings.Contains(err.Error(), "no common algorithm for host key") {
			// the server offers no host key of the types asked for: those
			// known_hosts lists for the host, or the host's
			// HostKeyAlgorithms when it lists none (x/crypto/ssh has no
			// error type for it)
			return nil, hint.With(fmt.Errorf("%s offers no host key of a type readproof asks for: %w", addr, err),
				"if known_hosts lists this host, the server's host key may have changed (ssh says REMOTE HOST IDENTIFICATION HAS CHANGED): compare its fingerprint (ssh-keyscan HOST | ssh-keygen -lf -) with one you trust, then update known_hosts; "+
					"a server whose RSA key signs only with ssh-rsa (SHA-1), or whose only key is DSA, is refused, as ssh refuses it, unless the host's HostKeyAlgorithms allows ssh-rsa (HostKeyAlgorithms +ssh-rsa)")
		}
		return nil, err
	}
	client := ssh.NewClient(c, chans, reqs)
	sess, err := client.NewSession()
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	s := &localSession{stop: func() { _ = client.Close() }}
	s.reap = func() {
		// Wait lets what the server wrote on stderr arrive (it says why a
		// repository cannot be read); the context ends a server that
		// neither exits nor closes.
		stop := context.AfterFunc(t.ctx, func() { _ = client.Close() })
		_ = sess.Wait()
		stop()
		_ = client.Close()
	}
	sess.Stderr = &s.stderr
	if s.stdin, err = sess.StdinPipe(); err == nil {
		if s.stdout, err = sess.StdoutPipe(); err == nil {
			err = sess.Start(transport.UploadPackServiceName + " " + shellQuote(path))
		}
	}
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	return s, nil
}

// sshAddr is host:port of an ssh endpoint: the ssh configuration's
// Hostname for the host, else the host; the URL's port, else the
// configuration's Port, else 22, as OpenSSH has it.
func (c *SSHConfig) sshAddr(ep *transport.Endpoint) string {
	host, port := c.hostPort(endpointHost(ep), ep.Port)
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// newEndpoint parses a mirror's URL as go-git does, except an scp-like
// one ([user@]host:path), which it reads as git does: with no port, so
// that ~/.ssh/config's Port for the host applies (go-git gives it 22, as
// if the URL had said so), and with the path all that follows the colon
// after the host (go-git reads host:2222:path as port 2222; git reads the
// path 2222:path); and a bracketed one ([user@host:port]:path), whose
// port it gives (ParseBracketedSCP; go-git misreads it).
func newEndpoint(url string) (*transport.Endpoint, error) {
	ep, _, err := parseEndpoint(url)
	return ep, err
}

// parseEndpoint is newEndpoint that also says whether url is a bracketed
// address: then err is ParseBracketedSCP's, which names the part ssh
// cannot use; else go-git's.
func parseEndpoint(url string) (_ *transport.Endpoint, bracketed bool, _ error) {
	if a, ok, err := ParseBracketedSCP(url); ok {
		if err != nil {
			return nil, true, err
		}
		return &transport.Endpoint{Protocol: "ssh", User: a.User, Host: a.Host, Port: a.Port, Path: a.Path}, true, nil
	}
	ep, err := transport.NewEndpoint(url)
	if i := strings.Index(url, "://"); err != nil || ep.Protocol != "ssh" || (i >= 0 && i == strings.Index(url, ":")) {
		return ep, false, err // not scp-like: a scheme before the first colon
	}
	rest := url
	if ep.User != "" {
		rest = strings.TrimPrefix(rest, ep.User+"@")
	}
	if path, ok := strings.CutPrefix(rest, ep.Host+":"); ok {
		ep.Path = path
	}
	ep.Port = 0
	return ep, false, nil
}

// shellQuote quotes s for the remote shell as git's sq_quote_buf does: in
// single quotes, with ' and ! closed, escaped and reopened.
func shellQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\'' || c == '!' {
			b.WriteString(`'\`)
			b.WriteByte(c)
			b.WriteByte('\'')
			continue
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}
