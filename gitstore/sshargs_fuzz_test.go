package gitstore

import (
	"strings"
	"testing"
)

// Any arguments are split without a panic; printable words with no quote,
// escape or # are split at spaces and tabs as strings.Fields splits them;
// any line is checked without a panic; and any
// Hostname expands without a panic, to a name with no % left of its own.
func FuzzSSHArgs(f *testing.F) {
	for _, s := range []string{`a b`, "Port\n  User \"x\n", "  \"Host\"\n", `"a b" c`, `22"00"`, `'x`, `a\ b`, `\"`, `x # c`, "\"\t\"", `%h.%%`, `x%`, `%H`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args, ok := sshArgs(s)
		plain := !strings.ContainsAny(s, "\"'\\#")
		for _, b := range []byte(s) {
			if (b < 0x21 || b > 0x7e) && b != ' ' && b != '\t' {
				plain = false
			}
		}
		if plain && (!ok || strings.Join(args, "\x00") != strings.Join(strings.Fields(s), "\x00")) {
			t.Errorf("sshArgs(%q) = %q, %v; want %q", s, args, ok, strings.Fields(s))
		}
		if h, err := expandHostname(s, "alias"); err == nil && strings.Count(h, "%") > strings.Count(s, "%%") {
			t.Errorf("expandHostname(%q) = %q: a %% of its own", s, h)
		}
		_ = refusedLine([]byte(s))
	})
}
