package share

import (
	"context"
	"errors"
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

// fetchListed is `git fetch --prune` of remote's shared refs into its
// tracking refs, with the listing connect already made: the objects of the
// listed tips (git skips those the store has), then every tracking ref
// that changed in one ref transaction, compared with tracking (their values
// before). So a pull lists the remote's refs once, not once for the
// recognition and again for the fetch, and git writes no ref file of its
// own. An error means nothing was written, or tracking refs only: the
// caller falls back to git fetch, which lists again and forces them.
func fetchListed(ctx context.Context, g gitstore.Store, t *gitstore.Transport, remote string, listed, tracking []gitstore.Ref) error {
	if listed == nil {
		return errors.New("no listing")
	}
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
	// A listed tip a tracking ref already names is in the store (objects
	// are written before the refs that name them): no lookup of it.
	var held map[gitstore.OID]bool
	for _, r := range tracking {
		if w, ok := want[r.Name]; ok && w == r.OID {
			if held == nil {
				held = make(map[gitstore.OID]bool, len(tracking))
			}
			held[r.OID] = true
		}
	}
	if err := fetchTips(ctx, g, t, remote, listed, held); err != nil {
		return err
	}
	var ups []gitstore.RefUpdate
	for _, r := range tracking {
		if w, ok := want[r.Name]; !ok {
			ups = append(ups, gitstore.RefUpdate{Name: r.Name, Old: r.OID}) // pruned
		} else if w != r.OID {
			ups = append(ups, gitstore.RefUpdate{Name: r.Name, Old: r.OID, New: w})
		}
		delete(want, r.Name)
	}
	for name, oid := range want {
		ups = append(ups, gitstore.RefUpdate{Name: name, New: oid})
	}
	return g.Update(store.JournalLast(ups)...)
}

// fetchTips fetches the objects of the listed refs without writing a ref,
// in two steps, because git fetch handles many object ids on stdin slowly
// (more than linearly: 10^5 ids cost minutes): first the tips of every ref
// but the run refs (the journal, which reaches every manifest it records,
// and the chains, which grow with resources, not runs), then the run refs'
// manifests the store still lacks (usually none: a run the journal does not
// record yet). A manifest in held (a tracking ref names it) is not looked
// up.
func fetchTips(ctx context.Context, g gitstore.Store, t *gitstore.Transport, remote string, listed []gitstore.Ref, held map[gitstore.OID]bool) error {
	var first, runs []gitstore.OID
	for _, r := range listed {
		if strings.HasPrefix(r.Name, store.RunsPrefix) {
			runs = append(runs, r.OID)
		} else {
			first = append(first, r.OID)
		}
	}
	if err := t.FetchObjects(ctx, remote, first); err != nil {
		return err
	}
	missing, err := lacking(g, runs, held)
	if err != nil {
		return err
	}
	return t.FetchObjects(ctx, remote, missing)
}

// lacking returns the objects of oids, each once, that the store does not
// have, not looking up those in skip.
func lacking(g gitstore.Store, oids []gitstore.OID, skip map[gitstore.OID]bool) ([]gitstore.OID, error) {
	var missing []gitstore.OID
	seen := make(map[gitstore.OID]bool, len(oids))
	for _, o := range oids {
		if seen[o] || skip[o] {
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
	missing, err := lacking(g, oids, nil)
	if err != nil {
		return err
	}
	return t.FetchObjects(ctx, remote, missing)
}
