package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// errorCase is one file of testdata/errors.txtar.
type errorCase struct {
	name, data              string
	line, col               int
	key, msg, hint          string
	hasKey, hasHint, hasCol bool
}

func loadErrorCases(t testing.TB) []errorCase {
	t.Helper()
	var cases []errorCase
	for _, f := range readArchive(t, "testdata/errors.txtar") {
		c := errorCase{name: f.name, data: f.data}
		for i, l := range strings.Split(c.data, "\n") {
			if strings.Contains(l, "#<-") {
				if c.line != 0 {
					t.Fatalf("%s: two #<- markers", f.name)
				}
				c.line = i + 1
			}
			if v, ok := strings.CutPrefix(l, "# key:"); ok {
				c.key, c.hasKey = strings.TrimSpace(v), true
			}
			if v, ok := strings.CutPrefix(l, "# msg:"); ok {
				c.msg = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(l, "# hint:"); ok {
				c.hint, c.hasHint = strings.TrimSpace(v), true
			}
			if v, ok := strings.CutPrefix(l, "# col:"); ok {
				c.col, _ = strconv.Atoi(strings.TrimSpace(v))
				c.hasCol = true
			}
		}
		if c.line == 0 || !c.hasKey || c.msg == "" {
			t.Fatalf("%s: fixture needs a #<- marker, # key: and # msg:", f.name)
		}
		cases = append(cases, c)
	}
	return cases
}

type archiveFile struct{ name, data string }

// readArchive reads a txtar archive: a comment, then files each introduced
// by a line "-- NAME --".
func readArchive(t testing.TB, path string) []archiveFile {
	t.Helper()
	var files []archiveFile
	for _, line := range strings.SplitAfter(string(mustRead(t, path)), "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			files = append(files, archiveFile{name: strings.TrimSpace(trimmed[3 : len(trimmed)-3])})
			continue
		}
		if len(files) > 0 {
			files[len(files)-1].data += line
		}
	}
	return files
}

func TestParseErrors(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	cases := loadErrorCases(t)
	if len(cases) < 60 {
		t.Fatalf("only %d error fixtures loaded", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := "testdata/" + c.name
			f, err := Parse(file, []byte(c.data))
			if err == nil {
				t.Fatalf("accepted; resources: %+v", f.Resources())
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not match ErrInvalid")
			}
			if pe.File != file {
				t.Errorf("File = %q, want %q", pe.File, file)
			}
			if pe.Line != c.line {
				t.Errorf("Line = %d, want %d (error: %v)", pe.Line, c.line, err)
			}
			if pe.Key != c.key {
				t.Errorf("Key = %q, want %q (error: %v)", pe.Key, c.key, err)
			}
			if !strings.Contains(pe.Msg, c.msg) {
				t.Errorf("Msg = %q, want it to contain %q", pe.Msg, c.msg)
			}
			if c.hasHint && !strings.Contains(pe.Hint, c.hint) {
				t.Errorf("Hint = %q, want it to contain %q", pe.Hint, c.hint)
			}
			if c.hasCol && pe.Column != c.col {
				t.Errorf("Column = %d, want %d", pe.Column, c.col)
			}
			want := fmt.Sprintf("%s:%d", file, c.line)
			if c.hasCol {
				want += fmt.Sprintf(":%d", c.col)
			}
			if c.key != "" {
				want += fmt.Sprintf(": key %q: ", c.key)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, want) {
				t.Errorf("Error() = %q, want prefix %q", msg, want)
			}
			for _, s := range []string{err.Error(), pe.Hint} {
				if strings.ContainsAny(s, "\n\r") {
					t.Errorf("message or hint is not one line: %q", s)
				}
				// Secret-looking values in the fixtures never come back.
				for _, secret := range []string{"hunter2", "abc123", "bob:secret", "ghp_abc"} {
					if strings.Contains(c.data, secret) && strings.Contains(s, secret) {
						t.Errorf("%q leaks into %q", secret, s)
					}
				}
			}
		})
	}
}

// TestBothUnknownKeyPathsAgree: an unknown key is found through
// md.Undecoded when the file decodes, and by the type check when a wrong
// type elsewhere makes decoding fail. Both must report it the same way.
func TestBothUnknownKeyPathsAgree(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	n := 0
	for _, c := range loadErrorCases(t) {
		if c.msg != "unknown key" {
			continue
		}
		n++
		_, err1 := Parse(c.name, []byte(c.data))
		withTypeError := c.data + "\n[receipts]\nkey = 42\n"
		_, err2 := Parse(c.name, []byte(withTypeError))
		var e1, e2 *Error
		if !errors.As(err1, &e1) || !errors.As(err2, &e2) {
			t.Fatalf("%s: errors %v, %v", c.name, err1, err2)
		}
		if *e1 != *e2 {
			t.Errorf("%s:\n decoded: %+v\n checked: %+v", c.name, *e1, *e2)
		}
	}
	if n < 10 {
		t.Fatalf("only %d unknown-key fixtures", n)
	}
	// And the type error alone is found, at its line.
	_, err := Parse("t.toml", []byte("version = 1\n\n[receipts]\nkey = 42\n"))
	var e *Error
	if !errors.As(err, &e) || e.Line != 4 || e.Key != "receipts.key" || e.Msg != "want a path string, got an integer" {
		t.Errorf("type error = %+v", e)
	}
}

func TestSuggest(t *testing.T) {
	keys := []string{"uri", "policy", "max_age", "snapshot", "content_type", "description", "source"}
	for _, tc := range []struct{ in, want string }{
		{"sorce", "source"},
		{"polcy", "policy"},
		{"plociy", "policy"},
		{"URI", "uri"},
		{"ur", "uri"},
		{"maxage", "max_age"},
		{"descripiton", "description"},
		{"colour", ""},
		{"x", ""},
		{"", ""},
	} {
		if got := suggest(tc.in, keys); got != tc.want {
			t.Errorf("suggest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	e := &Error{File: "readproof.toml", Line: 7, Key: "resource[2].sorce", Msg: "unknown key", Hint: `did you mean "source"?`}
	if got, want := e.Error(), `readproof.toml:7: key "resource[2].sorce": unknown key`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e = &Error{File: "p.toml", Line: 3, Column: 9, Msg: "malformed TOML: x"}
	if got, want := e.Error(), `p.toml:3:9: malformed TOML: x`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e = &Error{File: "p.toml", Key: "resource[4].uri", Msg: "m", Err: ErrDuplicate}
	if got, want := e.Error(), `p.toml: key "resource[4].uri": m`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, ErrDuplicate) || !errors.Is(e, ErrInvalid) {
		t.Errorf("errors.Is does not see ErrDuplicate and ErrInvalid")
	}
}
