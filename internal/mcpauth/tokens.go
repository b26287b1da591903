package mcpauth

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/readproof/readproof/identity"
)

// TokenPrefix starts every token.
const TokenPrefix = "rpmcp_"

// tokenHexLen is the number of hex digits after the prefix (256 bits).
const tokenHexLen = 64

// TokenLen is the length of a token.
const TokenLen = len(TokenPrefix) + tokenHexLen

// Format names the version of the token file.
const Format = "readproof-mcp-tokens/1"

// MaxNameLen bounds a token (caller) name.
const MaxNameLen = identity.MaxCallerLen

// Scope is what a token may do.
type Scope string

// Scopes.
const (
	ScopeRead  Scope = "read"  // every tool and resource that changes nothing
	ScopeWrite Scope = "write" // everything, runs and tags included
)

var (
	// ErrMalformed: the presented string is not a token at all.
	ErrMalformed = errors.New("malformed token")
	// ErrUnknown: a well-formed token that this file never issued.
	ErrUnknown = errors.New("unknown token")
	// ErrExpired: the token's expiry has passed.
	ErrExpired = errors.New("token expired")
	// ErrRevoked: the token was revoked with `readproof mcp token revoke`.
	ErrRevoked = errors.New("token revoked")
	// ErrName: a token name breaks the naming rule.
	ErrName = errors.New("invalid token name")
	// ErrExists: a live token already has the name.
	ErrExists = errors.New("a live token has this name")
	// ErrUsed: a revoked or expired token had the name. What a token
	// does is recorded under its name (the caller of its receipts,
	// manifests and tag moves), so a new token of that name would see,
	// and be counted as the caller of, everything the old one did.
	ErrUsed = errors.New("a revoked or expired token had this name")
	// ErrUnused: Readd of a name no token of the file had, so not the
	// same caller as any (a mistyped name would otherwise be a new
	// caller the operator took for an old one).
	ErrUnused = errors.New("no revoked or expired token had this name")
	// ErrNotFound: no token has the name.
	ErrNotFound = errors.New("no token of this name")
	// ErrFile: the token file does not decode.
	ErrFile = errors.New("invalid MCP token file")
	// ErrOwner: the token file belongs to another user.
	ErrOwner = errors.New("MCP token file of another user")
)

// Entry is one token as the file keeps it: never the token, only its hash.
type Entry struct {
	Name      string     `json:"name"`
	Scope     Scope      `json:"scope"`
	SHA256    string     `json:"sha256"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// State is an entry's state at a time: "active", "expired" or "revoked".
func (e Entry) State(now time.Time) string {
	switch {
	case e.RevokedAt != nil:
		return "revoked"
	case e.ExpiresAt != nil && !now.Before(*e.ExpiresAt):
		return "expired"
	}
	return "active"
}

// File is the token file.
type File struct {
	Format string  `json:"format"`
	Tokens []Entry `json:"tokens"`

	hashes [][sha256.Size]byte // decoded SHA256 of each entry, same order
}

// Caller is who presented a verified token.
type Caller struct {
	Name      string
	Scope     Scope
	ExpiresAt time.Time // zero when the token does not expire
}

// CanWrite reports whether the caller may use tools that write.
func (c Caller) CanWrite() bool { return c.Scope == ScopeWrite }

// ValidateName checks a token name with identity.ValidateCaller (1 to 64
// letters, digits, '.', '_' and '-', starting with a letter or digit): the
// name is recorded as the caller in manifests, tag moves and receipts.
func ValidateName(name string) error {
	if err := identity.ValidateCaller(name); err != nil {
		return fmt.Errorf("%w: %v", ErrName, err)
	}
	return nil
}

// ParseScope reads a --scope value.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case ScopeRead, ScopeWrite:
		return Scope(s), nil
	}
	return "", fmt.Errorf("scope %q: want read or write", s)
}

// NewToken draws a token from r (crypto/rand when r is nil).
func NewToken(r io.Reader) (string, error) {
	var b [tokenHexLen / 2]byte
	if _, err := io.ReadFull(randomOr(r), b[:]); err != nil {
		return "", fmt.Errorf("reading randomness for a token: %w", err)
	}
	return TokenPrefix + hex.EncodeToString(b[:]), nil
}

// ParseToken's errors, made once: a server refuses junk with them at the
// rate it arrives.
var (
	errShape  = fmt.Errorf("%w: want %s followed by %d hex digits", ErrMalformed, TokenPrefix, tokenHexLen)
	errDigits = fmt.Errorf("%w: want %s followed by %d lower-case hex digits", ErrMalformed, TokenPrefix, tokenHexLen)
)

// ParseToken checks the form of a presented token: the prefix and 64
// lower-case hex digits. It reads only s, so its time says nothing of the
// tokens a file holds. Its errors never quote the token.
func ParseToken(s string) error {
	if len(s) != TokenLen || s[:len(TokenPrefix)] != TokenPrefix {
		return errShape
	}
	for i := len(TokenPrefix); i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return errDigits
		}
	}
	return nil
}

// Hash is what the file stores for a token: SHA-256 of its bytes. Tokens
// carry 256 random bits, so a fast hash is enough.
func Hash(token string) [sha256.Size]byte { return sha256.Sum256([]byte(token)) }

// Empty is a file without tokens.
func Empty() *File { return &File{Format: Format, Tokens: []Entry{}} }

// Decode parses a token file strictly: unknown members, a wrong format, a
// bad name, scope or hash and duplicate live names are errors.
func Decode(data []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFile, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing data after the object", ErrFile)
	}
	if f.Format != Format {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrFile, f.Format, Format)
	}
	if f.Tokens == nil {
		f.Tokens = []Entry{}
	}
	seen := map[string]bool{}
	for i, e := range f.Tokens {
		if err := ValidateName(e.Name); err != nil {
			return nil, fmt.Errorf("%w: token %d: %v", ErrFile, i, err)
		}
		if _, err := ParseScope(string(e.Scope)); err != nil {
			return nil, fmt.Errorf("%w: token %s: %v", ErrFile, e.Name, err)
		}
		var h [sha256.Size]byte
		if len(e.SHA256) != 2*sha256.Size {
			return nil, fmt.Errorf("%w: token %s: sha256 must be 64 hex digits", ErrFile, e.Name)
		}
		if _, err := hex.Decode(h[:], []byte(e.SHA256)); err != nil || hex.EncodeToString(h[:]) != e.SHA256 {
			return nil, fmt.Errorf("%w: token %s: sha256 must be 64 lower-case hex digits", ErrFile, e.Name)
		}
		if seen[e.Name] {
			return nil, fmt.Errorf("%w: two tokens named %s", ErrFile, e.Name)
		}
		seen[e.Name] = true
		f.hashes = append(f.hashes, h)
	}
	return &f, nil
}

// Encode returns the file's JSON, tokens sorted by name, with a final
// newline.
func (f *File) Encode() []byte {
	cp := File{Format: Format, Tokens: append([]Entry{}, f.Tokens...)}
	sort.Slice(cp.Tokens, func(i, j int) bool { return cp.Tokens[i].Name < cp.Tokens[j].Name })
	data, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		panic(err) // strings and times only
	}
	return append(data, '\n')
}

// Find returns the entry named name.
func (f *File) Find(name string) (Entry, bool) {
	for _, e := range f.Tokens {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// Add issues a new token named name and records its hash; ttl 0 means it
// does not expire. A name a live token holds is refused with ErrExists,
// and one a revoked or expired token held with ErrUsed: receipts, runs
// and tag moves name their caller by its token's name, so a new token of
// that name would be shown (and counted as the caller of) what the old
// one did. Readd gives the name again on purpose. The token is returned
// once and kept nowhere.
func (f *File) Add(name string, scope Scope, ttl time.Duration, now time.Time, random io.Reader) (string, error) {
	return f.add(name, scope, ttl, now, random, false)
}

// Readd is Add for a token that is the same caller as the revoked or
// expired token named name (an agent's lost or expired token replaced):
// the old entry is replaced, and the new token sees and continues what
// the old one did. A live token of the name is refused with ErrExists,
// and a name no token of the file had with ErrUnused.
func (f *File) Readd(name string, scope Scope, ttl time.Duration, now time.Time, random io.Reader) (string, error) {
	return f.add(name, scope, ttl, now, random, true)
}

func (f *File) add(name string, scope Scope, ttl time.Duration, now time.Time, random io.Reader, again bool) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	if _, err := ParseScope(string(scope)); err != nil {
		return "", err
	}
	if ttl < 0 {
		return "", fmt.Errorf("expiry %s: must be positive", ttl)
	}
	keep := f.Tokens[:0:0]
	used := false
	for _, e := range f.Tokens {
		if e.Name == name {
			used = true
			if e.State(now) == "active" {
				return "", fmt.Errorf("%w: %s", ErrExists, name)
			}
			if !again {
				return "", fmt.Errorf("%w: %s (%s)", ErrUsed, name, e.State(now))
			}
			continue
		}
		keep = append(keep, e)
	}
	if again && !used {
		return "", fmt.Errorf("%w: %s", ErrUnused, name)
	}
	tok, err := NewToken(randomOr(random))
	if err != nil {
		return "", err
	}
	h := Hash(tok)
	e := Entry{Name: name, Scope: scope, SHA256: hex.EncodeToString(h[:]), CreatedAt: now.UTC().Truncate(time.Second)}
	if ttl > 0 {
		exp := now.Add(ttl).UTC().Truncate(time.Second)
		e.ExpiresAt = &exp
	}
	f.Tokens = append(keep, e)
	f.rehash()
	return tok, nil
}

// Revoke marks the token named name revoked; a revoked token stays listed.
func (f *File) Revoke(name string, now time.Time) error {
	for i, e := range f.Tokens {
		if e.Name != name {
			continue
		}
		if e.RevokedAt != nil {
			return nil
		}
		t := now.UTC().Truncate(time.Second)
		f.Tokens[i].RevokedAt = &t
		return nil
	}
	return fmt.Errorf("%w: %s", ErrNotFound, name)
}

func (f *File) rehash() {
	f.hashes = f.hashes[:0]
	for _, e := range f.Tokens {
		var h [sha256.Size]byte
		_, _ = hex.Decode(h[:], []byte(e.SHA256))
		f.hashes = append(f.hashes, h)
	}
}

// Verify returns the caller a presented token belongs to. A string that
// is not shaped as a token (ParseToken) cannot be one this file issued,
// and is refused with ErrMalformed before it is hashed: its refusal takes
// the time of reading its own bytes, whatever tokens the file holds. A
// well-shaped token's hash is compared with every stored hash in constant
// time, and the loop never stops early, so the time taken says nothing
// about which entry (if any) matched. Errors wrap ErrMalformed,
// ErrUnknown, ErrExpired or ErrRevoked and never contain the token.
func (f *File) Verify(token string, now time.Time) (Caller, error) {
	if err := ParseToken(token); err != nil {
		return Caller{}, err
	}
	h := Hash(token)
	match := -1
	for i := range f.hashes {
		eq := subtle.ConstantTimeCompare(h[:], f.hashes[i][:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return Caller{}, ErrUnknown
	}
	e := f.Tokens[match]
	switch e.State(now) {
	case "revoked":
		return Caller{}, fmt.Errorf("%w: %s", ErrRevoked, e.Name)
	case "expired":
		return Caller{}, fmt.Errorf("%w: %s", ErrExpired, e.Name)
	}
	c := Caller{Name: e.Name, Scope: e.Scope}
	if e.ExpiresAt != nil {
		c.ExpiresAt = *e.ExpiresAt
	}
	return c, nil
}

// randomOr is r, or crypto/rand when r is nil.
func randomOr(r io.Reader) io.Reader {
	if r == nil {
		return rand.Reader
	}
	return r
}
