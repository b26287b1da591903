package evidence

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// GitNamespace is the sshsig namespace git uses for commit signatures.
const GitNamespace = "git"

const (
	sshsigBegin = "-----BEGIN SSH SIGNATURE-----"
	sshsigEnd   = "-----END SSH SIGNATURE-----"
)

// SignCommit signs a commit payload (the commit object without its gpgsig
// header) with key as ssh-keygen -Y sign -n git does: an sshsig signature,
// namespace "git", hash sha512, armored as "-----BEGIN SSH SIGNATURE-----"
// with a trailing newline. Store the armor in the commit's gpgsig header.
func SignCommit(payload []byte, key Key) (string, error) {
	if key.private == nil {
		return "", fmt.Errorf("%w: key %s has no private half", ErrUnsupportedKey, key.Fingerprint())
	}
	signer, err := ssh.NewSignerFromKey(key.private)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnsupportedKey, err)
	}
	sig, err := sshsig.Sign(bytes.NewReader(payload), signer, sshsig.HashSHA512, GitNamespace)
	if err != nil {
		return "", fmt.Errorf("signing commit with %s: %w", key.Fingerprint(), err)
	}
	return armorSSHSig(sig.Marshal()), nil
}

// armorSSHSig wraps a signature blob the way ssh-keygen does: base64 in lines
// of 70 characters between the BEGIN and END markers.
func armorSSHSig(blob []byte) string {
	b64 := base64.StdEncoding.EncodeToString(blob)
	var b strings.Builder
	b.WriteString(sshsigBegin + "\n")
	for len(b64) > 70 {
		b.WriteString(b64[:70] + "\n")
		b64 = b64[70:]
	}
	b.WriteString(b64 + "\n" + sshsigEnd + "\n")
	return b.String()
}

func unarmorSSHSig(armor string) (*sshsig.Signature, error) {
	s := strings.TrimSpace(armor)
	if !strings.HasPrefix(s, sshsigBegin) || !strings.HasSuffix(s, sshsigEnd) || len(s) < len(sshsigBegin)+len(sshsigEnd) {
		return nil, fmt.Errorf("%w: not an armored SSH signature (-----BEGIN SSH SIGNATURE-----)", ErrBadSignature)
	}
	body := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, s[len(sshsigBegin):len(s)-len(sshsigEnd)])
	blob, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		return nil, fmt.Errorf("%w: SSH signature armor is not base64", ErrBadSignature)
	}
	sig, err := sshsig.ParseSignature(blob)
	if err != nil {
		return nil, fmt.Errorf("%w: malformed SSH signature: %v", ErrBadSignature, err)
	}
	return sig, nil
}

// CommitSigner names who signed a commit.
type CommitSigner struct {
	// Principal is the allowed_signers principal field that vouched for the
	// key, as `ssh-keygen -Y find-principals` prints it.
	Principal string
	// Fingerprint is the signing key's SHA256 fingerprint.
	Fingerprint string
}

// VerifyCommitSignature checks an SSH commit signature the way stock
// `git verify-commit` does with gpg.format=ssh: the armored sshsig must be a
// valid signature with namespace "git" over payload, and its key must be
// vouched for by signers at commitTime (the committer time): git first looks
// up the principal of the first line whose key matches and is valid then
// (ssh-keygen -Y find-principals), then requires a line for that principal
// whose namespaces allow "git" (ssh-keygen -Y verify -n git -I principal).
// Errors wrap ErrBadSignature, ErrUntrustedKey or ErrKeyNotValid.
func VerifyCommitSignature(payload []byte, armor string, signers AllowedSigners, commitTime time.Time) error {
	_, err := VerifyCommitSigner(payload, armor, signers, commitTime)
	return err
}

// VerifyCommitSigner is VerifyCommitSignature that also says who signed.
func VerifyCommitSigner(payload []byte, armor string, signers AllowedSigners, commitTime time.Time) (CommitSigner, error) {
	sig, err := unarmorSSHSig(armor)
	if err != nil {
		return CommitSigner{}, err
	}
	fp := ssh.FingerprintSHA256(sig.PublicKey)
	if sig.Namespace != GitNamespace {
		return CommitSigner{}, fmt.Errorf("%w: signature by %s has namespace %q, a commit signature has %q", ErrBadSignature, fp, sig.Namespace, GitNamespace)
	}
	if err := sshsig.Verify(bytes.NewReader(payload), sig, sig.PublicKey, sig.HashAlgorithm, GitNamespace); err != nil {
		return CommitSigner{}, fmt.Errorf("%w: commit signature by %s does not match the commit: the commit was changed after signing", ErrBadSignature, fp)
	}
	principal, err := signers.principalFor(sig.PublicKey, GitNamespace, commitTime)
	if err != nil {
		return CommitSigner{}, err
	}
	return CommitSigner{Principal: principal, Fingerprint: fp}, nil
}

// AllowedSigner is one line of an allowed_signers file.
type AllowedSigner struct {
	// Line is the 1-based line number.
	Line int
	// Principals is the comma-separated pattern list, quotes removed.
	Principals string
	// Namespaces is the namespaces="..." pattern list ("" when absent).
	Namespaces string
	// HasNamespaces is true when the line has a namespaces option, even
	// namespaces="": ssh-keygen -Y verify then admits only the namespaces
	// the list matches, and an empty list matches none.
	HasNamespaces bool
	// ValidAfter and ValidBefore are the key's validity window (zero when
	// absent), compared with the commit time as ssh-keygen does.
	ValidAfter, ValidBefore time.Time
	Key                     ssh.PublicKey
}

// AllowedSigners is a parsed allowed_signers file, lines in file order.
type AllowedSigners []AllowedSigner

// ParseAllowedSigners parses the allowed_signers format of ssh-keygen(1):
// "principals [options] keytype base64 [comment]", '#' comments and blank
// lines ignored, principals optionally quoted, options namespaces="...",
// valid-after="..." and valid-before="..." (YYYYMMDD[HHMM[SS]], local time
// unless suffixed Z or UTC). cert-authority lines are refused: readproof
// signs with plain keys. Unlike ssh-keygen, which skips a malformed line,
// any malformed line is an error (ErrAllowedSigners) naming it.
func ParseAllowedSigners(data []byte) (AllowedSigners, error) {
	var out AllowedSigners
	for n, line := range strings.Split(string(data), "\n") {
		s, err := parseAllowedSignersLine(line, n+1)
		if err != nil {
			return nil, err
		}
		if s != nil {
			out = append(out, *s)
		}
	}
	return out, nil
}

// parseAllowedSignersLine returns nil, nil for a blank or comment line.
func parseAllowedSignersLine(line string, n int) (*AllowedSigner, error) {
	bad := func(format string, args ...any) (*AllowedSigner, error) {
		return nil, fmt.Errorf("%w: line %d: %s", ErrAllowedSigners, n, fmt.Sprintf(format, args...))
	}
	cp := strings.TrimLeft(line, " \t")
	cp = strings.TrimRight(cp, "\r\n")
	if cp == "" || cp[0] == '#' {
		return nil, nil
	}
	principals, rest, ok := nextToken(cp)
	if !ok || strings.TrimSpace(rest) == "" {
		return bad("want \"principals [options] keytype base64\"")
	}
	if principals == "" {
		return bad("empty principal")
	}
	s := &AllowedSigner{Line: n, Principals: principals}
	key, err := readPublicKey(rest)
	if err != nil {
		if first, _, _ := strings.Cut(rest, " "); !strings.ContainsAny(first, `="`) &&
			(strings.HasPrefix(first, "ssh-") || strings.HasPrefix(first, "ecdsa-") || strings.HasPrefix(first, "sk-")) {
			return bad("invalid key: %v", err)
		}
		opts, after := splitOptions(rest)
		after = strings.TrimLeft(after, " \t")
		if after == "" {
			return bad("missing key")
		}
		if key, err = readPublicKey(after); err != nil {
			return bad("invalid key: %v", err)
		}
		if err := parseSignerOptions(s, opts); err != nil {
			return bad("%v", err)
		}
	}
	s.Key = key
	return s, nil
}

// nextToken splits off one whitespace-delimited token as OpenSSH's
// strdelimw does: a double quote starts a quoted run that may hold spaces and
// ends the token at the closing quote. ok is false for a token with nothing
// after it or an unterminated quote.
func nextToken(s string) (tok, rest string, ok bool) {
	i := strings.IndexAny(s, " \t\r\n\"")
	if i < 0 {
		return s, "", false
	}
	if s[i] == '"' {
		end := strings.IndexByte(s[i+1:], '"')
		if end < 0 {
			return "", "", false
		}
		tok = s[:i] + s[i+1:i+1+end]
		return tok, strings.TrimLeft(s[i+2+end:], " \t\r\n"), true
	}
	return s[:i], strings.TrimLeft(s[i+1:], " \t\r\n"), true
}

// readPublicKey reads "keytype base64 [comment]".
func readPublicKey(s string) (ssh.PublicKey, error) {
	fields := strings.Fields(s)
	if len(fields) < 2 {
		return nil, fmt.Errorf("want keytype and base64 key")
	}
	blob, err := base64.StdEncoding.DecodeString(fields[1])
	if err != nil {
		return nil, fmt.Errorf("key is not base64")
	}
	key, err := ssh.ParsePublicKey(blob)
	if err != nil {
		return nil, err
	}
	if key.Type() != fields[0] {
		return nil, fmt.Errorf("key type %q does not match the key's %q", fields[0], key.Type())
	}
	return key, nil
}

// splitOptions returns the options field (up to the first unquoted space or
// tab) and what follows it.
func splitOptions(s string) (opts, rest string) {
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && s[i+1] == '"' {
			i++
			continue
		}
		if c == '"' {
			quoted = !quoted
		}
		if !quoted && (c == ' ' || c == '\t') {
			return s[:i], s[i:]
		}
	}
	return s, ""
}

// parseSignerOptions follows ssh-keygen's sshsigopt_parse: comma-separated,
// names case-insensitive, values double-quoted.
func parseSignerOptions(s *AllowedSigner, opts string) error {
	var haveNS, haveAfter, haveBefore bool
	for opts != "" {
		switch {
		case hasPrefixFold(opts, "cert-authority"):
			return fmt.Errorf("cert-authority keys are not supported: list the signing key itself")
		case hasPrefixFold(opts, "namespaces="):
			if haveNS {
				return fmt.Errorf(`multiple "namespaces" clauses`)
			}
			v, rest, err := dequote(opts[len("namespaces="):])
			if err != nil {
				return fmt.Errorf("namespaces: %v", err)
			}
			s.Namespaces, s.HasNamespaces, opts, haveNS = v, true, rest, true
		case hasPrefixFold(opts, "valid-after="), hasPrefixFold(opts, "valid-before="):
			name := opts[:strings.IndexByte(opts, '=')]
			v, rest, err := dequote(opts[len(name)+1:])
			if err != nil {
				return fmt.Errorf("%s: %v", name, err)
			}
			t, err := parseSSHTime(v)
			if err != nil {
				return fmt.Errorf("invalid %q time %q: want YYYYMMDD[HHMM[SS]][Z]", strings.ToLower(name), v)
			}
			if strings.EqualFold(name, "valid-after") {
				if haveAfter {
					return fmt.Errorf(`multiple "valid-after" clauses`)
				}
				s.ValidAfter, haveAfter = t, true
			} else {
				if haveBefore {
					return fmt.Errorf(`multiple "valid-before" clauses`)
				}
				s.ValidBefore, haveBefore = t, true
			}
			opts = rest
		default:
			return fmt.Errorf("unknown option %q", firstOption(opts))
		}
		if opts == "" {
			break
		}
		if opts[0] != ',' {
			return fmt.Errorf("unknown option %q", firstOption(opts))
		}
		opts = opts[1:]
		if opts == "" {
			return fmt.Errorf("unexpected end of options")
		}
	}
	if haveAfter && haveBefore && !s.ValidBefore.After(s.ValidAfter) {
		return fmt.Errorf(`"valid-before" time is not after "valid-after"`)
	}
	return nil
}

func firstOption(s string) string {
	if i := strings.IndexByte(s, ','); i >= 0 {
		s = s[:i]
	}
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// dequote reads a double-quoted value where \" stands for a quote.
func dequote(s string) (val, rest string, err error) {
	if s == "" || s[0] != '"' {
		return "", "", fmt.Errorf("missing start quote")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '"':
			b.WriteByte('"')
			i++
		case s[i] == '"':
			return b.String(), s[i+1:], nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", fmt.Errorf("missing end quote")
}

// parseSSHTime parses YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, in local
// time unless suffixed "Z" or "UTC" (any case), as ssh-keygen does.
func parseSSHTime(v string) (time.Time, error) {
	loc := time.Local
	switch {
	case len(v) > 1 && strings.EqualFold(v[len(v)-1:], "Z"):
		v, loc = v[:len(v)-1], time.UTC
	case len(v) > 3 && strings.EqualFold(v[len(v)-3:], "UTC"):
		v, loc = v[:len(v)-3], time.UTC
	}
	if len(v) != 8 && len(v) != 12 && len(v) != 14 {
		return time.Time{}, fmt.Errorf("bad length")
	}
	num := func(s string, lo, hi int) (int, bool) {
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
		}
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= lo && n <= hi
	}
	var f [6]int
	ranges := [6][3]int{{0, 0, 9999}, {4, 1, 12}, {6, 1, 31}, {8, 0, 23}, {10, 0, 59}, {12, 0, 60}}
	for i, r := range ranges {
		width := 2
		if i == 0 {
			width = 4
		}
		if r[0]+width > len(v) {
			break
		}
		n, ok := num(v[r[0]:r[0]+width], r[1], r[2])
		if !ok {
			return time.Time{}, fmt.Errorf("bad field")
		}
		f[i] = n
	}
	t := time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], 0, loc)
	if t.Unix() <= 0 {
		return time.Time{}, fmt.Errorf("before 1970")
	}
	return t, nil
}

// validAt reports whether the window admits t, comparing whole seconds.
func (s AllowedSigner) validAt(t time.Time) error {
	ts := t.Unix()
	if !s.ValidAfter.IsZero() && ts < s.ValidAfter.Unix() {
		return fmt.Errorf("%w: line %d: key is not yet valid at %s (valid-after %s)", ErrKeyNotValid, s.Line, t.UTC().Format(time.RFC3339), s.ValidAfter.UTC().Format(time.RFC3339))
	}
	if !s.ValidBefore.IsZero() && ts > s.ValidBefore.Unix() {
		return fmt.Errorf("%w: line %d: key has expired at %s (valid-before %s)", ErrKeyNotValid, s.Line, t.UTC().Format(time.RFC3339), s.ValidBefore.UTC().Format(time.RFC3339))
	}
	return nil
}

// principalFor reproduces git's two ssh-keygen calls. find-principals takes
// the first line whose key matches and is valid at t (any namespace) and
// prints its principals one a line (split at commas, stopping at an empty
// one); git then runs verify -I p -n git for each p until one succeeds, which
// needs a line whose principal patterns match p, with this key, valid at t
// and allowing the namespace.
func (a AllowedSigners) principalFor(key ssh.PublicKey, namespace string, t time.Time) (string, error) {
	want := key.Marshal()
	fp := ssh.FingerprintSHA256(key)
	var candidates []string
	found := false
	var firstErr error
	for _, s := range a {
		if !bytes.Equal(s.Key.Marshal(), want) {
			continue
		}
		if err := s.validAt(t); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		found = true
		for _, p := range strings.Split(s.Principals, ",") {
			if p == "" {
				break
			}
			candidates = append(candidates, p)
		}
		break
	}
	if !found {
		if firstErr != nil {
			return "", fmt.Errorf("signing key %s: %w", fp, firstErr)
		}
		return "", fmt.Errorf("%w: key %s is not in allowed_signers: add its allowed_signers line to trust it", ErrUntrustedKey, fp)
	}
	for _, p := range candidates {
		for _, s := range a {
			if matchPatternList(p, s.Principals) != 1 || !bytes.Equal(s.Key.Marshal(), want) || s.validAt(t) != nil {
				continue
			}
			// namespaces="" admits none, as in ssh-keygen (before
			// session 29's follow-up it was taken as no limit)
			if s.HasNamespaces && matchPatternList(namespace, s.Namespaces) != 1 {
				continue
			}
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: key %s (principals %q) is not permitted for signature namespace %q by allowed_signers", ErrKeyNotValid, fp, strings.Join(candidates, ","), namespace)
}

// matchPatternList follows OpenSSH's match_pattern_list (case-sensitive):
// 1 when s matches a pattern of the comma-separated list, -1 when it matches
// a negated (!) pattern, 0 otherwise.
func matchPatternList(s, list string) int {
	positive := 0
	for list != "" {
		negated := false
		if list[0] == '!' {
			negated = true
			list = list[1:]
		}
		sub := list
		if i := strings.IndexByte(list, ','); i >= 0 {
			sub, list = list[:i], list[i+1:]
		} else {
			list = ""
		}
		if len(sub) >= 1023 {
			return 0
		}
		if matchPattern(s, sub) {
			if negated {
				return -1
			}
			positive = 1
		}
	}
	return positive
}

// matchPattern matches s against a glob of '*' and '?' in linear time.
func matchPattern(s, p string) bool {
	si, pi := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]) && p[pi] != '*':
			si++
			pi++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// SplitSignedCommit takes a raw commit object (as `git cat-file commit`
// prints it) and returns the signed payload (the object without its gpgsig
// header), the armored signature and the committer time. A commit without a
// gpgsig header returns ErrNotSigned.
func SplitSignedCommit(raw []byte) (payload []byte, armor string, committed time.Time, err error) {
	headerEnd := bytes.Index(raw, []byte("\n\n"))
	if headerEnd < 0 {
		headerEnd = len(raw)
	} else {
		headerEnd++
	}
	var out bytes.Buffer
	out.Grow(len(raw))
	var sig strings.Builder
	inSig, seen := false, false
	for pos := 0; pos < headerEnd; {
		end := bytes.IndexByte(raw[pos:headerEnd], '\n')
		var line []byte
		if end < 0 {
			line = raw[pos:headerEnd]
			pos = headerEnd
		} else {
			line = raw[pos : pos+end+1]
			pos += end + 1
		}
		switch {
		case bytes.HasPrefix(line, []byte("gpgsig ")):
			if seen {
				return nil, "", time.Time{}, fmt.Errorf("%w: commit has two gpgsig headers", ErrBadSignature)
			}
			seen, inSig = true, true
			sig.Write(line[len("gpgsig "):])
		case bytes.HasPrefix(line, []byte("gpgsig-sha256 ")):
			return nil, "", time.Time{}, fmt.Errorf("%w: commit carries a gpgsig-sha256 header, which readproof does not write", ErrBadSignature)
		case inSig && len(line) > 0 && line[0] == ' ':
			sig.Write(line[1:])
		default:
			inSig = false
			out.Write(line)
		}
	}
	out.Write(raw[headerEnd:])
	if !seen {
		return nil, "", time.Time{}, fmt.Errorf("commit: %w: configure a signing key to sign manifest commits", ErrNotSigned)
	}
	payload = out.Bytes()
	committed, err = CommitTime(payload)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	return payload, sig.String(), committed, nil
}

// CommitTime returns the committer time of a commit object: the time git
// hands ssh-keygen as verify-time.
func CommitTime(commit []byte) (time.Time, error) {
	header := commit
	if i := bytes.Index(commit, []byte("\n\n")); i >= 0 {
		header = commit[:i+1]
	}
	for _, line := range strings.Split(string(header), "\n") {
		rest, ok := strings.CutPrefix(line, "committer ")
		if !ok {
			continue
		}
		gt := strings.LastIndexByte(rest, '>')
		if gt < 0 {
			break
		}
		fields := strings.Fields(rest[gt+1:])
		if len(fields) < 1 {
			break
		}
		secs, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			break
		}
		return time.Unix(secs, 0), nil
	}
	return time.Time{}, fmt.Errorf("%w: commit has no well-formed committer line", ErrBadSignature)
}

// InsertCommitSignature returns the commit object with armor stored in a
// gpgsig header at the end of the header block, each continuation line
// prefixed by one space, as git writes it.
func InsertCommitSignature(payload []byte, armor string) ([]byte, error) {
	if !strings.HasPrefix(armor, sshsigBegin) {
		return nil, fmt.Errorf("%w: not an armored SSH signature", ErrBadSignature)
	}
	if !strings.HasSuffix(armor, "\n") {
		armor += "\n"
	}
	at := len(payload)
	if i := bytes.Index(payload, []byte("\n\n")); i >= 0 {
		at = i + 1
	}
	var h strings.Builder
	h.WriteString("gpgsig")
	for _, line := range strings.SplitAfter(armor, "\n") {
		if line == "" {
			continue
		}
		h.WriteString(" " + line)
	}
	out := make([]byte, 0, len(payload)+h.Len())
	out = append(out, payload[:at]...)
	out = append(out, h.String()...)
	return append(out, payload[at:]...), nil
}
