package share

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// trackingUpdatesByMap is fetchListed's plan as it was before session 20:
// a map of every listed ref's tracking name, and the set of tips a
// tracking ref already names. The reference trackingUpdates must agree
// with.
func trackingUpdatesByMap(remote string, listed, tracking []gitstore.Ref) (ups []gitstore.RefUpdate, lookups map[gitstore.OID]bool) {
	specs := parseRefspecs(fetchRefspecs(remote))
	want := map[string]gitstore.OID{}
	for _, r := range listed {
		for _, spec := range specs {
			if dst, ok := spec.apply(r.Name); ok {
				want[dst] = r.OID
				break
			}
		}
	}
	held := map[gitstore.OID]bool{}
	for _, r := range tracking {
		if w, ok := want[r.Name]; ok && w == r.OID {
			held[r.OID] = true
		}
	}
	lookups = map[gitstore.OID]bool{}
	for _, r := range listed {
		if strings.HasPrefix(r.Name, store.RunsPrefix) && !held[r.OID] {
			lookups[r.OID] = true
		}
	}
	for _, r := range tracking {
		if w, ok := want[r.Name]; !ok {
			ups = append(ups, gitstore.RefUpdate{Name: r.Name, Old: r.OID})
		} else if w != r.OID {
			ups = append(ups, gitstore.RefUpdate{Name: r.Name, Old: r.OID, New: w})
		}
		delete(want, r.Name)
	}
	for name, oid := range want {
		ups = append(ups, gitstore.RefUpdate{Name: name, New: oid})
	}
	return ups, lookups
}

// TestTrackingUpdatesAsByMap: the join of the sorted listing and tracking
// refs plans what the maps did, on listings sorted or not, with names
// listed twice, refs no refspec maps, and tracking refs to prune; and it
// looks up the manifest of every listed run ref that moves or appears.
func TestTrackingUpdatesAsByMap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(20, 12))
	const remote = "origin"
	base := RemotesPrefix + remote + "/"
	oid := func() gitstore.OID { return gitstore.OID(fmt.Sprintf("%040x", rng.IntN(6))) }
	listable := func() string {
		k := fmt.Sprintf("k%d", rng.IntN(12))
		switch rng.IntN(9) {
		case 0:
			return store.ResourcesPrefix + "ns/" + k
		case 1:
			return store.TagsPrefix + "ns/" + k + "/prod"
		case 2:
			return "refs/heads/readproof/receipts/sessions/" + k
		case 3:
			return store.VerdictsPrefix + k
		case 4:
			return store.ProposalsPrefix + "ns/" + k
		case 5:
			return store.JournalRef + []string{"", "line", "/x"}[rng.IntN(3)]
		case 6:
			return store.ConflictRunsPrefix + k + "/" + string(oid()) // no refspec maps it
		default:
			return store.RunsPrefix + k
		}
	}
	specs := parseRefspecs(fetchRefspecs(remote))
	for round := range 3000 {
		var listed []gitstore.Ref
		for range rng.IntN(30) {
			listed = append(listed, gitstore.Ref{Name: listable(), OID: oid()})
		}
		sorted := rng.IntN(3) > 0
		if sorted { // as git lists: sorted, each name once
			slices.SortFunc(listed, func(a, b gitstore.Ref) int { return strings.Compare(a.Name, b.Name) })
			listed = slices.CompactFunc(listed, func(a, b gitstore.Ref) bool { return a.Name == b.Name })
		}
		trackingSet := map[string]gitstore.OID{}
		for range rng.IntN(30) {
			name := listable()
			for _, spec := range specs {
				if dst, ok := spec.apply(name); ok {
					name = dst
					break
				}
			}
			if !strings.HasPrefix(name, base) {
				name = base + []string{"conflicts/runs/x/y", "zzz", "aaa"}[rng.IntN(3)]
			}
			trackingSet[name] = oid()
		}
		var tracking []gitstore.Ref
		for _, name := range sortedKeys(trackingSet) {
			tracking = append(tracking, gitstore.Ref{Name: name, OID: trackingSet[name]})
		}
		ups, runs, err := trackingUpdates(remote, listed, tracking)
		if err != nil {
			t.Fatal(err)
		}
		want, lookups := trackingUpdatesByMap(remote, listed, tracking)
		byName := func(a, b gitstore.RefUpdate) int { return strings.Compare(a.Name, b.Name) }
		slices.SortFunc(ups, byName)
		slices.SortFunc(want, byName)
		if !slices.Equal(ups, want) {
			t.Fatalf("round %d, listing %v, tracking %v:\nupdates %v\nwant    %v", round, listed, tracking, ups, want)
		}
		// every manifest of a run ref that moves or appears is looked up;
		// the maps looked up the same ones (and, for a name listed twice,
		// the manifest of the ref that lost)
		moved := map[gitstore.OID]bool{}
		for _, u := range ups {
			if strings.HasPrefix(u.Name, base+"runs/") && u.New != "" {
				moved[u.New] = true
			}
		}
		got := map[gitstore.OID]bool{}
		for _, o := range runs {
			got[o] = true
		}
		for o := range moved {
			if !got[o] {
				t.Fatalf("round %d: manifest %s of a moved run ref not looked up (looked up %v)", round, o, runs)
			}
		}
		for o := range got {
			if !moved[o] {
				t.Fatalf("round %d: manifest %s looked up, no run ref moves to it", round, o)
			}
		}
		if sorted {
			for o := range lookups {
				if !got[o] {
					t.Fatalf("round %d: the maps looked up %s, the join does not (looked up %v)", round, o, runs)
				}
			}
		}
	}
}

// TestRefListAsMap: a refList answers what a map filled in the order
// listed does, sorted listings taken as they are.
func TestRefListAsMap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(20, 13))
	for round := range 2000 {
		var refs []gitstore.Ref
		m := map[string]gitstore.OID{}
		for range rng.IntN(20) {
			r := gitstore.Ref{Name: store.RunsPrefix + fmt.Sprintf("r%d", rng.IntN(15)), OID: gitstore.OID(fmt.Sprint(rng.IntN(4)))}
			refs = append(refs, r)
			m[strings.TrimPrefix(r.Name, store.RunsPrefix)] = r.OID
		}
		if rng.IntN(2) == 0 {
			slices.SortStableFunc(refs, func(a, b gitstore.Ref) int { return strings.Compare(a.Name, b.Name) })
		}
		l := newRefList(store.RunsPrefix, refs)
		if l.len() != len(m) {
			t.Fatalf("round %d: %d ids, the map %d", round, l.len(), len(m))
		}
		var ids []string // in order, listed or not
		for i := range 16 {
			ids = append(ids, fmt.Sprintf("r%d", i))
		}
		slices.Sort(ids)
		at := 0
		for _, id := range ids {
			want, ok := m[id]
			if got, gok := l.get(id); got != want || gok != ok {
				t.Fatalf("round %d: get %s = %s %v, the map %s %v", round, id, got, gok, want, ok)
			}
			if got, gok := l.seek(&at, id); got != want || gok != ok {
				t.Fatalf("round %d: seek %s = %s %v, the map %s %v", round, id, got, gok, want, ok)
			}
		}
	}
}
