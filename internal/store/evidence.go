package store

// Evidence on the store: building an evidence.Input from a manifest commit,
// replaying a manifest for evidence.Verify, the store-side checks that only a
// store can run (the manifest as stored, its commit signature, the run's
// receipts and proof-of-read verdicts), and the manifest-commit signature
// check that `readproof verify-commit` and the store-wide verify call.

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hiddeco/sshsig"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/strictjson"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
	"github.com/readproof/readproof/receipts"
)

// Names of the checks VerifyEvidence adds to those of evidence.Verify.
const (
	// CheckStoreManifest: the bundle's run, creation time, git facts and
	// per-entry descriptive fields agree with the manifest as stored.
	CheckStoreManifest = "store_manifest"
	// CheckCommitSignature: the manifest commit's SSH signature verifies
	// (and, given allowed signers, its key is trusted at the commit time).
	CheckCommitSignature = "git_commit_signature"
	// CheckReceipts: the bundle's receipt summary matches the run's
	// receipts in the store (and their MACs, given the receipts key).
	CheckReceipts = "receipts"
	// CheckProofOfRead: the bundle's proof-of-read verdicts are a verdict
	// record the store holds for the run.
	CheckProofOfRead = "proof_of_read"
	// CheckStoreReplace: the store has no refs/replace/ ref and no
	// info/grafts, which make stock git (git show, git diff, git
	// verify-commit) read other records than readproof checked. Added only
	// when it fails.
	CheckStoreReplace = "store_replace"
)

// ErrReplaced: a refs/replace/ ref makes stock git read another object in
// place of a manifest commit readproof checked (VerifyManifestSignature).
var ErrReplaced = errors.New("replaced for stock git")

// EvidenceOptions shape an export.
type EvidenceOptions struct {
	// WithContent embeds the delivered bytes (content_b64).
	WithContent bool
	// ExporterVersion is predicate.exporter.version ("" means "devel").
	ExporterVersion string
	// StoreHint is recorded as git.store; "" leaves it out (a local path
	// says more about the exporter's machine than an auditor needs).
	StoreHint string
	// Context, when set, stops the export with its error when it ends.
	Context context.Context
	// Progress, when set, hears each replayed entry as (done, total).
	Progress func(done, total int)
}

// EvidenceVerifyOptions shape VerifyEvidence.
type EvidenceVerifyOptions struct {
	// TrustedKeys may sign a DSSE envelope.
	TrustedKeys []ed25519.PublicKey
	// Signers vouch for manifest commit signatures. Without them a signed
	// manifest commit is checked for validity only, and the check says so.
	Signers evidence.AllowedSigners
	// RequireSignature fails a bundle that is not a signed envelope.
	RequireSignature bool
	// ReceiptsKey, when set, also checks every receipt's MAC.
	ReceiptsKey *receipts.Key
	// ReceiptsKeyFound says ReceiptsKey was not configured but found at
	// the default location (EvidenceCheckKeys.ReceiptsKeyFound).
	ReceiptsKeyFound bool
	// ProbeKeys, when set, also checks the MAC of the verdict record the
	// bundle carries (docs/PROBE_PROTOCOL.md §10.6).
	ProbeKeys *probe.Keys
	// Context, when set, stops the store replay with its error when it
	// ends; Progress, when set, hears each replayed entry.
	Context  context.Context
	Progress func(done, total int)
}

// ctxReplayer is the store as an evidence.Replayer whose replay stops when
// ctx ends and reports progress. It keeps the manifest it replayed, for
// the store checks that follow.
type ctxReplayer struct {
	s        *Store
	ctx      context.Context
	progress func(done, total int)
	manifest *manifest.Manifest
	sum      string // SHA-256 (hex) of manifest's manifest.json
}

func (r *ctxReplayer) ReplayHashes(manifestID string) ([]evidence.ReplayEntry, error) {
	return r.s.replayHashes(r.ctx, manifestID, r.progress, r)
}

func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// ManifestSignature is a verified manifest commit signature.
type ManifestSignature struct {
	ManifestID string `json:"manifest_id"`
	RunID      string `json:"run_id"`
	// Principal is the allowed_signers principal that vouched for the key.
	Principal   string    `json:"principal"`
	Fingerprint string    `json:"fingerprint"`
	CommittedAt time.Time `json:"committed_at"`
}

// evidenceVerdicts is the proof_of_read addition: the verdict record of the
// run and the verdict commit it was read from.
type evidenceVerdicts struct {
	VerdictsCommit string `json:"verdicts_commit"`
	*VerdictRecord
}

// ReplayHashes implements evidence.Replayer: it replays the manifest commit
// manifestID (40 hex; a run id is refused, since a bundle names its
// manifest) from the store's own objects with Replay and returns each
// entry's URI and the hash of the bytes the store gave back.
func (s *Store) ReplayHashes(manifestID string) ([]evidence.ReplayEntry, error) {
	return s.replayHashes(context.Background(), manifestID, nil, nil)
}

// replayHashes is ReplayHashes; it keeps the manifest it read, and the hash
// of its manifest.json, in keep when keep is not nil.
func (s *Store) replayHashes(ctx context.Context, manifestID string, progress func(done, total int), keep *ctxReplayer) ([]evidence.ReplayEntry, error) {
	if !identity.IsObjectID(manifestID) {
		return nil, fmt.Errorf("manifest id %q is not a 40-hex manifest commit id", manifestID)
	}
	m, sum, err := s.manifestWithSum(manifestID)
	if err != nil {
		return nil, err
	}
	if keep != nil {
		keep.manifest, keep.sum = m, sum
	}
	res, err := s.replayManifest(ctx, m, progress, keepNone)
	if res == nil {
		return nil, err
	}
	out := make([]evidence.ReplayEntry, len(res.Entries))
	for i, e := range res.Entries {
		out[i] = evidence.ReplayEntry{Position: e.Position, URI: e.URI, ContentHash: e.Actual}
		if e.Error != "" {
			out[i].Err = e.Err
			if out[i].Err == nil {
				out[i].Err = errors.New(e.Error)
			}
			out[i].ContentHash = ""
		}
	}
	return out, nil
}

// manifestWithSum is Manifest(target) that also returns the SHA-256 (hex)
// of the manifest.json bytes it decoded, for the callers that record or
// check that hash (git.manifest_sha256) without reading the blob again. Its
// errors are Manifest's (TestManifestWithSum).
func (s *Store) manifestWithSum(target string) (*manifest.Manifest, string, error) {
	id, err := s.ManifestID(target)
	if err != nil {
		return nil, "", err
	}
	m, data, err := s.manifestData(id)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(data)
	return m, hex.EncodeToString(sum[:]), nil
}

// EvidenceInput gathers everything evidence.Build needs for a run or
// manifest: the entries with their provenance (and bytes, WithContent), the
// redacted resource definitions in force, an export-time replay, the git
// facts of the manifest commit, and the run's proof-of-read verdicts and
// receipt summary when the store holds any.
func (s *Store) EvidenceInput(target string, opts EvidenceOptions) (*evidence.Input, error) {
	in, _, _, err := s.evidenceInput(target, opts)
	return in, err
}

// evidenceInput is EvidenceInput that also returns the manifest it read
// and the SHA-256 (hex) of its manifest.json, for the store checks of an
// export (ExportEvidenceChecked).
func (s *Store) evidenceInput(target string, opts EvidenceOptions) (_ *evidence.Input, _ *manifest.Manifest, _ string, err error) {
	defer func() {
		// a read the store refused anywhere (the manifest, a resource,
		// a receipt) learnt nothing of the record: the export stops as
		// its replay's does (exit 4), not as a failure of the record
		if err != nil && CouldNotRead(err) && !errors.Is(err, ErrCouldNotRead) {
			err = hint.With(fmt.Errorf("evidence export %s: %w: %w", text.Escape(target), ErrCouldNotRead, err), couldNotReadExportHint(err))
		}
	}()
	m, sum, err := s.manifestWithSum(target)
	if err != nil {
		return nil, nil, "", err
	}
	now := s.now()
	in := &evidence.Input{
		RunID:             m.RunID,
		ManifestID:        m.ID,
		ManifestCreatedAt: m.CreatedAt,
		GeneratedAt:       now,
		ExporterVersion:   opts.ExporterVersion,
		WithContent:       opts.WithContent,
		Entries:           make([]evidence.Entry, len(m.Entries)),
	}

	// The resource definitions, git facts, verdicts and receipts are read
	// while the manifest replays; the store is safe for concurrent readers.
	type extras struct {
		resources []evidence.Resource
		git       *evidence.GitInfo
		verdicts  json.RawMessage
		receipts  *receipts.SummaryBuilder // the manifest's receipts, summarised as read
		bad       []UnreadableReceipt
		err       error
	}
	done := make(chan extras, 1)
	go func() {
		var x extras
		if x.resources, x.err = s.evidenceResources(m); x.err == nil {
			if x.git, x.err = s.evidenceGit(m, opts.StoreHint, sum); x.err == nil {
				if x.verdicts, x.err = s.evidenceVerdicts(m); x.err == nil {
					x.receipts = receipts.NewSummaryBuilder()
					x.bad, x.err = s.eachReceiptOf(m.RunID, m, func(r receipts.Receipt) error {
						x.receipts.Add(r)
						return nil
					})
				}
			}
		}
		done <- x
	}()

	ctx := orBackground(opts.Context)
	// The replay's bytes are kept only for the content the bundle carries;
	// without it each blob is dropped once hashed.
	keep := keepNone
	if opts.WithContent {
		keep = keepAll
	}
	replay, rerr := s.replayManifest(ctx, m, opts.Progress, keep)
	if err := ctx.Err(); err != nil {
		<-done
		return nil, nil, "", err
	}
	// A replay the store would not let read (a permission, an I/O error)
	// learnt nothing of the record: the bundle would record this
	// machine's failure as the store's (replay.all_match false), so the
	// export stops, as when a store check could not read (exit 4).
	if what, err := replayUnread(replay, rerr); err != nil {
		<-done
		return nil, nil, "", &ExportReplayUnread{RunID: m.RunID, ManifestID: m.ID,
			Err: hint.With(fmt.Errorf("evidence export %s: %w: run %s, manifest %s, %s: %w", text.Escape(target), ErrCouldNotRead, NamedRunPhrase(target, m.RunID), m.ID, what, err), couldNotReadExportHint(err))}
	}
	in.Replay = &evidence.ReplayResult{VerifiedAt: now}
	if replay == nil {
		in.Replay.Err = rerr
	} else {
		for _, e := range replay.Entries {
			re := evidence.ReplayEntry{Position: e.Position, URI: e.URI, ContentHash: e.Actual}
			if e.Error != "" {
				re.Err, re.ContentHash = errors.New(e.Error), ""
			}
			in.Replay.Entries = append(in.Replay.Entries, re)
		}
	}

	for i, e := range m.Entries {
		if err := ctx.Err(); err != nil {
			<-done
			return nil, nil, "", err
		}
		en := evidence.Entry{
			Position: e.Position, URI: e.URI, Ref: e.Ref, SnapshotID: e.Snapshot, ContentHash: e.ContentHash,
			SourceRevision: e.SourceRevision, ObservedAt: e.ObservedAt, ContentType: e.ContentType,
			Bytes: e.Bytes, Provenance: e.Provenance,
		}
		if opts.WithContent {
			if replay != nil && i < len(replay.Entries) && replay.Entries[i].Content != nil {
				en.Content = replay.Entries[i].Content
				// the replay hashed these very bytes and found the
				// recorded hash: Build need not hash them again
				en.ContentVerified = replay.Entries[i].Match && replay.Entries[i].Actual == e.ContentHash
			} else if en.Content, err = s.Content(e.Snapshot); err != nil {
				<-done
				return nil, nil, "", hint.With(fmt.Errorf("manifest %s entry %d (%s): snapshot %s: %w", m.ID, i, e.URI, e.Snapshot, err),
					"the store lost the bytes; export without --with-content to record what it still proves, and run the store check")
			}
			if en.Content == nil {
				en.Content = []byte{}
			}
		}
		in.Entries[i] = en
	}

	x := <-done
	if x.err != nil {
		return nil, nil, "", x.err
	}
	in.Resources, in.Git, in.ProofOfRead = x.resources, x.git, x.verdicts
	// A receipt that cannot be read is left out of the summary, which is
	// then present even if empty, so that evidence verify names it.
	if x.receipts.Len() > 0 || len(x.bad) > 0 {
		if in.Receipts, err = json.Marshal(x.receipts.Summary()); err != nil {
			return nil, nil, "", err
		}
	}
	return in, m, sum, nil
}

// ExportEvidence builds and encodes the evidence statement of a run or
// manifest: the exact bytes to write or sign, and the statement without
// its entries' content_b64 (evidence.Export).
func (s *Store) ExportEvidence(target string, opts EvidenceOptions) ([]byte, *evidence.Statement, error) {
	in, err := s.EvidenceInput(target, opts)
	if err != nil {
		return nil, nil, err
	}
	return evidence.Export(*in)
}

// EvidenceCheckKeys are what the store checks of a manifest trust: the
// allowed signers of its commit signature (nil: checked for validity
// only), the receipts key for the receipts' MACs and the probe key for the
// verdict record's (nil: not checked).
type EvidenceCheckKeys struct {
	Signers     evidence.AllowedSigners
	ReceiptsKey *receipts.Key
	// ReceiptsKeyFound says ReceiptsKey is the key at the default location,
	// which no setting named: the receipts made under it are checked and
	// fail when their MAC does not verify, and those under another key
	// (an auditor's own key is not the issuer's) are left unchecked, as
	// the check's detail says. A key named by a setting fails them.
	ReceiptsKeyFound bool
	ProbeKeys        *probe.Keys
}

// Names and kinds that only an export's store checks report
// (ExportEvidenceChecked).
const (
	// CheckJournal: the journal (refs/heads/main) records the manifest.
	// Added only when it does not.
	CheckJournal = "journal"
	// KindUnreadableReceipt is the Kind of a failed receipts check that
	// names a stored receipt of the manifest that cannot be read (damage),
	// not one whose MAC or summary disagrees or whose append commit's
	// binding line was edited (receipts.ErrTampered).
	KindUnreadableReceipt = "unreadable_receipt"
	// KindBindingEdited is the Kind of a failed receipts check that names
	// a version 2 receipt of the manifest whose append commit carries
	// another binding line than its MAC covers (receipts.ErrBindingEdited):
	// an edit of the store, not damage.
	KindBindingEdited = "binding_edited"
)

// ExportEvidenceChecked is ExportEvidence that also runs, on the statement
// it built, the store checks `evidence verify` against this store makes of
// it (storeChecks: store_manifest, store_replace, git_commit_signature,
// receipts, proof_of_read with keys, journal), with the one fact only the
// export knows: a run id target whose ref names a manifest recorded under
// another id must have been renamed to it by the journal (store_manifest).
// checks lists every check run, passing or failing; the caller decides
// what a failure stops.
func (s *Store) ExportEvidenceChecked(target string, opts EvidenceOptions, keys EvidenceCheckKeys) ([]byte, *evidence.Statement, []evidence.Check, error) {
	in, m, sum, err := s.evidenceInput(target, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	data, st, err := evidence.Export(*in)
	if err != nil {
		return nil, nil, nil, err
	}
	named := ""
	if !identity.IsObjectID(target) {
		named = target
	}
	return data, st, s.storeChecks(&st.Predicate, m, sum, keys, named), nil
}

// ExportRefuses reports whether a failed store check of an export refuses
// it (nothing is written) rather than being said as a warning beside the
// bundle (docs/evidence.md, "What export checks before it writes"). It
// warns for a replace ref, graft or commondir (the bundle records the
// objects as stored, truly; stock git on that store shows other ones), a
// manifest the journal does not reach (what a stopped writer leaves too)
// and a receipt that cannot be read (damage, which the receipt summary
// leaves out and verify names); every other failure is a record readproof
// did not write or cannot vouch for, and refuses: a version 2 receipt's
// edited binding line (KindBindingEdited) among them.
func ExportRefuses(c evidence.Check) bool {
	switch {
	case c.OK, c.Kind == KindCouldNotRead:
		// a read the store refused says nothing of the record:
		// ExportCouldNotRead
		return false
	case c.Name == CheckStoreReplace, c.Name == CheckJournal:
		return false
	case c.Name == CheckReceipts:
		return c.Kind != KindUnreadableReceipt
	}
	return true
}

// NamedRun is the run a command was given (target, when it is a run id)
// and the run id the manifest it names was recorded under, when that is
// another ("" otherwise), both escaped for a message: a run renamed by
// `conflicts rename` keeps its manifest, which records the old id
// (docs/sync.md); an evidence bundle keeps the recorded id too
// (predicate.run_id, docs/evidence.md).
func NamedRun(target, recordedID string) (name, recorded string) {
	if target == recordedID || identity.IsObjectID(target) || identity.ValidateRunID(target) != nil {
		return text.Escape(recordedID), ""
	}
	return text.Escape(target), text.Escape(recordedID)
}

// NamedRunPhrase is NamedRun in one phrase: "r1-bob (recorded as r1)".
func NamedRunPhrase(target, recordedID string) string {
	name, recorded := NamedRun(target, recordedID)
	if recorded != "" {
		return name + " (recorded as " + recorded + ")"
	}
	return name
}

// ExportRefusal is the error that refuses the export of target (run: the
// run as a message names it; manifestID: the manifest exported) when checks (ExportEvidenceChecked's) hold a
// failure that ExportRefuses: the first such failure, with a hint; more
// are the others, for the caller to say. nil when none refuses.
func ExportRefusal(target, run, manifestID string, checks []evidence.Check) (more []evidence.Check, err error) {
	c, more, also := firstFailure(checks, ExportRefuses)
	if c == nil {
		return nil, nil
	}
	h := "nothing was written: the store holds a record of the run that readproof did not write or cannot vouch for; `readproof verify` names every forged or damaged object: restore the run from a clone (readproof pull) or a backup, then export again"
	switch c.Name {
	case CheckCommitSignature:
		h = "nothing was written: the manifest commit's signature does not vouch for it (`readproof verify-commit " + text.ShellArg(target) + "` shows why): a commit changed after signing is not the one signed, restore it from a clone or a backup; a key missing from [signing] allowed_signers is added there, then export again"
	case CheckReceipts:
		if c.Kind == KindBindingEdited {
			h = "nothing was written: " + BindingEditedRemedy + ", then export again"
			break
		}
		h = "nothing was written: a tool receipt of the run fails its MAC or its summary (`readproof verify` names it): a receipt changed after it was issued is not the one issued, restore it from a clone or a backup; if the receipts key was replaced, use the key that issued them, then export again"
	case CheckProofOfRead:
		h = "nothing was written: the run's proof-of-read verdict record fails its check (`readproof verify` names it): restore the verdict chain from a clone or a backup, or use the probe key that wrote it, then export again"
	}
	return more, hint.With(fmt.Errorf("evidence export %s: refused: run %s, manifest %s, fails the store check %s: %s%s", text.Escape(target), run, manifestID, c.Name, c.Detail, also), h)
}

// BindingEditedRemedy says what a failed receipts check of kind
// KindBindingEdited means and what to do, for a hint that ends in what to
// run again.
const BindingEditedRemedy = "the commit appending a tool receipt of the run to its chain carries another binding line than the receipt's MAC covers, so the chain was edited (`readproof verify` names it): restore the receipt chain from a clone or a backup"

// ErrCouldNotRead marks an export stopped because a store check that
// would refuse a forged record (ExportCouldNotRead), or the replay
// (ExportEvidenceChecked's error), could not read the store.
var ErrCouldNotRead = errors.New("could not read the store")

// exportStops reports whether a failed check c of an export that could
// not read the store stops it (ExportCouldNotRead): one of the checks a
// failure of which refuses the export (not store_replace or journal,
// which only warn).
func exportStops(c evidence.Check) bool {
	return !c.OK && c.Kind == KindCouldNotRead && c.Name != CheckStoreReplace && c.Name != CheckJournal
}

// ExportCouldNotRead is the error that stops the export of target (run:
// the run as a message names it; manifestID: the manifest exported) when a
// store check whose failure would refuse it could not read the store (a
// permission, an I/O error: KindCouldNotRead): the record is not known to
// be forged, and not known to be sound, so nothing is written, and the
// hint is about the read. It wraps ErrCouldNotRead; the detail quotes the
// read's error. more are the other such checks; nil when none.
// ExportRefusal comes first: a record found forged is refused as such.
func ExportCouldNotRead(target, run, manifestID string, checks []evidence.Check) (more []evidence.Check, err error) {
	c, more, also := firstFailure(checks, exportStops)
	if c == nil {
		return nil, nil
	}
	return more, hint.With(fmt.Errorf("evidence export %s: %w: run %s, manifest %s, store check %s: %s%s", text.Escape(target), ErrCouldNotRead, run, manifestID, c.Name, c.Detail, also), couldNotReadExportHint(c.Err))
}

// firstFailure returns the first of checks that stop reports (nil when
// none does), the others it reports (more), and also, " (and N more)" for
// an error that names the first: ExportRefusal's and ExportCouldNotRead's.
func firstFailure(checks []evidence.Check, stop func(evidence.Check) bool) (first *evidence.Check, more []evidence.Check, also string) {
	for _, c := range checks {
		switch {
		case !stop(c):
		case first == nil:
			first = &c
		default:
			more = append(more, c)
		}
	}
	if len(more) > 0 {
		also = fmt.Sprintf(" (and %d more)", len(more))
	}
	return first, more, also
}

// replayUnread is the read the store refused (CouldNotRead) that stopped
// the replay (replay nil, rerr its error) or an entry of it, and what it
// was ("replay", "replay of entry 0 (URI)"); err is nil when there is none.
func replayUnread(replay *ReplayResult, rerr error) (what string, err error) {
	if replay == nil {
		if CouldNotRead(rerr) {
			return "replay", rerr
		}
		return "", nil
	}
	for i, e := range replay.Entries {
		if CouldNotRead(e.Err) {
			return fmt.Sprintf("replay of entry %d (%s)", i, text.Printable(e.URI)), e.Err
		}
	}
	return "", nil
}

// couldNotReadExportHint is the hint of an export stopped by err, a read
// the store refused (CouldNotRead): about the read, not the record.
func couldNotReadExportHint(err error) string {
	return "nothing was written: " + couldNotReadHint(err, "export again")
}

// couldNotReadHint says what to do about err, a read the store refused
// (CouldNotRead), before doing again what it stopped.
func couldNotReadHint(err error, again string) string {
	if errors.Is(err, fs.ErrPermission) {
		return "this says nothing of the record, which was not read; let the user running readproof read every file of the store (`ls -l` of the path above shows its owner and mode), then " + again
	}
	if gitstore.ObjectNotRegular(err) {
		// a socket, a FIFO or a device where an object's file should be:
		// not a failing file system
		return "this says nothing of the record, which was not read; a file of the store is not a regular file (`ls -l` of the path above shows what stands there): remove it and restore the object's file from a clone or a backup, then " + again
	}
	return "this says nothing of the record, which was not read; the file system failed to read the store (dmesg may say why): repair it or restore the store from a clone or a backup, then " + again
}

// ReplayCouldNotRead is the error of a replay of target (a run or manifest
// id) that the store would not let read (a permission, an I/O error, a
// file that is not a regular file): wrapping ErrCouldNotRead, naming the
// entry, with a hint about the read; nil when the replay read everything
// it asked for, matching or not. res and rerr are what the replay gave.
func ReplayCouldNotRead(target string, res *ReplayResult, rerr error) error {
	what, err := replayUnread(res, rerr)
	if err == nil {
		return nil
	}
	return hint.With(fmt.Errorf("replay %s: %w: %s: %w", text.Escape(target), ErrCouldNotRead, what, err), couldNotReadHint(err, "replay again"))
}

// ExportReplayWarning is the warning of an export whose replay did not
// match (replay.all_match false), naming run (as a message names it), and
// its hint; both "" when it matched. The bundle records it honestly, and
// `evidence verify` of it fails: the command and the MCP tool say so while
// the store can still be repaired. The hint names verify --read-data: the
// replay read the snapshots' bytes, which verify without it does not (a
// loose object whose zlib checksum alone is damaged passes it).
func ExportReplayWarning(run string, rp *evidence.BundleReplay) (warning, hint string) {
	if rp == nil || rp.AllMatch {
		return "", ""
	}
	bad := 0
	for _, re := range rp.Entries {
		if !re.Match {
			bad++
		}
	}
	what := fmt.Sprintf("%d of %d entries did not replay from this store", bad, len(rp.Entries))
	if rp.Error != "" {
		what = "the manifest could not be replayed from this store: " + text.Escape(rp.Error)
	}
	return fmt.Sprintf("run %s: %s (the bundle records it: replay.all_match false); `evidence verify` of it fails", run, what),
		"`readproof verify --read-data` names what is damaged; restore it from a clone (readproof pull) or a backup, then export again"
}

// ExportWarnings are the warnings of an export whose checks
// (ExportEvidenceChecked's) fail without refusing or stopping it, or pass
// without having checked (KindJournalUnchecked, as `evidence verify` warns
// of it), each naming run (as a message names it), and their hints, each
// once.
func ExportWarnings(run string, checks []evidence.Check) (warnings, hints []string) {
	for _, c := range checks {
		if c.OK && c.Kind == KindJournalUnchecked {
			warnings = append(warnings, fmt.Sprintf("run %s: store check %s: %s", run, c.Name, c.Detail))
			if h := "the bundle is written and does not record it; `readproof verify` walks the whole journal and warns of a run it does not record"; !slices.Contains(hints, h) {
				hints = append(hints, h)
			}
			continue
		}
		if c.OK || ExportRefuses(c) || exportStops(c) {
			continue
		}
		warnings = append(warnings, fmt.Sprintf("run %s: store check %s failed: %s", run, c.Name, c.Detail))
		var h string
		switch c.Name {
		case CheckStoreReplace:
			h = "the bundle records the objects as stored, but `evidence verify` against this store fails store_replace until what it names is removed; `readproof verify` checks the rest of the store"
		case CheckJournal:
			h = "the bundle does not record it; `readproof verify` checks the run, and `readproof gc` records a run a stopped writer left unrecorded"
		case CheckReceipts:
			h = "the bundle's receipt summary leaves the unreadable receipt out and `evidence verify` against this store fails receipts by name; `readproof verify` names it: restore it from a clone or a backup, then export again"
		}
		if !slices.Contains(hints, h) {
			hints = append(hints, h)
		}
	}
	return warnings, hints
}

// evidenceResources lists one redacted definition per URI of m: the
// resource.json of the observation nearest the URI's last entry (the
// definition in force when it was read), else the current policy's; a URI
// the policy no longer declares is marked missing.
func (s *Store) evidenceResources(m *manifest.Manifest) ([]evidence.Resource, error) {
	return s.evidenceResourcesOn(m, runtime.GOMAXPROCS(0))
}

// evidenceResourcesOn is evidenceResources reading through up to readers
// handles on the repository at once.
func (s *Store) evidenceResourcesOn(m *manifest.Manifest, readers int) ([]evidence.Resource, error) {
	last := map[string]*manifest.Entry{}
	var order []string
	for i := range m.Entries {
		e := &m.Entries[i]
		if _, ok := last[e.URI]; !ok {
			order = append(order, e.URI)
		}
		last[e.URI] = e
	}
	pol, err := s.Policy()
	if err != nil {
		return nil, err
	}
	out := make([]evidence.Resource, len(order))
	errs := make([]error, len(order))
	// one fills out[i] reading through t.
	one := func(t *Store, i int) error {
		raw := order[i]
		u, err := identity.ParseURI(raw)
		if err != nil {
			return fmt.Errorf("manifest %s: %w", m.ID, err)
		}
		r := evidence.Resource{URI: u.String(), Namespace: u.Namespace, Path: u.Path}
		res, ok := pol.Lookup(u)
		if !ok {
			r.Missing = true
			out[i] = r
			return nil
		}
		cur := DefinitionOf(res)
		def, err := t.definitionAt(u, last[raw].ObservedAt, last[raw].Snapshot, &cur)
		if err != nil {
			return err
		}
		if def == nil {
			d := DefinitionOf(res)
			def = &d
		}
		r.SourceKind = def.Source.Type
		r.Config = specConfig(def)
		r.Strategy = def.Policy.Strategy
		r.MaxAgeSeconds = def.Policy.MaxAgeSeconds
		out[i] = r
		return nil
	}
	// Each definition is a few object reads. Many resources are shared
	// between this store and a second reader of the same repository (a
	// store serializes its reads), taken in turns; the first error in the
	// manifest's order is the one reported, as one at a time reports it:
	// every resource before a failing one is still resolved.
	stores := []*Store{s}
	if len(order) >= 64 && readers > 1 {
		if h, ok, err := gitstore.NewReader(s.git); err == nil && ok {
			defer h.Close()
			stores = append(stores, &Store{git: h, policy: s.policy, opts: s.opts})
		}
	}
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for _, t := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= len(order) {
					return
				}
				if errs[i] = one(t, i); errs[i] != nil {
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// definitionAt reads resource.json from the observation of u nearest to t:
// the newest one observed at or before t, else the oldest. nil when the
// chain holds none (a clone without resource chains, a store that never
// read the source). An observation commit's committer time is its
// observed_at truncated to the second, so observation.json is read only
// for a commit of t's own second that does not hold snapshot (the bytes
// the entry delivered); only the chosen commit's resource.json is read.
//
// current, when given, is the definition in force now: when the recorded
// resource.json is byte-identical to it (the usual case), it is returned
// without reading the blob.
func (s *Store) definitionAt(u identity.URI, t time.Time, snapshot string, current *Definition) (*Definition, error) {
	tip, err := s.ref(resourceRef(u))
	if err != nil || tip == "" {
		return nil, err
	}
	var best, oldest gitstore.OID // resource.json blobs
	err = s.walkCommits(tip, func(id gitstore.OID, c gitstore.Commit) (bool, error) {
		entries, err := s.git.Tree(c.Tree)
		if err != nil {
			return false, fmt.Errorf("observation %s: %w", id, err)
		}
		var obs, def, content gitstore.OID
		for _, e := range entries {
			switch {
			case e.Mode != gitstore.ModeFile:
			case e.Name == "observation.json":
				obs = e.OID
			case e.Name == "resource.json":
				def = e.OID
			case e.Name == "content":
				content = e.OID
			}
		}
		if obs == "" {
			return false, fmt.Errorf("observation %s: observation.json: %w", id, gitstore.ErrNotFound)
		}
		oldest = def
		at, ts := c.Committer.When.Unix(), t.Unix()
		var before bool
		switch {
		case at > ts:
			before = false
		case at < ts || string(content) == snapshot:
			before = true
		default:
			// a record of a few hundred bytes, bounded as every
			// record is read: a pulled chain's may be anything
			data, err := s.git.BlobAtMost(obs, MaxBytesOf("observation.json"))
			if err != nil {
				return false, fmt.Errorf("observation %s: %w", id, err)
			}
			var o struct {
				ObservedAt time.Time `json:"observed_at"`
			}
			if err := json.Unmarshal(data, &o); err != nil {
				return false, fmt.Errorf("observation %s: %w", id, err)
			}
			before = !o.ObservedAt.After(t)
		}
		if before {
			best = def
		}
		return !before, nil
	})
	if err != nil {
		return nil, fmt.Errorf("resource %s: %w", u, err)
	}
	if best == "" {
		best = oldest
	}
	if best == "" {
		return nil, nil
	}
	if current != nil {
		if enc, err := json.MarshalIndent(current, "", "  "); err == nil && BlobID(append(enc, '\n')) == string(best) {
			return current, nil
		}
	}
	data, err := s.git.BlobAtMost(best, MaxRecordBytes)
	if err != nil {
		return nil, fmt.Errorf("resource %s: resource.json %s: %w", u, best, err)
	}
	var d Definition
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("resource %s: resource.json %s: %w", u, best, err)
	}
	return &d, nil
}

// specConfig is a source's configuration as the v0.3 format shapes it:
// {"<kind>": {field: value, ...}} without the type and empty fields.
func specConfig(d *Definition) map[string]any {
	fields, ok := specFields(d.Source)
	if !ok {
		data, err := json.Marshal(d.Source)
		fields = map[string]any{}
		if err == nil {
			_ = json.Unmarshal(data, &fields)
		}
	}
	delete(fields, "type")
	kind := d.Source.Type
	if kind == "" {
		kind = "unknown"
	}
	return map[string]any{kind: fields}
}

// specFields is the JSON round trip of sp (json.Marshal, then Unmarshal
// into a map) without the encoding: the non-empty fields by their JSON
// names, the header maps as map[string]any. ok is false when a string is
// not valid UTF-8 (the round trip would replace bytes); the caller then
// makes the round trip. TestSpecFieldsRoundTrip holds the two equal and
// fails when Spec gains a field.
func specFields(sp adapters.Spec) (map[string]any, bool) {
	fields := map[string]any{"type": sp.Type}
	ok := utf8.ValidString(sp.Type)
	str := func(name, v string) {
		if v != "" {
			fields[name] = v
			ok = ok && utf8.ValidString(v)
		}
	}
	strMap := func(name string, m map[string]string) {
		if len(m) == 0 {
			return
		}
		out := make(map[string]any, len(m))
		for k, v := range m {
			out[k] = v
			ok = ok && utf8.ValidString(k) && utf8.ValidString(v)
		}
		fields[name] = out
	}
	str("path", sp.Path)
	str("url", sp.URL)
	strMap("headers", sp.Headers)
	strMap("public_headers", sp.PublicHeaders)
	str("owner", sp.Owner)
	str("repo", sp.Repo)
	str("ref", sp.Ref)
	str("api_base", sp.APIBase)
	str("token_env", sp.TokenEnv)
	return fields, ok
}

// evidenceGit records the manifest commit: its tree, run ref, the hash of
// manifest.json and the fingerprint of the key that signed it, if any.
// sum is the SHA-256 (hex) of the manifest.json m was decoded from.
func (s *Store) evidenceGit(m *manifest.Manifest, storeHint, sum string) (*evidence.GitInfo, error) {
	id := gitstore.OID(m.ID)
	c, err := s.git.Commit(id)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", m.ID, err)
	}
	g := &evidence.GitInfo{ManifestCommit: m.ID, Tree: string(c.Tree), Store: storeHint}
	if tip, err := s.ref(runRef(m.RunID)); err != nil {
		return nil, err
	} else if tip == id {
		g.RunRef = runRef(m.RunID)
	}
	g.ManifestSHA256 = sum
	if c.Signature != "" {
		// A signature that does not verify is left out: the bundle still
		// records the manifest, and the store check reports the signature.
		if signer, _, err := s.commitSigner(id, nil); err == nil {
			g.CommitSigner = signer.Fingerprint
		}
	}
	return g, nil
}

// evidenceVerdicts returns the latest proof-of-read verdicts of m's run
// when they are about m, shaped for the bundle.
func (s *Store) evidenceVerdicts(m *manifest.Manifest) (json.RawMessage, error) {
	rec, err := s.Verdicts(m.RunID)
	if err != nil || rec == nil || rec.ManifestID != m.ID {
		return nil, err
	}
	return json.Marshal(evidenceVerdicts{VerdictsCommit: rec.ID, VerdictRecord: rec})
}

// RunReceipts returns the receipts whose run is runID, session by session
// (sessions sorted by name), each session in issue order: the order
// receipts.Summary is computed over. A stored receipt that cannot be
// decoded is left out; RunReceiptsChecked names it.
func (s *Store) RunReceipts(runID string) ([]receipts.Receipt, error) {
	rs, _, err := s.RunReceiptsChecked(runID)
	return rs, err
}

// UnreadableReceipt is a stored receipt that could not be decoded and may
// belong to the run asked for.
type UnreadableReceipt struct {
	Session, ID string
	Err         error
}

func (u UnreadableReceipt) String() string {
	if errors.Is(u.Err, receipts.ErrBindingEdited) {
		return u.Err.Error() // names the receipt and its session
	}
	return fmt.Sprintf("receipt %s of session %s cannot be read: %v", u.ID, u.Session, u.Err)
}

// RunReceiptsChecked is RunReceipts that also returns the stored receipts
// that cannot be decoded and may be the run's: those whose "run" member
// still reads as runID, or cannot be read at all. One bad record is thus
// reported against the runs it may belong to, and never fails the others.
func (s *Store) RunReceiptsChecked(runID string) ([]receipts.Receipt, []UnreadableReceipt, error) {
	return s.receiptsOf(runID, nil)
}

// ManifestReceiptsChecked is RunReceiptsChecked for the calls made for
// manifest m: the receipts issued for it (bound to it, docs/receipts.md:
// of its run id, or of the name a rename gave it where they were issued),
// and those of its run id issued for no manifest in particular (unbound:
// by an older readproof, or for a run id the issuing store did not know).
// A receipt of its run id issued for another manifest of that id (a pull's
// run conflict) is left out, in this store and in every other. Unreadable
// receipts are reported as by RunReceiptsChecked.
func (s *Store) ManifestReceiptsChecked(m *manifest.Manifest) ([]receipts.Receipt, []UnreadableReceipt, error) {
	return s.receiptsOf(m.RunID, m)
}

// receiptsOf lists, session by session, the receipts of runID, or with m
// set those issued for m: bound to m's commit under m's run id or under a
// name the journal records m was renamed to (the name it had where they
// were issued), and of runID bound to m's start or to no manifest.
func (s *Store) receiptsOf(runID string, m *manifest.Manifest) ([]receipts.Receipt, []UnreadableReceipt, error) {
	var out []receipts.Receipt
	bad, err := s.eachReceiptOf(runID, m, func(r receipts.Receipt) error {
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, bad, nil
}

// eachReceiptOf calls fn with each receipt receiptsOf lists, in its order,
// reading them one at a time (receipts.SessionScan): what it holds is a
// session's index of ids, never the receipts of a session or of the run
// (before session 30 an export held every receipt of every session). It
// returns the unreadable receipts receiptsOf returns, and fn's first error.
func (s *Store) eachReceiptOf(runID string, m *manifest.Manifest, fn func(receipts.Receipt) error) ([]UnreadableReceipt, error) {
	ledger := receipts.NewLedger(s.git)
	sessions, err := ledger.Sessions()
	if err != nil {
		return nil, err
	}
	renamed := s.renamedTo(m)
	var bad []UnreadableReceipt
	for _, session := range sessions {
		sc, err := ledger.ScanSession(session)
		if err != nil {
			return nil, err
		}
		if sc == nil {
			continue
		}
		if err := sc.Each(func(e receipts.Entry) error {
			if e.Err != nil {
				if m != nil && !e.Binding.IsZero() && !e.Binding.Of(m.ID, m.StartedAt) {
					return nil // issued for another manifest: that one's check names it
				}
				if run, ok := looseRun(s, session, e.ID); !ok || run == runID || m != nil && e.Binding.Manifest == m.ID {
					bad = append(bad, UnreadableReceipt{Session: session, ID: e.ID, Err: e.Err})
				}
				return nil
			}
			ok, err := receiptOf(e, runID, m, renamed)
			if err != nil || !ok {
				return err
			}
			return fn(e.Receipt)
		}); err != nil {
			return nil, err
		}
	}
	return bad, nil
}

// receiptOf reports whether the decoded receipt e is one receiptsOf lists.
// A binding is a line in a commit message, which no MAC covers and which a
// pull brings as the remote wrote it: it chooses among the manifests the
// receipt's own run id named (a run conflict, a rename), never counts the
// receipt for a run of another id.
func receiptOf(e receipts.Entry, runID string, m *manifest.Manifest, renamed func(run string) (bool, error)) (bool, error) {
	if m == nil {
		return e.Receipt.Run == runID, nil
	}
	if e.Binding.Manifest != "" {
		if e.Binding.Manifest != m.ID {
			return false, nil
		}
		if e.Receipt.Run == runID {
			return true, nil
		}
		return renamed(e.Receipt.Run)
	}
	return e.Receipt.Run == runID && e.Binding.Of(m.ID, m.StartedAt), nil
}

// renamedTo reports whether the journal records renames of manifest m
// leading from its run id to run (RenameLeads), reading the journal at the
// first question only: a receipt bound to m under another run id is rare.
func (s *Store) renamedTo(m *manifest.Manifest) func(run string) (bool, error) {
	var edges map[string][]string
	read := false
	return func(run string) (bool, error) {
		if !read {
			tip, err := s.ref(JournalRef)
			if err != nil || tip == "" {
				return false, err
			}
			renames, err := JournalRenames(s.git, []gitstore.OID{tip})
			if err != nil {
				return false, fmt.Errorf("reading the renames the journal records: %w", err)
			}
			edges, read = renames[gitstore.OID(m.ID)], true
		}
		return RenameLeads(edges, m.RunID, run), nil
	}
}

// looseRun reads the "run" member of a stored receipt that does not decode
// as a receipt, ignoring everything else; ok is false when even that fails.
func looseRun(s *Store, session, id string) (string, bool) {
	if !receipts.ValidID(id) {
		return "", false
	}
	tip, err := s.git.Ref(receipts.SessionRef(session))
	if err != nil {
		return "", false
	}
	c, err := s.git.Commit(tip)
	if err != nil {
		return "", false
	}
	d := strings.TrimPrefix(id, receipts.IDPrefix)
	blob, err := gitstore.FileAt(s.git, c.Tree, d[0:1]+"/"+d[1:2]+"/"+id+".json")
	if err != nil {
		return "", false
	}
	data, err := s.git.BlobAtMost(blob, MaxRecordBytes)
	if err != nil {
		return "", false
	}
	var v struct {
		Run *string `json:"run"`
	}
	if json.Unmarshal(data, &v) != nil {
		return "", false
	}
	if v.Run == nil {
		return "", true // a receipt of no run
	}
	return *v.Run, true
}

// CommitSigner verifies the SSH signature of commit id, for every reader
// that checks signatures (`verify`, `evidence verify`), so they agree on
// every case. With signers nil (no allowed_signers configured) the
// signature must still verify against its own key, with namespace git, over
// this commit: a signature that does not is broken whoever is trusted; only
// "who signed" needs signers, and the principal is then "". Errors wrap
// evidence.ErrBadSignature, ErrUntrustedKey or ErrKeyNotValid.
func (s *Store) CommitSigner(id gitstore.OID, signers evidence.AllowedSigners) (evidence.CommitSigner, time.Time, error) {
	return s.commitSigner(id, signers)
}

// commitSigner verifies the SSH signature of commit id. With signers nil
// the signature is checked against its own key (valid, namespace git, over
// this commit) and the principal is "".
func (s *Store) commitSigner(id gitstore.OID, signers evidence.AllowedSigners) (evidence.CommitSigner, time.Time, error) {
	// A commit of more than a manifest's bound (a ref names a blob of
	// gigabytes) is refused from its header, as a pull refuses it.
	if err := gitstore.CheckObjectSize(s.git, id, manifest.MaxBytes); err != nil {
		return evidence.CommitSigner{}, time.Time{}, fmt.Errorf("commit %s: %w", id, err)
	}
	kind, raw, err := s.git.RawObject(id)
	if err != nil {
		return evidence.CommitSigner{}, time.Time{}, fmt.Errorf("commit %s: %w", id, err)
	}
	if kind != "commit" {
		return evidence.CommitSigner{}, time.Time{}, fmt.Errorf("object %s is a %s, not a commit", id, kind)
	}
	payload, armor, when, err := evidence.SplitSignedCommit(raw)
	if err != nil {
		return evidence.CommitSigner{}, time.Time{}, err
	}
	if signers == nil {
		sig, err := sshsig.Unarmor([]byte(armor))
		if err != nil {
			return evidence.CommitSigner{}, when, fmt.Errorf("%w: %v", evidence.ErrBadSignature, err)
		}
		signers = evidence.AllowedSigners{{Line: 1, Principals: "*", Key: sig.PublicKey}}
	}
	cs, err := evidence.VerifyCommitSigner(payload, armor, signers, when)
	return cs, when, err
}

// VerifyManifestSignature checks the SSH signature of a manifest commit
// (given by run id or manifest id) as stock `git verify-commit` with
// gpg.format=ssh and an allowed_signers file does: a valid sshsig over the
// commit without its gpgsig header, namespace "git", by a key that signers
// vouch for at the committer time. Errors wrap evidence.ErrNotSigned,
// ErrBadSignature, ErrUntrustedKey or ErrKeyNotValid.
func (s *Store) VerifyManifestSignature(target string, signers evidence.AllowedSigners) (*ManifestSignature, error) {
	m, err := s.Manifest(target)
	if err != nil {
		return nil, err
	}
	if len(signers) == 0 {
		return nil, hint.With(fmt.Errorf("manifest %s: %w: no allowed signers to check the signature against", m.ID, evidence.ErrUntrustedKey),
			"give an allowed_signers file (readproof key show --format allowed-signers prints a line for your key)")
	}
	cs, when, err := s.commitSigner(gitstore.OID(m.ID), signers)
	if err != nil {
		return nil, fmt.Errorf("manifest %s of run %s: %w", m.ID, m.RunID, err)
	}
	// stock git verify-commit follows refs/replace/: a replaced commit is
	// not the one a reviewer's git checks, so the two would disagree
	// (git takes the object id from the end of the ref's name, so
	// refs/replace/x/ID and refs/replace/IDx replace it as well)
	refs, err := s.replaceRefs()
	if err != nil {
		return nil, fmt.Errorf("manifest %s of run %s: %w", m.ID, text.Printable(m.RunID), err)
	}
	for _, r := range refs {
		if ReplacedID(r.Name) == m.ID {
			return nil, fmt.Errorf("manifest %s of run %s: %w: %s makes git read commit %s in its place, so git verify-commit and git show check that one, not the signed commit readproof checked; remove it with git update-ref -d %s",
				m.ID, text.Printable(m.RunID), ErrReplaced, text.Printable(r.Name), r.OID, text.Printable(r.Name))
		}
	}
	return &ManifestSignature{ManifestID: m.ID, RunID: m.RunID, Principal: cs.Principal, Fingerprint: cs.Fingerprint, CommittedAt: when.UTC()}, nil
}

// VerifyEvidence verifies a bundle against this store: evidence.Verify with
// the store as Replayer, then the checks only a store can run, appended to
// the report: store_manifest, git_commit_signature (when the manifest commit
// is signed or the bundle names a signer), receipts and proof_of_read (when
// the bundle carries them). The error is for a verification that could not
// run; a bundle that fails is a report with failing checks.
func (s *Store) VerifyEvidence(data []byte, opts EvidenceVerifyOptions) (evidence.Report, error) {
	replayer := &ctxReplayer{s: s, ctx: orBackground(opts.Context), progress: opts.Progress}
	rep, err := evidence.Verify(data, evidence.VerifyOptions{Store: replayer, TrustedKeys: opts.TrustedKeys, RequireSignature: opts.RequireSignature})
	if err == nil {
		err = replayer.ctx.Err()
	}
	if err != nil || rep.Statement == nil {
		return rep, err
	}
	p := &rep.Statement.Predicate
	if !identity.IsObjectID(p.ManifestID) {
		return rep, nil // store_replay_count already failed: nothing to compare with
	}
	m, sum := replayer.manifest, replayer.sum // read by the replay, when it could read it
	if m == nil || m.ID != p.ManifestID {
		if m, sum, err = s.manifestWithSum(p.ManifestID); err != nil {
			return rep, nil // as above
		}
	}
	rep.Checks = append(rep.Checks, s.storeChecks(p, m, sum, EvidenceCheckKeys{Signers: opts.Signers, ReceiptsKey: opts.ReceiptsKey, ReceiptsKeyFound: opts.ReceiptsKeyFound, ProbeKeys: opts.ProbeKeys}, "")...)
	return rep, nil
}

// storeChecks are the checks only a store can run of the bundle predicate
// p naming manifest m (sum: the SHA-256, hex, of its manifest.json), in
// their order: store_manifest, store_replace, git_commit_signature (when
// the manifest commit is signed or p names a signer), receipts (when p
// carries a summary, or the store holds a receipt of m that cannot be
// read), proof_of_read (when p carries verdicts) and journal (when the
// journal does not record m, or its bounded walk stopped before reaching
// it). named is the run id an export was asked for ("" for verify, and for
// an export by manifest id): a name of m other than its run id must be a
// rename the journal records. VerifyEvidence runs them after the replay,
// ExportEvidenceChecked on the statement it built: one implementation, so
// that both say the same of the same record. A failure that comes of a
// read the store refused (CouldNotRead: a permission, an I/O error) has
// Kind KindCouldNotRead and its error in Err: it says nothing of the
// record.
func (s *Store) storeChecks(p *evidence.Predicate, m *manifest.Manifest, sum string, keys EvidenceCheckKeys, named string) []evidence.Check {
	var out []evidence.Check
	add := func(name string, ok bool, format string, args ...any) *evidence.Check {
		c := evidence.Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)}
		if !ok {
			markCouldNotRead(&c, args)
		}
		out = append(out, c)
		return &out[len(out)-1]
	}
	unreadable := func(u UnreadableReceipt) {
		add(CheckReceipts, false, "%s", text.Printable(u.String()))
		// damage, unless the receipt reads and was edited: its append
		// commit's binding line (KindBindingEdited, with its own hint)
		// or another tampering (receipts.ErrTampered), a record
		// readproof did not write, which an export refuses
		switch {
		case CouldNotRead(u.Err):
			out[len(out)-1].Kind, out[len(out)-1].Err = KindCouldNotRead, u.Err
		case errors.Is(u.Err, receipts.ErrBindingEdited):
			out[len(out)-1].Kind = KindBindingEdited
		case !errors.Is(u.Err, receipts.ErrTampered):
			out[len(out)-1].Kind = KindUnreadableReceipt
		}
	}
	storeManifest := func(detail string, ok bool, err error) {
		out = append(out, evidence.Check{Name: CheckStoreManifest, OK: ok, Detail: detail})
		if errors.Is(err, errUnrecordedRename) {
			out[len(out)-1].Kind = KindUnrecordedRename
		} else if !ok {
			markCouldNotRead(&out[len(out)-1], []any{err})
		}
	}
	renamed := s.renamedTo(m)
	detail, ok, err := s.compareManifest(p, m, sum, renamed)
	storeManifest(detail, ok, err)
	if named != "" && named != m.RunID {
		// the ref of run named names a manifest recorded as m.RunID: a
		// rename the journal records (`conflicts rename`), or a ref moved
		// by hand (readproof verify: "the ref names run ..."); said once
		// when compareManifest found the same
		if d, err := runNameUnrecorded(m, named, renamed); d != "" && d != detail {
			storeManifest(d, false, err)
		}
	}
	s.checkReplaced(m, add)
	s.checkCommitSignature(p, m, keys.Signers, add)
	if len(p.Receipts) == 0 {
		// No summary: still name the manifest's receipts that cannot be
		// read, as export and checkReceipts do (not another manifest's of
		// the run id).
		// A store whose receipts cannot be listed (a damaged session
		// ref, an unreadable object) fails the check, as checkReceipts
		// does: it cannot show that none were hidden (before session
		// 29's follow-up such a bundle passed); a read the system
		// refused is "could not read" (exit 4), not a forgery.
		n, first := 0, []string{} // the manifest's receipts: how many, the first three ids
		if bad, err := s.eachReceiptOf(p.RunID, m, func(r receipts.Receipt) error {
			if n++; len(first) < 3 {
				first = append(first, r.ID)
			}
			return nil
		}); err != nil {
			add(CheckReceipts, false, "the bundle carries no receipt summary, and the store's receipts could not be listed to show it has none: %v", err)
		} else {
			for _, u := range bad {
				unreadable(u)
			}
			// export writes a summary whenever the manifest has receipts,
			// and a summary must list them all: a bundle without one
			// would hide the calls from its reader (before session 29 a
			// summary removed from a bundle passed)
			if n > 0 {
				add(CheckReceipts, false, "the store holds %s of this manifest (%s), the bundle carries no receipt summary: it was removed, or the bundle was exported before they were issued",
					text.Count(n, "tool receipt", "tool receipts"), receiptsNamed(first, n))
			}
		}
	} else {
		s.checkReceipts(p, m, keys.ReceiptsKey, keys.ReceiptsKeyFound, add, unreadable)
	}
	if len(p.ProofOfRead) > 0 {
		s.checkVerdicts(p, m, keys.ProbeKeys, add)
	}
	if c, ok := s.checkJournal(m); ok {
		out = append(out, c)
	}
	return out
}

// KindCouldNotRead is the Kind of a failed store check whose failure is a
// read the store refused (CouldNotRead: a permission, an I/O error), not
// a record found damaged or forged: it says nothing of the record, and a
// command says so (exit 4, a hint about the error) rather than refusing it
// as forged.
const KindCouldNotRead = "could_not_read"

// CouldNotRead reports whether err is a read the system refused or could
// not complete (permission denied, an I/O error, out of file descriptors or
// memory, an object's file that is not a regular file:
// gitstore.ObjectNotRegular): the bytes were not read, so nothing was
// learnt of them. A
// missing object, or one that does not decode or hash to its id, is not:
// that is damage, or a forgery.
func CouldNotRead(err error) bool {
	return gitstore.Unreadable(err)
}

// markCouldNotRead gives failed check c Kind KindCouldNotRead, and the
// error in Err, when one of args (what its detail was formatted from) is
// an error that CouldNotRead.
func markCouldNotRead(c *evidence.Check, args []any) {
	for _, a := range args {
		if err, ok := a.(error); ok && CouldNotRead(err) {
			c.Kind, c.Err = KindCouldNotRead, err
			return
		}
	}
}

// journalCheckWalk bounds the journal commits the journal check of export and
// `evidence verify` reads (about 30 ms): the record of an older run of a
// large store is left to `readproof verify`, which walks the whole journal
// once for every run. At 50,000 runs the whole walk took 0.34 s packed and
// 0.6 s loose, and 85-123 MB, for the export of the first run.
const journalCheckWalk = 4096

// KindJournalUnchecked is the Kind of a journal check that passes without
// having checked: the journal's newest journalCheckWalk commits do not reach
// the manifest, and the walk reads no more. The detail says the bound and
// what it leaves unchecked; `evidence verify` warns of it.
const KindJournalUnchecked = "journal_unchecked"

// checkJournal is the journal check of manifest m: failed when the journal
// (refs/heads/main) does not reach m and the walk read all of it; passed,
// with KindJournalUnchecked, when the walk stopped at journalCheckWalk commits
// first. ok is false when there is nothing to say: the journal records m,
// or the store has no journal (`readproof verify` reports that store).
func (s *Store) checkJournal(m *manifest.Manifest) (c evidence.Check, ok bool) {
	c.Name = CheckJournal
	fail := func(format string, args ...any) (evidence.Check, bool) {
		c.Detail = fmt.Sprintf(format, args...)
		markCouldNotRead(&c, args)
		return c, true
	}
	tip, err := s.ref(JournalRef)
	if err != nil {
		return fail("reading %s: %v", JournalRef, err)
	}
	if tip == "" {
		return c, false
	}
	met, whole, err := journalReachesWithin(s.git, tip, map[gitstore.OID]bool{gitstore.OID(m.ID): true}, journalCheckWalk)
	switch {
	case err != nil:
		return fail("walking %s: %v", JournalRef, err)
	case !whole:
		c.OK, c.Kind = true, KindJournalUnchecked
		c.Detail = fmt.Sprintf("not checked: the newest %d commits of the journal (%s) do not reach manifest %s of run %s, and the check reads no further; an older run's record, or a run written by hand into a journal that long, is checked by `readproof verify`, which walks the whole journal",
			journalCheckWalk, JournalRef, m.ID, text.Printable(m.RunID))
		return c, true
	case met[gitstore.OID(m.ID)]:
		return c, false
	}
	return fail("the journal (%s) does not record manifest %s of run %s: a writer stopped before recording it (`readproof gc` records it), or the commit was written by hand (`readproof verify` warns of it)",
		JournalRef, m.ID, text.Printable(m.RunID))
}

// addCheck adds a check to those storeChecks reports, and gives it, for
// its Kind to be set (until the next check is added).
type addCheck func(name string, ok bool, format string, args ...any) *evidence.Check

// Kinds of passing checks that passed without checking all they could
// (no key at hand, or a key of another issuer): `evidence verify` says so
// on its success line, which an auditor may read alone.
const (
	// KindSignerUnchecked is the Kind of a passing git_commit_signature
	// whose signature verifies but whose signer was not checked: no
	// trusted keys were given.
	KindSignerUnchecked = "signer_unchecked"
	// KindReceiptMACsUnchecked is the Kind of a passing receipts check
	// made without a receipts key: the MACs were not checked.
	KindReceiptMACsUnchecked = "receipt_macs_unchecked"
	// KindReceiptMACsOtherKey is the Kind of a passing receipts check
	// whose receipts were all made under another key than the auditor's
	// default one: none of their MACs was checked.
	KindReceiptMACsOtherKey = "receipt_macs_other_key"
	// KindReceiptMACsPartly is the Kind of a passing receipts check some
	// of whose receipts were made under another key: their MACs were not
	// checked, the others' were.
	KindReceiptMACsPartly = "receipt_macs_partly_unchecked"
	// KindVerdictMACUnchecked is the Kind of a passing proof_of_read
	// check made without a probe key: the record's MAC was not checked.
	KindVerdictMACUnchecked = "verdict_mac_unchecked"
	// KindVerdictMACOtherKey is the Kind of a passing proof_of_read check
	// whose record is authenticated under another probe key than those
	// at hand: its MAC was not checked.
	KindVerdictMACOtherKey = "verdict_mac_other_key"
	// KindVerdictNoMAC is the Kind of a passing proof_of_read check whose
	// record carries no MAC (recorded before verdict records were
	// authenticated): nothing vouches for it, key or no key.
	KindVerdictNoMAC = "verdict_no_mac"
)

// checkReplaced fails CheckStoreReplace for every refs/replace/ ref and for
// an info/grafts file: readproof reads the objects as stored, stock git
// reads the replacements, so the auditor's git would show other records
// than the ones this verification checked (git clone --mirror copies
// replace refs). A replaced object of manifest m is named as its.
func (s *Store) checkReplaced(m *manifest.Manifest, add addCheck) {
	refs, err := s.replaceRefs()
	if err != nil {
		add(CheckStoreReplace, false, "listing replace refs: %v", err)
		return
	}
	for _, r := range refs {
		id := ReplaceRefObject(r.Name)
		if id == "" {
			continue // under GIT_REPLACE_REF_BASE, and git ignores it
		}
		add(CheckStoreReplace, false, "%s: stock git reads %s in place of %s: git show, git diff and git verify-commit on this store show other records than readproof checked; remove it with git update-ref -d %s",
			text.Printable(r.Name), r.OID, s.replacedObject(m, id), text.Printable(r.Name))
	}
	grafts := filepath.Join(s.git.Path(), "info", "grafts")
	if _, err := os.Lstat(grafts); err == nil {
		add(CheckStoreReplace, false, "%s gives commits other parents for stock git, not for readproof: remove it", text.Printable(grafts))
	}
	if msg := CommonDirProblem(s.git.Path()); msg != "" {
		add(CheckStoreReplace, false, "%s", msg)
	}
}

// CommonDirProblem says how a commondir file in git directory dir (a
// linked worktree's) makes stock git read the refs and objects of another
// repository in place of the store's own, which readproof reads; "" when
// dir has none.
func CommonDirProblem(dir string) string {
	path := filepath.Join(dir, "commondir")
	if _, err := os.Lstat(path); err != nil {
		return ""
	}
	other := "another repository"
	// only a regular file is read for its name: an open of a FIFO waits
	// for a writer for good
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		if f, err := os.Open(path); err == nil {
			buf := make([]byte, 512)
			n, _ := io.ReadFull(f, buf)
			f.Close()
			line, _, _ := strings.Cut(string(buf[:n]), "\n")
			other += " (" + text.Printable(identity.Shorten(strings.TrimSuffix(line, "\r"), 200)) + ")"
		}
	}
	return text.Printable(path) + " makes stock git read the refs and objects of " + other + " in place of this store's: remove it"
}

// ReplaceRefBases are the prefixes stock git reads replace refs (git
// replace) under: refs/replace/, and GIT_REPLACE_REF_BASE of this
// process's environment when it is set to another (git run in this
// environment reads that one instead; "refs/" when it is empty, as git then
// reads every ref).
func ReplaceRefBases() []string {
	bases := []string{"refs/replace/"}
	b, set := os.LookupEnv("GIT_REPLACE_REF_BASE")
	switch {
	case !set || b == bases[0]:
	case strings.HasPrefix(b, "refs/"):
		bases = append(bases, b)
	default:
		// set but empty (or outside refs/): git takes every ref for one
		bases = append(bases, "refs/")
	}
	return bases
}

// replaceRefs lists the refs under every base of ReplaceRefBases, each
// once: the bases can nest (GIT_REPLACE_REF_BASE empty or refs/ holds
// refs/replace/, refs/replace/x/ is in it).
func (s *Store) replaceRefs() ([]gitstore.Ref, error) {
	var out []gitstore.Ref
	var seen map[string]bool // only with a second base
	for i, base := range ReplaceRefBases() {
		refs, err := s.git.Refs(base)
		if err != nil {
			return nil, err
		}
		if i == 1 {
			seen = make(map[string]bool, len(out))
			for _, r := range out {
				seen[r.Name] = true
			}
		}
		for _, r := range refs {
			if !seen[r.Name] {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// ReplacedID is the object that ref name, under a base of
// ReplaceRefBases, makes stock git read another in place of, as git reads
// it from the name: the 40 hex digits (in either case) after the last '/'
// of what follows the base, whatever follows them; "" when git would
// ignore the ref ("bad replace ref name") or name is under no base.
func ReplacedID(name string) string {
	for _, base := range ReplaceRefBases() {
		rest, ok := strings.CutPrefix(name, base)
		if !ok {
			continue
		}
		if i := strings.LastIndexByte(rest, '/'); i >= 0 {
			rest = rest[i+1:]
		}
		if len(rest) < 40 {
			continue
		}
		if id := strings.ToLower(rest[:40]); identity.IsObjectID(id) {
			return id
		}
	}
	return ""
}

// ReplaceRefObject is the object a report names replace ref name
// replacing: ReplacedID, or under refs/replace/ the rest of a name git
// ignores ("bad replace ref name"), which has no place in a store either;
// "" for a ref under GIT_REPLACE_REF_BASE that git ignores.
func ReplaceRefObject(name string) string {
	if id := ReplacedID(name); id != "" {
		return id
	}
	if rest, ok := strings.CutPrefix(name, "refs/replace/"); ok {
		return rest // git ignores it, but it has no place in a store
	}
	return ""
}

// replacedObject names object id as a part of manifest m when it is one.
func (s *Store) replacedObject(m *manifest.Manifest, id string) string {
	if id == m.ID {
		return fmt.Sprintf("the manifest commit %s of run %s", m.ID, text.Printable(m.RunID))
	}
	if c, err := s.git.Commit(gitstore.OID(m.ID)); err == nil && string(c.Tree) == id {
		return fmt.Sprintf("the tree %s of manifest %s (run %s)", id, m.ID, text.Printable(m.RunID))
	}
	for i, e := range m.Entries {
		if e.Snapshot == id {
			return fmt.Sprintf("the snapshot of entry %d %s (%s)", i, text.Printable(e.URI), id)
		}
	}
	return "object " + text.Printable(id)
}

// compareManifest compares what the Merkle root does not cover with the
// manifest as stored; sum is the SHA-256 (hex) of the manifest.json m was
// decoded from; renamed is s.renamedTo(m). err is the error of a read
// that failed, when that is why it fails (errUnrecordedRename for a run
// ref moved by hand).
func (s *Store) compareManifest(p *evidence.Predicate, m *manifest.Manifest, sum string, renamed func(run string) (bool, error)) (detail string, ok bool, err error) {
	if p.RunID != m.RunID {
		return fmt.Sprintf("run_id %q, the store's manifest is of run %q", p.RunID, m.RunID), false, nil
	}
	if p.ManifestCreatedAt != timeString(m.CreatedAt) {
		return fmt.Sprintf("manifest_created_at %q, the store records %s", p.ManifestCreatedAt, timeString(m.CreatedAt)), false, nil
	}
	runTip, err := s.ref(runRef(m.RunID))
	if err != nil {
		return fmt.Sprintf("reading %s: %v", runRef(m.RunID), err), false, err
	}
	// the manifest commit, read once for the git facts and its tree
	var commit *gitstore.Commit
	manifestCommit := func() (gitstore.Commit, error) {
		if commit != nil {
			return *commit, nil
		}
		c, err := s.git.Commit(gitstore.OID(m.ID))
		if err == nil {
			commit = &c
		}
		return c, err
	}
	if g := p.Git; g != nil {
		c, err := manifestCommit()
		if err != nil {
			return fmt.Sprintf("reading manifest commit %s: %v", m.ID, err), false, err
		}
		if g.Tree != "" && g.Tree != string(c.Tree) {
			return fmt.Sprintf("git.tree %q, the manifest commit's tree is %s", g.Tree, c.Tree), false, nil
		}
		if g.ManifestSHA256 != "" {
			if sum != g.ManifestSHA256 {
				return fmt.Sprintf("git.manifest_sha256 %q is not the hash of the stored manifest.json", g.ManifestSHA256), false, nil
			}
		}
		if g.RunRef != "" {
			if g.RunRef != runRef(m.RunID) {
				return fmt.Sprintf("git.run_ref %q, the run's ref is %s", g.RunRef, runRef(m.RunID)), false, nil
			}
			if runTip != "" && runTip != gitstore.OID(m.ID) {
				return fmt.Sprintf("%s names manifest %s in this store, not %s", g.RunRef, runTip, m.ID), false, nil
			}
		}
	}
	var unrecorded string // a run ref naming m moved by hand
	var unrecordedErr error
	if runTip != gitstore.OID(m.ID) {
		// not its run's manifest: a pull's conflict ref, or the ref of a
		// run the journal records it renamed to, must name it; else it
		// is only an object in the store (a pack pushed with an
		// unreferenced commit, a fetch without a ref), or a run ref
		// moved to it by hand
		conflict, runs, err := s.otherRunNaming(m)
		if err != nil {
			return fmt.Sprintf("reading the refs that may name manifest %s: %v", m.ID, err), false, err
		}
		if conflict == "" && len(runs) == 0 {
			now := runRef(m.RunID) + " does not exist"
			if runTip != "" {
				now = fmt.Sprintf("%s names %s", runRef(m.RunID), runTip)
			}
			return fmt.Sprintf("no run of this store names manifest %s: %s; the manifest is an object in the store, not a recorded run", m.ID, now), false, nil
		}
		if conflict == "" {
			// said after the comparisons below, which name what a
			// forged commit holds
			for _, run := range runs {
				detail, err := runNameUnrecorded(m, run, renamed)
				if detail == "" {
					unrecorded, unrecordedErr = "", nil
					break
				}
				if unrecorded == "" {
					unrecorded, unrecordedErr = detail, err
				}
			}
		}
	}
	n := min(len(p.Entries), len(m.Entries))
	for i := 0; i < n; i++ {
		b, e := p.Entries[i], m.Entries[i]
		var field, got, want string
		switch {
		case b.SnapshotID != e.Snapshot:
			field, got, want = "snapshot_id", b.SnapshotID, e.Snapshot
		case b.MaterializationID != e.Snapshot:
			// Build writes the snapshot id: the blob is delivered verbatim
			field, got, want = "materialization_id", b.MaterializationID, e.Snapshot
		case b.Ref != e.Ref:
			field, got, want = "ref", b.Ref, e.Ref
		case b.SourceRevision != e.SourceRevision:
			field, got, want = "source_revision", b.SourceRevision, e.SourceRevision
		case b.ObservedAt != timeString(e.ObservedAt):
			field, got, want = "observed_at", b.ObservedAt, timeString(e.ObservedAt)
		case b.ContentType != e.ContentType:
			field, got, want = "content_type", b.ContentType, e.ContentType
		case b.Bytes != e.Bytes:
			field, got, want = "bytes", fmt.Sprint(b.Bytes), fmt.Sprint(e.Bytes)
		default:
			var differs bool
			if field, got, want, differs = provenanceDiff(b.Provenance, evidence.BundleProvenance(e.Provenance)); !differs {
				continue
			}
		}
		return fmt.Sprintf("entry %d %s %q, the store's manifest records %q", i, field, text.Printable(got), text.Printable(want)), false, nil
	}
	// The commit the bundle names must hold the run as readproof wrote it:
	// a file beside manifest.json and the entries' files shows reviewers
	// (`git show`, `git diff`) as part of the run what no entry records.
	c, err := manifestCommit()
	if err != nil {
		return fmt.Sprintf("reading manifest commit %s: %v", m.ID, err), false, err
	}
	if extra, err := ManifestTreeExtra(s.git.Tree, c.Tree, m.Entries); err != nil {
		return fmt.Sprintf("reading manifest commit %s's tree: %v", m.ID, err), false, err
	} else if extra != "" {
		return fmt.Sprintf("manifest commit %s holds %s, which is not part of the run: no entry records it, yet `git show` and `git diff` show it with the run (%s); readproof did not write this commit (`readproof verify` names it)", m.ID, text.Printable(extra), ManifestTreeRule), false, nil
	}
	if unrecorded != "" {
		return unrecorded, false, unrecordedErr
	}
	return fmt.Sprintf("run %s, created %s, %s with the stored manifest", m.RunID, timeString(m.CreatedAt), text.Count(n, "entry agrees", "entries agree")), true, nil
}

// otherRunNaming returns what records manifest m as a run's when its
// run's ref does not: the conflict ref a pull keeps for it (conflict), else
// the run ids whose refs name it (runs), which a rename the journal records
// must lead to (runNameUnrecorded); both empty when nothing names it.
func (s *Store) otherRunNaming(m *manifest.Manifest) (conflict string, runs []string, err error) {
	id := gitstore.OID(m.ID)
	ref := ConflictRunRef(m.RunID, id)
	if tip, err := s.ref(ref); err != nil || tip == id {
		if err != nil {
			return "", nil, err
		}
		return ref, nil, nil
	}
	refs, err := s.git.Refs(RunsPrefix)
	if err != nil {
		return "", nil, err
	}
	for _, r := range refs {
		if r.OID == id {
			runs = append(runs, strings.TrimPrefix(r.Name, RunsPrefix))
		}
	}
	return "", runs, nil
}

// errUnrecordedRename is runNameUnrecorded's: a run ref names a manifest
// of another run id that the journal records no rename of
// (KindUnrecordedRename).
var errUnrecordedRename = errors.New("a run ref moved by hand")

// KindUnrecordedRename is the Kind of a failed store_manifest whose
// manifest a run ref of another run id names, with no rename of it to that
// run in the journal: a run ref moved by hand.
const KindUnrecordedRename = "unrecorded_rename"

// runNameUnrecorded says how the ref of run, which names manifest m
// recorded under another run id, is not a rename of it that the journal
// records (renamed: s.renamedTo(m)); "" when it is one. err is the error
// of reading the journal, when that is why, else errUnrecordedRename. Export (the run it was asked
// for) and verify (the run refs naming a manifest its own run's ref does
// not) share it: a run ref moved by hand to another run's manifest.
func runNameUnrecorded(m *manifest.Manifest, run string, renamed func(run string) (bool, error)) (string, error) {
	ok, err := renamed(run)
	switch {
	case err != nil:
		return fmt.Sprintf("reading the renames the journal records of manifest %s: %v", m.ID, err), err
	case !ok:
		return fmt.Sprintf("%s names manifest %s, which records run %s, and the journal records no rename of it to %s: readproof did not write this ref (`readproof verify` names it)",
			runRef(run), m.ID, text.Printable(m.RunID), text.Printable(run)), errUnrecordedRename
	}
	return "", nil
}

// provenanceDiff names the first provenance key, in sorted order, whose value
// in the bundle (got) is not the stored one as export writes it (want).
func provenanceDiff(got map[string]any, want map[string]string) (field, g, w string, differs bool) {
	keys := make([]string, 0, len(got)+len(want))
	for k := range got {
		keys = append(keys, k)
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		gv, inBundle := got[k]
		wv, stored := want[k]
		gs, isString := gv.(string)
		switch {
		case !inBundle:
			return "provenance." + k, "(absent)", wv, true
		case !stored:
			return "provenance." + k, fmt.Sprint(gv), "(absent)", true
		case !isString || gs != wv:
			return "provenance." + k, fmt.Sprint(gv), wv, true
		}
	}
	return "", "", "", false
}

func (s *Store) checkCommitSignature(p *evidence.Predicate, m *manifest.Manifest, signers evidence.AllowedSigners, add addCheck) {
	claimed := ""
	if p.Git != nil {
		claimed = p.Git.CommitSigner
	}
	c, err := s.git.Commit(gitstore.OID(m.ID))
	if err != nil {
		add(CheckCommitSignature, false, "reading manifest commit %s: %v", m.ID, err)
		return
	}
	if c.Signature == "" {
		if claimed != "" {
			add(CheckCommitSignature, false, "the bundle names commit signer %s, the store's manifest commit is not signed", text.Printable(claimed))
		}
		return
	}
	if len(signers) == 0 {
		signers = nil
	}
	cs, _, err := s.commitSigner(gitstore.OID(m.ID), signers)
	switch {
	case err != nil:
		add(CheckCommitSignature, false, "manifest commit %s: %v", m.ID, err)
	case claimed != "" && claimed != cs.Fingerprint:
		add(CheckCommitSignature, false, "the bundle names commit signer %s, the manifest commit is signed by %s", text.Printable(claimed), cs.Fingerprint)
	case signers == nil:
		add(CheckCommitSignature, true, "valid SSH signature by %s; signer not checked against allowed signers (pass trusted keys to check it)", cs.Fingerprint).Kind = KindSignerUnchecked
	default:
		add(CheckCommitSignature, true, "signed by %s with %s", text.Printable(cs.Principal), cs.Fingerprint)
	}
}

// checkReceipts compares the bundle's summary with the store's receipts of
// its run id issued for m, the stored manifest the bundle names. The
// receipts are read one at a time (eachReceiptOf), summarised and their
// MACs checked as they are read; the checks say what they said when the
// receipts were held: the summary first, then the first MAC that fails.
func (s *Store) checkReceipts(p *evidence.Predicate, m *manifest.Manifest, key *receipts.Key, found bool, add addCheck, unreadable func(UnreadableReceipt)) {
	var sum receipts.EvidenceSummary
	if err := strictDecode(p.Receipts, &sum); err != nil {
		add(CheckReceipts, false, "receipts is not a receipt summary: %s", text.Printable(err.Error()))
		return
	}
	got := receipts.NewSummaryBuilder()
	// with a key: the receipts whose MACs are checked (with the default
	// key, those made under it), and the failures
	checked := 0
	var failed []string
	var firstFailed error
	bad, err := s.eachReceiptOf(p.RunID, m, func(r receipts.Receipt) error {
		got.Add(r)
		if key == nil || found && r.KeyID != key.ID() {
			return nil
		}
		checked++
		if err := receipts.Verify(r, *key); err != nil {
			failed = append(failed, fmt.Sprintf("receipt %s of session %s: %s", r.ID, text.Printable(r.Session), text.Printable(err.Error())))
			if firstFailed == nil {
				firstFailed = err
			}
		}
		return nil
	})
	if err != nil {
		add(CheckReceipts, false, "reading the run's receipts from the store: %v", err)
		return
	}
	n := got.Len()
	if len(bad) > 0 {
		for _, u := range bad {
			unreadable(u)
		}
		// the summary cannot match, but the MACs of the receipts that
		// read are still checked: an unreadable receipt must not hide a
		// forged one from an export (which only warns of the first)
		for _, f := range failed {
			add(CheckReceipts, false, "%s", f)
		}
		return
	}
	if err := sum.MatchesSummary(got.Summary()); err != nil {
		add(CheckReceipts, false, "%s", text.Printable(err.Error()))
		return
	}
	switch {
	case firstFailed != nil && found:
		add(CheckReceipts, false, "verifying receipt summary: %s", text.Printable(firstFailed.Error()))
		return
	case firstFailed != nil:
		// receipts.VerifySummary's words, made printable whole
		add(CheckReceipts, false, "%s", text.Printable("verifying receipt summary: "+firstFailed.Error()))
		return
	}
	switch {
	case key != nil && found && n > checked:
		kind := KindReceiptMACsPartly
		if checked == 0 {
			kind = KindReceiptMACsOtherKey
		}
		add(CheckReceipts, true, "%d receipts match the store; MACs verified with key %s (the default key) for %d, not checked for %d made under another key (name that key to check them)",
			n, key.ID(), checked, n-checked).Kind = kind
	case key != nil && found:
		add(CheckReceipts, true, "%d receipts match the store, MACs verified with key %s (the default key)", n, key.ID())
	case key != nil:
		add(CheckReceipts, true, "%d receipts match the store, MACs verified with key %s", n, key.ID())
	default:
		add(CheckReceipts, true, "%d receipts match the store (MACs not checked: no receipts key)", n).Kind = KindReceiptMACsUnchecked
	}
}

// receiptsNamed names up to three receipts by id (first, the first ids
// of n), and how many more.
func receiptsNamed(first []string, n int) string {
	ids := slices.Clone(first[:min(len(first), 3)])
	if n > 3 {
		ids = append(ids, fmt.Sprintf("and %d more", n-3))
	}
	return strings.Join(ids, ", ")
}

// strictDecode decodes an addition of a bundle (proof_of_read, receipts)
// into v as strictly as evidence.Verify reads the rest of the bundle: no
// unknown member, no member named twice or in other case than its tag
// (where encoding/json alone would verify one spelling while jq shows the
// other).
func strictDecode(data []byte, v any) error {
	if err := strictjson.Check(data, strictjson.Type(reflect.TypeOf(v))); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (s *Store) checkVerdicts(p *evidence.Predicate, m *manifest.Manifest, keys *probe.Keys, add addCheck) {
	var got evidenceVerdicts
	if err := strictDecode(p.ProofOfRead, &got); err != nil || got.VerdictRecord == nil {
		add(CheckProofOfRead, false, "proof_of_read is not a verdict record: %s", text.Printable(fmt.Sprint(err)))
		return
	}
	if err := identity.ValidateRunID(p.RunID); err != nil {
		add(CheckProofOfRead, false, "run id %q: %s", p.RunID, text.Printable(err.Error()))
		return
	}
	history, parents, copies, err := s.verdictChain(p.RunID)
	if err != nil {
		add(CheckProofOfRead, false, "reading the run's verdicts from the store: %v", err)
		return
	}
	want, _ := json.Marshal(got)
	for i, rec := range history {
		if rec.ID != got.VerdictsCommit {
			continue
		}
		have, _ := json.Marshal(evidenceVerdicts{VerdictsCommit: rec.ID, VerdictRecord: rec})
		if !bytes.Equal(have, want) {
			add(CheckProofOfRead, false, "verdict record %s differs from the one the store holds", text.Printable(got.VerdictsCommit))
			return
		}
		if rec.ManifestID != p.ManifestID {
			// the run's chain also holds checks of another manifest of the
			// run id (a pull's run conflict): export leaves them out
			add(CheckProofOfRead, false, "verdict record %s judges manifest %s of run %s, not this bundle's manifest %s", rec.ID, text.Printable(rec.ManifestID), rec.RunID, p.ManifestID)
			return
		}
		// The commit the bundle names must hold the record as readproof
		// wrote it: a file beside verdicts.json shows reviewers (`git
		// show` of the chain) as part of the check what it does not hold.
		if c, err := s.git.Commit(gitstore.OID(rec.ID)); err != nil {
			add(CheckProofOfRead, false, "reading verdict record %s: %v", rec.ID, err)
			return
		} else if entries, err := s.git.Tree(c.Tree); err != nil {
			add(CheckProofOfRead, false, "reading verdict record %s's tree: %v", rec.ID, err)
			return
		} else if extra := VerdictTreeExtra(entries); extra != "" {
			add(CheckProofOfRead, false, "verdict record %s holds %s, which is not part of the verdict record: yet `git show` of the chain shows it with the check (%s); readproof did not write this commit (`readproof verify` names it)", rec.ID, text.Printable(extra), VerdictTreeRule)
			return
		}
		// as verify and pull judge a chain (PROBE_PROTOCOL.md §10.6): the
		// record and the records before it; a merge copy stands as the
		// record it copies
		chain := chainBefore(history, parents, copies, i)
		if len(chain) == 0 {
			break
		}
		j := JudgeVerdictChain(chain, keys)[len(chain)-1]
		// a record its chain's rules pass that was still written without
		// the key (before session 29 both passed): one code path with
		// readproof verify's
		var mounted map[int]bool
		if why := s.VerdictWithoutKey(rec, j, m, keys, &mounted); why != "" {
			add(CheckProofOfRead, false, "%s", why)
			return
		}
		switch {
		case j.Standing == VerdictStripped:
			add(CheckProofOfRead, false, "verdict record %s of run %s (check %d) carries no MAC, but check %d before it in the chain does: its MAC was stripped, or it was appended without the probe key", rec.ID, rec.RunID, rec.Check, j.Before.Check)
			return
		case j.Standing == VerdictRotatedBackwards:
			add(CheckProofOfRead, false, "verdict record %s of run %s (check %d) names key %q, but check %d before it in the chain is under the probe key in use: keys only rotate forward", rec.ID, rec.RunID, rec.Check, text.Printable(rec.MACKey), j.Before.Check)
			return
		case j.Standing == VerdictFails:
			add(CheckProofOfRead, false, "verdict record %s of run %s: %s", rec.ID, rec.RunID, text.Printable(j.Err.Error()))
			return
		}
		auth, kind := "its MAC was not checked (no probe key)", KindVerdictMACUnchecked
		switch {
		case j.Standing == VerdictUnauthenticated:
			// key or no key: nothing to check (before session 30's
			// re-read, without a key, "not checked (no probe key)")
			auth, kind = "it carries no MAC (recorded before verdict records were authenticated)", KindVerdictNoMAC
		case keys == nil:
		case j.Standing == VerdictVerified:
			auth, kind = "its MAC verifies under the probe key", ""
		case j.Standing == VerdictOtherKey:
			auth, kind = "it is authenticated under another probe key, so its MAC was not checked", KindVerdictMACOtherKey
		}
		if rec.ClockOverride {
			// as `manifest` marks it: a back-dated check can give
			// READ_VERIFIED to an answer the clock would find stale
			auth += fmt.Sprintf("; it judged the answer as of %s, a time given with probe check --at, not read from the clock", rec.CheckedAt.UTC().Format(time.RFC3339))
		}
		add(CheckProofOfRead, true, "check %d of run %s (%d verdicts) is verdict record %s; %s", rec.Check, rec.RunID, len(rec.Entries), rec.ID, auth).Kind = kind
		return
	}
	add(CheckProofOfRead, false, "verdict record %s is not in the store's verdict chain of run %s", text.Printable(got.VerdictsCommit), p.RunID)
}

// timeString renders a time as bundles do: RFC 3339 in UTC, fraction
// trimmed, "" for the zero time.
func timeString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
