package receipts

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeRefusesZeroRunStarted: run_started at Go's zero time
// (0001-01-01) is outside the range of start, as docs/receipts.md says;
// accepted, it decoded as an unbound receipt whose MAC verifies while its
// JSON, to any other reader, binds it to a start in year 1.
func TestDecodeRefusesZeroRunStarted(t *testing.T) {
	f := newFixture(t)
	r := issueBound(t, f, "s", Binding{})
	enc := string(r.Encode())
	in := strings.Replace(enc, `,"mac":`, `,"run_started":"0001-01-01T00:00:00.000000000Z","mac":`, 1)
	if in == enc {
		t.Fatalf("no mac member in %s", enc)
	}
	_, err := DecodeReceipt([]byte(in))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "run_started") || !strings.Contains(err.Error(), "0001-01-01") {
		t.Fatalf("DecodeReceipt(run_started in year 1) = %v, want ErrInvalid naming run_started and the time", err)
	}
}
