package receipts

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseClaims(t *testing.T) {
	a := "rcpt_" + strings.Repeat("a", 32)
	b := "rcpt_" + strings.Repeat("b", 32)
	c := "rcpt_" + strings.Repeat("c", 32)
	cases := []struct {
		name, in string
		want     []string
	}{
		{"json list", `["` + a + `","` + b + `","` + a + `"]`, []string{a, b}},
		{"json list keeps non-ids", `["` + a + `","made-up",""]`, []string{a, "made-up", ""}},
		{"empty list", ` [] `, []string{}},
		{"json object", `{"summary":"done ` + c + `","receipts":["` + b + `","` + a + `"]}`, []string{b, a}},
		{"object without receipts is text", `{"notes":"ran ` + c + ` then ` + a + `"}`, []string{c, a}},
		{"free text", "I ran the tests (" + a + ") and lint: " + b + ".\nAgain " + a + ", then " + c + "!", []string{a, b, c}},
		{"markdown", "- `" + a + "`\n- **" + b + "**\n- [x](http://h/" + c + ".json)", []string{a, b, c}},
		{"word boundary before", "xrcpt_" + strings.Repeat("a", 32) + " _" + b + " 9" + c, nil},
		{"near misses are claims", "see rcpt_123 and RCPT_" + strings.Repeat("A", 32) + " and " + a + "z", []string{"rcpt_123", "RCPT_" + strings.Repeat("A", 32), a + "z"}},
		{"bare prefix", "rcpt_ then rcpt_-x", []string{"rcpt_"}},
		{"nothing", "no receipts here", []string{}},
		{"invalid utf8 text", "\xff\xfe" + a + "\xff", []string{a}},
		{"long token cut", "rcpt_" + strings.Repeat("a", 500), []string{"rcpt_" + strings.Repeat("a", maxTokenLen-5)}},
		{"json string scalar is text", `"` + a + `"`, []string{a}},
	}
	for _, tc := range cases {
		got, err := ParseClaims([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.want == nil {
			tc.want = []string{}
		}
		if !slices.Equal(got, tc.want) || got == nil {
			t.Errorf("%s: ParseClaims = %q, want %q", tc.name, got, tc.want)
		}
	}
	for name, in := range map[string]string{
		"list of numbers":       `[1,2]`,
		"list with null":        `["` + a + `",null]`,
		"receipts not a list":   `{"receipts":"` + a + `"}`,
		"receipts null":         `{"receipts":null}`,
		"receipts with objects": `{"receipts":[{"id":"x"}]}`,
		"claim too long":        `["` + strings.Repeat("x", MaxClaimLen+1) + `"]`,
		"input too large":       strings.Repeat(" ", MaxClaimsInput+1),
	} {
		if got, err := ParseClaims([]byte(in)); !errors.Is(err, ErrClaims) {
			t.Errorf("%s: ParseClaims = %q, %v; want ErrClaims", name, got, err)
		}
	}
}

func verdicts(rep Report) map[string]Verdict {
	m := map[string]Verdict{}
	for _, c := range rep.Claims {
		m[c.ID] = c.Verdict
	}
	return m
}

func TestVerifyClaimsEveryClass(t *testing.T) {
	f := newFixture(t)
	valid1 := f.issue(t, "s1", "read")
	valid2 := f.issue(t, "s1", "write")
	omitted := f.issue(t, "s1", "lint")
	tampered := f.issue(t, "s1", "deploy")
	elsewhere := f.issue(t, "s2", "read")
	elsewhereEdited := f.issue(t, "s2", "write")
	// A receipt made under a key that has since been rotated away.
	oldKey := testKey(t, 42)
	rotated, err := NewIssuer(oldKey, f.ledger).Issue(t.Context(), Call{Session: "s1", Tool: "old", Args: ArgvArgs(nil), Result: BytesResult(nil)})
	if err != nil {
		t.Fatal(err)
	}
	// Edit one receipt of s1 (its chain) and one of s2 (its index copy,
	// which is what a lookup by id reads) through git plumbing.
	ed := tampered
	ed.Tool = "deploy-prod"
	rewriteReceipt(t, f.store.Path(), SessionRef("s1"), sessionBlobPath(tampered.ID), ed.Encode())
	ed2 := elsewhereEdited
	ed2.Session = "s1" // pretend it belongs to s1
	rewriteReceipt(t, f.store.Path(), indexRef(elsewhereEdited.ID), indexBlobPath(elsewhereEdited.ID), ed2.Encode())

	fabricated := NewID()
	claims := []string{valid1.ID, fabricated, tampered.ID, elsewhere.ID, rotated.ID, valid2.ID, elsewhereEdited.ID, "rcpt_nope"}
	rep, err := VerifyClaims(f.ledger, f.key, "s1", claims)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Verdict{
		valid1.ID: Valid, valid2.ID: Valid, fabricated: Fabricated, "rcpt_nope": Fabricated,
		tampered.ID: Tampered, elsewhere.ID: OtherSession, rotated.ID: UnknownKey, elsewhereEdited.ID: Tampered,
	}
	got := verdicts(rep)
	for id, v := range want {
		if got[id] != v {
			t.Errorf("claim %s: verdict %q, want %q", id, got[id], v)
		}
	}
	// Claims keep their order.
	for i, c := range rep.Claims {
		if c.ID != claims[i] || c.Detail == "" {
			t.Errorf("claim %d is %s (detail %q), want %s", i, c.ID, c.Detail, claims[i])
		}
	}
	if len(rep.Omitted) != 1 || rep.Omitted[0].ID != omitted.ID || rep.Omitted[0].Verdict != Valid {
		t.Errorf("omitted = %+v, want only %s (valid)", rep.Omitted, omitted.ID)
	}
	if !rep.Strict() {
		t.Error("Strict() = false with fabricated and tampered claims")
	}
	if rep.Count(Valid) != 2 || rep.Count(Fabricated) != 2 || rep.Count(Tampered) != 2 || rep.Count(OtherSession) != 1 || rep.Count(UnknownKey) != 1 {
		t.Errorf("counts %v", rep.JSON().Counts)
	}

	// Strict fails exactly on fabricated, tampered, other_session (since
	// session 30) and unknown_key.
	for _, tc := range []struct {
		claims []string
		fail   bool
	}{
		{nil, false},
		{[]string{valid1.ID}, false},
		{[]string{valid1.ID, elsewhere.ID}, true},
		{[]string{elsewhere.ID}, true},
		{[]string{valid1.ID, fabricated}, true},
		{[]string{tampered.ID}, true},
		{[]string{rotated.ID}, true},
		{[]string{"hello"}, true},
	} {
		rep, err := VerifyClaims(f.ledger, f.key, "s1", tc.claims)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Strict() != tc.fail || rep.JSON().StrictFail != tc.fail {
			t.Errorf("claims %q: Strict() = %v, want %v", tc.claims, rep.Strict(), tc.fail)
		}
	}

	// After rotation to the new key only, every old receipt is unknown_key,
	// none tampered.
	newKey := testKey(t, 43)
	rep, err = VerifyClaims(f.ledger, newKey, "s1", []string{valid1.ID, valid2.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range append(rep.Claims, rep.Omitted...) {
		if c.Verdict != UnknownKey {
			t.Errorf("after rotation: %s is %q, want unknown_key", c.ID, c.Verdict)
		}
	}

	// Omitted lists every uncited receipt in issue order with its verdict.
	rep, _ = VerifyClaims(f.ledger, f.key, "s1", nil)
	var om []string
	for _, c := range rep.Omitted {
		om = append(om, c.ID+":"+string(c.Verdict))
	}
	wantOm := []string{valid1.ID + ":valid", valid2.ID + ":valid", omitted.ID + ":valid", tampered.ID + ":tampered", rotated.ID + ":unknown_key"}
	if !slices.Equal(om, wantOm) {
		t.Errorf("omitted\n got %v\nwant %v", om, wantOm)
	}
	if rep.Strict() {
		t.Error("omitted receipts alone failed strict")
	}

	if _, err := VerifyClaims(f.ledger, f.key, "bad/session", nil); err == nil {
		t.Error("VerifyClaims accepted an invalid session id")
	}
	if _, err := VerifyClaims(f.ledger, Key{}, "s1", nil); err == nil {
		t.Error("VerifyClaims accepted a zero key")
	}
}

func TestVerifyClaimsUnknownSession(t *testing.T) {
	f := newFixture(t)
	r := f.issue(t, "s1", "read")
	rep, err := VerifyClaims(f.ledger, f.key, "never-used", []string{r.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Claims) != 1 || rep.Claims[0].Verdict != OtherSession || len(rep.Omitted) != 0 {
		t.Errorf("report %+v", rep)
	}
}

func TestReportJSONShape(t *testing.T) {
	f := newFixture(t)
	r := f.issue(t, "s1", "read")
	f.issue(t, "s1", "write")
	rep, err := VerifyClaims(f.ledger, f.key, "s1", []string{r.ID, "rcpt_x"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(rep.JSON())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "session", "key_id", "strict_fail", "counts", "claims", "omitted"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, data)
		}
	}
	counts := m["counts"].(map[string]any)
	for k, want := range map[string]float64{"claims": 2, "valid": 1, "fabricated": 1, "tampered": 0, "other_session": 0, "unknown_key": 0, "omitted": 1} {
		if counts[k] != want {
			t.Errorf("counts[%s] = %v, want %v", k, counts[k], want)
		}
	}
	claims := m["claims"].([]any)
	first := claims[0].(map[string]any)
	if first["id"] != r.ID || first["verdict"] != "valid" || first["tool"] != "read" || first["session"] != "s1" {
		t.Errorf("first claim %v", first)
	}
	if m["strict_fail"] != true || m["key_id"] != f.key.ID() {
		t.Errorf("strict_fail %v key_id %v", m["strict_fail"], m["key_id"])
	}
	// Empty lists are arrays, not null.
	empty, _ := json.Marshal(Report{Session: "s"}.JSON())
	if !strings.Contains(string(empty), `"claims":[]`) || !strings.Contains(string(empty), `"omitted":[]`) {
		t.Errorf("empty report JSON %s", empty)
	}
	if strings.Contains(string(data), string(f.key.secret.mac)) || strings.Contains(string(data), hex.EncodeToString(f.key.secret.mac)) {
		t.Error("report JSON contains key material")
	}
}

func FuzzParseClaims(f *testing.F) {
	a := "rcpt_" + strings.Repeat("a", 32)
	for _, s := range []string{
		`["` + a + `"]`, `{"receipts":["` + a + `","x"]}`, "text " + a + " more", `{"x":1}`, `[1]`, "", "rcpt_", "RCPT_ABC",
		`{"receipts":null}`, "\xffrcpt_0\x00", `[` + `"` + a + `",` + `"` + a + `"]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		claims, err := ParseClaims(data)
		if err != nil {
			if !errors.Is(err, ErrClaims) {
				t.Fatalf("error %v does not wrap ErrClaims", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, c := range claims {
			if seen[c] {
				t.Fatalf("duplicate claim %q", c)
			}
			seen[c] = true
			if len(c) > MaxClaimLen {
				t.Fatalf("claim of %d bytes", len(c))
			}
		}
		// A well-formed id in free text is always found.
		for _, c := range claims {
			if ValidID(c) && !strings.Contains(string(data), c) {
				t.Fatalf("claim %q is not in the input", c)
			}
		}
		// Re-parsing the claims as a JSON list gives them back unchanged
		// (when they are valid UTF-8, which JSON requires).
		enc, err := json.Marshal(claims)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseClaims(enc)
		if err != nil {
			t.Fatalf("ParseClaims(%s): %v", enc, err)
		}
		allUTF8 := true
		for _, c := range claims {
			allUTF8 = allUTF8 && utf8.ValidString(c)
		}
		if allUTF8 && !slices.Equal(again, claims) {
			t.Fatalf("claims %q came back as %q", claims, again)
		}
	})
}

// TestClaimsJSONVersion2StrictFail: strict_fail says whether --strict
// fails, and a claim of another session fails it since session 30, so the
// JSON says version 2: a reader of version 1, where such a claim left
// strict_fail false, is told the meaning changed.
func TestClaimsJSONVersion2StrictFail(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	other := f.issue(t, "s2", "fetch")
	f.issue(t, "s1", "read")
	rep, err := VerifyClaims(f.ledger, f.key, "s1", []string{other.ID})
	if err != nil {
		t.Fatal(err)
	}
	j := rep.JSON()
	if j.Counts.OtherSession != 1 || !j.StrictFail || !rep.Strict() {
		t.Fatalf("one other_session claim: counts %+v, strict_fail %v", j.Counts, j.StrictFail)
	}
	if j.Version != 2 {
		t.Errorf("version %d: strict_fail counts other_session claims since version 2", j.Version)
	}
}
