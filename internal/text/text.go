// Package text holds the small string helpers every output path shares:
// Printable, which keeps hostile bytes (terminal control sequences, invalid
// UTF-8) out of what readproof prints, and Plural and Count for messages.
//
// text imports only the standard library.
package text

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s unchanged when it is valid UTF-8 and every rune is
// printable (unicode.IsPrint: letters, marks, numbers, punctuation, symbols
// and the ASCII space), and otherwise s Go-quoted, so a hostile store, bundle
// or report cannot put control sequences or invalid bytes into a terminal.
func Printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// PrintableLine is Printable for one line of a document shown to a
// reader (a diff's line, without its newline): a tab is printable there,
// as it indents code, and so is a carriage return at the line's end (a
// CRLF line ending: it returns the cursor with nothing after it to write
// over). Anything else Printable objects to, a carriage return inside the
// line included, makes the whole line Go-quoted, so no line can recolour,
// reorder or overwrite what is shown. A line that is itself printable text
// in Go's quoted form ("\x1b[2K", with its quotes) is shown as it is, and
// reads the same as the quoted form of a line holding that escape: the
// quoting keeps bytes from the terminal, it does not mark the line.
func PrintableLine(s string) string {
	body := strings.TrimSuffix(s, "\r")
	ascii := true
	for i := 0; i < len(body) && ascii; i++ {
		c := body[i]
		ascii = c >= ' ' && c < 0x7f || c == '\t'
	}
	if ascii {
		return s // the common line, read once
	}
	if !utf8.ValidString(body) {
		return strconv.Quote(s)
	}
	for _, r := range body {
		if r != '\t' && !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Escape returns s with each rune Printable would object to written as its
// Go escape (\x1b, \t, \u202e; an invalid byte as \xff) and the rest as
// it is: for a line of readproof's own words that quotes hostile text in
// places (an error that names a remote's ref or repeats its message).
func Escape(s string) string {
	if Printable(s) == s {
		return s
	}
	var b strings.Builder
	writeEscaped(&b, s, "")
	return b.String()
}

// writeEscaped writes s to b with each rune Printable objects to as its Go
// escape, an invalid byte as \xHH, and each byte of also (ASCII) after a
// backslash.
func writeEscaped(b *strings.Builder, s, also string) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(b, `\x%02x`, s[i])
		case r < utf8.RuneSelf && strings.IndexByte(also, byte(r)) >= 0:
			b.WriteByte('\\')
			b.WriteByte(byte(r))
		case !unicode.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
}

// Plural returns one when n is 1 and many otherwise: Plural(n, "entry",
// "entries"), or Plural(n, "", "s") for a suffix.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count returns n followed by the word for it: Count(3, "run", "runs") is
// "3 runs".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Plural(n, one, many)
}

// ShellArg returns s as one word for sh, to show in a command the user may
// paste: unchanged when it holds only characters sh takes literally
// (letters, digits and / . _ - + : @ , =), else single-quoted (SingleQuoted).
// A word holding a rune Printable objects to (an escape, a control byte, a
// bidi override, a byte that is not UTF-8) is written in ANSI-C quoting,
// $'...', each such rune as an escape (\x1b, \t, \xe2\x80\xae, \xff): the hint
// that shows the command stays free of bytes a terminal acts on, and the
// command pasted into bash, zsh or ksh (or a POSIX sh of 2024) names s
// itself, where a single-quoted escape would name another file.
func ShellArg(s string) string {
	if Printable(s) != s {
		return ansiC(s)
	}
	return ScriptArg(s)
}

// SingleQuoted returns s single-quoted for sh (a ' in s closes the quote,
// is escaped and opens it again), its bytes as they are: POSIX quoting,
// which every sh reads (dash, Debian's /bin/sh, has no $'...'), for text
// written into a script or a command line that sh runs (a hook script,
// git's --upload-pack), where ShellArg is for a command shown to a person
// at a bash prompt.
func SingleQuoted(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ScriptArg is SingleQuoted for a word that needs quoting, and s itself
// when it holds only characters sh takes literally (as ShellArg leaves
// them): for a line a person adds to a script that sh runs (a husky hook,
// a pre-commit entry).
func ScriptArg(s string) string {
	if s != "" && strings.Trim(s, shellSafe) == "" {
		return s
	}
	return SingleQuoted(s)
}

// shellSafe is every character sh takes literally in a word.
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@,="

// ansiC is s in the shell's $'...' quoting: ' and \ escaped, and each rune
// Printable objects to (or byte that is not UTF-8) as an escape that
// quoting reads the same way in every locale: an ASCII control byte as its
// Go escape (\a \b \f \n \r \t \v \xHH), any other rune as its UTF-8
// bytes, \xHH each. (bash reads \uHHHH and \UHHHHHHHH as the rune in the
// locale's encoding: in the C locale, the CI machine's and cron's, it
// leaves them as they are, so the pasted command would name another file.)
// An \xHH escape followed by a hex digit ends the quote and opens another,
// $'\xff'$'b': ksh93 reads every hex digit after \x, not two, and POSIX
// leaves more than two unspecified.
func ansiC(s string) string {
	var b, w strings.Builder
	b.WriteString("$'")
	hexEscape := false // what was written last is an \xHH escape
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		w.Reset()
		if n > 1 && !unicode.IsPrint(r) {
			for j := i; j < i+n; j++ {
				fmt.Fprintf(&w, `\x%02x`, s[j])
			}
		} else {
			writeEscaped(&w, s[i:i+n], `'\`) // as it is, or an ASCII or byte escape
		}
		out := w.String()
		if hexEscape && strings.ContainsRune("0123456789abcdefABCDEF", rune(out[0])) {
			b.WriteString(`'$'`)
		}
		b.WriteString(out)
		hexEscape = strings.HasPrefix(out, `\x`)
		i += n
	}
	b.WriteByte('\'')
	return b.String()
}

// EditDistance is the optimal string alignment distance of a and b: an
// insertion, a deletion, a substitution or a transposition of adjacent
// runes costs 1. It ranks "did you mean" suggestions (policy keys, run ids,
// tags, flags).
func EditDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}

// Nearest returns the candidate nearest to typed (EditDistance; the first
// of equals) when it is close enough to be a plausible typo, at most a
// third of the longer name's runes away (at least 1), and "" otherwise:
// the "did you mean" of run ids, tags and flags.
func Nearest(typed string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		if d := EditDistance(typed, c); best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(1, max(utf8.RuneCountInString(typed), utf8.RuneCountInString(best))/3) {
		return ""
	}
	return best
}

// Shorten cuts s to at most n bytes on a UTF-8 boundary and marks the cut
// with an ellipsis ("…", three bytes more); s no longer than n is returned
// as it is.
func Shorten(s string, n int) string { return ShortenWith(s, n, "…") }

// ShortenWith is Shorten with another mark of the cut (the "..." of the
// messages that have always used it).
func ShortenWith(s string, n int, ellipsis string) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
