package probe

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxSessionLen is the longest session id in bytes. It leaves room for a
// 128-byte run id plus an entry suffix (see EntrySession).
const MaxSessionLen = 192

// ErrInvalidSession is wrapped by every session id validation error.
var ErrInvalidSession = errors.New("invalid probe session id")

// ValidateSession checks a session id: 1 to 192 bytes of ASCII letters,
// digits, '.', '_' and '-', starting with a letter or digit, without ".." and
// not ending in '.' (PROBE_PROTOCOL.md §4). Every run id is a valid session
// id, and so is every id EntrySession returns.
func ValidateSession(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty; use letters, digits, '.', '_' or '-'", ErrInvalidSession)
	}
	if len(id) > MaxSessionLen {
		return fmt.Errorf("%w: %d bytes, longer than %d; use a shorter id", ErrInvalidSession, len(id), MaxSessionLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '-' || c == '_' || c == '.') && i > 0:
		default:
			return fmt.Errorf("%w: %q: character %q at byte %d not allowed (letters, digits, '.', '_', '-'; first a letter or digit)",
				ErrInvalidSession, id, c, i)
		}
	}
	if strings.Contains(id, "..") || strings.HasSuffix(id, ".") {
		return fmt.Errorf("%w: %q may not contain '..' or end in '.'", ErrInvalidSession, id)
	}
	return nil
}

// EntrySession returns the session id of the entry-th probed entry of a run:
// RUNID "." ENTRY, for example "nightly-42.3". Giving every entry its own
// session gives every entry its own sentinel, so an answer that quotes one
// proves that entry and no other. entry must be at least 0.
func EntrySession(runID string, entry int) (string, error) {
	if entry < 0 {
		return "", fmt.Errorf("%w: entry number %d is negative", ErrInvalidSession, entry)
	}
	s := runID + "." + strconv.Itoa(entry)
	if err := ValidateSession(s); err != nil {
		return "", fmt.Errorf("run id %q: %w", runID, err)
	}
	return s, nil
}

// ContentTagLen is the number of hex digits of the content's SHA-256 that
// ContentSession appends: 128 bits, so two documents with the same tag
// cannot be made.
const ContentTagLen = 32

// ContentSession returns the session id of the entry-th probed entry of a
// run bound to the content delivered there (PROBE_PROTOCOL.md §10.2):
// RUNID "." ENTRY ".c" and the first 32 hex digits of the content's SHA-256,
// for example "nightly-42.3.c1f0e…". contentHash is the manifest's
// "sha256:<64 hex>". A run id is unique only within one store and only while
// the run exists: a run aborted and started again under the same id, or a
// run of the same id in another store under the same key, puts another
// document at the same position in the same bucket. Without the tag both
// would share a sentinel, and quoting one document's would prove the other.
func ContentSession(runID string, entry int, contentHash string) (string, error) {
	hexPart, ok := strings.CutPrefix(contentHash, "sha256:")
	if !ok || len(hexPart) != 64 || strings.Trim(hexPart, "0123456789abcdef") != "" {
		return "", fmt.Errorf("%w: content hash %q is not sha256:<64 lower-case hex digits>", ErrInvalidSession, contentHash)
	}
	base, err := EntrySession(runID, entry)
	if err != nil {
		return "", err
	}
	s := base + ".c" + hexPart[:ContentTagLen]
	if err := ValidateSession(s); err != nil {
		return "", fmt.Errorf("run id %q: %w", runID, err)
	}
	return s, nil
}
