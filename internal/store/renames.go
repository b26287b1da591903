package store

import (
	"fmt"
	"slices"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
)

// Journal records of run renames (docs/sync.md, "Renaming a run"): a rename
// adds a journal commit "rename run OLD to NEW" whose body names the
// manifest renamed ("manifest ID"), on the journal's tip (0 or 1 parents).
// verify accepts a run ref naming a manifest recorded under another run id
// only through such a record.
const journalRenamePrefix = "rename run "

// JournalRenameMessage is the message of the journal commit that records
// the rename of manifest m from run id from to run id to.
func JournalRenameMessage(from, to string, m gitstore.OID) string {
	return fmt.Sprintf("%s%s to %s\n\nmanifest %s\n", journalRenamePrefix, from, to, m)
}

// ParseJournalRename reads the message of a journal commit that records a
// rename: the old and the new run id, and the manifests it names (each
// body line "manifest ID" with a well-formed object id; others are
// ignored). ok is false for any other message.
func ParseJournalRename(msg string) (from, to string, manifests []gitstore.OID, ok bool) {
	head, body, _ := strings.Cut(msg, "\n")
	pair, ok := strings.CutPrefix(head, journalRenamePrefix)
	if !ok {
		return "", "", nil, false
	}
	from, to, ok = strings.Cut(pair, " to ")
	if !ok || identity.ValidateRunID(from) != nil || identity.ValidateRunID(to) != nil {
		return "", "", nil, false
	}
	for _, line := range strings.Split(body, "\n") {
		if mid, ok := strings.CutPrefix(line, "manifest "); ok && identity.IsObjectID(mid) {
			manifests = append(manifests, gitstore.OID(mid))
		}
	}
	return from, to, manifests, true
}

// JournalRecordsRename reports whether the journal from tip records the
// rename of manifest m from run id from to run id to (ParseJournalRename).
// It walks the journal's own edges (eachJournalCommit: not into the
// manifests that run records name) and stops at the first such record.
func JournalRecordsRename(g gitstore.Reader, tip gitstore.OID, from, to string, m gitstore.OID) (bool, error) {
	found := false
	err := eachJournalCommit(g, []gitstore.OID{tip}, func(_ gitstore.OID, c gitstore.Commit, _ gitstore.OID) bool {
		if f, t, ms, ok := ParseJournalRename(c.Message); ok && f == from && t == to {
			found = slices.Contains(ms, m)
		}
		return found
	})
	return found, err
}

// JournalRenames reads every rename the journal from heads records
// (ParseJournalRename), in one walk of the journal's own edges: per
// manifest, each old run id with the ids it was renamed to.
func JournalRenames(g gitstore.Reader, heads []gitstore.OID) (map[gitstore.OID]map[string][]string, error) {
	out := map[gitstore.OID]map[string][]string{}
	err := eachJournalCommit(g, heads, func(_ gitstore.OID, c gitstore.Commit, _ gitstore.OID) bool {
		from, to, ms, ok := ParseJournalRename(c.Message)
		if !ok {
			return false
		}
		for _, m := range ms {
			if out[m] == nil {
				out[m] = map[string][]string{}
			}
			out[m][from] = append(out[m][from], to)
		}
		return false
	})
	return out, err
}

// RenameLeads reports whether the renames of one manifest (JournalRenames)
// lead from run id from to run id to, a rename of a rename included: what
// makes a run ref naming a manifest recorded under another id good.
func RenameLeads(edges map[string][]string, from, to string) bool {
	seen := map[string]bool{from: true}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, next := range edges[cur] {
			if next == to {
				return true
			}
			if !seen[next] {
				seen[next] = true
				queue = append(queue, next)
			}
		}
	}
	return false
}

// RenamedAway reports whether the renames of one manifest (JournalRenames),
// which records run id recorded, rename it away from run id from, the id
// it records: what lets a verdict record in the chain of from that names it
// stand after a run id conflict was settled (docs/PROBE_PROTOCOL.md §10.6;
// the record was a check of the manifest while it was run from, and a
// rename moves no verdict chain). A check goes only to the chain of the id
// its manifest records, so a journal record renaming a manifest away from
// any other id vouches for nothing (before session 31's last re-read one
// planted on a remote's journal made any record of that id's chain naming
// the manifest pass verify, pull, clone and the guard).
func RenamedAway(edges map[string][]string, recorded, from string) bool {
	return recorded == from && len(edges[from]) > 0
}
