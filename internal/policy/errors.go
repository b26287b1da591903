package policy

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/readproof/readproof/internal/text"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrInvalid is matched by every *Error: the policy file (or a resource
	// about to be added to it) is not acceptable.
	ErrInvalid = errors.New("invalid policy file")
	// ErrDuplicate is matched when AppendResource is given a URI the file
	// already declares.
	ErrDuplicate = errors.New("resource already declared")
)

// Error is one problem in a policy file. Error() is a single line of the
// form FILE:LINE: key "KEY": MSG; Hint, when set, says what to do and is
// printed separately.
type Error struct {
	File string
	// Line is 1-based; 0 when the problem has no line (for example in a
	// resource that AppendResource was about to add).
	Line int
	// Column is set for malformed TOML only.
	Column int
	// Key is the key path, for example resource[2].source.path, with
	// [[resource]] blocks and array elements counted from 1.
	Key  string
	Msg  string
	Hint string
	// Err is the underlying cause, if any (a toml.ParseError, an
	// identity error, ErrDuplicate).
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Key != "" {
		fmt.Fprintf(&b, "key %q: ", e.Key)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap lets errors.Is match ErrInvalid and the underlying cause.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalid, e.Err}
	}
	return []error{ErrInvalid}
}

// oneLine keeps messages and hints on one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(s), " ")
}

// checker collects the errors found in one file.
type checker struct {
	file string
	pos  *positions
	// fast, when set, answers for pos: the file was read by fastRead.
	fast *fastIndex
	errs []*Error
}

func (c *checker) add(p *keyPath, msg, hint string, cause error) {
	c.errs = append(c.errs, &Error{
		File: c.file,
		Line: c.lineOf(p),
		Key:  p.String(),
		Msg:  oneLine(msg),
		Hint: oneLine(hint),
		Err:  cause,
	})
}

// first returns the error nearest the top of the file (errors without a
// line come last), or nil.
func (c *checker) first() error {
	if len(c.errs) == 0 {
		return nil
	}
	key := func(e *Error) int {
		if e.Line == 0 {
			return int(^uint(0) >> 1)
		}
		return e.Line
	}
	sort.SliceStable(c.errs, func(i, j int) bool { return key(c.errs[i]) < key(c.errs[j]) })
	return c.errs[0]
}

// suggest returns the candidate closest to name, or "" when none is close
// enough to be a plausible typo.
func suggest(name string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c
		}
		if d := text.EditDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if n := len([]rune(name)); n <= 4 {
		limit = 1
	}
	if bestD <= limit {
		return best
	}
	return ""
}

// didYouMean is the hint for a value or key that is not one of valid.
func didYouMean(got string, valid []string, what string) string {
	list := strings.Join(valid, ", ")
	if s := suggest(got, valid); s != "" {
		return fmt.Sprintf("did you mean %q? (%s: %s)", s, what, list)
	}
	return fmt.Sprintf("%s: %s", what, list)
}
