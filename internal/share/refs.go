package share

import (
	"fmt"
	"slices"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/receipts"
)

// Ref namespaces owned by this package (docs/sync.md).
const (
	// ConflictTagsPrefix + <key>/<tag>: the remote position of a tag that
	// moved on both sides, kept until `conflicts resolve`. Local only.
	ConflictTagsPrefix = "refs/readproof-conflicts/tags/"
	// RemotesPrefix + <remote>/...: the last fetched state of a remote
	// (runs/, conflicts/runs/, resources/, tags/, receipts/, verdicts/,
	// main). Never adopted
	// without verification.
	RemotesPrefix = "refs/readproof-remotes/"
)

// fetchRefspecs maps a remote's shared namespaces to its tracking refs.
// Open runs (refs/heads/readproof/open/) and aborted runs
// (refs/heads/readproof/aborted/) are local work in progress and are
// neither fetched nor pushed. The journal pattern "main*" matches
// refs/heads/main without failing when the remote has none.
func fetchRefspecs(remote string) []string {
	base := RemotesPrefix + remote + "/"
	return []string{
		"+" + store.RunsPrefix + "*:" + base + "runs/*",
		"+" + store.ResourcesPrefix + "*:" + base + "resources/*",
		"+" + store.TagsPrefix + "*:" + base + "tags/*",
		"+" + receipts.RefPrefix + "*:" + base + "receipts/*",
		"+" + store.VerdictsPrefix + "*:" + base + "verdicts/*",
		"+" + store.ProposalsPrefix + "*:" + base + "proposals/*",
		"+" + store.JournalRef + "*:" + base + "main*",
	}
}

// state is one side's shared refs.
type state struct {
	runs      refList                          // run id -> manifest, sorted by id
	conflicts map[string]map[gitstore.OID]bool // run id -> conflicting manifests
	resources map[string]gitstore.OID          // resource key -> chain tip
	tags      map[string]gitstore.OID          // <key>/<tag> -> chain tip
	receipts  map[string]gitstore.OID          // sessions/<s> or index/<d> -> chain tip
	verdicts  map[string]gitstore.OID          // run id -> verdict chain tip
	main      gitstore.OID
	proposals []proposalRef  // a remote's proposal branches (ls-remote only)
	listed    []gitstore.Ref // a remote's shared refs as listed (ls-remote only)
	head      string         // the ref a remote's HEAD named in the listing
	// a remote's push URLs (connect for a push: send pushes to them), or
	// the error naming them gave
	pushURLs []string
	pushErr  error
}

func newState() *state {
	return &state{conflicts: map[string]map[gitstore.OID]bool{},
		resources: map[string]gitstore.OID{}, tags: map[string]gitstore.OID{},
		receipts: map[string]gitstore.OID{}, verdicts: map[string]gitstore.OID{}}
}

// refList is the refs of one namespace (one side's run refs, say), sorted
// by name, each name once: a listing's own order (Refs lists a prefix
// sorted, git lists a remote's refs sorted), so a pull joins the lists it
// reads instead of building a map of every run (10^5 entries at 10^5
// runs, a tenth of a pull's CPU).
type refList struct {
	prefix string         // the namespace; a ref's name without it is its key (a run id)
	refs   []gitstore.Ref // every name starts with prefix
}

// newRefList is refs (each name under prefix) as a refList: refs itself
// when sorted with each name once, as listed; else a sorted copy keeping
// the last ref of a name, as a map filled in the order listed would.
func newRefList(prefix string, refs []gitstore.Ref) refList {
	sorted := true
	for i := 1; i < len(refs); i++ {
		if refs[i-1].Name >= refs[i].Name {
			sorted = false
			break
		}
	}
	if sorted {
		return refList{prefix: prefix, refs: refs}
	}
	c := slices.Clone(refs)
	slices.SortStableFunc(c, func(a, b gitstore.Ref) int { return strings.Compare(a.Name, b.Name) })
	out := c[:0]
	for i, r := range c {
		if i+1 < len(c) && c[i+1].Name == r.Name {
			continue // a later ref of the same name wins
		}
		out = append(out, r)
	}
	return refList{prefix: prefix, refs: out}
}

func (l refList) len() int { return len(l.refs) }

// key is the i-th key (run id).
func (l refList) key(i int) string { return l.refs[i].Name[len(l.prefix):] }

// at returns the i-th key (run id) and its value (manifest).
func (l refList) at(i int) (string, gitstore.OID) { return l.key(i), l.refs[i].OID }

// get returns the value of key id (binary search).
func (l refList) get(id string) (gitstore.OID, bool) {
	i, ok := slices.BinarySearchFunc(l.refs, id, func(r gitstore.Ref, id string) int {
		return strings.Compare(r.Name[len(l.prefix):], id)
	})
	if !ok {
		return "", false
	}
	return l.refs[i].OID, true
}

// seek returns the value of key id, looking from *from on and leaving
// *from at the first key not before id: a join of two sorted lists, when
// the keys asked come in order.
func (l refList) seek(from *int, id string) (gitstore.OID, bool) {
	i := *from
	for i < len(l.refs) && l.key(i) < id {
		i++
	}
	*from = i
	if i < len(l.refs) && l.key(i) == id {
		return l.refs[i].OID, true
	}
	return "", false
}

// equal reports whether both lists hold the same values under the same
// keys.
func (l refList) equal(o refList) bool {
	if len(l.refs) != len(o.refs) {
		return false
	}
	for i := range l.refs {
		a, am := l.at(i)
		b, bm := o.at(i)
		if a != b || am != bm {
			return false
		}
	}
	return true
}

// prefixIndex is the index of the first of prefixes that name starts
// with, -1 when none.
func prefixIndex(name string, prefixes []string) int {
	for k, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return k
		}
	}
	return -1
}

// groupRefs splits refs by the first of prefixes each name starts with
// (a name under none is left out), each group in the order of refs: a
// subslice of refs when its names are adjacent (a namespace of a sorted
// listing), else a copy.
func groupRefs(refs []gitstore.Ref, prefixes []string) [][]gitstore.Ref {
	type span struct {
		lo, hi    int
		scattered bool
	}
	spans := make([]span, len(prefixes))
	for k := range spans {
		spans[k].lo = -1
	}
	for i, r := range refs {
		k := prefixIndex(r.Name, prefixes)
		if k < 0 {
			continue
		}
		s := &spans[k]
		if s.lo < 0 {
			s.lo = i
		} else if s.hi != i {
			s.scattered = true
		}
		s.hi = i + 1
	}
	out := make([][]gitstore.Ref, len(prefixes))
	for k, s := range spans {
		switch {
		case s.scattered:
			for _, r := range refs[s.lo:s.hi] {
				if prefixIndex(r.Name, prefixes) == k {
					out[k] = append(out[k], r)
				}
			}
		case s.lo >= 0:
			out[k] = refs[s.lo:s.hi:s.hi]
		}
	}
	return out
}

// named returns the set of manifests named by a run ref.
func (st *state) named() map[gitstore.OID]bool {
	m := make(map[gitstore.OID]bool, st.runs.len())
	for _, r := range st.runs.refs {
		m[r.OID] = true
	}
	return m
}

// lazyNamed is st.named(), with the manifests of more added, made on
// first use: most pulls and clones never ask it.
func lazyNamed(st *state, more map[string]gitstore.OID) func(gitstore.OID) bool {
	var set map[gitstore.OID]bool
	return func(m gitstore.OID) bool {
		if set == nil {
			set = st.named()
			for _, n := range more {
				set[n] = true
			}
		}
		return set[m]
	}
}

// tracked is what readState reads from the tracking refs that
// fetchListed writes from st, a remote's listing: its runs, chains and
// journal; no run conflict (fetchListed prunes every tracking ref no
// refspec names).
func (st *state) tracked() *state {
	return &state{runs: st.runs, conflicts: map[string]map[gitstore.OID]bool{}, resources: st.resources, tags: st.tags,
		receipts: st.receipts, verdicts: st.verdicts, main: st.main}
}

type prefixes struct {
	runs, conflicts, resources, tags, main string
	receipts, verdicts                     string
}

func localPrefixes() prefixes {
	return prefixes{store.RunsPrefix, store.ConflictRunsPrefix, store.ResourcesPrefix, store.TagsPrefix, store.JournalRef,
		receipts.RefPrefix, store.VerdictsPrefix}
}

func trackingPrefixes(remote string) prefixes {
	base := RemotesPrefix + remote + "/"
	return prefixes{base + "runs/", base + "conflicts/runs/", base + "resources/", base + "tags/", base + "main",
		base + "receipts/", base + "verdicts/"}
}

// readState reads one side's refs from the repository.
func readState(g gitstore.Store, p prefixes) (*state, error) {
	st := newState()
	refs, err := g.Refs(p.runs)
	if err != nil {
		return nil, err
	}
	st.runs = newRefList(p.runs, refs)
	if refs, err = g.Refs(p.conflicts); err != nil {
		return nil, err
	}
	for _, r := range refs {
		run, mid, ok := splitConflict(strings.TrimPrefix(r.Name, p.conflicts))
		if !ok || gitstore.OID(mid) != r.OID {
			continue // not ours; ignored
		}
		if st.conflicts[run] == nil {
			st.conflicts[run] = map[gitstore.OID]bool{}
		}
		st.conflicts[run][r.OID] = true
	}
	if st.resources, err = readRefMap(g, p.resources); err != nil {
		return nil, err
	}
	if st.tags, err = readRefMap(g, p.tags); err != nil {
		return nil, err
	}
	if st.receipts, err = readRefMap(g, p.receipts); err != nil {
		return nil, err
	}
	if st.verdicts, err = readRefMap(g, p.verdicts); err != nil {
		return nil, err
	}
	main, err := g.Ref(p.main)
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	st.main = main
	return st, nil
}

// readRefMap reads the refs under prefix: name without prefix -> value.
func readRefMap(g gitstore.Store, prefix string) (map[string]gitstore.OID, error) {
	refs, err := g.Refs(prefix)
	if err != nil {
		return nil, err
	}
	m := make(map[string]gitstore.OID, len(refs))
	for _, r := range refs {
		m[strings.TrimPrefix(r.Name, prefix)] = r.OID
	}
	return m, nil
}

// readTagConflicts reads refs/readproof-conflicts/tags/: <key>/<tag> -> the
// remote tip kept for a tag that moved on both sides.
func readTagConflicts(g gitstore.Store) (map[string]gitstore.OID, error) {
	return readRefMap(g, ConflictTagsPrefix)
}

// splitConflict splits "<run-id>/<manifest-id>".
func splitConflict(s string) (run, mid string, ok bool) {
	i := strings.LastIndexByte(s, '/')
	if i <= 0 {
		return "", "", false
	}
	run, mid = s[:i], s[i+1:]
	if identity.ValidateRunID(run) != nil || !identity.IsObjectID(mid) {
		return "", "", false
	}
	return run, mid, true
}

// splitTagKey splits "<namespace>/<path-key>/<tag>" and returns the URI and
// the tag.
func splitTagKey(k string) (identity.URI, string, error) {
	i := strings.LastIndexByte(k, '/')
	if i <= 0 {
		return identity.URI{}, "", fmt.Errorf("tag ref %q: no tag component", k)
	}
	u, err := keyURI(k[:i])
	if err != nil {
		return u, "", err
	}
	if err := identity.ValidateTag(k[i+1:]); err != nil {
		return u, "", err
	}
	return u, k[i+1:], nil
}

// keyURI turns a resource key (NAMESPACE/PATH with '/' as '+') back into
// its URI.
func keyURI(key string) (identity.URI, error) {
	ns, p, ok := strings.Cut(key, "/")
	if !ok || strings.Contains(p, "/") {
		return identity.URI{}, fmt.Errorf("resource key %q is not NAMESPACE/PATH", key)
	}
	u, err := identity.ParseURI(identity.Scheme + ns + "/" + strings.ReplaceAll(p, "+", "/"))
	if err != nil {
		return u, fmt.Errorf("resource key %q: %w", key, err)
	}
	if u.Key() != key {
		return u, fmt.Errorf("resource key %q does not round-trip", key)
	}
	return u, nil
}

func tagKey(u identity.URI, tag string) string { return u.Key() + "/" + tag }
