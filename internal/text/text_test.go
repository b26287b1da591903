package text

import (
	"os"
	"os/exec"
	"testing"
)

func TestPrintable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"readproof://demo/policies/refunds", "readproof://demo/policies/refunds"},
		{"a b", "a b"},
		{"héllo – ünïcode ✓", "héllo – ünïcode ✓"},
		{"\x1b[31mred", `"\x1b[31mred"`},
		{"line\nbreak", `"line\nbreak"`},
		{"tab\there", `"tab\there"`},
		{"bell\a", `"bell\a"`},
		{"nul\x00", `"nul\x00"`},
		{"del\x7f", `"del\x7f"`},
		{"c1\u0085", `"c1\u0085"`},
		{"bidi\u202eevil", `"bidi\u202eevil"`},
		{"bad\xffutf8", `"bad\xffutf8"`},
	} {
		if got := Printable(c.in); got != c.want {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPrintableLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"\tindented code", "\tindented code"},
		{"héllo ✓", "héllo ✓"},
		{"crlf\r", "crlf\r"}, // a CRLF ending overwrites nothing
		{"héllo\r", "héllo\r"},
		{"cr\r\r", `"cr\r\r"`},
		{"\rcr at the start", `"\rcr at the start"`},
		{"bidi\u202e\r", `"bidi\u202e\r"`},
		{"\x1b[2K\roverwritten", `"\x1b[2K\roverwritten"`},
		{"a\u202egnp.md", `"a\u202egnp.md"`},
		{"zero\u200bwidth", `"zero\u200bwidth"`},
		{"quoted \"\\ \x00", `"quoted \"\\ \x00"`},
		{"bad\xff", `"bad\xff"`},
	} {
		if got := PrintableLine(c.in); got != c.want {
			t.Errorf("PrintableLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n         int
		word, cnt string
	}{
		{0, "entries", "0 entries"}, {1, "entry", "1 entry"}, {2, "entries", "2 entries"}, {-1, "entries", "-1 entries"},
	} {
		if got := Plural(c.n, "entry", "entries"); got != c.word {
			t.Errorf("Plural(%d) = %q, want %q", c.n, got, c.word)
		}
		if got := Count(c.n, "entry", "entries"); got != c.cnt {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.cnt)
		}
	}
	if Plural(1, "", "s") != "" || Plural(2, "", "s") != "s" {
		t.Error("suffix form")
	}
}

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"pull origin: héllo – ✓ \"quoted\"", "pull origin: héllo – ✓ \"quoted\""},
		{"ref refs/heads/evil\u202etxt.exe", `ref refs/heads/evil\u202etxt.exe`},
		{"fatal: \x1b]0;title\a\x1b[31mred\rX", `fatal: \x1b]0;title\a\x1b[31mred\rX`},
		{"tab\there", `tab\there`},
		{"bad\xffutf8 ✓", `bad\xffutf8 ✓`},
		{"c1\u0085 nul\x00", `c1\u0085 nul\x00`},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestShellArg(t *testing.T) {
	for in, want := range map[string]string{
		"/srv/git/runs.git":              "/srv/git/runs.git",
		"git@example.com:team/runs.git":  "git@example.com:team/runs.git",
		"/a b/.readproof":                "'/a b/.readproof'",
		"it's":                           `'it'\''s'`,
		"$HOME":                          "'$HOME'",
		"":                               "''",
		"/work/日本":                       "'/work/日本'",
		"https://h/x?a=1&b=2":            "'https://h/x?a=1&b=2'",
		"C:/Users/me/readproof-runs.git": "C:/Users/me/readproof-runs.git",
		// a rune a terminal acts on: ANSI-C quoting, printable as it is
		"no\x1b[2Jdir":      `$'no\x1b[2Jdir'`,
		"it's\tthere":       `$'it\'s\tthere'`,
		"a\\b\x01c":         `$'a\\b\x01'$'c'`,
		"evil\u202etxt.exe": `$'evil\xe2\x80\xaetxt.exe'`,
		"bad\xffbyte":       `$'bad\xff'$'byte'`,
		"\u0085next\x7f日本":  `$'\xc2\x85next\x7f日本'`,
	} {
		if got := ShellArg(in); got != want {
			t.Errorf("ShellArg(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestSingleQuoted: the quoting a program's sh reads keeps every byte as
// it is, a control byte too (ShellArg would write $'...', which a POSIX sh
// before 2024 does not read).
func TestSingleQuoted(t *testing.T) {
	for in, want := range map[string]string{"/usr/bin/git": "'/usr/bin/git'", "it's": `'it'\''s'`, "a\x1bb": "'a\x1bb'"} {
		if got := SingleQuoted(in); got != want {
			t.Errorf("SingleQuoted(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestShellArgPastes: what ShellArg writes, pasted into bash, is the word
// itself, and the line holding it is one Printable leaves as it is (a hint
// shows it unescaped).
func TestShellArgPastes(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, s := range []string{"plain", "a b", "it's", "$HOME", "no\x1b[2Jdir", "it's\tthere\n", "a\\b\x01c", "evil\u202etxt", "bad\xffbyte", "\u0085x\x7f", "\U0001f600 and \U000e0001", "x\\x41"} {
		arg := ShellArg(s)
		if Printable(arg) != arg {
			t.Errorf("ShellArg(%q) = %q holds bytes a terminal acts on", s, arg)
		}
		// in the C locale (cron's, a bare CI job's) and a UTF-8 one: bash
		// reads \u escapes in the locale's encoding
		for _, locale := range []string{"C", "C.UTF-8"} {
			cmd := exec.Command(bash, "-c", "printf %s "+arg)
			cmd.Env = append(os.Environ(), "LC_ALL="+locale)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("LC_ALL=%s bash -c 'printf %%s %s': %v", locale, arg, err)
			}
			if string(out) != s {
				t.Errorf("ShellArg(%q) = %s, which bash reads as %q with LC_ALL=%s", s, arg, out, locale)
			}
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"ab", "ba", 1}, {"sorce", "source", 1}, {"polciy", "policy", 1}, {"politic", "policy", 3}, {"héllo", "hello", 1},
	} {
		if got := EditDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
		if got := EditDistance(tc.b, tc.a); got != tc.d {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.d)
		}
	}
}

func TestNearest(t *testing.T) {
	for _, c := range []struct {
		typed string
		cands []string
		want  string
	}{
		{"run_a", []string{"run-b", "run-a", "nightly"}, "run-a"},
		{"prd", []string{"staging", "prod"}, "prod"},
		{"jsn", []string{"json"}, "json"},
		{"x", []string{"y"}, "y"},               // one edit is always near
		{"abcdef", []string{"uvwxyz"}, ""},      // nothing alike
		{"nightly-42", []string{"daily-7"}, ""}, // too far for its length
		{"anything", nil, ""},
	} {
		if got := Nearest(c.typed, c.cands); got != c.want {
			t.Errorf("Nearest(%q, %q) = %q, want %q", c.typed, c.cands, got, c.want)
		}
	}
}

// TestShorten is the one table of the shortener every error message that
// quotes a long input uses (identity.Shorten, the policy's and sources'
// "..." cuts, strictjson's member names).
func TestShorten(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		mark string
		want string
	}{
		{"", 3, "…", ""},
		{"abc", 3, "…", "abc"},
		{"abcd", 3, "…", "abc…"},
		{"abcd", 3, "...", "abc..."},
		{"abcd", 0, "…", "…"},
		{"abcd", -1, "…", "…"},
		{"aé" + "z", 2, "…", "a…"}, // é is two bytes: not cut in half
		{"aéz", 3, "...", "aé..."}, // the cut falls after é
		{"日本語", 4, "…", "日…"},
		{"\xff\xfe\xfd\xfc", 2, "…", "\xff\xfe…"}, // invalid UTF-8: every byte starts a rune
	} {
		got := ShortenWith(c.in, c.n, c.mark)
		if got != c.want {
			t.Errorf("ShortenWith(%q, %d, %q) = %q, want %q", c.in, c.n, c.mark, got, c.want)
		}
		if c.mark == "…" && Shorten(c.in, c.n) != got {
			t.Errorf("Shorten(%q, %d) = %q, want %q", c.in, c.n, Shorten(c.in, c.n), got)
		}
	}
}

// TestShellArgPastesInEveryShell: what ShellArg writes names the word
// itself in each shell installed that reads $'...' (bash, zsh, ksh93,
// mksh), in the C locale and a UTF-8 one, an escape followed by a hex
// digit included: ksh93 reads every hex digit after \x, so $'\xffbyte'
// named "bad\u0ffbyte" there.
func TestShellArgPastesInEveryShell(t *testing.T) {
	words := []string{"bad\xffbyte", "a\\b\x01c", "\x1bF0", "evil\u202eabc.exe", "\u0085\x7f9", "x\tDEAD", "it's\x1b'E'"}
	tried := 0
	for _, name := range []string{"bash", "zsh", "ksh93", "ksh", "mksh"} {
		sh, err := exec.LookPath(name)
		if err != nil {
			t.Logf("no %s", name)
			continue
		}
		tried++
		for _, s := range words {
			arg := ShellArg(s)
			for _, locale := range []string{"C", "C.UTF-8"} {
				cmd := exec.Command(sh, "-c", "printf %s "+arg)
				cmd.Env = append(os.Environ(), "LC_ALL="+locale)
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("LC_ALL=%s %s -c 'printf %%s %s': %v", locale, name, arg, err)
				}
				if string(out) != s {
					t.Errorf("ShellArg(%q) = %s, which %s reads as %q with LC_ALL=%s", s, arg, name, out, locale)
				}
			}
		}
	}
	if tried == 0 {
		t.Skip("none of bash, zsh, ksh93, ksh or mksh is installed")
	}
}

// TestScriptArgUnderSh: a word ScriptArg (or SingleQuoted) writes into a
// script is read back by sh (dash when installed: Debian's /bin/sh, which
// reads no $'...') as the bytes it was, a quote, a space, a newline, an
// escape byte, a non-ASCII character and a byte that is not UTF-8 included.
func TestScriptArgUnderSh(t *testing.T) {
	sh, err := exec.LookPath("dash")
	if err != nil {
		if sh, err = exec.LookPath("sh"); err != nil {
			t.Skip("no sh")
		}
	}
	words := []string{"plain/path-1.toml", "it's", "a b", "line\nbreak", "stor\u00e9", "esc\x1b[31m", "bad\xffbyte", "$HOME `x` \\n", ""}
	for _, quote := range []func(string) string{ScriptArg, SingleQuoted} {
		for _, w := range words {
			out, err := exec.Command(sh, "-c", "printf '%s' "+quote(w)).Output()
			if err != nil || string(out) != w {
				t.Errorf("%s -c \"printf '%%s' %s\" = %q, %v; want %q", sh, quote(w), out, err, w)
			}
		}
	}
	if got := ScriptArg("plain/path-1.toml"); got != "plain/path-1.toml" {
		t.Errorf("ScriptArg(plain/path-1.toml) = %s, want it unquoted", got)
	}
}
