package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/readproof/readproof/gitstore"
)

// commitCounter counts the commits read through it.
type commitCounter struct {
	gitstore.Reader
	commits int
}

func (r *commitCounter) Commit(id gitstore.OID) (gitstore.Commit, error) {
	r.commits++
	return r.Reader.Commit(id)
}

// TestJournalReachesWithin: a bounded walk reads at most its limit of
// journal commits; it meets a record within them, and says when it stopped
// before meeting one further back (whole false), where the unbounded walk
// meets it. The export's journal check rests on it (journalCheckWalk).
func TestJournalReachesWithin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "Products can be refunded within 30 days.\n"})
	var ids []gitstore.OID
	for i := range 6 {
		run := fmt.Sprintf("r%d", i)
		if _, _, err := f.s.RunOnce(context.Background(), run, []string{"readproof://demo/policies/refunds"}); err != nil {
			t.Fatal(err)
		}
		m, err := f.s.Manifest(run)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, gitstore.OID(m.ID))
	}
	tip, err := f.s.ref(JournalRef)
	if err != nil || tip == "" {
		t.Fatalf("journal tip %q: %v", tip, err)
	}
	for _, c := range []struct {
		name       string
		want       gitstore.OID
		limit      int
		met, whole bool
		maxRead    int
	}{
		{"newest, within", ids[5], 2, true, true, 1},
		{"second newest, within", ids[4], 2, true, true, 2},
		{"oldest, past the limit", ids[0], 2, false, false, 2},
		{"oldest, no limit", ids[0], 0, true, true, 100},
	} {
		r := &commitCounter{Reader: f.s.git}
		met, whole, err := journalReachesWithin(r, tip, map[gitstore.OID]bool{c.want: true}, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if met[c.want] != c.met || whole != c.whole || r.commits > c.maxRead {
			t.Errorf("%s: met %v, whole %v, %d commits read; want met %v, whole %v, at most %d read", c.name, met[c.want], whole, r.commits, c.met, c.whole, c.maxRead)
		}
	}
}
