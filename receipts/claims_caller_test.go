package receipts

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCallerMember: the caller a damaged receipt's bytes still name never
// panics to read, is a receipt's own caller when the bytes are a receipt,
// and is only ever the member spelt "caller".
func FuzzCallerMember(f *testing.F) {
	f.Add([]byte(`{"v":9,"caller":"bob"}`), "bob")
	f.Add([]byte(`{"Caller":"bob"}`), "x")
	f.Add([]byte(`not json`), "")
	f.Add([]byte(`{"caller":1}`), "a")
	f.Fuzz(func(t *testing.T, data []byte, caller string) {
		name, ok := callerMember(data)
		var m map[string]json.RawMessage
		if ok && (json.Unmarshal(data, &m) != nil || m["caller"] == nil) {
			t.Fatalf("%q: caller %q read from bytes without a caller member", data, name)
		}
		if caller == "" || !utf8.ValidString(caller) {
			return // not a caller a receipt carries as it is
		}
		r := Receipt{ID: "rcpt_" + "0000000000000000" + "0000000000000000", Format: BoundVersion, Session: "s", Tool: "t", Caller: caller}
		if got, ok := callerMember(r.Encode()); !ok || got != caller {
			t.Fatalf("the caller of a receipt of caller %q read as %q, %v", caller, got, ok)
		}
	})
}

// callerSession is a store whose session "s" holds receipts of the
// operator (caller ""), of bob and of carol, valid, under a rotated key,
// of format 1, and edited after they were sealed (their MAC fails, among
// them one of carol's now naming bob), and whose session "s2" holds one
// of bob's; no receipt is damaged past decoding.
type callerSession struct {
	f    *fixture
	ids  []string            // every receipt, both sessions
	owns map[string][]string // caller -> its receipts of session s, as their bytes name it
}

func newCallerSession(t testing.TB) *callerSession {
	f := newFixture(t)
	cs := &callerSession{f: f, owns: map[string][]string{}}
	rotated := NewIssuer(testKey(t, 42), f.ledger)
	add := func(r Receipt) {
		t.Helper()
		if err := f.ledger.Append(r); err != nil {
			t.Fatal(err)
		}
		cs.ids = append(cs.ids, r.ID)
		if r.Session == "s" {
			cs.owns[r.Caller] = append(cs.owns[r.Caller], r.ID)
		}
	}
	seal := func(is *Issuer, session, caller, tool string) Receipt {
		t.Helper()
		r, err := is.Seal(Call{Session: session, Caller: caller, Tool: tool, Args: ArgvArgs([]string{tool}), Result: BytesResult([]byte(tool))})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for i, caller := range []string{"", "bob", "carol", "bob", "carol", ""} {
		add(seal(f.issuer, "s", caller, "t"+strconv.Itoa(i)))
	}
	add(seal(rotated, "s", "bob", "rotated"))
	add(seal(rotated, "s", "carol", "rotated"))
	add(seal(f.issuer, "s2", "bob", "elsewhere"))
	edited := seal(f.issuer, "s", "bob", "edited")
	edited.Tool = "edited-after"
	add(edited)
	stolen := seal(f.issuer, "s", "carol", "stolen")
	stolen.Caller = "bob"
	add(stolen)
	v1 := seal(f.issuer, "s", "bob", "v1")
	v1.Format, v1.Bound = Version, Binding{}
	v1, err := f.key.Seal(v1)
	if err != nil {
		t.Fatal(err)
	}
	add(v1)
	return cs
}

// check compares VerifyCallerClaims with what VerifyClaims says of the
// same claims, shown to caller: a claim of one of caller's receipts of
// the session, or of no receipt id by its form, judged alike; any other
// claim fabricated with detail absent; and omitted the receipts of
// caller's that VerifyClaims lists as omitted, in its order.
func (cs *callerSession) check(t *testing.T, claims []string, caller string) {
	t.Helper()
	const absent = "no receipt of this caller"
	got, err := VerifyCallerClaims(cs.f.ledger, cs.f.key, "s", claims, caller, absent)
	if err != nil {
		t.Fatal(err)
	}
	all, err := VerifyClaims(cs.f.ledger, cs.f.key, "s", claims)
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{}
	if caller != "" {
		for _, id := range cs.owns[caller] {
			own[id] = true
		}
	}
	want := Report{Session: all.Session, KeyID: all.KeyID, Claims: []ClaimResult{}}
	for _, c := range all.Claims {
		if ValidID(c.ID) && !own[c.ID] {
			c = ClaimResult{ID: c.ID, Verdict: Fabricated, Detail: absent}
		}
		want.Claims = append(want.Claims, c)
	}
	for _, c := range all.Omitted {
		if own[c.ID] {
			want.Omitted = append(want.Omitted, c)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("caller %q, claims %q:\n got %s\nwant %s", caller, claims, show(got), show(want))
	}
}

func show(r Report) string {
	var b strings.Builder
	for _, c := range r.Claims {
		fmt.Fprintf(&b, "\n  claim %s %s (%s)", c.ID, c.Verdict, c.Detail)
	}
	for _, c := range r.Omitted {
		fmt.Fprintf(&b, "\n  omitted %s %s (%s)", c.ID, c.Verdict, c.Detail)
	}
	return b.String()
}

// TestCallerClaimsAsVerifyClaims: on a session no receipt of which is
// damaged past decoding, a caller's view (VerifyCallerClaims, which reads
// the session once) gives each of its receipts, cited or omitted, the
// verdict and detail VerifyClaims gives it, and nothing of any other
// receipt: every caller, with each receipt cited alone, all of them, none
// and ids of no receipt.
func TestCallerClaimsAsVerifyClaims(t *testing.T) {
	cs := newCallerSession(t)
	claimSets := [][]string{nil, cs.ids, append([]string{NewID(), "rcpt_nope", ""}, cs.ids...)}
	for _, id := range cs.ids {
		claimSets = append(claimSets, []string{id})
	}
	for _, caller := range []string{"", "bob", "carol", "dave"} {
		for _, claims := range claimSets {
			cs.check(t, claims, caller)
		}
	}
}

// FuzzCallerClaimsAsVerifyClaims is TestCallerClaimsAsVerifyClaims with
// claims and caller drawn from the fuzzer: each byte of pick cites one of
// the receipts or an id no receipt has, repeated or not.
func FuzzCallerClaimsAsVerifyClaims(f *testing.F) {
	cs := newCallerSession(f)
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, uint8(1))
	f.Add([]byte{200, 3, 3, 255}, uint8(2))
	f.Add([]byte{}, uint8(0))
	extra := []string{NewID(), "rcpt_x", "", "RCPT_" + strings.Repeat("A", 32)}
	callers := []string{"", "bob", "carol", "dave"}
	f.Fuzz(func(t *testing.T, pick []byte, who uint8) {
		if len(pick) > 64 {
			pick = pick[:64]
		}
		var claims []string
		for _, b := range pick {
			if i := int(b); i < len(cs.ids) {
				claims = append(claims, cs.ids[i])
			} else {
				claims = append(claims, extra[i%len(extra)])
			}
		}
		cs.check(t, claims, callers[int(who)%len(callers)])
	})
}

// TestCallerClaimsDamagedAsVerifyClaims: a caller's receipts damaged in
// the store, as their bytes still name it, get the verdict and detail
// VerifyClaims gives them (tampered), cited or omitted: one whose append
// commit's binding line was edited, one that no longer decodes, one whose
// file holds another of its receipts, one a later commit removed from the
// chain (cited only); one damaged past naming a caller is
// no one's, and another caller's damaged receipt is absent to it.
func TestCallerClaimsDamagedAsVerifyClaims(t *testing.T) {
	cs := newCallerSession(t)
	f := cs.f
	f.ledger.Bind = func(string) Binding { return Binding{Manifest: manifestA} }
	bound, err := f.issuer.Issue(t.Context(), Call{Session: "s", Run: "r1", Caller: "bob", Tool: "bound", Args: ArgvArgs(nil), Result: BytesResult(nil)})
	if err != nil {
		t.Fatal(err)
	}
	f.ledger.Bind = nil
	cs.ids = append(cs.ids, bound.ID)
	rewriteAppend(t, f, SessionRef("s"), "receipt "+bound.ID, func(m string) string { return strings.Replace(m, manifestA, manifestB, 1) })

	bob, carol := cs.owns["bob"], cs.owns["carol"]
	damage := func(id string, data []byte) {
		t.Helper()
		rewriteReceipt(t, f.store.Path(), SessionRef("s"), sessionBlobPath(id), data)
	}
	undecodable := func(id string) []byte {
		t.Helper()
		for _, r := range mustScan(t, f.ledger, "s") {
			if r.ID == id {
				return []byte(strings.Replace(string(r.Receipt.Encode()), `"v":2`, `"v":9`, 1))
			}
		}
		t.Fatalf("no receipt %s in session s", id)
		return nil
	}
	bobGone, carolGone := undecodable(bob[0]), undecodable(carol[0])
	bobOther := mustScan(t, f.ledger, "s")
	var bobSecond []byte
	for _, e := range bobOther {
		if e.ID == bob[1] {
			bobSecond = e.Receipt.Encode()
		}
	}
	damage(bob[0], bobGone)
	damage(carol[0], carolGone)
	damage(carol[1], bobSecond) // carol's file now holds bob's second receipt
	damage(bob[2], []byte("not json"))
	cs.owns["bob"] = append(slices.Clone(bob[:2]), bob[3:]...)
	cs.owns["bob"] = append(cs.owns["bob"], carol[1], bound.ID)
	cs.owns["carol"] = slices.DeleteFunc(slices.Clone(carol), func(id string) bool { return id == carol[1] })
	// Receipts a later commit removed from the chain (session 30): each
	// still its caller's, read from its append commit.
	var dropped []string
	for _, caller := range []string{"bob", "carol", ""} {
		r, err := f.issuer.Issue(t.Context(), Call{Session: "s", Caller: caller, Tool: "dropped", Args: ArgvArgs(nil), Result: BytesResult(nil)})
		if err != nil {
			t.Fatal(err)
		}
		dropReceipt(t, f, "s", r.ID)
		dropped = append(dropped, r.ID)
		cs.ids = append(cs.ids, r.ID)
		if caller != "" {
			cs.owns[caller] = append(cs.owns[caller], r.ID)
		}
	}

	all, err := VerifyClaims(f.ledger, f.key, "s", cs.ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range append([]string{bob[0], carol[0], carol[1], bob[2], bound.ID}, dropped...) {
		if v := verdicts(all)[id]; v != Tampered {
			t.Fatalf("VerifyClaims says %s of damaged receipt %s", v, id)
		}
	}
	claimSets := [][]string{nil, cs.ids}
	for _, id := range cs.ids {
		claimSets = append(claimSets, []string{id})
	}
	for _, caller := range []string{"", "bob", "carol", "dave"} {
		for _, claims := range claimSets {
			cs.check(t, claims, caller)
		}
	}
}

func mustScan(t *testing.T, l *Ledger, session string) []Entry {
	t.Helper()
	entries, err := l.Scan(session)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}
