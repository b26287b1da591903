package store

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// Errors of CheckVerdictMAC, matched with errors.Is.
var (
	// ErrVerdictMAC: the record's MAC does not authenticate it (it was
	// edited, forged, or moved to another chain position).
	ErrVerdictMAC = errors.New("verdict record fails its MAC")
	// ErrVerdictUnauthenticated: the record carries no MAC (written before
	// records were authenticated).
	ErrVerdictUnauthenticated = errors.New("verdict record carries no MAC")
	// ErrVerdictOtherKey: the record is authenticated under another probe
	// key (the key was rotated since), so it cannot be checked here.
	ErrVerdictOtherKey = errors.New("verdict record is authenticated under another probe key")
)

// VerdictMACInput is the MAC input of verdict record r whose commit has the
// verdict commit parent as first parent ("" for the first check of a run):
// probe.RecordInput over, in this order, parent, format, run_id,
// manifest_id, checked_at, clock_override, check, mac_key, the number of
// entries, then for each entry position, uri, session, verdict, reason,
// bucket, age_seconds, answer_sha256, delivered_hash_verified, adjudicated,
// adjudicated_verdict and adjudicated_at. Integers are decimal, booleans
// "true"/"false", times RFC 3339 in UTC with the fraction git and Go print
// (time.RFC3339Nano), an absent clock_override "false" and the other absent
// optional members "". The rule and a test
// vector are in docs/PROBE_PROTOCOL.md §10.6.
func VerdictMACInput(r *VerdictRecord, parent string) []byte {
	fields := []string{
		parent, r.Format, r.RunID, r.ManifestID, macTime(r.CheckedAt), strconv.FormatBool(r.ClockOverride),
		strconv.Itoa(r.Check), r.MACKey, strconv.Itoa(len(r.Entries)),
	}
	for _, v := range r.Entries {
		age := ""
		if v.AgeSeconds != nil {
			age = strconv.FormatInt(*v.AgeSeconds, 10)
		}
		at := ""
		if v.AdjudicatedAt != nil {
			at = macTime(*v.AdjudicatedAt)
		}
		fields = append(fields, strconv.Itoa(v.Position), v.URI, v.Session, v.Verdict, v.Reason,
			strconv.FormatInt(v.Bucket, 10), age, v.AnswerSHA256, strconv.FormatBool(v.DeliveredHashVerified),
			strconv.FormatBool(v.Adjudicated), v.AdjudicatedVerdict, at)
	}
	return probe.RecordInput(fields...)
}

func macTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// seal sets r's mac_key and mac for a commit whose first parent is parent.
func (r *VerdictRecord) seal(keys probe.Keys, parent gitstore.OID) error {
	r.MACKey = keys.RecordKeyID()
	mac, err := keys.RecordMAC(VerdictMACInput(r, string(parent)))
	if err != nil {
		return err
	}
	r.MAC = mac
	return nil
}

// CheckVerdictMAC checks the MAC of verdict record r, stored in a commit
// whose first parent is parent ("" for none), under keys. It returns nil
// when the MAC authenticates the record; ErrVerdictMAC when it does not;
// ErrVerdictUnauthenticated when r has no MAC; ErrVerdictOtherKey when r
// names another key. verify, evidence verify and pull call it (pull holds
// the key when the user passes it).
func CheckVerdictMAC(r *VerdictRecord, parent gitstore.OID, keys probe.Keys) error {
	switch {
	case r.MAC == "" && r.MACKey == "":
		return unauthenticated(r)
	case r.MACKey != keys.RecordKeyID():
		return fmt.Errorf("verdict record %s of run %s (check %d) names key %q, the probe key in use is %q: %w",
			r.ID, r.RunID, r.Check, text.Printable(r.MACKey), keys.RecordKeyID(), ErrVerdictOtherKey)
	}
	if err := keys.CheckRecordMAC(VerdictMACInput(r, string(parent)), r.MAC); err != nil {
		return fmt.Errorf("verdict record %s of run %s (check %d): %w: it was edited, forged or moved after it was recorded", r.ID, r.RunID, r.Check, ErrVerdictMAC)
	}
	return nil
}

func unauthenticated(r *VerdictRecord) error {
	return fmt.Errorf("verdict record %s of run %s (check %d): %w", r.ID, r.RunID, r.Check, ErrVerdictUnauthenticated)
}

// Journal records of checks (docs/store-format.md, "Journal"): each check
// also adds a journal commit "record check RUN N" whose second parent is the
// verdict commit, so a verdict chain whose ref is deleted or rewound is
// detected by verify and recovered by the next check.
const journalCheckPrefix = "record check "

func journalCheckMessage(r *VerdictRecord, c gitstore.OID) string {
	return fmt.Sprintf("%s%s %d\n\nverdicts %s\n", journalCheckPrefix, r.RunID, r.Check, c)
}

// ParseJournalCheck reads a journal commit that records a check: the run id
// and the check number, and ok false for any other commit. The verdict
// commit is the journal commit's second parent.
func ParseJournalCheck(c gitstore.Commit) (runID string, check int, ok bool) {
	head, _, _ := strings.Cut(c.Message, "\n")
	rest, ok := strings.CutPrefix(head, journalCheckPrefix)
	if !ok || len(c.Parents) != 2 {
		return "", 0, false
	}
	runID, n, ok := strings.Cut(rest, " ")
	if !ok || validRun(runID) != nil {
		return "", 0, false
	}
	check, err := strconv.Atoi(n)
	if err != nil || check < 1 {
		return "", 0, false
	}
	return runID, check, true
}

// RecordedChecks walks the journal and returns, per run, the verdict commit
// of the highest check it records. It follows first parents of run and
// check records and both parents of journal merges, so it reads the journal
// and nothing the journal points at.
func (s *Store) RecordedChecks() (map[string]JournalCheck, error) {
	out := map[string]JournalCheck{}
	tip, err := s.ref(JournalRef)
	if err != nil || tip == "" {
		return out, err
	}
	seen := map[gitstore.OID]bool{tip: true}
	stack := []gitstore.OID{tip}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c, err := s.git.Commit(id)
		if err != nil {
			return nil, fmt.Errorf("read journal commit %s: %w", id, err)
		}
		parents := c.Parents
		if run, n, ok := ParseJournalCheck(c); ok {
			if cur, have := out[run]; !have || n > cur.Check {
				out[run] = JournalCheck{RunID: run, Check: n, Verdicts: c.Parents[1], Journal: id}
			}
			parents = parents[:1]
		} else if strings.HasPrefix(c.Message, "record run ") || strings.HasPrefix(c.Message, journalRenamePrefix) {
			parents = parents[:min(1, len(parents))]
		}
		for _, p := range parents {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return out, nil
}

// JournalCheck is the newest check of a run that the journal records.
type JournalCheck struct {
	RunID    string
	Check    int
	Verdicts gitstore.OID // the verdict commit
	Journal  gitstore.OID // the journal commit recording it
}

// Validate checks a decoded record against the run's manifest, as a check
// does before it stores one.
func (r *VerdictRecord) Validate(runID string, m *manifest.Manifest) error {
	return r.validate(runID, m)
}

// IsVerdictMergeCopy reports whether commit c of a verdict chain is a merge
// written by sync that carries its first parent's record unchanged (two
// parents, the tree of the first); parentTree is the first parent's tree.
func IsVerdictMergeCopy(c gitstore.Commit, parentTree gitstore.OID) bool {
	return len(c.Parents) == 2 && strings.HasPrefix(c.Message, "merge verdicts of run ") && c.Tree == parentTree
}

// VerdictMACParent returns the first parent that the MAC of the record in
// verdict commit id was computed with: the commit's first parent, or for a
// sync merge that copies its first parent's record, that record's.
func (s *Store) VerdictMACParent(id gitstore.OID) (gitstore.OID, error) {
	return VerdictMACParentIn(s.git, id)
}

// VerdictMACParentIn is VerdictMACParent on a bare repository, for sync,
// which checks records before they are adopted: with the record r of
// verdict commit id (DecodeVerdicts, r.ID set), a caller holding the probe
// key checks CheckVerdictMAC(r, VerdictMACParentIn(g, id), keys).
func VerdictMACParentIn(g gitstore.Store, id gitstore.OID) (gitstore.OID, error) {
	for {
		c, err := g.Commit(id)
		if err != nil {
			return "", err
		}
		if len(c.Parents) == 0 {
			return "", nil
		}
		p, err := g.Commit(c.Parents[0])
		if err != nil {
			return "", err
		}
		if !IsVerdictMergeCopy(c, p.Tree) {
			return c.Parents[0], nil
		}
		id = c.Parents[0]
	}
}
