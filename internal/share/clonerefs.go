package share

import (
	"context"
	"fmt"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/receipts"
)

// cloneRefs maps the remote's shared refs (as recognize returned them) to
// the refs a new clone holds: origin's tracking ref of each
// (fetchRefspecs), and the store's own ref for runs, resources, tags,
// receipts, verdicts and the journal. Proposals get a tracking ref only.
// It is what `git fetch` with those refspecs would write into an empty
// repository.
func cloneRefs(remote []gitstore.Ref) []gitstore.Ref {
	remote = dropUntrackable(remote)
	specs := fetchRefspecs("origin")
	for _, p := range []string{store.RunsPrefix, store.ResourcesPrefix, store.TagsPrefix, receipts.RefPrefix, store.VerdictsPrefix} {
		specs = append(specs, "+"+p+"*:"+p+"*")
	}
	specs = append(specs, "+"+store.JournalRef+":"+store.JournalRef)
	parsed := parseRefspecs(specs)
	seen := make(map[string]bool, 2*len(remote))
	out := make([]gitstore.Ref, 0, 2*len(remote))
	for _, r := range remote {
		for _, spec := range parsed {
			dst, ok := spec.apply(r.Name)
			if ok && !seen[dst] && adoptable(dst) {
				seen[dst] = true
				out = append(out, gitstore.Ref{Name: dst, OID: r.OID})
			}
		}
	}
	return out
}

// adoptable reports whether a pull would adopt a ref of this name into the
// store (the run, chain and tag names readproof writes; a tracking ref
// mirrors any name): a name the pull ignores is not written by a clone
// either, since `verify` would then call the clone broken.
func adoptable(name string) bool {
	switch {
	case strings.HasPrefix(name, store.RunsPrefix):
		return identity.ValidateRunID(strings.TrimPrefix(name, store.RunsPrefix)) == nil
	case strings.HasPrefix(name, store.ResourcesPrefix):
		_, err := keyURI(strings.TrimPrefix(name, store.ResourcesPrefix))
		return err == nil
	case strings.HasPrefix(name, store.TagsPrefix):
		_, _, err := splitTagKey(strings.TrimPrefix(name, store.TagsPrefix))
		return err == nil
	case strings.HasPrefix(name, receipts.RefPrefix):
		_, _, ok := receiptChain(strings.TrimPrefix(name, receipts.RefPrefix))
		return ok
	case strings.HasPrefix(name, store.VerdictsPrefix):
		return identity.ValidateRunID(strings.TrimPrefix(name, store.VerdictsPrefix)) == nil
	}
	return true
}

// refspec is a fetch refspec split once: source and destination, each as
// the text before and after its '*' (glob), or whole.
type refspec struct {
	src, dst                       string
	srcPre, srcSuf, dstPre, dstSuf string
	glob                           bool
}

func parseRefspec(spec string) (refspec, bool) {
	src, dst, ok := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
	if !ok {
		return refspec{}, false
	}
	r := refspec{src: src, dst: dst}
	r.srcPre, r.srcSuf, r.glob = strings.Cut(src, "*")
	r.dstPre, r.dstSuf, _ = strings.Cut(dst, "*")
	return r, true
}

// parseRefspecs parses specs, leaving out any that is not "SRC:DST".
func parseRefspecs(specs []string) []refspec {
	out := make([]refspec, 0, len(specs))
	for _, spec := range specs {
		if r, ok := parseRefspec(spec); ok {
			out = append(out, r)
		}
	}
	return out
}

// apply maps a remote ref name through the refspec (each side with at
// most one '*'), as git does.
func (r refspec) apply(name string) (string, bool) {
	if !r.glob {
		return r.dst, name == r.src
	}
	if len(name) < len(r.srcPre)+len(r.srcSuf) || !strings.HasPrefix(name, r.srcPre) || !strings.HasSuffix(name, r.srcSuf) {
		return "", false
	}
	return r.dstPre + name[len(r.srcPre):len(name)-len(r.srcSuf)] + r.dstSuf, true
}

// fetchListed fetches the objects of the tips in listed, the listing of
// remote's shared refs connect already made, and writes no ref: the
// objects of the tips but the run refs' (git skips those the store has),
// then those of the run refs that move or appear (tracking: the tracking
// refs as they are) that the store lacks. So a pull lists the remote's
// refs once, not once for the recognition and again for the fetch; the
// tracking refs are moved afterwards, by readproof, once what they name
// passed the pull's checks (moveTracking).
func fetchListed(ctx context.Context, g gitstore.Store, t *gitstore.Transport, remote string, listed, tracking []gitstore.Ref) error {
	listed = dropUntrackable(listed)
	_, runs, err := trackingUpdates(remote, listed, tracking)
	if err != nil {
		return err
	}
	var first []gitstore.OID
	for _, r := range listed {
		if !strings.HasPrefix(r.Name, store.RunsPrefix) {
			first = append(first, r.OID)
		}
	}
	return fetchObjects(ctx, g, t, remote, first, runs)
}

// trackingUpdates returns the updates that make remote's tracking refs
// (tracking: all of them, as they are) what `git fetch --prune` with
// fetchRefspecs would make them from listed, and the manifests of the
// listed run refs that move or appear: a listed tip a tracking ref already
// names is in the store (objects are written before the refs that name
// them) and is not looked up.
func trackingUpdates(remote string, listed, tracking []gitstore.Ref) (ups []gitstore.RefUpdate, runs []gitstore.OID, err error) {
	specs := parseRefspecs(fetchRefspecs(remote))
	srcs, dsts := make([]string, len(specs)), make([]string, len(specs))
	for k, spec := range specs {
		if !spec.glob || spec.srcSuf != "" || spec.dstSuf != "" {
			return nil, nil, fmt.Errorf("refspec %s:%s is not PREFIX*:PREFIX*", spec.src, spec.dst)
		}
		srcs[k], dsts[k] = spec.srcPre, spec.dstPre
	}
	// the listed refs each refspec maps (the first that matches, as git
	// does), sorted, the last of a name kept
	groups := groupRefs(listed, srcs)
	want := make([]refList, len(specs))
	for k := range specs {
		want[k] = newRefList(srcs[k], groups[k])
	}
	have := newRefList(RemotesPrefix+remote+"/", tracking)
	set := func(k, i int, old gitstore.OID) {
		key, oid := want[k].at(i)
		ups = append(ups, gitstore.RefUpdate{Name: dsts[k] + key, Old: old, New: oid})
		if srcs[k] == store.RunsPrefix {
			runs = append(runs, oid)
		}
	}
	next := make([]int, len(specs)) // per refspec, the first listed ref not yet joined
	for _, r := range have.refs {
		k := prefixIndex(r.Name, dsts) // the refspec whose destination holds r (they do not overlap)
		if k < 0 {
			ups = append(ups, gitstore.RefUpdate{Name: r.Name, Old: r.OID}) // pruned
			continue
		}
		key, w := r.Name[len(dsts[k]):], want[k]
		for ; next[k] < w.len() && w.key(next[k]) < key; next[k]++ {
			set(k, next[k], "") // new
		}
		if next[k] < w.len() && w.key(next[k]) == key {
			if _, oid := w.at(next[k]); oid != r.OID {
				set(k, next[k], r.OID)
			}
			next[k]++
		} else {
			ups = append(ups, gitstore.RefUpdate{Name: r.Name, Old: r.OID}) // pruned
		}
	}
	for k := range want {
		for ; next[k] < want[k].len(); next[k]++ {
			set(k, next[k], "")
		}
	}
	return ups, runs, nil
}

// fetchTips fetches the objects of the listed refs without writing a ref
// (fetchObjects).
func fetchTips(ctx context.Context, g gitstore.Store, t *gitstore.Transport, remote string, listed []gitstore.Ref) error {
	var first, runs []gitstore.OID
	for _, r := range listed {
		if strings.HasPrefix(r.Name, store.RunsPrefix) {
			runs = append(runs, r.OID)
		} else {
			first = append(first, r.OID)
		}
	}
	return fetchObjects(ctx, g, t, remote, first, runs)
}

// fetchObjects fetches the objects of first, then those of runs the store
// lacks, without writing a ref, in two steps, because git fetch handles
// many object ids on stdin slowly (more than linearly: 10^5 ids cost
// minutes): first the tips of every ref but the run refs (the journal,
// which reaches every manifest it records, and the chains, which grow with
// resources, not runs), then the run refs' manifests the store still
// lacks (usually none: a run the journal does not record yet).
func fetchObjects(ctx context.Context, g gitstore.Store, t *gitstore.Transport, remote string, first, runs []gitstore.OID) error {
	if err := t.FetchObjects(ctx, remote, first); err != nil {
		return err
	}
	missing, err := lacking(g, runs)
	if err != nil {
		return err
	}
	return t.FetchObjects(ctx, remote, missing)
}

// lacking returns the objects of oids, each once, that the store does not
// have.
func lacking(g gitstore.Store, oids []gitstore.OID) ([]gitstore.OID, error) {
	var missing []gitstore.OID
	seen := make(map[gitstore.OID]bool, len(oids))
	for _, o := range oids {
		if seen[o] {
			continue
		}
		seen[o] = true
		ok, err := g.Has(o)
		if err != nil {
			return nil, err
		}
		if !ok {
			missing = append(missing, o)
		}
	}
	return missing, nil
}

// fetchMissing fetches the objects of the listed refs whose tips the store
// lacks (after CopyLocalObjects: none, unless the source was gc'd or moved
// during the copy).
func fetchMissing(ctx context.Context, g gitstore.Store, t *gitstore.Transport, remote string, listed []gitstore.Ref) error {
	oids := make([]gitstore.OID, len(listed))
	for i, r := range listed {
		oids[i] = r.OID
	}
	missing, err := lacking(g, oids)
	if err != nil {
		return err
	}
	return t.FetchObjects(ctx, remote, missing)
}
