package gitstore

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ---- names and identities git fsck accepts ----

// CheckTreeName reports whether name may be written as a tree entry: not
// empty, ".", "..", ".git" or ".gitmodules" (ignoring case and the spellings
// NTFS and HFS+ treat as equal), and without "/" or NUL. Such names keep
// `git fsck --strict` clean and cannot escape a checkout.
func CheckTreeName(name string) error {
	switch {
	case name == "":
		return errors.New("tree entry name is empty: name every entry")
	case name == "." || name == "..":
		return fmt.Errorf("tree entry name %q is not allowed: use a real file name", name)
	case strings.ContainsRune(name, '/'):
		return fmt.Errorf("tree entry name %q contains '/': nest a tree instead", name)
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("tree entry name %q contains NUL: remove it", name)
	case isDotGitLike(name):
		return fmt.Errorf("tree entry name %q is reserved by git: rename the entry", name)
	}
	return nil
}

// isDotGitLike reports whether some component of name (split at '\', which
// Windows treats as a separator) means .git or .gitmodules to git, NTFS or
// HFS+.
func isDotGitLike(name string) bool {
	for _, part := range strings.Split(name, `\`) {
		p := stripHFSIgnorable(part)
		p = strings.TrimRight(p, ". ") // NTFS drops trailing dots and spaces
		p = strings.ToLower(p)
		switch p {
		case ".git", ".gitmodules", "git~1", "gitmod~1":
			return true
		}
		// Other NTFS 8.3 short names of .gitmodules look like gi7eba~N.
		if strings.HasPrefix(p, "gi") && len(p) == 8 && p[6] == '~' && p[7] >= '1' && p[7] <= '9' {
			return true
		}
	}
	return false
}

// stripHFSIgnorable drops the code points HFS+ ignores when comparing names.
func stripHFSIgnorable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, hfsIgnorable) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if hfsIgnorable(r) {
			return -1
		}
		return r
	}, s)
}

func hfsIgnorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}

// checkIdent refuses identities git fsck would flag or go-git would alter.
func checkIdent(role string, sig Signature) error {
	for _, f := range []struct{ what, v string }{{"name", sig.Name}, {"email", sig.Email}} {
		if strings.ContainsAny(f.v, "<>\n\x00") {
			return fmt.Errorf("%s %s %q contains '<', '>', a newline or NUL: remove them", role, f.what, f.v)
		}
		if strings.TrimSpace(f.v) != f.v {
			return fmt.Errorf("%s %s %q has leading or trailing white space, which git drops: trim it", role, f.what, f.v)
		}
	}
	if sig.When.Unix() < 0 {
		return fmt.Errorf("%s time %s is before 1970 or unset: set Signature.When", role, sig.When.Format(time.RFC3339))
	}
	return nil
}
