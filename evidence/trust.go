package evidence

import (
	"bytes"
	"crypto/ed25519"
	"encoding/pem"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// TrustWarning is an allowed_signers line whose validity window leaves its
// key out of the keys that may sign an envelope now: Why says how ("has
// expired at ... (valid-before ...)").
type TrustWarning struct {
	Line       int
	Principals string
	Why        string
}

// ParseTrust reads a file of trusted public keys (allowed_signers,
// authorized_keys or PKIX PEM), as `evidence verify --trusted-keys`, `verify`
// and `evidence export` (command and MCP tool alike) trust it: keys are the
// ed25519 keys that may sign a DSSE envelope at now; signers vouch for
// manifest commit signatures: the file as allowed_signers, or, for the other
// forms, each key under any principal. warnings name the allowed_signers
// lines whose window leaves their key out of keys.
func ParseTrust(data []byte, now time.Time) (keys []ed25519.PublicKey, signers AllowedSigners, warnings []TrustWarning, err error) {
	signers, serr := ParseAllowedSigners(data)
	keys, err = ParsePublicKeys(data)
	if err != nil && serr == nil && len(signers) > 0 {
		// an allowed_signers file whose other lines are keys of other
		// types (git's, listing every committer): they vouch for commits,
		// and only its ed25519 keys can sign an envelope
		keys, err = nil, nil
		for _, s := range signers {
			if ck, ok := s.Key.(ssh.CryptoPublicKey); ok && s.Key.Type() == ssh.KeyAlgoED25519 {
				if k, ok := ck.CryptoPublicKey().(ed25519.PublicKey); ok {
					keys = append(keys, k)
				}
			}
		}
	}
	if err != nil {
		return nil, nil, nil, err
	}
	listed := len(signers) // the allowed_signers lines, with their windows
	if serr != nil || len(signers) == 0 {
		// Not an allowed_signers file throughout. Each line that is an
		// allowed_signers line still vouches only as ssh-keygen reads it
		// (its principals, namespaces and validity window: a file that
		// also holds an authorized_keys line must not lift an expired
		// key's valid-before), and a key given only in another form
		// (authorized_keys, PEM) is vouched for under any principal.
		signers = signers[:0]
		if block, _ := pem.Decode(data); block == nil {
			for n, line := range strings.Split(string(data), "\n") {
				if s, err := ParseAllowedSigners([]byte(line)); err == nil && len(s) == 1 {
					s[0].Line = n + 1
					signers = append(signers, s[0])
				}
			}
		}
		listed = len(signers)
		for i, k := range keys {
			pub, err := ssh.NewPublicKey(k)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("key %d: %w", i+1, err)
			}
			if len(linesNaming(signers[:listed], pub)) == 0 {
				signers = append(signers, AllowedSigner{Line: i + 1, Principals: "*", Key: pub})
			}
		}
	}
	// An envelope carries no time but the signer's word, so a key signs
	// envelopes while one of its allowed_signers lines admits the present,
	// as ssh-keygen -Y verify without a verify-time judges: a key past its
	// valid-before (a retired key) signs no bundle. A line with a
	// namespaces option must also admit EnvelopeNamespace.
	envelope := keys[:0:0]
	for _, k := range keys {
		pub, err := ssh.NewPublicKey(k)
		if err != nil {
			return nil, nil, nil, err
		}
		lines := linesNaming(signers[:listed], pub)
		var outside []TrustWarning
		for _, s := range lines {
			why := outsideWindow(s, now)
			if why == "" && s.HasNamespaces && matchPatternList(EnvelopeNamespace, s.Namespaces) != 1 {
				// a line that limits what its key signs (git's
				// namespaces="git") does not vouch for an envelope
				// unless it names ours
				why = fmt.Sprintf("is limited to namespaces=%q, which does not admit %q", s.Namespaces, EnvelopeNamespace)
			}
			if why != "" {
				outside = append(outside, TrustWarning{Line: s.Line, Principals: s.Principals, Why: why})
			}
		}
		if len(lines) > 0 && len(outside) == len(lines) {
			warnings = append(warnings, outside...)
			continue
		}
		envelope = append(envelope, k)
	}
	return envelope, signers, warnings, nil
}

// EnvelopeNamespace is the signature namespace of a DSSE envelope as an
// allowed_signers line's namespaces="..." option names it: a line with the
// option vouches for envelopes only when its list admits this name
// (namespaces="git,readproof-evidence"), as ssh-keygen -Y verify -n admits
// a namespace. The comment `key show` writes is the same word.
const EnvelopeNamespace = "readproof-evidence"

// linesNaming returns the allowed_signers lines whose key is pub.
func linesNaming(signers AllowedSigners, pub ssh.PublicKey) []AllowedSigner {
	var out []AllowedSigner
	for _, s := range signers {
		if bytes.Equal(s.Key.Marshal(), pub.Marshal()) {
			out = append(out, s)
		}
	}
	return out
}

// outsideWindow says why line s's validity window does not admit t (whole
// seconds, valid-before inclusive, as for commit signatures), "" when it does.
func outsideWindow(s AllowedSigner, t time.Time) string {
	switch {
	case !s.ValidAfter.IsZero() && t.Unix() < s.ValidAfter.Unix():
		return fmt.Sprintf("is not valid yet at %s (valid-after %s)", t.UTC().Format(time.RFC3339), s.ValidAfter.UTC().Format(time.RFC3339))
	case !s.ValidBefore.IsZero() && t.Unix() > s.ValidBefore.Unix():
		return fmt.Sprintf("has expired at %s (valid-before %s)", t.UTC().Format(time.RFC3339), s.ValidBefore.UTC().Format(time.RFC3339))
	}
	return ""
}
