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
