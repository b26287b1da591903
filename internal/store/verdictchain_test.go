package store

import (
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/probe"
)

// TestJudgeVerdictChain: the authentication rules of PROBE_PROTOCOL.md
// §10.6 over a chain, oldest first: a record without a MAC after any
// record with one is stripped, one under another key after any record
// verified under the key in use rotated backwards, each naming the nearest
// such record; before them they are only unauthenticated or rotated since.
func TestJudgeVerdictChain(t *testing.T) {
	keys, err := probe.NewRandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	old, err := probe.NewRandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	var chain []VerdictLink
	add := func(k *probe.Keys) {
		parent := gitstore.OID("")
		if n := len(chain); n > 0 {
			parent = gitstore.OID(chain[n-1].Record.ID)
		}
		r := &VerdictRecord{Format: VerdictsFormat, RunID: "r", Check: len(chain) + 1, ID: string(rune('a'+len(chain))) + "0"}
		if k != nil {
			if err := r.seal(*k, parent); err != nil {
				t.Fatal(err)
			}
		}
		chain = append(chain, VerdictLink{Record: r, Parent: parent})
	}
	add(nil)                                                // 1: before authentication
	add(&old)                                               // 2: under the old key
	add(&keys)                                              // 3: rotated
	add(nil)                                                // 4: stripped (3 has a MAC)
	add(nil)                                                // 5: stripped (3, not 4, has a MAC)
	add(&old)                                               // 6: rotated backwards (3 verifies)
	add(&keys)                                              // 7
	chain[6].Record.Entries = []VerdictEntry{{Position: 0}} // 7 edited after its MAC
	want := []struct {
		s      VerdictStanding
		before int
	}{{VerdictUnauthenticated, 0}, {VerdictOtherKey, 0}, {VerdictVerified, 0}, {VerdictStripped, 3}, {VerdictStripped, 3}, {VerdictRotatedBackwards, 3}, {VerdictFails, 0}}
	for i, j := range JudgeVerdictChain(chain, &keys) {
		before := 0
		if j.Before != nil {
			before = j.Before.Check
		}
		if j.Standing != want[i].s || before != want[i].before || j.Standing.Broken() != (i >= 3) {
			t.Errorf("check %d: standing %d before %d, want %d before %d", i+1, j.Standing, before, want[i].s, want[i].before)
		}
	}
	// without the key only the stripped records are found
	for i, j := range JudgeVerdictChain(chain, nil) {
		if (j.Standing == VerdictStripped) != (i == 3 || i == 4) {
			t.Errorf("without a key, check %d: standing %d", i+1, j.Standing)
		}
	}
}
