package receipts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/strictjson"
)

// Claim limits: ParseClaims refuses larger input rather than guess.
const (
	MaxClaimsInput = 8 << 20
	MaxClaims      = 100000
	MaxClaimLen    = 256
	// maxTokenLen cuts receipt-like tokens found in free text.
	maxTokenLen = 128
)

// ErrClaims is wrapped by ParseClaims errors.
var ErrClaims = errors.New("invalid claims")

// ParseClaims extracts the receipt ids an agent cites, first occurrence
// first, duplicates dropped. The input is one of:
//
//   - a JSON array of strings: every string is a claim;
//   - a JSON object with a "receipts" member holding an array of strings
//     (other members ignored);
//   - anything else, JSON or not: free text, in which every token that
//     starts with "rcpt_" (any letter case) at a word boundary and runs over
//     ASCII letters and digits is a claim.
//
// Claims are kept as written: a malformed one is later judged fabricated,
// never dropped, so a hallucinated id cannot vanish silently.
func ParseClaims(data []byte) ([]string, error) {
	if len(data) > MaxClaimsInput {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrClaims, len(data), MaxClaimsInput)
	}
	trimmed := bytes.TrimSpace(data)
	var list []string
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[' && json.Valid(trimmed):
		var err error
		if list, err = stringList(trimmed); err != nil {
			return nil, fmt.Errorf("%w: a JSON list of claims must hold only strings (receipt ids)", ErrClaims)
		}
	case len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed):
		raw, ok, err := receiptsMember(trimmed)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrClaims, err)
		}
		if !ok {
			list = scanText(data)
			break
		}
		if list, err = stringList(raw); err != nil {
			return nil, fmt.Errorf("%w: the \"receipts\" member must be a list of strings (receipt ids)", ErrClaims)
		}
	default:
		list = scanText(data)
	}
	out := make([]string, 0, len(list))
	seen := make(map[string]bool, len(list))
	for i, c := range list {
		if len(c) > MaxClaimLen {
			return nil, fmt.Errorf("%w: claim %d is %d bytes, more than %d", ErrClaims, i+1, len(c), MaxClaimLen)
		}
		if seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, c)
		if len(out) > MaxClaims {
			return nil, fmt.Errorf("%w: more than %d distinct claims", ErrClaims, MaxClaims)
		}
	}
	return out, nil
}

// receiptsMember returns the "receipts" member of the JSON object data.
// A second one is an error, as a member given twice in a receipt is:
// encoding/json keeps the last, so the ids of the first would vanish
// without a verdict while a reader that takes the first shows them. Other
// members are ignored, given twice or not; a name in other case is another
// member.
func receiptsMember(data []byte) (raw json.RawMessage, found bool, err error) {
	if err := strictjson.Check(data, claimsShape{}); err != nil {
		var te *strictjson.TextError
		if errors.As(err, &te) {
			return nil, false, err
		}
		return nil, false, errors.New(`the "receipts" member given twice: JSON readers differ on which one counts`)
	}
	var members map[string]json.RawMessage // names matched exactly
	if err := json.Unmarshal(data, &members); err != nil {
		return nil, false, err
	}
	raw, found = members["receipts"]
	return raw, found, nil
}

// claimsShape is a claims object's: "receipts", read once; other members,
// ignored.
type claimsShape struct{}

func (claimsShape) Member(name string) (strictjson.Shape, error) {
	if name == "receipts" {
		return strictjson.Opaque, nil
	}
	return strictjson.Ignored, nil
}

func (claimsShape) Elem() strictjson.Shape { return nil }

// stringList decodes a JSON array whose elements are all strings.
func stringList(data []byte) ([]string, error) {
	var ptrs []*string
	if err := json.Unmarshal(data, &ptrs); err != nil {
		return nil, err
	}
	if ptrs == nil {
		return nil, errors.New("not a list")
	}
	out := make([]string, len(ptrs))
	for i, p := range ptrs {
		if p == nil {
			return nil, errors.New("null in the list")
		}
		out[i] = *p
	}
	return out, nil
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// scanText finds receipt-like tokens in free text.
func scanText(data []byte) []string {
	var out []string
	for i := 0; i+len(IDPrefix) <= len(data); i++ {
		if !bytes.EqualFold(data[i:i+len(IDPrefix)], []byte(IDPrefix)) || (i > 0 && isWordByte(data[i-1])) {
			continue
		}
		j := i + len(IDPrefix)
		for j < len(data) && isAlnum(data[j]) {
			j++
		}
		tok := data[i:j]
		if len(tok) > maxTokenLen {
			tok = tok[:maxTokenLen]
		}
		out = append(out, string(tok))
		i = j - 1
	}
	return out
}

// Verdict classifies one claim.
type Verdict string

const (
	// Valid: the receipt exists, its MAC verifies and it belongs to the
	// session.
	Valid Verdict = "valid"
	// Fabricated: no receipt has this id (or the claim is not an id).
	Fabricated Verdict = "fabricated"
	// Tampered: the stored receipt fails its MAC, cannot be decoded, or is
	// stored under another id.
	Tampered Verdict = "tampered"
	// OtherSession: a genuine receipt of another session.
	OtherSession Verdict = "other_session"
	// UnknownKey: the receipt was made under another key id (rotated key);
	// it can be neither confirmed nor refuted with this key.
	UnknownKey Verdict = "unknown_key"
)

// Verdicts lists every verdict in report order.
var Verdicts = []Verdict{Valid, Fabricated, Tampered, OtherSession, UnknownKey}

// FailsStrict reports whether a claim with this verdict makes --strict
// fail: every verdict but valid. Fabricated, tampered and unknown_key (an
// unverifiable claim is not accepted, and an edited key id must not turn
// "tampered" into a pass), and other_session: the call ran, but not in the
// session whose work is being judged, so it is not evidence of that work
// (before session 30 it passed --strict, and an agent could cite a call made
// in another session, its own earlier one or another agent's, as its own).
func (v Verdict) FailsStrict() bool {
	return v == Fabricated || v == Tampered || v == OtherSession || v == UnknownKey
}

// ClaimResult is the verdict on one claim.
type ClaimResult struct {
	ID      string
	Verdict Verdict
	// Detail says why, in words.
	Detail string
	// Receipt is the stored receipt when one could be decoded.
	Receipt *Receipt
}

// Report is the outcome of VerifyClaims.
type Report struct {
	Session string
	KeyID   string
	Claims  []ClaimResult
	// Omitted are the session's receipts that no claim cites, in issue
	// order, each with its own verdict (valid, tampered, unknown_key).
	Omitted []ClaimResult
}

// Strict reports whether --strict must fail: whether any claim is
// fabricated, tampered, of another session or under an unknown key (see
// Verdict.FailsStrict).
// Omitted receipts never fail strict.
func (r Report) Strict() bool {
	for _, c := range r.Claims {
		if c.Verdict.FailsStrict() {
			return true
		}
	}
	return false
}

// Count returns how many claims got verdict v.
func (r Report) Count(v Verdict) int {
	n := 0
	for _, c := range r.Claims {
		if c.Verdict == v {
			n++
		}
	}
	return n
}

// VerifyClaims classifies each claim for session (see the Verdict
// constants) and lists the session's receipts no claim cites. The error is
// reserved for a session id that is not valid and for store failures; every
// property of a claim or a receipt is a verdict.
func VerifyClaims(ledger *Ledger, key Key, session string, claims []string) (Report, error) {
	return verifyClaims(ledger, key, session, claims, nil)
}

// verifyClaims is VerifyClaims, shown only the receipts of only when it is
// not nil (VerifyCallerClaims).
func verifyClaims(ledger *Ledger, key Key, session string, claims []string, only *callerView) (Report, error) {
	if err := identity.ValidateSessionID(session); err != nil {
		return Report{}, fmt.Errorf("verifying claims: %w", err)
	}
	if key.IsZero() {
		return Report{}, errors.New("verifying claims: no key loaded (use LoadKey)")
	}
	sc, err := ledger.ScanSession(session)
	if err != nil {
		return Report{}, fmt.Errorf("verifying claims of session %q: %w", session, err)
	}
	cited := make(map[string]bool, len(claims))
	for _, id := range claims {
		cited[id] = true
	}
	// The session's receipts are read one at a time: the cited ones are
	// kept for their claims, the others judged as they come.
	rep := Report{Session: session, KeyID: key.ID(), Claims: make([]ClaimResult, 0, len(claims))}
	inSession := make(map[string]Entry, len(claims))
	if sc != nil {
		_ = sc.Each(func(e Entry) error {
			if only != nil && !only.owns(sc, e) {
				return nil
			}
			if cited[e.ID] {
				inSession[e.ID] = e
			} else {
				rep.Omitted = append(rep.Omitted, judge(key, session, e.ID, e.Receipt, e.Err, ""))
			}
			return nil
		})
		// A receipt an append commit added and a later commit removed:
		// the chain is the session's record, so it is judged tampered
		// here, by both views, not found through the index as valid
		// (before session 30 VerifyClaims said valid and a read
		// token's view fabricated). Every one is read, cited or not,
		// so a read token's answer takes the same time whatever it
		// cites; they are not listed as omitted.
		for _, e := range sc.Dropped() {
			if (only == nil || only.owns(sc, e)) && cited[e.ID] {
				inSession[e.ID] = e
			}
		}
	}
	for _, id := range claims {
		c, err := classifyClaim(ledger, key, session, id, inSession, only)
		if err != nil {
			return Report{}, fmt.Errorf("verifying claims of session %q: %w", session, err)
		}
		rep.Claims = append(rep.Claims, c)
	}
	return rep, nil
}

// notAnID is the detail of a claim that is not a receipt id by its form.
const notAnID = "not a receipt id (" + IDPrefix + " and 32 base32 digits)"

// classifyClaim is the verdict on the claim id. In a view (only not nil),
// an id of a receipt's form not among the view's receipts of the session
// is answered absent, without a look-up.
func classifyClaim(ledger *Ledger, key Key, session, id string, inSession map[string]Entry, only *callerView) (ClaimResult, error) {
	if !ValidID(id) {
		return ClaimResult{ID: id, Verdict: Fabricated, Detail: notAnID}, nil
	}
	if e, ok := inSession[id]; ok {
		return judge(key, session, id, e.Receipt, e.Err, ""), nil
	}
	if only != nil {
		return ClaimResult{ID: id, Verdict: Fabricated, Detail: only.absent}, nil
	}
	r, err := ledger.Get(id)
	switch {
	case errors.Is(err, ErrNotFound):
		return ClaimResult{ID: id, Verdict: Fabricated, Detail: "no receipt with this id in the store"}, nil
	case errors.Is(err, ErrCorrupt):
		return ClaimResult{ID: id, Verdict: Tampered, Detail: err.Error()}, nil
	case err != nil:
		return ClaimResult{}, err
	}
	if r.version() == BoundVersion {
		// read through the index chain: its append commit's binding
		// line is checked, as receipts show checks it
		if _, err := ledger.BindingOf(r); errors.Is(err, ErrBindingEdited) {
			return ClaimResult{ID: id, Verdict: Tampered, Detail: err.Error()}, nil
		} else if err != nil {
			return ClaimResult{}, err
		}
	}
	return judge(key, session, id, r, nil, "found in the index but not in the session chain"), nil
}

// judge classifies a stored receipt (or its read error) for session.
func judge(key Key, session, id string, r Receipt, readErr error, note string) ClaimResult {
	if readErr != nil {
		return ClaimResult{ID: id, Verdict: Tampered, Detail: readErr.Error()}
	}
	res := ClaimResult{ID: id, Receipt: &r}
	err := Verify(r, key)
	switch {
	case errors.Is(err, ErrUnknownKey):
		res.Verdict, res.Detail = UnknownKey, fmt.Sprintf("issued under key %s, not %s (rotated key?): supply that key to check it", r.KeyID, key.ID())
	case err != nil:
		res.Verdict, res.Detail = Tampered, "the stored receipt fails its MAC: it was edited after it was issued"
	case r.Session != session:
		res.Verdict, res.Detail = OtherSession, fmt.Sprintf("genuine receipt of session %q", r.Session)
	default:
		res.Verdict, res.Detail = Valid, "genuine receipt of this session"
		if note != "" {
			res.Detail += " (" + note + ")"
		}
	}
	return res
}
