package policy

import "testing"

// TestNear: which undeclared URIs are a slip of a declared one.
func TestNear(t *testing.T) {
	t.Parallel()
	f, err := Parse("p.toml", []byte(`
[[resource]]
uri = "readproof://demo/policies/Refunds"
source = { type = "filesystem", path = "r.md" }
[[resource]]
uri = "readproof://d/a"
source = { type = "filesystem", path = "a.md" }
`))
	if err != nil {
		t.Fatal(err)
	}
	for typed, want := range map[string]string{
		"readproof://demo/policies/refunds":  "readproof://demo/policies/Refunds", // case
		"readproof://demo/policies/Refund":   "readproof://demo/policies/Refunds", // a letter less
		"readproof://demo/policies/Refundss": "readproof://demo/policies/Refunds", // a letter more
		"readproof://demo/policies/Refunbs":  "readproof://demo/policies/Refunds", // a letter changed
		"readproof://demo/policies/Refunds":  "",                                  // declared
		"readproof://demo/policies/nope":     "",
		"readproof://other/policies/Refund":  "", // another namespace
		"readproof://d/b":                    "", // too short to be a slip
		"readproof://d/A":                    "readproof://d/a",
	} {
		if got := f.Near(mustURI(t, typed)); got != want {
			t.Errorf("Near(%s) = %q, want %q", typed, got, want)
		}
	}
}
