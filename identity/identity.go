// Package identity parses and validates the names readproof hands out and
// accepts: resource URIs (readproof://NAMESPACE/PATH[@TAG]), run ids and tag
// names. Every name that ends up in a git ref or a tree path passes through
// here first, so path traversal and ref-name tricks stop at the door.
package identity

import (
	"errors"
	"fmt"
	"strings"

	"github.com/readproof/readproof/gitstore/gitobj"
	"github.com/readproof/readproof/internal/text"
)

// Scheme is the URI scheme, always lower case.
const Scheme = "readproof://"

// MaxPathLen is the longest PATH. A resource's ref ends in its whole PATH
// as one file name (Key), which git writes as a loose ref and locks as
// NAME.lock: 250 bytes and ".lock" fit the 255-byte file names of the file
// systems git stores refs on.
const MaxPathLen = 250

// MaxURILen is the length of the longest valid URI with its @tag: the
// scheme, a 64-byte namespace, a MaxPathLen-byte path and a 64-byte tag. A
// longer string is refused without being quoted whole.
const MaxURILen = len(Scheme) + 64 + 1 + MaxPathLen + 1 + 64

// ErrInvalid is wrapped by every validation error.
var ErrInvalid = errors.New("invalid name")

// URI is a parsed resource identity.
type URI struct {
	Namespace string
	Path      string
	// Tag is set when the URI carried an @tag suffix.
	Tag string
}

// String returns readproof://NAMESPACE/PATH without the tag.
func (u URI) String() string { return Scheme + u.Namespace + "/" + u.Path }

// Ref returns the URI with its @tag suffix when it has one.
func (u URI) Ref() string {
	if u.Tag == "" {
		return u.String()
	}
	return u.String() + "@" + u.Tag
}

// Key is the URI as one path-safe string, NAMESPACE/PATH with the slashes of
// PATH replaced by '+'. Distinct URIs have distinct keys ('+' never occurs in
// a path) and no key is a directory prefix of another, so keys can name refs.
func (u URI) Key() string { return u.Namespace + "/" + strings.ReplaceAll(u.Path, "/", "+") }

// MendURI returns typed with a mistyped scheme put right ("readproof:/",
// "readproof:", "readproof//", "readproof:///", "Readproof://") when that
// gives a valid URI, and "" otherwise: also for text that does not start
// like the scheme at all, since a file path such as policies/refunds.md
// would read as a URI of namespace "policies".
func MendURI(typed string) string {
	const name = "readproof"
	if len(typed) <= len(name) || !strings.EqualFold(typed[:len(name)], name) {
		return ""
	}
	rest := strings.TrimLeft(typed[len(name):], ":/")
	if len(rest) == len(typed)-len(name) || Scheme+rest == typed {
		return ""
	}
	if _, err := ParseURI(Scheme + rest); err != nil {
		return ""
	}
	return Scheme + rest
}

// URIHint is the hint for typed, which does not parse as a URI: the URI it
// was meant to be when its scheme was mistyped (MendURI), and the shape of
// one (withTag: that it may end in @TAG).
func URIHint(typed string, withTag bool) string {
	h := "resource URIs look like readproof://NAMESPACE/PATH"
	if withTag {
		h += ", optionally with @TAG"
	}
	if m := MendURI(typed); m != "" {
		return "did you mean " + m + "? (" + h + ")"
	}
	return h
}

// ParseURI parses readproof://NAMESPACE/PATH with an optional @TAG.
//
// NAMESPACE is lower-case letters, digits, '-', '_' and '.', starting with a
// letter or digit, at most 64 bytes. PATH is one or more segments separated by
// '/', each of letters, digits, '-', '_' and '.', starting with a letter,
// digit or '_', not ending in '.' or ".lock"; at most MaxPathLen (250) bytes
// in all. TAG follows
// ValidateTag.
func ParseURI(s string) (URI, error) {
	bad := func(why string) (URI, error) {
		return URI{}, fmt.Errorf("%w: resource URI %q: %s", ErrInvalid, s, why)
	}
	if len(s) > MaxURILen {
		return URI{}, fmt.Errorf("%w: resource URI %q (%d bytes): longer than %d bytes", ErrInvalid, Shorten(s, 64), len(s), MaxURILen)
	}
	if !strings.HasPrefix(s, Scheme) {
		if strings.HasPrefix(strings.ToLower(s), Scheme) {
			return bad("the scheme must be lower-case readproof://")
		}
		return bad("must start with readproof://")
	}
	rest := s[len(Scheme):]
	var u URI
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		u.Tag = rest[at+1:]
		rest = rest[:at]
		if err := ValidateTag(u.Tag); err != nil {
			return bad(err.Error())
		}
	}
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		if rest == "" {
			return bad("missing namespace and path (want readproof://NAMESPACE/PATH)")
		}
		return bad("missing path after the namespace (want readproof://NAMESPACE/PATH)")
	}
	u.Namespace, u.Path = rest[:slash], rest[slash+1:]
	if err := validateNamespace(u.Namespace); err != nil {
		return bad(err.Error())
	}
	if err := validatePath(u.Path); err != nil {
		return bad(err.Error())
	}
	return u, nil
}

func validateNamespace(ns string) error {
	if ns == "" {
		return errors.New("empty namespace")
	}
	if len(ns) > 64 {
		return errors.New("namespace longer than 64 bytes")
	}
	for i := 0; i < len(ns); i++ {
		c := ns[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '-' || c == '_' || c == '.') && i > 0:
		case c == '-' || c == '_' || c == '.':
			return fmt.Errorf("namespace %q starts with %q: the first character must be a lower-case letter or digit", ns, c)
		default:
			return fmt.Errorf("namespace %q: character %q not allowed (lower-case letters, digits, '-', '_', '.')", ns, c)
		}
	}
	if strings.Contains(ns, "..") || strings.HasSuffix(ns, ".") || strings.HasSuffix(ns, ".lock") {
		return fmt.Errorf("namespace %q: may not contain '..' or end in '.' or '.lock'", ns)
	}
	return nil
}

func validatePath(p string) error {
	if p == "" {
		return errors.New("empty path")
	}
	if len(p) > MaxPathLen {
		return fmt.Errorf("path of %d bytes is longer than %d bytes (it names one git ref file); shorten it", len(p), MaxPathLen)
	}
	// Each '/'-separated segment in turn, as strings.Split would give them,
	// without allocating the list (Validate parses every entry's URI).
	for {
		seg, rest, more := strings.Cut(p, "/")
		if err := validateSegment(seg); err != nil {
			return err
		}
		if !more {
			return nil
		}
		p = rest
	}
}

func validateSegment(seg string) error {
	switch seg {
	case "":
		return errors.New("empty path segment (no leading, trailing or double '/')")
	case ".", "..":
		return fmt.Errorf("path segment %q not allowed", seg)
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		case (c == '-' || c == '.') && i > 0:
		default:
			return fmt.Errorf("path segment %q: character %q not allowed (letters, digits, '-', '_', '.')", seg, c)
		}
	}
	if strings.HasSuffix(seg, ".") || strings.HasSuffix(seg, ".lock") || strings.Contains(seg, "..") {
		return fmt.Errorf("path segment %q may not contain '..' or end in '.' or '.lock'", seg)
	}
	return nil
}

// ValidateTag checks a tag name: ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$, without
// ".." and not ending in '.' or ".lock".
func ValidateTag(t string) error { return validateName("tag name", t, 64) }

// ValidateRunID checks a run id: ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$, without
// "..", not ending in '.' or ".lock", and not 40 hex digits (which would read
// as a manifest id).
func ValidateRunID(id string) error {
	if err := validateName("run id", id, 128); err != nil {
		return err
	}
	if IsObjectID(id) {
		return fmt.Errorf("%w: run id %q looks like a manifest id (40 hex digits); pick another", ErrInvalid, id)
	}
	return nil
}

// ValidateSessionID checks a session id with the run id rules.
func ValidateSessionID(id string) error { return validateName("session id", id, 128) }

// MaxCallerLen bounds a caller name.
const MaxCallerLen = 64

// ValidateCaller checks a caller name (the name of the MCP token a write
// was made with, recorded in manifests, tag moves and receipts) with the run
// id rules, at most 64 bytes.
func ValidateCaller(name string) error { return validateName("caller name", name, MaxCallerLen) }

func validateName(what, s string, max int) error {
	if s == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalid, what)
	}
	if len(s) > max {
		return fmt.Errorf("%w: %s longer than %d bytes", ErrInvalid, what, max)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '-' || c == '_' || c == '.') && i > 0:
		case c == '-' || c == '_' || c == '.':
			return fmt.Errorf("%w: %s %q starts with %q: the first character must be a letter or digit", ErrInvalid, what, s, c)
		default:
			return fmt.Errorf("%w: %s %q: character %q not allowed (letters, digits, '.', '_', '-'; first a letter or digit)", ErrInvalid, what, s, c)
		}
	}
	if strings.Contains(s, "..") || strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock") {
		return fmt.Errorf("%w: %s %q may not contain '..' or end in '.' or '.lock'", ErrInvalid, what, s)
	}
	return nil
}

// IsObjectID reports whether s is 40 lower-case hex digits
// (gitobj.IsObjectID).
func IsObjectID(s string) bool { return gitobj.IsObjectID(s) }

// Shorten returns s when it is at most n bytes, and otherwise its first n
// bytes or fewer, cut on a UTF-8 character boundary, followed by "…": an
// over-long name quoted in an error without repeating all of it.
func Shorten(s string, n int) string { return text.Shorten(s, n) }
