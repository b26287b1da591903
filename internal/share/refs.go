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
	// ConflictRunsPrefix + <run-id>/<manifest-id>: another manifest committed
	// under a run id this store uses for a different manifest, found by a
	// pull. Local only: never pushed, and ignored on a remote (older
	// versions pushed them); removed once a run ref names the manifest.
	ConflictRunsPrefix = "refs/tags/readproof/conflicts/runs/"
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
	runs      map[string]gitstore.OID          // run id -> manifest
	runIDs    []string                         // the keys of runs in the order read (readState: sorted)
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
	return &state{runs: map[string]gitstore.OID{}, conflicts: map[string]map[gitstore.OID]bool{},
		resources: map[string]gitstore.OID{}, tags: map[string]gitstore.OID{},
		receipts: map[string]gitstore.OID{}, verdicts: map[string]gitstore.OID{}}
}

// sortedRunIDs returns the run ids in order: as read when Refs listed them
// sorted (it does: one prefix, names in order) and each once, else sorted
// here.
func (st *state) sortedRunIDs() []string {
	// every id read is a key of runs, so as many ids as keys means each
	// once (and runs not changed since, but for values)
	if len(st.runIDs) == len(st.runs) && slices.IsSorted(st.runIDs) {
		return st.runIDs
	}
	return sortedKeys(st.runs)
}

// named returns the set of manifests named by a run ref.
func (st *state) named() map[gitstore.OID]bool {
	m := make(map[gitstore.OID]bool, len(st.runs))
	for _, id := range st.runs {
		m[id] = true
	}
	return m
}

type prefixes struct {
	runs, conflicts, resources, tags, main string
	receipts, verdicts                     string
}

func localPrefixes() prefixes {
	return prefixes{store.RunsPrefix, ConflictRunsPrefix, store.ResourcesPrefix, store.TagsPrefix, store.JournalRef,
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
	st.runIDs = make([]string, 0, len(refs))
	for _, r := range refs {
		id := strings.TrimPrefix(r.Name, p.runs)
		st.runs[id] = r.OID
		st.runIDs = append(st.runIDs, id)
	}
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

func conflictRunRef(run string, m gitstore.OID) string {
	return ConflictRunsPrefix + run + "/" + string(m)
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
