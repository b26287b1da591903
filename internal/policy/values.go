package policy

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/readproof/readproof/adapters/sourcespec"
)

// ParseDuration reads a Go duration ("90s", "1h30m") or a whole number of
// days ("7d"). The result must be positive.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("empty duration")
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok && days != "" && allDigits(days) {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n > int64(math.MaxInt64/int64(24*time.Hour)) {
			return 0, fmt.Errorf("duration %q is too long", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		d, err = time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("duration %q must be positive", s)
	}
	return d, nil
}

// FormatDuration writes d so that ParseDuration reads it back: whole days
// as "Nd", otherwise Go's notation without trailing zero units ("1h30m").
func FormatDuration(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1},
}

// ParseSize reads a byte count: digits with an optional unit B, KiB, MiB,
// GiB or TiB ("4096", "512KiB", "10 MiB"). The result must be positive.
func ParseSize(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	if num == "" || !allDigits(num) {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	if n == 0 {
		return 0, fmt.Errorf("size %q must be positive", s)
	}
	return n * mult, nil
}

// FormatSize writes n in the largest binary unit that divides it exactly.
func FormatSize(n int64) string {
	for _, u := range sizeUnits {
		if u.mult > 1 && n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

const sizeHint = `write a size such as "4096", "512KiB", "10MiB" or "1GiB"`

// parseMaxAge reads an allow_stale max_age: a duration (ParseDuration) of
// whole seconds, since the store, inspect and evidence record it as
// max_age_seconds; "500ms" would be recorded as no max_age at all, and
// "1500ms" as one second.
func parseMaxAge(s string) (time.Duration, error) {
	d, err := ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d%time.Second != 0 {
		return 0, fmt.Errorf("max_age %q is not a whole number of seconds (records keep max_age in seconds)", s)
	}
	return d, nil
}

const durationHint = `write a duration such as "90s", "15m", "1h" or "7d"`

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// validEnvName reports whether s can name an environment variable.
func validEnvName(s string) bool { return sourcespec.ValidEnvName(s) }

// isToken reports whether s is an RFC 7230 token (a valid header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validFieldValue reports whether s may be an HTTP header value: visible
// characters, spaces, tabs and non-ASCII bytes, nothing else.
func validFieldValue(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// hasControl reports whether s holds a control character other than tab.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return true
		}
	}
	return false
}

// expandPath turns a path from the policy file into an absolute, clean path:
// "~" and "~/..." are relative to the home directory, other relative paths
// to dir.
func expandPath(p, dir string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", errors.New("path contains a NUL byte")
	}
	if strings.HasPrefix(p, "~") {
		rest := p[1:]
		if rest != "" && rest[0] != '/' && rest[0] != filepath.Separator {
			return "", errors.New(`only "~" and "~/..." are expanded, not "~user"`)
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot expand ~: %w", err)
		}
		return filepath.Join(home, rest), nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p), nil
}

// resolveExisting resolves symlinks in p when p exists.
func resolveExisting(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
