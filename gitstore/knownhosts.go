package gitstore

// A host key database read from known_hosts files as OpenSSH 9.2 reads
// and checks them (hostfile.c, hostkeys_foreach_file and
// check_hostkeys_by_key_or_type; sshconnect.c, check_host_key): each
// file read once, through fspath's regular-file opener and within
// maxKnownHostsBytes, and every check made from those bytes. Before,
// the files were looked at and then opened again by name by the
// known_hosts library, so that a FIFO put in a file's place between the
// two held the fetch, and a line over 64 KiB failed it.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/readproof/readproof/internal/fspath"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/text"
)

// maxKnownHostsBytes bounds what is read of one known_hosts file: ssh
// reads any size, readproof refuses a larger file rather than hold it.
// Tens of thousands of hosts fit in it.
const maxKnownHostsBytes = 16 << 20

// hostKeyLine is one line of a known_hosts file that ssh reads.
type hostKeyLine struct {
	marker string // "", "cert-authority" or "revoked"
	hosts  string // the host field: a pattern list, or a hashed name (|1|salt|hash)
	salt   []byte // a hashed name's salt and hash, decoded as the line is read
	hash   []byte
	key    ssh.PublicKey
	file   string
	line   int
}

// knownHostsDB is the lines of the known_hosts files read, in order,
// and the KnownHostsCommand for the host, whose lines follow them.
type knownHostsDB struct {
	lines []hostKeyLine
	cmd   *knownHostsCommand // nil for none
	ctx   context.Context    // the fetch's, which the command runs under
	// the HostKeyAlgorithms and CASignatureAlgorithms for the host
	// (assembleAlgorithms), nil for the defaults, and whether the host
	// key algorithms are put in known_hosts' order
	algos, caAlgos []string
	reorder        bool
	ip             *hostIPCheck // CheckHostIP yes; nil for no
}

// context is the fetch's context, the command's.
func (db *knownHostsDB) context() context.Context {
	if db.ctx == nil {
		return context.Background()
	}
	return db.ctx
}

// linesForLookup are the lines naming name (linesFor), then those the
// KnownHostsCommand prints for the lookup, as ssh reads them
// (sshconnect.c: the files, then the command).
func (db *knownHostsDB) linesForLookup(lookup commandKeyTokens) ([]*hostKeyLine, error) {
	lines := db.linesFor(lookup.name)
	if db.cmd == nil {
		return lines, nil
	}
	more, err := db.cmd.linesFrom(db.context(), lookup)
	if err != nil {
		return nil, err
	}
	return append(lines, more...), nil
}

// readKnownHostsFiles reads the files ssh reads host keys from: one it
// cannot open (missing, unreadable) is passed over as ssh passes it
// over (hostfile.c, load_hostkeys), and so is what is not a regular file
// (a directory, which ssh reads as empty; a named pipe or a device,
// which readproof does not wait on or read without end; the null device,
// empty to ssh; a pipe handed to readproof, such as /dev/stdin). read
// are the files read. An error names a file over maxKnownHostsBytes, or
// one whose lines are none of them valid.
func readKnownHostsFiles(files []string) (db *knownHostsDB, read []string, err error) {
	db = &knownHostsDB{}
	for _, p := range files {
		data, ok, err := readKnownHostsFile(p)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		read = append(read, p)
		if err := db.add(data, p); err != nil {
			return nil, nil, err
		}
	}
	return db, read, nil
}

// errKnownHostsTooLarge is a known_hosts file over maxKnownHostsBytes.
var errKnownHostsTooLarge = fmt.Errorf("larger than %d MiB, more than readproof reads of a known_hosts file", maxKnownHostsBytes>>20)

// readKnownHostsFile is the bytes of the known_hosts file at p; false
// for one passed over (readKnownHostsFiles).
func readKnownHostsFile(p string) ([]byte, bool, error) {
	f, fi, err := fspath.OpenRegular(p)
	if err != nil {
		return nil, false, nil
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		// the null device, or a pipe handed to readproof (/dev/stdin,
		// which under readproof mcp is the client's requests): passed
		// over as before, so that /dev/null alone is no file read and
		// the fetch stops before dialling
		return nil, false, nil
	}
	tooLarge := fmt.Errorf("%s: %w", p, errKnownHostsTooLarge)
	if fi.Size() > maxKnownHostsBytes {
		return nil, false, tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKnownHostsBytes+1))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", p, err)
	}
	if len(data) > maxKnownHostsBytes {
		return nil, false, tooLarge
	}
	return data, true, nil
}

// add reads the lines of data, the file's: blank lines and comments are
// passed over, and so is a line ssh would not read (an unknown marker, a
// key that does not parse), as ssh passes it over; a file none of whose
// lines is valid is refused, naming the first invalid line.
func (db *knownHostsDB) add(data []byte, file string) error {
	var firstErr error
	firstAt, valid := 0, 0
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		// ssh passes over spaces and tabs alone before the host field
		// (hostfile.c): a line starting with another space (\v, a
		// no-break space) names no host it is looked up under. Before,
		// every space was trimmed, and such a line listed its host.
		line = bytes.TrimRightFunc(bytes.TrimLeft(line, " \t"), unicode.IsSpace)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		l, err := parseHostKeyLine(line)
		if err != nil {
			if firstErr == nil {
				firstErr, firstAt = err, n
			}
			continue
		}
		l.file, l.line = file, n
		db.lines = append(db.lines, l)
		valid++
	}
	if valid == 0 && firstErr != nil {
		return fmt.Errorf("knownhosts: %s: no valid entries, line %d: %w", file, firstAt, firstErr)
	}
	return nil
}

// parseHostKeyLine reads one known_hosts line, not blank, not a comment.
func parseHostKeyLine(line []byte) (hostKeyLine, error) {
	marker, hosts, key, _, _, err := ssh.ParseKnownHosts(canonicalKeyType(line))
	if errors.Is(err, io.EOF) {
		return hostKeyLine{}, errors.New("a line of one word, with no key")
	}
	if err != nil {
		return hostKeyLine{}, err
	}
	if marker != "" && marker != "cert-authority" && marker != "revoked" {
		return hostKeyLine{}, fmt.Errorf("unknown marker @%s (ssh knows @cert-authority and @revoked)", marker)
	}
	l := hostKeyLine{marker: marker, hosts: strings.Join(hosts, ","), key: key}
	if strings.HasPrefix(l.hosts, "|") {
		if l.salt, l.hash, err = decodeHashedHost(l.hosts); err != nil {
			return hostKeyLine{}, err
		}
	}
	return l, nil
}

// rsaTypeNames are the names ssh reads in known_hosts as the type of an
// RSA key or certificate besides its own (sshkey.c, sshkey_read: any name
// sshkey_type_from_name gives the key's type by), which the known_hosts
// parser refuses as not the key's. Before, a line writing one was passed
// over, and a @revoked line so written revoked nothing: readproof took
// the key, where ssh refuses it.
var rsaTypeNames = map[string]string{
	ssh.KeyAlgoRSASHA256: ssh.KeyAlgoRSA, ssh.KeyAlgoRSASHA512: ssh.KeyAlgoRSA,
	ssh.CertAlgoRSASHA256v01: ssh.CertAlgoRSAv01, ssh.CertAlgoRSASHA512v01: ssh.CertAlgoRSAv01,
}

// canonicalKeyType is line with its key type field, when one of
// rsaTypeNames, the key's own name; else line.
func canonicalKeyType(line []byte) []byte {
	if !bytes.Contains(line, []byte("rsa-sha2-")) {
		return line // most lines: no fields split out
	}
	f := bytes.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
	i := 1 // the field after the host field, and after a marker
	if len(f) > 0 && f[0][0] == '@' {
		i = 2
	}
	if len(f) <= i {
		return line
	}
	t, ok := rsaTypeNames[string(f[i])]
	if !ok {
		return line
	}
	f[i] = []byte(t)
	return bytes.Join(f, []byte(" "))
}

// decodeHashedHost is the salt and hash of a hashed host field
// (|1|salt|hash, base64, as ssh-keygen -H writes it: HMAC-SHA1 of the
// name under the salt), as ssh reads it (hostfile.c, extract_salt).
func decodeHashedHost(field string) (salt, hash []byte, err error) {
	parts := strings.Split(field, "|")
	if len(parts) != 4 || parts[0] != "" || parts[1] != "1" {
		return nil, nil, fmt.Errorf("hashed host %q is not |1|salt|hash", field)
	}
	salt, err = base64.StdEncoding.DecodeString(parts[2])
	if err == nil {
		hash, err = base64.StdEncoding.DecodeString(parts[3])
	}
	if err != nil || len(salt) != sha1.Size || len(hash) != sha1.Size {
		return nil, nil, fmt.Errorf("hashed host %q is not |1|salt|hash of %d-byte base64 values", field, sha1.Size)
	}
	return salt, hash, nil
}

// lookupName is the name a host key of addr (host:port) is looked up
// under, as ssh looks it up (hostfile.c, put_host_port): the host in
// lower case, as [host]:port when the port is not 22.
func lookupName(addr string) (name, host string, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", "", err
	}
	host = asciiLower(host)
	if port == "22" || port == "" {
		return host, host, nil
	}
	return "[" + host + "]:" + port, host, nil
}

// matches is whether the line's host field names name, as ssh matches it
// (hostfile.c, hostkeys_foreach_file): a hashed field by its HMAC, else
// the pattern list as match_hostname matches it: * and ? wildcards over
// the whole name ([host]:port included), in any case (A to Z), a negated
// pattern (!name) that matches leaves the line out, and a pattern over
// maxSSHSubpattern bytes makes the line match nothing.
func (l *hostKeyLine) matches(name string) bool {
	if l.hash != nil {
		m := hmac.New(sha1.New, l.salt)
		m.Write([]byte(name))
		return hmac.Equal(m.Sum(nil), l.hash)
	}
	hit := false
	for _, p := range strings.Split(l.hosts, ",") {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		if len(p) > maxSSHSubpattern {
			return false
		}
		if !sshPatternMatch(name, asciiLower(p)) {
			continue
		}
		if neg {
			return false
		}
		hit = true
	}
	return hit
}

// maxSSHSubpattern is the longest pattern of a list ssh matches
// (match.c, match_pattern_list): a longer one makes the whole list match
// nothing, wherever it stands. Before, readproof matched the list's other
// patterns, and took a key for a host ssh finds unknown.
const maxSSHSubpattern = 1022

// asciiLower is s with A to Z in lower case, as ssh lowers a name and a
// pattern (tolower, byte by byte): strings.ToLower also lowers other
// letters (the Kelvin sign to k) and turns invalid UTF-8 into U+FFFD, so
// that a pattern matched names ssh does not match it to.
func asciiLower(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return 'A' <= r && r <= 'Z' }) {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// known is the line as a knownhosts error names it.
func (l *hostKeyLine) known() knownhosts.KnownKey {
	return knownhosts.KnownKey{Key: l.key, Filename: l.file, Line: l.line}
}

// linesFor are the lines whose host field names name.
func (db *knownHostsDB) linesFor(name string) []*hostKeyLine {
	var out []*hostKeyLine
	for i := range db.lines {
		if db.lines[i].matches(name) {
			out = append(out, &db.lines[i])
		}
	}
	return out
}

// HostKeyCallback checks a server's host key as ssh checks it
// (sshconnect.c, check_host_key) under the address it is given (the host
// name, or the HostKeyAlias, with the port), the address dialled looked
// up only for CheckHostIP yes:
//   - a key, or a certificate's key or signing CA, that a @revoked line
//     for the host lists is refused (a *knownhosts.RevokedError);
//   - a host certificate is taken when a @cert-authority line for the
//     host lists its signing key and it holds for the host: the host
//     name among its principals (or none: any host, as ssh takes it),
//     within its validity window, no critical option, its signature
//     good and made by an algorithm ssh takes from a CA (the host's
//     CASignatureAlgorithms, else caSignatureAlgorithms). Else, as ssh
//     retries, its key is checked as a plain key;
//   - a key a plain line for the host lists is taken (with CheckHostIP
//     yes, unless the address's lines list another: checkAddress); else
//     the error is a *knownhosts.KeyError, whose Want are the host's
//     keys listed (none: the host is unknown).
//
// The lines are the files' and then the KnownHostsCommand's.
func (db *knownHostsDB) HostKeyCallback() ssh.HostKeyCallback {
	return func(addr string, remote net.Addr, key ssh.PublicKey) error {
		return db.check(addr, remote, key)
	}
}

func (db *knownHostsDB) check(addr string, remote net.Addr, key ssh.PublicKey) error {
	name, host, err := lookupName(addr)
	if err != nil {
		return fmt.Errorf("knownhosts: %w", err)
	}
	lines, err := db.linesForLookup(commandKeyTokens{name: name, invocation: "HOSTNAME", key: key})
	if err != nil {
		return err
	}
	revoked := func(k ssh.PublicKey) *hostKeyLine {
		for _, l := range lines {
			if l.marker == "revoked" && sameKey(plainKey(l.key), k) {
				return l
			}
		}
		return nil
	}
	var certErr error
	if cert, ok := key.(*ssh.Certificate); ok {
		for _, k := range []ssh.PublicKey{cert.Key, cert.SignatureKey} {
			if l := revoked(k); l != nil {
				return refusedHostKey(name, cert.Key, &knownhosts.RevokedError{Revoked: l.known()})
			}
		}
		if certErr = db.checkCert(lines, host, cert); certErr == nil {
			return nil
		}
		key = cert.Key // ssh: "No matching CA found. Retry with plain key"
	} else if l := revoked(key); l != nil {
		return refusedHostKey(name, key, &knownhosts.RevokedError{Revoked: l.known()})
	}
	keyErr := &knownhosts.KeyError{}
	for _, l := range lines {
		if l.marker != "" {
			continue
		}
		if sameKey(l.key, key) {
			return db.checkAddress(remote, key) // a certificate taken is not (ssh)
		}
		keyErr.Want = append(keyErr.Want, l.known())
	}
	if certErr != nil {
		return refusedHostKey(name, key, fmt.Errorf("the host's certificate is not taken (%v), and known_hosts does not list its key itself for the host: %w", certErr, keyErr))
	}
	return refusedHostKey(name, key, keyErr)
}

// refusedHostKey is err, the refusal of the host key key of the host
// looked up as name, saying the key's fingerprint and the name, with a
// hint by the refusal's kind: revoked, another key listed, none. It names
// no known_hosts file, whose path may hold a variable's value
// (showWritten). Before, the refusal was "knownhosts: key is unknown"
// alone, with no hint.
func refusedHostKey(name string, key ssh.PublicKey, err error) error {
	shown := text.Printable(name)
	arg := shown
	if strings.ContainsAny(arg, "[]*?") {
		arg = "'" + arg + "'"
	}
	var revoked *knownhosts.RevokedError
	var keyErr *knownhosts.KeyError
	fix := "check the key's fingerprint with the host's owner, then add the host's key to the known_hosts file ssh reads for it (ssh-keyscan prints it; ssh-keygen -F " + arg + " shows no line lists it now)"
	switch {
	case errors.As(err, &revoked):
		fix = "a @revoked line lists the key for the host (ssh-keygen -F " + arg + " shows the host's lines): ask the host's owner for its new key, and do not connect with this one"
	case errors.As(err, &keyErr) && len(keyErr.Want) > 0:
		fix = "known_hosts lists another key for the host (ssh-keygen -F " + arg + " shows it): the host's key changed or another machine answers; ask the host's owner for the key's fingerprint, and only if it changed, remove the old line (ssh-keygen -R " + arg + ") and add the new key"
	}
	return hint.With(fmt.Errorf("host key %s %s of %s: %w", key.Type(), ssh.FingerprintSHA256(key), shown, err), fix)
}

// checkCert is nil when a @cert-authority line of lines lists the
// signing key of cert and cert holds for host as ssh checks a host
// certificate (sshconnect.c, check_host_cert), else why not.
func (db *knownHostsDB) checkCert(lines []*hostKeyLine, host string, cert *ssh.Certificate) error {
	if cert.CertType != ssh.HostCert {
		return errors.New("it is not a host certificate")
	}
	listed := slices.ContainsFunc(lines, func(l *hostKeyLine) bool {
		return l.marker == "cert-authority" && sameKey(l.key, cert.SignatureKey)
	})
	if !listed {
		return fmt.Errorf("no @cert-authority line for the host lists its signing key %s", ssh.FingerprintSHA256(cert.SignatureKey))
	}
	caAlgos := db.caAlgos
	if caAlgos == nil {
		caAlgos = caSignatureAlgorithms
	}
	if cert.Signature == nil || !slices.Contains(caAlgos, cert.Signature.Format) {
		format := "none"
		if cert.Signature != nil {
			format = cert.Signature.Format
		}
		return fmt.Errorf("its CA signed it with %s, which ssh does not take for a certificate (CASignatureAlgorithms: %s)", format, strings.Join(caAlgos, ","))
	}
	// the clock is the time now; no critical option is supported
	if len(cert.ValidPrincipals) > 0 {
		return (&ssh.CertChecker{}).CheckCert(host, cert)
	}
	return checkCertAnyHost(host, cert)
}

// errCertSignature is the error x/crypto's CertChecker gives a
// certificate whose CA signature does not verify.
const errCertSignature = "ssh: certificate signature does not verify"

// checkCertAnyHost checks cert, a host certificate naming no principal,
// as ssh checks it (sshkey.c, sshkey_cert_check_authority: a host
// certificate's principals are not required, and none means any host):
// no critical option, within its validity window, its CA signature good.
// x/crypto's CertChecker refuses it ("principal not in the set"): it is
// checked there as naming host, every check but the signature's, which
// that copy no longer carries, and the signature is verified here over
// the certificate as its CA signed it. Before, readproof refused such a
// certificate where ssh 9.2 takes it.
func checkCertAnyHost(host string, cert *ssh.Certificate) error {
	named := *cert
	named.ValidPrincipals = []string{host}
	if err := (&ssh.CertChecker{}).CheckCert(host, &named); err != nil && err.Error() != errCertSignature {
		return err
	}
	unsigned := *cert
	unsigned.Signature = nil
	b := unsigned.Marshal()
	if err := cert.SignatureKey.Verify(b[:len(b)-4], cert.Signature); err != nil { // less the empty signature's length
		return errors.New(errCertSignature)
	}
	return nil
}

// caSignatureAlgorithms are the signature algorithms ssh takes from the
// CA of a host certificate when the configuration gives none for the
// host, OpenSSH 9.2's default CASignatureAlgorithms
// (sshconnect.c, check_host_cert; ssh -G shows them): not ssh-rsa, whose
// SHA-1 signatures ssh has refused since 8.2. Before, readproof took a
// certificate its CA signed with ssh-rsa, which ssh refuses.
var caSignatureAlgorithms = []string{
	ssh.KeyAlgoED25519, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521,
	ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256,
}

// plainKey is the key a certificate certifies, else k: ssh compares a
// @revoked line's key so (sshkey_equal_public), so that one listing a
// certificate revokes its key, and every certificate of it. Before, such
// a line revoked nothing.
func plainKey(k ssh.PublicKey) ssh.PublicKey {
	if c, ok := k.(*ssh.Certificate); ok {
		return c.Key
	}
	return k
}

// sameKey is whether a and b are the same public key.
func sameKey(a, b ssh.PublicKey) bool { return bytes.Equal(a.Marshal(), b.Marshal()) }

// hostKeyAlgorithms are the host key algorithms to ask the server for
// hostWithPort, as ssh 9.2 asks for them (sshconnect2.c, ssh_kex2 and
// order_hostkeyalgs): its HostKeyAlgorithms (the configuration's, else
// the default), those x/crypto speaks. With no HostKeyAlgorithms given,
// or a +list or -list, ssh puts first the algorithms of the certificates
// when a @cert-authority line names the host, and of the keys plain lines
// list for it (the KnownHostsCommand's too, run for the order); readproof
// asks for those alone, so that a server holding keys of several types
// offers the one listed (go-git issue 411) and one holding none is named
// (ssh would take a key of another type only to refuse it). A list or
// ^list given is asked for as written, as ssh asks for it. An error is a
// KnownHostsCommand that failed, or a list readproof speaks none of.
func (db *knownHostsDB) hostKeyAlgorithms(hostWithPort string) ([]string, error) {
	list, reorder := db.algos, db.reorder
	if list == nil {
		list, reorder = defaultHostKeyAlgorithms, true
	}
	spoken := hostKeyAlgorithmsGo()
	offered := slices.DeleteFunc(slices.Clone(list), func(a string) bool { return !slices.Contains(spoken, a) })
	if len(offered) == 0 {
		return nil, hint.With(fmt.Errorf("HostKeyAlgorithms for the host names none of the algorithms readproof speaks (%s)", strings.Join(spoken, ",")),
			"add one the host's key signs with to the HostKeyAlgorithms line for the host (ssh -G HOST shows the list)")
	}
	name, _, err := lookupName(hostWithPort)
	if err != nil || !reorder {
		return offered, nil
	}
	// ssh runs the command for the order too, with %H the host name
	// and no key, and connects to no host when it fails
	lines, err := db.linesForLookup(commandKeyTokens{name: name, invocation: "ORDER"})
	if err != nil {
		return nil, err
	}
	ca := slices.ContainsFunc(lines, func(l *hostKeyLine) bool { return l.marker == "cert-authority" })
	var first []string
	for _, a := range offered {
		cert := strings.Contains(a, "-cert-")
		if cert && ca || !cert && slices.ContainsFunc(lines, func(l *hostKeyLine) bool { return l.marker == "" && l.key.Type() == algorithmKeyType(a) }) {
			first = append(first, a)
		}
	}
	if len(first) == 0 {
		return offered, nil // no line names the host: ssh's list
	}
	return first, nil
}
