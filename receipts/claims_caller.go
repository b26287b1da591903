package receipts

import (
	"encoding/json"
)

// VerifyCallerClaims is VerifyClaims for a reader shown only the receipts
// issued to caller in session (an MCP token of scope read): the session's
// chain is read once, and of its receipts only caller's are judged, for a
// claim or as omitted. Every other claim of a receipt's form (another
// caller's receipt, one of another session, one no receipt has) is
// answered fabricated with detail absent, without a look-up, so the answer
// tells neither what another caller did nor whether the id exists.
//
// A receipt is caller's when its record says so: the decoded receipt's
// caller, or, for a stored receipt that does not decode (or is stored
// under another id), the "caller" member its bytes still hold as a JSON
// object. Such a receipt of caller's is judged tampered, as VerifyClaims
// judges it; one whose caller cannot be read is no one's, and answered as
// absent. caller "" (the operator's calls over stdio) owns nothing.
func VerifyCallerClaims(ledger *Ledger, key Key, session string, claims []string, caller, absent string) (Report, error) {
	return verifyClaims(ledger, key, session, claims, &callerView{caller: caller, absent: absent})
}

// callerView is what VerifyCallerClaims shows: caller's receipts.
type callerView struct {
	caller string
	absent string // the detail of a claim outside the view
}

// owns reports whether the session's entry e is the caller's.
func (v *callerView) owns(sc *SessionScan, e Entry) bool {
	if v.caller == "" {
		return false
	}
	if e.Receipt.ID != "" {
		// decoded (its binding may still be refused: e.Err)
		return e.Receipt.Caller == v.caller
	}
	if e.Err == nil {
		return false
	}
	name, ok := looseCaller(sc, e.ID)
	return ok && name == v.caller
}

// looseCaller reads the "caller" member of the stored receipt id of the
// chain sc when it does not decode as a receipt, ignoring everything
// else; ok is false when even that fails (no blob, more than
// MaxEncodedLen bytes, not a JSON object, no caller string).
func looseCaller(sc *SessionScan, id string) (string, bool) {
	blob, ok := sc.blobs[id]
	if !ok {
		d, dropped := sc.dropped[id]
		if !dropped {
			return "", false
		}
		blob = d.blob
	}
	data, err := sc.l.store.BlobAtMost(blob, MaxEncodedLen)
	if err != nil {
		return "", false
	}
	return callerMember(data)
}

// callerMember is the string member "caller" of the JSON object data,
// named exactly so (the last, when it is named twice).
func callerMember(data []byte) (string, bool) {
	var members map[string]json.RawMessage
	if json.Unmarshal(data, &members) != nil {
		return "", false
	}
	var name string
	if json.Unmarshal(members["caller"], &name) != nil {
		return "", false
	}
	return name, true
}
