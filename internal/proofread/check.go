package proofread

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// MaxAnswerBytes bounds the answer a check reads.
const MaxAnswerBytes = 16 << 20

// ErrNotProbed is returned by Check for a run without probed entries.
var ErrNotProbed = errors.New("no probed entries: nothing to check")

// ErrAnswerTooLarge is returned by Check for an answer over MaxAnswerBytes.
var ErrAnswerTooLarge = fmt.Errorf("answer is larger than %d MiB", MaxAnswerBytes>>20)

// Report is a recorded verdict record with its commit id: the --json shape
// of `probe check` and of the proof-of-read part of `manifest`.
type Report struct {
	Commit string `json:"verdict_commit"`
	*store.VerdictRecord
	// MACCheck is the outcome of checking the record's MAC when it is
	// shown (`manifest`): one of the MAC* constants; "" when not checked
	// there. MACProblem says what failed.
	MACCheck   string `json:"mac_check,omitempty"`
	MACProblem string `json:"mac_problem,omitempty"`
}

// CheckOptions say how to judge an answer.
type CheckOptions struct {
	// Keys is the offline probe key the run was mounted with.
	Keys probe.Keys
	// At, when not zero, adjudicates as of that time instead of the
	// store's clock (recorded as a clock override).
	At time.Time
}

// Manifest returns the manifest of target (a run id or manifest id) when
// it has probed entries, else an error wrapping ErrNotProbed.
func Manifest(s *store.Store, target string) (*manifest.Manifest, error) {
	m, err := s.Manifest(target)
	if err != nil {
		return nil, err
	}
	if probedCount(m) == 0 {
		return nil, fmt.Errorf("run %s has %w", m.RunID, ErrNotProbed)
	}
	return m, nil
}

// Check judges answer against the probed entries of m and records one
// verdict per entry (the manifest is not changed).
func Check(_ context.Context, s *store.Store, m *manifest.Manifest, answer []byte, opts CheckOptions) (*store.VerdictRecord, error) {
	if len(answer) > MaxAnswerBytes {
		return nil, ErrAnswerTooLarge
	}
	now, override := s.Now(), false
	if !opts.At.IsZero() {
		now, override = opts.At, true
	}
	// A check goes to the chain of the run id m records, and judges the
	// manifest that id's run ref names. After `conflicts rename` that may
	// be another manifest (the one kept as a conflict took the id), or
	// none: refused, naming both (before session 31's re-read a check of
	// the renamed run judged the other side's manifest, or failed on the
	// chain's newest record, or found no run).
	run, err := s.Manifest(m.RunID)
	if err != nil && !errors.Is(err, store.ErrUnknownTarget) {
		return nil, err
	}
	if err != nil || run.ID != m.ID {
		return nil, notItsRun(m, run)
	}
	judge := Judge(opts.Keys, s, answer, now, override)
	return s.RecordVerdictsWithKey(m.RunID, opts.Keys, func(run *manifest.Manifest, prev *store.VerdictRecord) (*store.VerdictRecord, error) {
		if run.ID != m.ID { // renamed meanwhile
			return nil, notItsRun(m, run)
		}
		return judge(run, prev)
	})
}

// ErrNotItsRun is returned by Check for a manifest whose recorded run id
// names another manifest, or no run: a renamed run, or a conflict kept by a
// pull.
var ErrNotItsRun = errors.New("cannot record a check")

func notItsRun(m, run *manifest.Manifest) error {
	now := "no run"
	if run != nil {
		now = "manifest " + run.ID
	}
	return hint.With(fmt.Errorf("%w of manifest %s: it records run %s, which now names %s (after `readproof conflicts rename`, or a conflict a pull kept), and a check goes to the verdict chain of run %s and judges that run's manifest, not this one",
		ErrNotItsRun, m.ID, m.RunID, now, m.RunID),
		"the checks of "+m.ID+" recorded before the rename stay valid (`readproof verify` and `readproof evidence export` use them); to check an answer again, record the run again under a new id")
}

func probedCount(m *manifest.Manifest) int {
	n := 0
	for _, en := range m.Entries {
		if en.Probe != nil {
			n++
		}
	}
	return n
}

// Judge builds the verdict record of one check from the manifest and the
// previous record (which says which sentinels were already adjudicated).
func Judge(keys probe.Keys, s *store.Store, answer []byte, now time.Time, override bool) func(*manifest.Manifest, *store.VerdictRecord) (*store.VerdictRecord, error) {
	answerHash := SHA256(answer)
	return func(m *manifest.Manifest, prev *store.VerdictRecord) (*store.VerdictRecord, error) {
		var entries []manifest.Entry
		var issued []probe.Issued
		var deliveredOK, adjudicated []bool
		for _, en := range m.Entries {
			if en.Probe == nil {
				continue
			}
			var content []byte
			if c, err := s.Content(en.Snapshot); err == nil && SHA256(c) == en.ContentHash {
				content = c
			}
			iss, ok, err := issuance(keys, m.RunID, en, content)
			if err != nil {
				return nil, err
			}
			entries = append(entries, en)
			issued = append(issued, iss)
			deliveredOK = append(deliveredOK, ok)
			pv := prev.Entry(en.Position)
			adjudicated = append(adjudicated, pv != nil && pv.Adjudicated)
		}
		results, err := keys.CheckAnswer(issued, string(answer), now, probe.AnswerOptions{Adjudicated: adjudicated})
		if err != nil {
			return nil, fmt.Errorf("manifest %s: %w", m.ID, err)
		}
		r := &store.VerdictRecord{Format: store.VerdictsFormat, RunID: m.RunID, ManifestID: m.ID, CheckedAt: now.UTC(), ClockOverride: override, Check: 1}
		if prev != nil {
			r.Check = prev.Check + 1
		}
		for i, en := range entries {
			res := results[i]
			v := store.VerdictEntry{Position: en.Position, URI: en.URI, Session: issued[i].Session, Verdict: string(res.Verdict),
				Reason: res.Reason, Bucket: issued[i].Bucket, AnswerSHA256: answerHash}
			if res.Matched {
				age := res.AgeSeconds
				v.AgeSeconds = &age
			}
			v.DeliveredHashVerified = deliveredOK[i]
			if pv := prev.Entry(en.Position); pv != nil && pv.Adjudicated {
				v.Adjudicated, v.AdjudicatedVerdict, v.AdjudicatedAt = true, pv.AdjudicatedVerdict, pv.AdjudicatedAt
			} else if res.Verdict == probe.ReadVerified || res.Verdict == probe.ReadStale {
				at := r.CheckedAt
				v.Adjudicated, v.AdjudicatedVerdict, v.AdjudicatedAt = true, string(res.Verdict), &at
			}
			r.Entries = append(r.Entries, v)
		}
		return r, nil
	}
}
