package receipts

import (
	"strings"
	"testing"
)

// TestValidateCutsOnACharacter: a long receipt id is quoted cut to 80
// bytes; a character across the cut is left out whole, not shown as a
// broken byte ("\xc3").
func TestValidateCutsOnACharacter(t *testing.T) {
	r := Receipt{ID: "rcpt_" + strings.Repeat("a", 74) + "é" + strings.Repeat("b", 10)}
	err := r.Validate()
	if err == nil {
		t.Fatal("Validate accepted a malformed id")
	}
	if got := err.Error(); strings.Contains(got, `\x`) || !strings.Contains(got, `"rcpt_`+strings.Repeat("a", 74)+`..."`) {
		t.Errorf("Validate error = %s, want the id cut before é", got)
	}
}
