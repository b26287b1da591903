package mcpserver

// Proofs: evidence export, receipt claims and proof-of-read checks.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/internal/fspath"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/proofread"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/receipts"
)

// EvidenceOutput is an exported bundle.
type EvidenceOutput struct {
	Target       string `json:"target"`
	RunID        string `json:"run_id"`
	ManifestID   string `json:"manifest_id"`
	MerkleRoot   string `json:"merkle_root" jsonschema:"the Merkle root over the entries: the statement's subject digest"`
	Entries      int    `json:"entries"`
	WithContent  bool   `json:"with_content"`
	Bundle       string `json:"bundle" jsonschema:"the bundle file's exact bytes (JSON); save it verbatim; whoever holds the file verifies it with the command readproof evidence verify (no tool does this)"`
	BundleBytes  int    `json:"bundle_bytes"`
	BundleSHA256 string `json:"bundle_sha256" jsonschema:"sha256 of the bundle bytes"`
	// ReplayAllMatch is the bundle's replay.all_match: false when the
	// store did not give back every entry's recorded bytes at export.
	ReplayAllMatch bool `json:"replay_all_match" jsonschema:"the bundle's replay.all_match: false when the store did not give back every entry's recorded bytes; the bundle records that, and verifying it fails"`
	// Warnings are what the command says on stderr beside the bundle it
	// writes: a replay that did not match, store checks that failed
	// without refusing it, keys that could not be loaded.
	Warnings []string `json:"warnings,omitempty" jsonschema:"what the export warns of beside the bundle, as the operator's command does: a replay that did not match (replay_all_match false), a store check that failed without refusing the export, a key that could not be loaded; each is also in the text, with its hint"`
	Receipt
}

func (s *Server) evidenceExport(_ context.Context, c *call, in EvidenceInput) (*EvidenceOutput, reply, error) {
	if in.WithContent && s.opts.MaxAnswerBytes > 0 {
		// Checked on the manifest's sizes, before a byte is read: the
		// bundle carries every entry's bytes, in base64.
		m, err := c.st.Manifest(in.Target)
		if err != nil {
			return nil, reply{}, err
		}
		var n int64
		for _, e := range m.Entries {
			n += e.Bytes
		}
		if n > s.opts.MaxAnswerBytes {
			return nil, reply{}, s.overBudget(fmt.Sprintf("evidence export %s with_content: the bundle would carry %d bytes of content (%d entr%s)", in.Target, n, len(m.Entries), pluralY(len(m.Entries))),
				"export without with_content (the bundle names every entry's content hash) and take the bytes with readproof_replay windows (position, offset, max_bytes); "+
					"a bundle with content of run "+m.RunID+" is exported where the store is, by the operator (the evidence export command with --with-content)")
		}
	}
	keys, keyWarnings, err := s.exportCheckKeys(c.st, in.Target)
	if err != nil {
		return nil, reply{}, err
	}
	data, st, checks, err := c.st.ExportEvidenceChecked(in.Target, store.EvidenceOptions{WithContent: in.WithContent, ExporterVersion: s.opts.Version}, keys)
	if err != nil {
		return nil, reply{}, err
	}
	// the store checks `evidence export` makes, in its sequence: a forged
	// or damaged record refuses the bundle, a store it could not read
	// stops it, the rest is said beside it
	outcome, err := store.ExportOutcomeOf(in.Target, st, checks, keyWarnings)
	if stop := store.IsExportStopped(err); stop != nil {
		return nil, reply{}, namingFurther(stop)
	}
	if err != nil {
		return nil, reply{}, err
	}
	warnings, hints := exportWarnings(outcome, s.forClient(c.req))
	sum := sha256.Sum256(data)
	out := &EvidenceOutput{Target: in.Target, WithContent: in.WithContent, Bundle: string(data), BundleBytes: len(data), BundleSHA256: hex.EncodeToString(sum[:])}
	p := st.Predicate
	out.RunID, out.ManifestID, out.MerkleRoot, out.Entries = p.RunID, p.ManifestID, p.Merkle.Root, len(p.Entries)
	out.ReplayAllMatch, out.Warnings = p.Replay != nil && p.Replay.AllMatch, warnings
	what := "without content"
	if in.WithContent {
		what = "with content"
	}
	msg := fmt.Sprintf("Evidence bundle for run %s (manifest %s, %d entr%s, Merkle root %s), %s: %d bytes, sha256 %s. "+
		"Its exact bytes are in bundle; save them verbatim: whoever holds the file checks it with `readproof evidence verify FILE`, a command (no tool does this, and it needs no store).",
		p.RunID, p.ManifestID, len(p.Entries), pluralY(len(p.Entries)), p.Merkle.Root, what, len(data), out.BundleSHA256)
	for _, w := range warnings {
		msg += " Warning: " + w + "."
	}
	for _, h := range hints {
		msg += " Hint: " + h + "."
	}
	return out, reply{text: msg}, nil
}

// exportWarnings are outcome's warnings and hints worded for the client
// as an error is (clean, forClient: a store check's detail may name a file
// of the store, its info/grafts), the paths hidden before the warnings are
// escaped (before session 28's follow-up, after: a path after a tab or a
// no-break space was kept whole).
func exportWarnings(outcome store.ExportOutcome, clean func(string) string) (warnings, hints []string) {
	warnings, hints = outcome.AllWarningsWorded(clean), outcome.AllHints()
	for i := range hints {
		hints[i] = clean(hints[i])
	}
	return warnings, hints
}

// namingFurther is the error of an export a store check stopped (stop),
// naming the first few of the further checks that stop it too
// (stop.Further); the hint stays its error's. The command says each on a
// line of its own; the tool's one error names them (the error already
// counts them all).
func namingFurther(stop *store.ExportStopped) error {
	err, h := stop.Err, hint.Of(stop.Err)
	further := stop.Further()
	for _, f := range further[:min(len(further), 3)] {
		err = hint.With(fmt.Errorf("%w; %s", err, f), h)
	}
	return err
}

// exportCheckKeys are what the store checks of an export trust, as the
// command loads them: [signing] allowed_signers, the server's receipts key
// (else the command's: the default one), the probe key. One that is
// configured but cannot be read leaves its check
// to validity (the commit signature) or unchecked (the MACs), and is said
// in warnings, each with the check it weakens, as the command says it (not
// the file's path: the server's files are the operator's), in the order of
// the checks. The receipts key is the exception, as in the command: one
// that READPROOF_RECEIPTS_KEY or [receipts] key names and that cannot be
// loaded refuses the export of target before a bundle is made (before
// session 30's re-read the tool warned and answered a bundle whose
// receipts were never checked, which the command refuses since session
// 30); one found only at the default location warns.
func (s *Server) exportCheckKeys(st *store.Store, target string) (keys store.EvidenceCheckKeys, warnings []store.ExportKeyWarning, err error) {
	if pol, err := st.Policy(); err == nil && pol.AllowedSigners != "" {
		// read as the command reads it (allowed_signers, authorized_keys
		// or PEM), so both trust the same signers
		// (never a FIFO or a device: one open, checked and bounded)
		data, err := fspath.ReadRegular(pol.AllowedSigners, storecheck.MaxAllowedSignersBytes, "an allowed_signers file")
		if err == nil {
			_, keys.Signers, _, err = evidence.ParseTrust(data, time.Now())
		}
		if err != nil {
			keys.Signers = nil
			warnings = append(warnings, store.ExportKeyWarning{Check: store.CheckCommitSignature,
				Text: "the [signing] allowed_signers file of the server's readproof.toml cannot be read, so the manifest commit's signer was not checked against it (only that the signature is valid); the operator fixes the file"})
		}
	}
	// the key the server issues under, else the command's lookup
	// (keyloc.ReceiptsForCheck): a configured key, or the one at the
	// default location, which checks the receipts made under it
	if !s.opts.ReceiptKey.IsZero() {
		k := s.opts.ReceiptKey
		keys.ReceiptsKey = &k
	} else if pol, err := st.Policy(); err == nil {
		k, found, err := keyloc.ReceiptsForCheck(st.Path(), pol)
		if err != nil && !found {
			// not the loader's error: it names the operator's file
			return keys, nil, hint.With(fmt.Errorf("evidence export %s: the receipts key configured for this server (READPROOF_RECEIPTS_KEY or [receipts] key) cannot be loaded, so the receipts' MACs cannot be checked", target),
				"no bundle was made (an export checks the receipts' MACs with the key configured before it makes one); the operator points [receipts] key at the key that issued the receipts, readable (a new key cannot check them), then export again")
		}
		if err != nil {
			warnings = append(warnings, store.ExportKeyWarning{Check: store.CheckReceipts,
				Text: "the receipts key cannot be loaded, so the receipts' MACs were not checked; the operator fixes the key"})
		} else {
			keys.ReceiptsKey, keys.ReceiptsKeyFound = k, found
		}
	}
	var keyWarn error
	keys.ProbeKeys, _, keyWarn = proofread.CheckKeys(st)
	if keyWarn != nil {
		warnings = append(warnings, store.ExportKeyWarning{Check: store.CheckProofOfRead,
			Text: "the probe key cannot be loaded, so the proof-of-read records were not checked; the operator fixes the key"})
	}
	return keys, warnings, nil
}

// ClaimsOutput is a claims report (receipts.JSON).
type ClaimsOutput struct {
	receipts.JSON
	// OmittedMore is how many of the session's receipts that were not
	// cited the server left out of omitted (counts.omitted is all of them).
	OmittedMore int `json:"omitted_more,omitempty" jsonschema:"how many receipts of the session that were not cited are not listed in omitted: a server that bounds its answers lists at most 1,000 (the first issued); counts.omitted counts them all"`
	Receipt
}

func (s *Server) verifyClaims(_ context.Context, c *call, in ClaimsInput) (*ClaimsOutput, reply, error) {
	if s.opts.ReceiptKey.IsZero() {
		return nil, reply{}, hint.With(errors.New("tool receipts are not configured for this server"),
			"the operator sets [receipts] key in readproof.toml (a key file made with `readproof receipts key init`) and restarts the MCP server")
	}
	session := in.Session
	if session == "" {
		session = s.opts.Session
	}
	claims, err := receipts.ParseClaims([]byte(in.Claims))
	if err != nil {
		return nil, reply{}, hint.With(err, "pass the text that cites rcpt_ ids, or a JSON list of ids")
	}
	// Each claim is looked up and answered: a server that bounds its
	// answers checks a page of them per call (90,000 made-up ids in one
	// call of a read token answered 10.6 MB at 225 MB of peak RSS).
	if bound := s.pageBound(); bound > 0 && len(claims) > bound {
		return nil, reply{}, hint.With(fmt.Errorf("%d receipt ids cited: this server checks at most %d per call", len(claims), bound),
			fmt.Sprintf("check them in calls of at most %d ids each (each call's omitted list then also names the receipts the other calls cite)", bound))
	}
	var rep receipts.Report
	if name, canWrite := callerOf(c.req); canWrite {
		rep, err = receipts.VerifyClaims(c.st.Receipts(), s.opts.ReceiptKey, session, claims)
	} else {
		rep, err = ownClaims(c.st.Receipts(), s.opts.ReceiptKey, session, claims, name)
	}
	if err != nil {
		return nil, reply{}, err
	}
	j := rep.JSON()
	// The receipts not cited are the whole session's but those cited: a
	// long session's list is bounded as the cited ids are.
	more := 0
	if bound := s.pageBound(); bound > 0 && len(j.Omitted) > bound {
		more = len(j.Omitted) - bound
		j.Omitted = j.Omitted[:bound:bound]
	}
	text := fmt.Sprintf("Session %s: %d claim%s: %d valid, %d fabricated, %d tampered, %d from another session, %d under an unknown key; %d receipt%s not cited.",
		session, j.Counts.Claims, plural(j.Counts.Claims), j.Counts.Valid, j.Counts.Fabricated, j.Counts.Tampered, j.Counts.OtherSession,
		j.Counts.UnknownKey, j.Counts.Omitted, plural(j.Counts.Omitted))
	if more > 0 {
		text += fmt.Sprintf(" omitted lists the first %d of them; %d more are not listed (the operator's `readproof receipts verify-claims --session %s` lists all).", len(j.Omitted), more, session)
	}
	if j.StrictFail {
		text += " STRICT CHECK FAILS: a cited receipt is fabricated, tampered, of another session or unverifiable."
	}
	return &ClaimsOutput{JSON: j, OmittedMore: more}, reply{text: text}, nil
}

// ownClaims is the claims report a token of scope read gets: of the
// receipts issued to its caller in session, and nothing of any other
// (receipts.VerifyCallerClaims). The session's chain is read once, whole
// whatever is cited, and only its caller's receipts are judged; every
// other id of a receipt's form is answered alike, without a look-up:
// another caller's receipt (another token's, the operator's over stdio),
// one whose caller cannot be read, one of another session, one no
// receipt has. So a read token learns neither what another client called
// nor whether an id it guessed or was shown exists, from the answer's
// words or from its time: before session 29 each such id was looked up in
// the store's index, and one that existed was read, its binding walked
// and its MAC checked before it was answered as absent. Its own receipt
// that fails its MAC, does not decode (its bytes still naming its
// caller) or whose binding was edited is tampered, as the operator's
// command says (before session 30 one whose record did not read whole,
// or whose binding was edited, was answered as absent, fabricated, and
// the chain was read twice, once to find the caller's receipts and once
// to check them). The receipts not
// cited (omitted) are its caller's only. A write token sees every
// receipt, as the operator's command does.
func ownClaims(ledger *receipts.Ledger, key receipts.Key, session string, claims []string, caller string) (receipts.Report, error) {
	return receipts.VerifyCallerClaims(ledger, key, session, claims, caller, absentReceipt(session))
}

// absentReceipt is the detail a read token's claim gets when it is not
// one of its caller's receipts in session (ownClaims).
func absentReceipt(session string) string {
	return "no receipt of this token with this id in session " + session
}

// ProbeOutput is a proof-of-read report.
type ProbeOutput struct {
	Target string           `json:"target"`
	Report proofread.Report `json:"report" jsonschema:"the proof-of-read report, as readproof probe check --json prints it"`
	Receipt
}

func (s *Server) probeCheck(ctx context.Context, c *call, in ProbeInput) (*ProbeOutput, reply, error) {
	m, err := proofread.Manifest(c.st, in.Target)
	if errors.Is(err, proofread.ErrNotProbed) {
		return nil, reply{}, hint.With(err, "mount documents with readproof_run_mount and probe set to true")
	}
	if err != nil {
		return nil, reply{}, err
	}
	if len(in.Answer) > proofread.MaxAnswerBytes {
		return nil, reply{}, hint.With(proofread.ErrAnswerTooLarge, "pass only the agent's answer")
	}
	keys, _, err := proofread.LoadKeys("", c.st)
	if err != nil {
		return nil, reply{}, err
	}
	rec, err := proofread.Check(ctx, c.st, m, []byte(in.Answer), proofread.CheckOptions{Keys: keys})
	if err != nil {
		return nil, reply{}, err
	}
	rep := proofread.Report{Commit: rec.ID, VerdictRecord: rec}
	return &ProbeOutput{Target: in.Target, Report: rep}, reply{text: probeSummary(in.Target, rec)}, nil
}

// probeSummary lists the verdict of each probed entry.
func probeSummary(target string, rec *store.VerdictRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Proof-of-read check of %s:", target)
	for _, e := range rec.Entries {
		fmt.Fprintf(&b, " [%d] %s %s;", e.Position, e.URI, e.Verdict)
	}
	if len(rec.Entries) == 0 {
		b.WriteString(" no verdicts;")
	}
	return strings.TrimSuffix(b.String(), ";") + ". Details are in report."
}
