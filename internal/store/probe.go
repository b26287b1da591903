package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/strictjson"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// Proof-of-read records (docs/store-format.md, "Proof-of-read verdicts").
const (
	// VerdictsPrefix holds one verdict chain per checked run:
	// refs/heads/readproof/verdicts/<run-id>.
	VerdictsPrefix = "refs/heads/readproof/verdicts/"
	// VerdictsFormat is the "format" member of verdicts.json.
	VerdictsFormat = "readproof-verdicts/1"
	// verdictsFile is the one file of a verdict commit's tree.
	verdictsFile = "verdicts.json"
)

// ErrVerdicts is wrapped by every refusal to record or read a verdict record.
var ErrVerdicts = errors.New("invalid proof-of-read verdict record")

func verdictRef(runID string) string { return VerdictsPrefix + runID }

// Now returns the store's clock in UTC: the time mounts and checks use.
func (s *Store) Now() time.Time { return s.now() }

// MountWithPosition is Mount with a hook that may change the entry (the
// proof-of-read path sets Entry.Probe) and that depends on the entry's
// position (the proof-of-read session is RUNID.POSITION.cTAG). decorate runs
// inside the publish step, after d.Position holds the position the entry is
// about to be recorded at, and runs again whenever a concurrent mount takes
// that position first. It must therefore derive everything it sets from d
// and the position alone, and whatever it hands to the caller must be taken
// from its last invocation.
func (s *Store) MountWithPosition(ctx context.Context, runID, ref string, decorate func(*Delivery) error) (*Delivery, error) {
	ctx, span := startMount(ctx, runID)
	d, err := s.mountWithPosition(ctx, runID, ref, decorate)
	endMount(span, d, err)
	return d, err
}

func (s *Store) mountWithPosition(ctx context.Context, runID, ref string, decorate func(*Delivery) error) (*Delivery, error) {
	if _, _, err := s.mountTip(runID); err != nil {
		return nil, err
	}
	b := newRunBatch(1)
	d, err := s.resolve(ctx, ref, b)
	if err != nil {
		return nil, err
	}
	err = s.publish(b, func() ([]gitstore.RefUpdate, error) {
		return s.appendEntries(runID, []*Delivery{d}, decorate)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// VerdictRecord is verdicts.json: the outcome of one `probe check` of a
// committed run, with the adjudication state carried forward from earlier
// checks. It never holds a sentinel or the answer itself.
type VerdictRecord struct {
	// ID is the verdict commit; it is not part of verdicts.json.
	ID     string `json:"-"`
	Format string `json:"format"`
	RunID  string `json:"run_id"`
	// ManifestID is the manifest the verdicts are about; the manifest
	// commit itself is never changed by a check.
	ManifestID string `json:"manifest_id"`
	// CheckedAt is the adjudication time; ClockOverride says it was given
	// on the command line (--at) rather than read from the clock.
	CheckedAt     time.Time `json:"checked_at"`
	ClockOverride bool      `json:"clock_override,omitempty"`
	// Check counts the checks of this run, 1 for the first.
	Check   int            `json:"check"`
	Entries []VerdictEntry `json:"entries"`
	// MACKey names the probe key the record is authenticated under
	// (probe.Keys.RecordKeyID) and MAC authenticates every other member and
	// the record's place in its chain (VerdictMACInput). Both are absent in
	// records written before verdict records were authenticated.
	MACKey string `json:"mac_key,omitempty"`
	MAC    string `json:"mac,omitempty"`
}

// VerdictEntry is the verdict of one probed manifest entry.
type VerdictEntry struct {
	Position int    `json:"position"`
	URI      string `json:"uri"`
	// Session is the probe session of the entry: RUNID.POSITION.cTAG
	// (RUNID.POSITION for entries mounted before the content tag).
	Session string `json:"session"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	// Bucket is the time bucket the entry's sentinel was issued for (from
	// the manifest's probe record); AgeSeconds is set when the answer
	// quoted the entry's own sentinel.
	Bucket     int64  `json:"bucket"`
	AgeSeconds *int64 `json:"age_seconds,omitempty"`
	// AnswerSHA256 identifies the answer judged: sha256:<hex> of its bytes.
	AnswerSHA256 string `json:"answer_sha256"`
	// DeliveredHashVerified: the checker's key recomputed the delivered
	// bytes and they hash to the manifest's probe.delivered_hash, so the
	// key is the one the entry was mounted with.
	DeliveredHashVerified bool `json:"delivered_hash_verified"`
	// Adjudicated is true once a check gave the entry a positive verdict
	// (READ_VERIFIED or READ_STALE); AdjudicatedVerdict and AdjudicatedAt
	// keep that first positive verdict and its time. Later checks that see
	// the sentinel again judge it REPLAY_SUSPECT.
	Adjudicated        bool       `json:"adjudicated"`
	AdjudicatedVerdict string     `json:"adjudicated_verdict,omitempty"`
	AdjudicatedAt      *time.Time `json:"adjudicated_at,omitempty"`
}

// Entry returns the verdict of the entry at position, or nil.
func (r *VerdictRecord) Entry(position int) *VerdictEntry {
	if r == nil {
		return nil
	}
	for i := range r.Entries {
		if r.Entries[i].Position == position {
			return &r.Entries[i]
		}
	}
	return nil
}

// validate checks a record against the run's manifest before it is stored.
func (r *VerdictRecord) validate(runID string, m *manifest.Manifest) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w for run %s: %s", ErrVerdicts, runID, fmt.Sprintf(format, args...))
	}
	switch {
	case r.Format != VerdictsFormat:
		return bad("format %q, want %q", r.Format, VerdictsFormat)
	case r.RunID != runID:
		return bad("record names run %q", r.RunID)
	case r.ManifestID != m.ID:
		return bad("record names manifest %s, the run's manifest is %s", r.ManifestID, m.ID)
	case r.CheckedAt.IsZero():
		return bad("no check time")
	case r.Check < 1:
		return bad("check number %d", r.Check)
	case len(r.Entries) == 0:
		return bad("no verdicts")
	}
	last := -1
	for _, v := range r.Entries {
		if v.Position <= last {
			return bad("entries out of order at position %d", v.Position)
		}
		last = v.Position
		if v.Position >= len(m.Entries) {
			return bad("position %d is not in the manifest (%d entries)", v.Position, len(m.Entries))
		}
		me := m.Entries[v.Position]
		if me.Probe == nil {
			return bad("entry %d was not delivered with a probe", v.Position)
		}
		if v.URI != me.URI || v.Bucket != me.Probe.Bucket {
			return bad("entry %d does not match the manifest", v.Position)
		}
		if v.Verdict == "" || strings.ContainsAny(v.Verdict+v.Reason+v.Session, "\n\r") {
			return bad("entry %d has an empty verdict or a line break", v.Position)
		}
		if !strings.HasPrefix(v.AnswerSHA256, "sha256:") || len(v.AnswerSHA256) != len("sha256:")+64 {
			return bad("entry %d: answer hash %q is not sha256:<64 hex>", v.Position, v.AnswerSHA256)
		}
	}
	return nil
}

// readVerdicts decodes the record stored in verdict commit id.
func (s *Store) readVerdicts(runID string, id gitstore.OID) (*VerdictRecord, gitstore.Commit, error) {
	c, err := s.git.Commit(id)
	if err != nil {
		return nil, c, fmt.Errorf("verdicts of run %s: %w", runID, err)
	}
	data, err := s.readFile(c, verdictsFile)
	if err != nil {
		return nil, c, fmt.Errorf("%w: verdicts of run %s, commit %s: %w", ErrVerdicts, runID, id, err)
	}
	r, err := decodeVerdicts(runID, data)
	if err != nil {
		return nil, c, fmt.Errorf("verdict commit %s: %w", id, err)
	}
	r.ID = string(id)
	return r, c, nil
}

// decodeVerdicts parses verdicts.json of runID. Unknown members are
// refused, so a record written by a newer format is not misread.
func decodeVerdicts(runID string, data []byte) (*VerdictRecord, error) {
	if err := checkVerdictNames(data); err != nil {
		return nil, fmt.Errorf("%w: verdicts of run %s: %w", ErrVerdicts, runID, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r VerdictRecord
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: verdicts of run %s: %w", ErrVerdicts, runID, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: verdicts of run %s: data after the JSON object", ErrVerdicts, runID)
	}
	if r.Format != VerdictsFormat || r.RunID != runID {
		return nil, fmt.Errorf("%w: format %q for run %q, not %s verdicts of run %s", ErrVerdicts, r.Format, r.RunID, VerdictsFormat, runID)
	}
	return &r, nil
}

// checkVerdictNames refuses verdicts.json whose objects name a member twice
// or spell a name other than exactly as VerdictRecord and VerdictEntry tag
// it. encoding/json alone keeps the last of two members and matches names
// case-insensitively, so {"verdict":"READ_VERIFIED","Verdict":"HALLUCINATED"}
// would be authenticated as HALLUCINATED and read by jq as READ_VERIFIED.
// Which object a name belongs in is left to the decoder's unknown-member
// check. The rule is strictjson's.
func checkVerdictNames(data []byte) error {
	return strictjson.Check(data, strictjson.Closed{Known: verdictMember, Deep: true})
}

// verdictMember reports whether name is a member of verdicts.json (of the
// record or of an entry), spelt as its tag spells it.
func verdictMember(name string) bool {
	switch name {
	case "format", "run_id", "manifest_id", "checked_at", "clock_override", "check", "entries", "mac_key", "mac",
		"position", "uri", "session", "verdict", "reason", "bucket", "age_seconds", "answer_sha256",
		"delivered_hash_verified", "adjudicated", "adjudicated_verdict", "adjudicated_at":
		return true
	}
	return false
}

// Verdicts returns the latest proof-of-read verdicts of a run, or nil (and
// no error) when the run was never checked.
func (s *Store) Verdicts(runID string) (*VerdictRecord, error) {
	if err := validRun(runID); err != nil {
		return nil, err
	}
	tip, err := s.ref(verdictRef(runID))
	if err != nil || tip == "" {
		return nil, err
	}
	r, _, err := s.readVerdicts(runID, tip)
	return r, err
}

// VerdictHistory returns every recorded check of a run, newest first.
func (s *Store) VerdictHistory(runID string) ([]*VerdictRecord, error) {
	if err := validRun(runID); err != nil {
		return nil, err
	}
	tip, err := s.ref(verdictRef(runID))
	if err != nil {
		return nil, err
	}
	var out []*VerdictRecord
	for id := tip; id != ""; {
		r, c, err := s.readVerdicts(runID, id)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
		id = ""
		if len(c.Parents) > 0 {
			id = c.Parents[0]
		}
	}
	return out, nil
}

// RecordVerdicts is RecordVerdictsWithKey without a probe key: the record
// carries no MAC, which verify reports. It is for tests and tools that hold
// no key; the CLI and the MCP server pass theirs.
func (s *Store) RecordVerdicts(runID string, build func(m *manifest.Manifest, prev *VerdictRecord) (*VerdictRecord, error)) (*VerdictRecord, error) {
	return s.RecordVerdictsWithKey(runID, probe.Keys{}, build)
}

// carryAdjudications marks adjudicated in prev, the record a check
// continues from, every entry that an older record of the run says was
// adjudicated: any record reachable from from (through every parent) or
// from journal, the verdict record of the check the journal records for the
// run ("" when it records none). Adjudication only goes
// from false to true (docs/store-format.md), so a record appended without
// the probe key (its MAC stripped, or named under a made-up key id, which
// CheckVerdictMAC cannot refuse), or a chain replaced by such a record,
// cannot reset replay protection: the sentinel stays REPLAY_SUSPECT. The
// earliest first positive verdict found is kept.
func (s *Store) carryAdjudications(runID string, prev *VerdictRecord, from, journal gitstore.OID) error {
	stack := []gitstore.OID{from}
	if journal != "" {
		stack = append(stack, journal)
	}
	seen := map[gitstore.OID]bool{}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[id] {
			continue
		}
		seen[id] = true
		rec, c, err := s.readVerdicts(runID, id)
		if err != nil {
			return err
		}
		stack = append(stack, c.Parents...)
		if rec.ManifestID != prev.ManifestID {
			continue
		}
		for _, v := range rec.Entries {
			if !v.Adjudicated {
				continue
			}
			pv := prev.Entry(v.Position)
			if pv == nil {
				prev.Entries = append(prev.Entries, VerdictEntry{Position: v.Position})
				pv = &prev.Entries[len(prev.Entries)-1]
			}
			if pv.Adjudicated && (pv.AdjudicatedAt == nil || v.AdjudicatedAt == nil || !v.AdjudicatedAt.Before(*pv.AdjudicatedAt)) {
				continue
			}
			pv.Adjudicated, pv.AdjudicatedVerdict, pv.AdjudicatedAt = true, v.AdjudicatedVerdict, v.AdjudicatedAt
		}
	}
	return nil
}

// ownManifest refuses a check of run id (committed as m) through a handle
// of a caller other than the one its manifest names: the verdicts are what
// the run's manifest shows, and, as ownRun keeps one caller to a run's
// entries, only that caller (or the store's own user, a handle without a
// caller) may record them.
func (s *Store) ownManifest(id string, m *manifest.Manifest) error {
	return s.callerOwns(id, "committed", m.Caller, "manifests",
		"check a run of your own: a run's proof-of-read verdicts are recorded by the caller its manifest names; an operator can check any run from the command line")
}

// RecordVerdictsWithKey appends one check to the verdict chain of a committed run.
// build receives the latest record (nil for the first check) and returns
// the new one; it runs again, on the newer record, whenever another check
// of the same run lands first, so concurrent checks cannot both adjudicate
// one sentinel. The manifest commit is not touched.
//
// The new record is authenticated under keys (CheckVerdictMAC), and the
// latest record is checked under them before its adjudication state is
// carried forward: a record that fails its MAC is refused. The check is also
// recorded on the journal, in the same ref transaction; when the chain's
// ref is missing but the journal records a check of the run, the chain is
// continued from that record (and its ref restored), so deleting the ref
// does not reset replay protection.
func (s *Store) RecordVerdictsWithKey(runID string, keys probe.Keys, build func(m *manifest.Manifest, prev *VerdictRecord) (*VerdictRecord, error)) (*VerdictRecord, error) {
	if err := validRun(runID); err != nil {
		return nil, err
	}
	mid, err := s.ref(runRef(runID))
	if err != nil {
		return nil, err
	}
	if mid == "" {
		if open, _ := s.ref(openRef(runID)); open != "" {
			if s.abortedTip(runID, open) {
				return nil, hint.With(fmt.Errorf("run %s was aborted: %w", runID, ErrUnknownTarget), "open it again with: readproof run reopen "+runID)
			}
			return nil, hint.With(fmt.Errorf("run %s is still open: %w", runID, ErrUnknownTarget), "commit it first: readproof run commit "+runID)
		}
		return nil, hint.With(fmt.Errorf("run %s: %w", runID, ErrUnknownTarget), "list runs with: readproof run list")
	}
	m, err := s.ManifestAt(mid)
	if err != nil {
		return nil, err
	}
	if err := s.ownManifest(runID, m); err != nil {
		return nil, err
	}
	var out *VerdictRecord
	err = retry("probe check", func() error {
		tip, err := s.ref(verdictRef(runID))
		if err != nil {
			return err
		}
		// The journal is read once: for the record to continue from when
		// the chain's ref is gone, and for the adjudications it carries.
		recorded, err := s.RecordedChecks()
		if err != nil {
			return err
		}
		journal := recorded[runID].Verdicts // "": the journal records no check
		from := tip                         // the record to continue from
		if tip == "" {
			from = journal
		}
		var prev *VerdictRecord
		var parents []gitstore.OID
		if from != "" {
			if prev, _, err = s.readVerdicts(runID, from); err != nil {
				return err
			}
			if prev.ManifestID != m.ID {
				return fmt.Errorf("%w: the chain of run %s is about manifest %s, the run's manifest is %s", ErrVerdicts, runID, prev.ManifestID, m.ID)
			}
			grand, err := s.VerdictMACParent(from)
			if err != nil {
				return err
			}
			if err := CheckVerdictMAC(prev, grand, keys); keys.Valid() && errors.Is(err, ErrVerdictMAC) {
				return hint.With(fmt.Errorf("%w: %w", ErrVerdicts, err),
					"the verdict chain of run "+runID+" was changed by someone without the probe key; `readproof verify` names the record; restore the chain from a clone before checking again")
			}
			if err := s.carryAdjudications(runID, prev, from, journal); err != nil {
				return err
			}
			parents = []gitstore.OID{from}
		}
		r, err := build(m, prev)
		if err != nil {
			return err
		}
		if err := r.validate(runID, m); err != nil {
			return err
		}
		// Times are stored in UTC, the form the MAC input uses.
		r.CheckedAt = r.CheckedAt.UTC()
		for i := range r.Entries {
			if at := r.Entries[i].AdjudicatedAt; at != nil {
				u := at.UTC()
				r.Entries[i].AdjudicatedAt = &u
			}
		}
		r.MACKey, r.MAC = "", ""
		if keys.Valid() {
			if err := r.seal(keys, from); err != nil {
				return err
			}
		}
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		blob, err := s.git.PutBlob(append(data, '\n'))
		if err != nil {
			return err
		}
		tree, err := s.git.PutTree([]gitstore.TreeEntry{{Name: verdictsFile, Mode: gitstore.ModeFile, OID: blob}})
		if err != nil {
			return err
		}
		sig := s.signature(s.now())
		c, err := s.git.PutCommit(gitstore.Commit{Tree: tree, Parents: parents, Author: sig, Committer: sig, Message: verdictMessage(r)})
		if err != nil {
			return err
		}
		ups := []gitstore.RefUpdate{{Name: verdictRef(runID), Old: tip, New: c}}
		main, err := s.ref(JournalRef)
		if err != nil {
			return err
		}
		if main != "" {
			tree, err := JournalTree(s.git, []gitstore.OID{main}, "")
			if err != nil {
				return err
			}
			j, err := s.git.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{main, c}, Author: sig, Committer: sig, Message: journalCheckMessage(r, c)})
			if err != nil {
				return err
			}
			ups = append(ups, gitstore.RefUpdate{Name: JournalRef, Old: main, New: j})
		}
		if err := s.git.Update(ups...); err != nil {
			return err
		}
		r.ID = string(c)
		out = r
		return nil
	})
	return out, err
}

func verdictMessage(r *VerdictRecord) string {
	var b strings.Builder
	word := "verdicts"
	if len(r.Entries) == 1 {
		word = "verdict"
	}
	fmt.Fprintf(&b, "probe check %s: %d %s\n\nmanifest %s\nchecked-at %s\n\n", r.RunID, len(r.Entries), word, r.ManifestID, r.CheckedAt.UTC().Format(time.RFC3339))
	for _, v := range r.Entries {
		fmt.Fprintf(&b, "%d %s %s\n", v.Position, v.URI, v.Verdict)
	}
	fmt.Fprintf(&b, "\nReadproof-Run: %s\nReadproof-Manifest: %s\n", r.RunID, r.ManifestID)
	return b.String()
}
