package share

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// TestObservationAmbiguousMembersRefused: a remote's observation record that
// names a member twice, or in other case than the format spells it, is read
// one way by encoding/json (case-insensitive, the last wins) and another by
// jq or Python (the exact name): an auditor reading the pulled store with git
// and jq would see another time than readproof checked. Pull's check refuses
// such a record, as evidence bundles, receipts and verdicts are refused
// (internal/strictjson).
func TestObservationAmbiguousMembersRefused(t *testing.T) {
	t.Parallel()
	p := newProject(t, map[string]string{"doc": "the real text\n"})
	p.run(t, "first", "doc")
	g := p.s.Git()
	tip, err := g.Ref(store.ResourcesPrefix + "demo/doc")
	if err != nil {
		t.Fatal(err)
	}
	o, c, err := observationAt(g, tip)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	for name, member := range map[string]string{
		"other case": `"Observed_At":"1999-01-01T00:00:00Z",`,
		"repeated":   `"uri":"readproof://demo/elsewhere",`,
	} {
		// the added member comes first: encoding/json keeps the record's
		// own, later one (the case variant is matched to observed_at and
		// overwritten), so the record still passes every other check
		forged := append([]byte("{"+member), bytes.TrimPrefix(data, []byte("{"))...)
		id := withObservation(t, g, c, c.Parents, forged)
		err = checkObservation(g, id, "readproof://demo/doc", verifiedSet{})
		if err == nil || !strings.Contains(err.Error(), "observation "+string(id)) || !strings.Contains(err.Error(), "member") {
			t.Errorf("%s: checkObservation of %s = %v; want the record refused, naming the observation and the member", name, forged, err)
		}
	}
}

// withObservation writes a commit like c, on parents, whose
// observation.json holds data, and returns its id.
func withObservation(t *testing.T, g gitstore.Store, c gitstore.Commit, parents []gitstore.OID, data []byte) gitstore.OID {
	t.Helper()
	ob, err := g.PutBlob(data)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := g.Tree(c.Tree)
	if err != nil {
		t.Fatal(err)
	}
	for i := range entries {
		if entries[i].Name == "observation.json" {
			entries[i].OID = ob
		}
	}
	tree, err := g.PutTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	id, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: parents, Author: c.Author, Committer: c.Committer, Message: c.Message})
	if err != nil {
		t.Fatal(err)
	}
	return id
}
