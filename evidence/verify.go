package evidence

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/readproof/readproof/internal/text"
)

// VerifyOptions says what Verify checks besides the bundle itself.
type VerifyOptions struct {
	// Offline skips the store check; otherwise Store is required.
	Offline bool
	// Store replays the manifest now, from the store's own objects.
	Store Replayer
	// TrustedKeys are the public keys a DSSE envelope may be signed by.
	TrustedKeys []ed25519.PublicKey
	// RequireSignature fails a plain (unsigned) statement.
	RequireSignature bool
}

// Check is one named verification step.
type Check struct {
	Name   string
	OK     bool
	Detail string
	// Kind tells apart the failures of one name that call for different
	// remedies (KindNotReproduced); "" for the rest. A caller matches
	// it, never Detail's words, which may quote the bundle's text.
	Kind string
	// Err is the error a failed check reports, when it reports one
	// (store_replay_count and store_replay[i]: the store's), for
	// errors.Is.
	Err error
}

// KindNotReproduced is the Kind of a failed recorded_replay whose bundle
// records, consistently, that the store did not reproduce the recorded
// bytes when it was exported: a damaged store, not an edit.
const KindNotReproduced = "not_reproduced"

// Report is the outcome of Verify: every check run, passing and failing, in
// order, plus the figures the one-line summary quotes.
type Report struct {
	Checks []Check

	ManifestID string
	RunID      string
	// Entries is the number of listed entries; Root the root recomputed
	// from them (hex, "" when it could not be computed).
	Entries int
	Root    string
	// ContentChecked counts entries with embedded content, ContentOK those
	// whose bytes re-hash to the recorded hash.
	ContentChecked, ContentOK int
	// StoreChecked is false with Offline; StoreOK counts entries the store
	// replays to the recorded hash.
	StoreChecked bool
	StoreOK      int
	// Signed is true for a DSSE envelope; Signer is the fingerprint of the
	// trusted key whose signature verified.
	Signed bool
	Signer string
	// Statement is the parsed statement (nil when it did not parse) and
	// Payload its exact bytes (the envelope payload for a signed bundle).
	// The text of the entries' content_b64 is not copied out of Payload:
	// their ContentB64 may be empty, and Marshal(Statement) still writes
	// it.
	Statement *Statement
	Payload   []byte
}

// OK reports whether at least one check ran and none failed.
func (r Report) OK() bool {
	if len(r.Checks) == 0 {
		return false
	}
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// Failed returns the failing checks.
func (r Report) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

// Err returns nil for a passing report and otherwise an error wrapping
// ErrVerification: "evidence verification failed: 1 of 11 checks failed".
func (r Report) Err() error {
	if r.OK() {
		return nil
	}
	failed := len(r.Failed())
	if len(r.Checks) == 0 {
		return fmt.Errorf("%w: no checks ran", ErrVerification)
	}
	return fmt.Errorf("%w: %d of %d checks failed", ErrVerification, failed, len(r.Checks))
}

// Summary is the one line printed on success, for example
// "evidence verified: 1 entry, merkle root a9b73469f1a6…, embedded content
// 1/1 re-hashed, replay match 1/1".
func (r Report) Summary() string {
	var b strings.Builder
	b.WriteString("evidence verified: ")
	b.WriteString(text.Count(r.Entries, "entry", "entries"))
	root := r.Root
	if len(root) > 12 {
		root = root[:12] + "…"
	}
	fmt.Fprintf(&b, ", merkle root %s", root)
	if r.ContentChecked > 0 {
		fmt.Fprintf(&b, ", embedded content %d/%d re-hashed", r.ContentOK, r.Entries)
	}
	if r.StoreChecked {
		fmt.Fprintf(&b, ", replay match %d/%d", r.StoreOK, r.Entries)
	} else {
		b.WriteString(", store replay skipped (offline)")
	}
	if r.Signed && r.Signer != "" {
		fmt.Fprintf(&b, ", signed by %s", r.Signer)
	}
	return b.String()
}

// Listing prints every check, one a line: "ok   name detail" or
// "FAIL name detail".
func (r Report) Listing() string {
	var b strings.Builder
	for _, c := range r.Checks {
		status := "ok"
		if !c.OK {
			status = "FAIL"
		}
		line := fmt.Sprintf("%-4s %s", status, c.Name)
		if c.Detail != "" {
			line += " " + c.Detail
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func (r *Report) add(name string, ok bool, format string, args ...any) bool {
	detail := format
	if len(args) > 0 {
		detail = fmt.Sprintf(format, args...)
	}
	r.Checks = append(r.Checks, Check{Name: name, OK: ok, Detail: detail})
	return ok
}

// document decodes either a statement or a DSSE envelope in one pass.
type document struct {
	Statement
	rawEnvelope
}

// isHex64 reports whether s is 64 lower-case hex digits.
func isHex64(s string) bool {
	return len(s) == 64 && isLowerHex(s)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Verify checks a bundle: a plain statement or a DSSE envelope around one.
// It recomputes every leaf and the root from the listed entries (never trusts
// a recorded root), checks positions 0..n-1 and the entry count, re-hashes
// embedded content, verifies envelope signatures over the exact payload bytes
// before parsing them, and unless Offline, asks the store to replay the
// manifest. Problems with the bundle are failing checks in the Report; the
// error is only for a verification that could not run (ErrNoStore).
//
// Check names: signature and payload_type (envelopes, or RequireSignature),
// parse, statement_type, predicate_type, subject, merkle_root,
// predicate_merkle_root, entry_order, entry_count, git_commit (when the
// predicate has git), recorded_replay (when it has replay), content[i] (each
// entry with embedded content), store_replay[i] and store_replay_count.
func Verify(data []byte, opts VerifyOptions) (Report, error) {
	var r Report
	if !opts.Offline && opts.Store == nil {
		return r, fmt.Errorf("%w: the store check needs a store: point verify at a store or verify offline", ErrNoStore)
	}
	// Content checks and the store replay start while the bundle is still
	// being decoded (early); every goroutine they use has ended when
	// Verify returns.
	var store Replayer
	if !opts.Offline {
		store = opts.Store
	}
	x := newEarly(store)
	defer func() { x.wait() }() // x is replaced for an envelope's payload
	var doc document
	if !decodeDocument(data, &doc, true, x) {
		// outside the fast decoder's subset: encoding/json decides
		doc = document{}
		if err := json.Unmarshal(data, &doc); err != nil {
			r.add("parse", false, "bundle is not a JSON statement or DSSE envelope: %v", err)
			return r, nil
		}
		if err := ambiguousMember(data, reflect.TypeFor[document]()); err != nil {
			r.add("parse", false, "bundle is ambiguous: %v", err)
			return r, nil
		}
	}
	st := &doc.Statement
	r.Payload = data
	if doc.rawEnvelope.present() {
		// (a statement member beside the envelope would show an auditor's
		// jq a predicate that no signature covers)
		if doc.Statement.Type != "" || doc.Statement.PredicateType != "" || doc.Statement.Subject != nil ||
			!reflect.ValueOf(doc.Statement.Predicate).IsZero() {
			r.add("parse", false, "document mixes statement and envelope fields")
			return r, nil
		}
		r.Signed = true
		opened, err := doc.rawEnvelope.open(opts.TrustedKeys)
		if err != nil {
			r.add("signature", false, "%v", err)
			return r, nil
		}
		r.add("payload_type", opened.PayloadType == PayloadType, "%q", opened.PayloadType)
		if opened.SigErr != nil {
			r.add("signature", false, "%v", opened.SigErr)
		} else {
			r.Signer = opened.Signer
			r.add("signature", true, "ed25519 %s", opened.Signer)
		}
		r.Payload = opened.Payload
		st = &Statement{}
		x.wait()
		x = newEarly(store)
		if !decodeStatement(opened.Payload, st, x) {
			*st = Statement{}
			if err := json.Unmarshal(opened.Payload, st); err != nil {
				r.add("parse", false, "envelope payload is not a JSON statement: %v", err)
				return r, nil
			}
			if err := ambiguousMember(opened.Payload, reflect.TypeFor[Statement]()); err != nil {
				r.add("parse", false, "envelope payload is ambiguous: %v", err)
				return r, nil
			}
		}
	} else if opts.RequireSignature {
		r.add("signature", false, "bundle is a plain statement, not a signed DSSE envelope: export it signed")
	}
	r.Statement = st
	verifyStatement(&r, st, opts, x)
	return r, nil
}

// verifyStatement runs the checks of a decoded statement; x, when not nil,
// holds work started while decoding it.
func verifyStatement(r *Report, st *Statement, opts VerifyOptions, x *early) {
	if x == nil {
		x = newEarly(nil)
	}
	p := &st.Predicate
	entries := p.Entries
	n := len(entries)
	r.ManifestID, r.RunID, r.Entries = p.ManifestID, p.RunID, n

	r.add("statement_type", st.Type == StatementType, "%q", st.Type)
	r.add("predicate_type", st.PredicateType == PredicateType, "%q", st.PredicateType)

	subjectRoot := "" // the one subject's digest, whatever its name: merkle_root compares it
	if len(st.Subject) == 1 {
		subjectRoot = st.Subject[0].Digest["sha256"]
	}
	switch {
	case len(st.Subject) != 1:
		r.add("subject", false, "statement has %d subjects, want exactly 1", len(st.Subject))
	case st.Subject[0].Name == "" || st.Subject[0].Name != p.ManifestID:
		r.add("subject", false, "subject name %q is not the predicate's manifest_id %q", st.Subject[0].Name, p.ManifestID)
	case !isHex64(st.Subject[0].Digest["sha256"]):
		r.add("subject", false, "%s: sha256 digest %q is not 64 lower-case hex digits", st.Subject[0].Name, st.Subject[0].Digest["sha256"])
	case len(st.Subject[0].Digest) != 1:
		// in-toto tools match a subject to an artifact by any digest they
		// share: another algorithm's digest, which nothing here checks,
		// would tie this verified statement to a file it does not describe
		r.add("subject", false, "%s: digest holds %s besides sha256: the format's subject has the Merkle root alone, and no check covers another digest", text.Printable(st.Subject[0].Name), otherDigests(st.Subject[0].Digest))
	default:
		r.add("subject", true, "%s sha256 %s", text.Printable(st.Subject[0].Name), abbrevRoot(subjectRoot))
	}

	leaves, lerr := entryLeaves(entries)
	if lerr != nil {
		r.add("merkle_root", false, "cannot recompute the leaves: %v", lerr)
		r.add("predicate_merkle_root", false, "cannot recompute the leaves: %v", lerr)
	} else {
		root := Root(leaves)
		r.Root = hex.EncodeToString(root[:])
		if subjectRoot == r.Root {
			r.add("merkle_root", true, "%s (%s)", abbrevRoot(r.Root), text.Count(n, "entry", "entries"))
		} else {
			r.add("merkle_root", false, "the %s hash to %s, the subject records %s", text.Count(n, "listed entry", "listed entries"), abbrevRoot(r.Root), abbrevRoot(subjectRoot))
		}
		switch {
		case p.Merkle.Algorithm != MerkleAlgorithm:
			r.add("predicate_merkle_root", false, "merkle.algorithm %q, want %q", p.Merkle.Algorithm, MerkleAlgorithm)
		case p.Merkle.Leaf != MerkleLeafRule:
			r.add("predicate_merkle_root", false, "merkle.leaf %q is not the rule this verifier implements", p.Merkle.Leaf)
		case p.Merkle.Root != r.Root:
			r.add("predicate_merkle_root", false, "merkle.root %s, the listed entries hash to %s", abbrevRoot(p.Merkle.Root), abbrevRoot(r.Root))
		default:
			r.add("predicate_merkle_root", true, "%s", abbrevRoot(p.Merkle.Root))
		}
	}

	orderOK, orderDetail := true, fmt.Sprintf("positions 0..%d in order", n-1)
	if n == 0 {
		orderDetail = "no entries"
	}
	for i, e := range entries {
		switch {
		case e.Position != i:
			orderOK, orderDetail = false, fmt.Sprintf("entry %d has position %d, want %d: entries were reordered, removed or duplicated", i, e.Position, i)
		case e.URI == "":
			orderOK, orderDetail = false, fmt.Sprintf("entry %d has no uri", i)
		case !isContentHash(e.ContentHash):
			orderOK, orderDetail = false, fmt.Sprintf("entry %d (%s): content_hash %q is not sha256:<64 lower-case hex>", i, text.Printable(e.URI), e.ContentHash)
		}
		if !orderOK {
			break
		}
	}
	r.add("entry_order", orderOK, "%s", orderDetail)

	countOK := true
	var compared []string
	if p.Merkle.LeafCount != nil {
		compared = append(compared, "merkle.leaf_count "+strconv.Itoa(*p.Merkle.LeafCount))
		countOK = countOK && *p.Merkle.LeafCount == n
	}
	if p.Replay != nil && p.Replay.Error == "" {
		compared = append(compared, "replay entries "+strconv.Itoa(len(p.Replay.Entries)))
		countOK = countOK && len(p.Replay.Entries) == n
	}
	if len(compared) == 0 {
		r.add("entry_count", true, "%s (no recorded count to compare)", text.Count(n, "entry", "entries"))
	} else {
		r.add("entry_count", countOK, "%s listed; %s", text.Count(n, "entry", "entries"), strings.Join(compared, ", "))
	}

	if p.Git != nil {
		if p.Git.ManifestCommit == p.ManifestID {
			r.add("git_commit", true, "manifest commit %s", text.Printable(p.Git.ManifestCommit))
		} else {
			r.add("git_commit", false, "git.manifest_commit %q is not the manifest_id %q", p.Git.ManifestCommit, p.ManifestID)
		}
	}
	if p.Replay != nil {
		checkRecordedReplay(r, p.Replay, entries)
	}

	for _, c := range x.contents(entries) {
		r.ContentChecked++
		if c.OK {
			r.ContentOK++
		}
		r.Checks = append(r.Checks, c)
	}

	if opts.Offline {
		return
	}
	r.StoreChecked = true
	replayed, err := x.replayHashes(opts.Store, p.ManifestID)
	if err != nil {
		r.add("store_replay_count", false, "the store cannot replay manifest %q: %v", p.ManifestID, err)
		r.Checks[len(r.Checks)-1].Err = err
		return
	}
	byPos := make(map[int]ReplayEntry, len(replayed))
	dupes := 0
	for _, re := range replayed {
		if _, dup := byPos[re.Position]; dup {
			dupes++
			continue
		}
		byPos[re.Position] = re
	}
	for i, e := range entries {
		name := "store_replay[" + strconv.Itoa(i) + "]"
		re, ok := byPos[e.Position]
		switch {
		case !ok:
			r.add(name, false, "%s: the store's manifest has no entry at position %d", text.Printable(e.URI), e.Position)
		case re.Err != nil:
			r.add(name, false, "%s: the store cannot reconstruct it: %v", text.Printable(e.URI), re.Err)
			r.Checks[len(r.Checks)-1].Err = re.Err
		case re.URI != e.URI:
			r.add(name, false, "%s: the store's entry at position %d is %s", text.Printable(e.URI), e.Position, text.Printable(re.URI))
		case re.ContentHash != e.ContentHash:
			r.add(name, false, "%s: the store replays %s, the bundle records %s", text.Printable(e.URI), abbrevHash(re.ContentHash), abbrevHash(e.ContentHash))
		default:
			r.StoreOK++
			r.add(name, true, "%s: %s", text.Printable(e.URI), abbrevHash(re.ContentHash))
		}
	}
	if dupes > 0 {
		r.add("store_replay_count", false, "the store returned %d duplicate positions", dupes)
	} else {
		r.add("store_replay_count", len(replayed) == n, "the store replays %s, the bundle lists %d", text.Count(len(replayed), "entry", "entries"), n)
	}
}

func checkRecordedReplay(r *Report, rp *BundleReplay, entries []BundleEntry) {
	const name = "recorded_replay"
	if rp.Error != "" {
		r.add(name, false, "the exporter could not replay the manifest: %s", rp.Error)
		return
	}
	if len(rp.Entries) != len(entries) {
		r.add(name, false, "replay lists %d entries, the bundle %d", len(rp.Entries), len(entries))
		return
	}
	matched := 0
	for i, re := range rp.Entries {
		switch {
		case re.Position != i:
			r.add(name, false, "replay entry %d has position %d", i, re.Position)
			return
		case re.ExpectedHash != entries[i].ContentHash:
			r.add(name, false, "replay entry %d expected %s, the entry records %s", i, abbrevHash(re.ExpectedHash), abbrevHash(entries[i].ContentHash))
			return
		case re.Match && re.ActualHash == re.ExpectedHash:
			matched++
		}
	}
	if matched != len(entries) || !rp.AllMatch {
		r.add(name, false, "replay at export matched %d/%d (all_match %v): the store did not reproduce the recorded bytes when the bundle was written", matched, len(entries), rp.AllMatch)
		r.Checks[len(r.Checks)-1].Kind = KindNotReproduced
		return
	}
	r.add(name, true, "export-time replay matched %d/%d at %s", matched, len(entries), text.Printable(rp.VerifiedAt))
}

// otherDigests names the algorithms of digest other than sha256, sorted
// and quoted: "\"sha512\"".
func otherDigests(digest map[string]string) string {
	var names []string
	for name := range digest {
		if name != "sha256" {
			names = append(names, strconv.Quote(text.Shorten(name, 40)))
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// abbrevRoot shortens a hex root to 8…4 characters; anything else is quoted.
func abbrevRoot(h string) string {
	if isHex64(h) {
		return h[:8] + "…" + h[60:]
	}
	return strconv.Quote(h)
}

// abbrevHash shortens "sha256:<hex>" to "sha256:<6 hex>…".
func abbrevHash(h string) string {
	if isContentHash(h) {
		return h[:13] + "…"
	}
	if h == "" {
		return `""`
	}
	return strconv.Quote(h)
}
