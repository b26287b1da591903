package receipts

import (
	"errors"
	"strings"
	"testing"
)

// TestParseClaimsRepeatedMember: an object naming "receipts" twice is
// refused, as a receipt naming a member twice is. encoding/json keeps the
// last list, so the ids of the first (the ones a reader that takes the
// first member shows) vanished without being judged.
func TestParseClaimsRepeatedMember(t *testing.T) {
	made := "rcpt_" + strings.Repeat("m", 32)
	real := "rcpt_" + strings.Repeat("r", 32)
	for _, in := range []string{
		`{"receipts":["` + made + `"],"receipts":["` + real + `"]}`,
		`{"receipts":["` + made + `"],"notes":"x","receipts":[]}`,
	} {
		got, err := ParseClaims([]byte(in))
		if !errors.Is(err, ErrClaims) || !strings.Contains(err.Error(), `"receipts" member given twice`) {
			t.Errorf("ParseClaims(%s) = %q, %v; want ErrClaims: the member given twice", in, got, err)
		}
	}
	// members in other case are other members, ignored as before
	if got, err := ParseClaims([]byte(`{"Receipts":["` + made + `"],"receipts":["` + real + `"]}`)); err != nil || len(got) != 1 || got[0] != real {
		t.Errorf("ParseClaims with a Receipts member = %q, %v", got, err)
	}
}
