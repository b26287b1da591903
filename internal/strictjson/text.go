package strictjson

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// TextError is text Text refuses: a byte sequence that is not UTF-8, or a
// \u escape of half a surrogate pair. encoding/json reads either as U+FFFD
// where Python refuses the document and other readers keep the bytes, so
// what one verifies is not what another shows.
type TextError struct {
	Offset int    // the byte of data where the text goes wrong
	What   string // "invalid UTF-8" or `\udXXX, half a surrogate pair`
}

func (e *TextError) Error() string {
	return fmt.Sprintf("%s at byte %d: JSON text is UTF-8 and every \\u escape a character (RFC 8259), and readers disagree about the rest", e.What, e.Offset)
}

// Text reports whether data is JSON text every reader reads alike: valid
// UTF-8, and no string escape naming a lone surrogate (a high one not
// followed by a low one, or a low one alone). It does not check the rest of
// the syntax: data that is not JSON is left to the decoder. In JSON a
// backslash is only ever inside a string, so no string needs finding.
func Text(data []byte) error {
	for i := 0; i < len(data); {
		switch c := data[i]; {
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n == 1 {
				return &TextError{Offset: i, What: "invalid UTF-8"}
			}
			i += n
		case c == '\\' && i+1 < len(data) && data[i+1] == 'u':
			r, ok := hex4(data, i+2)
			switch {
			case !ok:
				i += 2 // not JSON: the decoder says so
			case utf16.IsSurrogate(r) && r < 0xdc00:
				low, ok := rune(0), false
				if i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
					low, ok = hex4(data, i+8)
				}
				if !ok || low < 0xdc00 || low > 0xdfff {
					return &TextError{Offset: i, What: fmt.Sprintf(`\u%04x, half a surrogate pair`, r)}
				}
				i += 12
			case utf16.IsSurrogate(r):
				return &TextError{Offset: i, What: fmt.Sprintf(`\u%04x, half a surrogate pair`, r)}
			default:
				i += 6
			}
		case c == '\\' && i+1 < len(data) && data[i+1] < utf8.RuneSelf:
			i += 2 // an escaped quote or backslash is not one
		default:
			i++
		}
	}
	return nil
}

// hex4 decodes the four hex digits at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
