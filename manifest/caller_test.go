package manifest

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestCallerGolden pins manifest.json with a caller (the token name of
// `readproof mcp --http`, written after created_at and only when set) and
// checks that a manifest without one encodes to the old golden bytes, so
// manifests written before the field keep their ids; a caller that breaks
// identity.ValidateCaller is refused.
func TestCallerGolden(t *testing.T) {
	m := sample()
	m.Caller = "ci-agent"
	data, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "manifest-caller.json", data)
	back, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Caller != m.Caller {
		t.Fatalf("caller %q after decoding, want %q", back.Caller, m.Caller)
	}
	plain, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain, []byte("caller")) {
		t.Fatal("a manifest without a caller has a caller field")
	}
	if without := strings.Replace(string(data), "\n  \"caller\": \"ci-agent\",", "", 1); without != string(plain) {
		t.Fatal("the caller changed more than its own field")
	}
	for _, bad := range []string{"a b", "-x", "a..b", strings.Repeat("x", 65), "é"} {
		m.Caller = bad
		if _, err := Encode(m); !errors.Is(err, ErrInvalid) {
			t.Errorf("caller %q: %v, want ErrInvalid", bad, err)
		}
	}
}
