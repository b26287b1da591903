package store

import (
	"errors"
	"slices"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/probe"
)

// VerdictLink is one record of a verdict chain and the first parent its MAC
// was computed with (VerdictMACParent). A sync merge that copies its first
// parent's record is no link of its own: the copied record stands for it.
type VerdictLink struct {
	Record *VerdictRecord
	Parent gitstore.OID
}

// VerdictStanding is where a verdict record stands under the authentication
// rules of docs/PROBE_PROTOCOL.md §10.6.
type VerdictStanding int

const (
	// VerdictNotChecked: no probe key, and the record carries a MAC (or
	// names a key) that was therefore not checked.
	VerdictNotChecked VerdictStanding = iota
	// VerdictVerified: the MAC authenticates the record under the key in use.
	VerdictVerified
	// VerdictUnauthenticated: no MAC, and no older record of the chain has
	// one (written before records were authenticated): a warning.
	VerdictUnauthenticated
	// VerdictOtherKey: under another key, and no older record of the chain
	// verifies under the key in use (rotated since): a warning.
	VerdictOtherKey
	// VerdictFails: the MAC does not authenticate the record: broken.
	VerdictFails
	// VerdictStripped: no MAC although Before, an older record of the
	// chain, has one (its MAC was stripped, or it was written without the
	// key): broken. Judged with or without the key.
	VerdictStripped
	// VerdictRotatedBackwards: under another key although Before, an older
	// record of the chain, verifies under the key in use; keys only rotate
	// forward, so it was written without the key: broken.
	VerdictRotatedBackwards
)

// Broken reports whether the standing makes the record broken.
func (s VerdictStanding) Broken() bool {
	return s == VerdictFails || s == VerdictStripped || s == VerdictRotatedBackwards
}

// VerdictJudgement is the standing of one record of a chain.
type VerdictJudgement struct {
	Standing VerdictStanding
	// Err is CheckVerdictMAC's error for the record: nil when it verifies
	// or was not checked; for a record without a MAC, with or without the
	// key, the ErrVerdictUnauthenticated error.
	Err error
	// Before is the older record that makes a stripped record or one
	// rotated backwards broken: the nearest that has a MAC, or that
	// verifies under the key in use.
	Before *VerdictRecord
}

// JudgeVerdictChain judges the records of one verdict chain, oldest first
// (the first check of the run, or as far back as the caller could read),
// and returns each record's standing in the same order. With keys nil the
// MACs are not checked, and only a stripped MAC is found. Verify, evidence
// verify and pull judge chains with it, so the three agree: a record without
// a MAC after any record that has one is stripped, and a record under
// another key after any record under the key in use rotated backwards.
func JudgeVerdictChain(chain []VerdictLink, keys *probe.Keys) []VerdictJudgement {
	out := make([]VerdictJudgement, len(chain))
	var withMAC, verified *VerdictRecord // the newest older record that has a MAC / verifies
	for i, l := range chain {
		r := l.Record
		j := &out[i]
		switch {
		case r.MAC == "" && withMAC != nil:
			j.Standing, j.Err, j.Before = VerdictStripped, unauthenticated(r), withMAC
		case keys == nil:
			if r.MAC == "" && r.MACKey == "" {
				j.Standing, j.Err = VerdictUnauthenticated, unauthenticated(r)
			}
		default:
			j.Err = CheckVerdictMAC(r, l.Parent, *keys)
			switch {
			case j.Err == nil:
				j.Standing = VerdictVerified
				verified = r
			case errors.Is(j.Err, ErrVerdictUnauthenticated):
				j.Standing = VerdictUnauthenticated
			case errors.Is(j.Err, ErrVerdictOtherKey) && verified != nil:
				j.Standing, j.Before = VerdictRotatedBackwards, verified
			case errors.Is(j.Err, ErrVerdictOtherKey):
				j.Standing = VerdictOtherKey
			default:
				j.Standing = VerdictFails
			}
		}
		if r.MAC != "" {
			withMAC = r
		}
	}
	return out
}

// verdictChain reads run's verdict chain from its tip: every record, newest
// first, as VerdictHistory returns them, and for each whether it is a sync
// merge's copy of the next (copy[i]) and the first parent of its commit.
func (s *Store) verdictChain(runID string) (recs []*VerdictRecord, parents []gitstore.OID, copies []bool, err error) {
	if err := validRun(runID); err != nil {
		return nil, nil, nil, err
	}
	tip, err := s.ref(verdictRef(runID))
	if err != nil {
		return nil, nil, nil, err
	}
	var newer gitstore.Commit
	for id := tip; id != ""; {
		r, c, err := s.readVerdicts(runID, id)
		if err != nil {
			return nil, nil, nil, err
		}
		if n := len(recs); n > 0 {
			copies[n-1] = IsVerdictMergeCopy(newer, c.Tree)
		}
		id = ""
		if len(c.Parents) > 0 {
			id = c.Parents[0]
		}
		recs, parents, copies = append(recs, r), append(parents, id), append(copies, false)
		newer = c
	}
	return recs, parents, copies, nil
}

// chainBefore is the chain JudgeVerdictChain takes, oldest first, of the
// records verdictChain read from index i on (newest first). A merge copy
// is no link of its own: the record it copies is judged in its place, under
// the copy's commit id (the record the caller was asked about).
func chainBefore(recs []*VerdictRecord, parents []gitstore.OID, copies []bool, i int) []VerdictLink {
	var out []VerdictLink
	var copied *VerdictRecord
	for k := i; k < len(recs); k++ {
		if copies[k] {
			if copied == nil {
				copied = recs[k]
			}
			continue
		}
		r := recs[k]
		if copied != nil {
			r, copied = copied, nil
		}
		out = append(out, VerdictLink{Record: r, Parent: parents[k]})
	}
	slices.Reverse(out)
	return out
}
