package strictjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"plain"}`:                        "",
		`{"a":"caf\u00e9 é ✓"}`:                "",
		`{"a":"\ud83d\ude00 pair"}`:            "",
		`{"a":"\\ud800 an escaped backslash"}`: "",
		`{"a":"\"\ud800"}`:                     `\ud800, half a surrogate pair at byte 8`,
		`{"a":"\ud800"}`:                       `\ud800, half a surrogate pair at byte 6`,
		`{"a":"\udc00\ud800"}`:                 `\udc00, half a surrogate pair at byte 6`,
		`{"a":"\uD800\u0041"}`:                 `\ud800, half a surrogate pair at byte 6`,
		`{"a":"\ud800`:                         `\ud800, half a surrogate pair at byte 6`,
		"{\"a\":\"bad\xff\"}":                  "invalid UTF-8 at byte 9",
		"{\"a\":1}\xc3":                        "invalid UTF-8 at byte 7",
		"{\"\xed\xa0\x80\":1}":                 "invalid UTF-8 at byte 2", // an encoded surrogate is not UTF-8
		`{"a":"\u12"}`:                         "",                        // not JSON: the decoder refuses it
	} {
		err := Text([]byte(in))
		var te *TextError
		switch {
		case want == "" && err != nil:
			t.Errorf("Text(%q) = %v, want nil", in, err)
		case want != "" && (!errors.As(err, &te) || !strings.HasPrefix(err.Error(), want+": ")):
			t.Errorf("Text(%q) = %v, want %q", in, err, want)
		}
	}
}

// FuzzText: what Text passes, encoding/json decodes to the same strings a
// strict reader would (no U+FFFD it did not see written), and what it
// refuses holds invalid UTF-8 or a lone surrogate escape.
func FuzzText(f *testing.F) {
	for _, s := range []string{`"a"`, `"\ud800"`, `"\ud83d\ude00"`, "\"\xff\"", `["\\ud800"]`, `{"a":"\uDBFF\uDFFF"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Text(data)
		if err == nil {
			if !utf8.Valid(data) {
				t.Fatalf("Text passed invalid UTF-8 %q", data)
			}
			var v any
			if json.Unmarshal(data, &v) == nil && containsReplacement(v) && !strings.Contains(string(data), "\uFFFD") && !strings.Contains(strings.ToLower(string(data)), `\ufffd`) {
				t.Fatalf("Text passed %q, which encoding/json reads with a U+FFFD it did not see", data)
			}
		}
	})
}

func containsReplacement(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, utf8.RuneError)
	case []any:
		for _, e := range v {
			if containsReplacement(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, utf8.RuneError) || containsReplacement(e) {
				return true
			}
		}
	}
	return false
}

// TestCheckRefusesText: Check refuses what Text refuses, before any member
// name, so every format checked with it (bundles, manifests, receipts,
// verdicts, the records a pull takes) refuses text readers read apart.
func TestCheckRefusesText(t *testing.T) {
	for _, in := range []string{`{"a":"\udc00"}`, "{\"a\":\"\xff\"}", `{"a":1,"a":"\ud800"}`} {
		var te *TextError
		if err := Check([]byte(in), nil); !errors.As(err, &te) {
			t.Errorf("Check(%q) = %v, want a *TextError", in, err)
		}
	}
}
