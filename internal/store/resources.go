package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/manifest"
)

// ResourceInfo is a declared resource with its current snapshot.
type ResourceInfo struct {
	Definition
	Namespace string       `json:"namespace"`
	Path      string       `json:"path"`
	Current   *Observation `json:"current,omitempty"`
	Tags      []string     `json:"tags"`
}

// Resources lists the resources declared in the policy file, in file order,
// with their current snapshots read live from the store.
func (s *Store) Resources() ([]ResourceInfo, error) {
	pol, err := s.Policy()
	if err != nil {
		return nil, err
	}
	out := []ResourceInfo{}
	for i := range pol.Resources() {
		info, err := s.resourceInfo(&pol.Resources()[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *info)
	}
	return out, nil
}

func (s *Store) resourceInfo(r *policy.Resource) (*ResourceInfo, error) {
	cur, _, err := s.current(r.URI, nil)
	if err != nil {
		return nil, err
	}
	tags, err := s.Tags(r.URI)
	if err != nil {
		return nil, err
	}
	info := &ResourceInfo{Definition: DefinitionOf(r), Namespace: r.URI.Namespace, Path: r.URI.Path, Current: cur, Tags: []string{}}
	for _, t := range tags {
		info.Tags = append(info.Tags, t.Tag)
	}
	return info, nil
}

// SnapshotInfo is one distinct snapshot in a resource's history.
type SnapshotInfo struct {
	Snapshot       string    `json:"snapshot"`
	ContentHash    string    `json:"content_hash"`
	Bytes          int64     `json:"bytes"`
	ContentType    string    `json:"content_type"`
	SourceRevision string    `json:"source_revision"`
	FirstObserved  time.Time `json:"first_observed"`
	LastObserved   time.Time `json:"last_observed"`
	Observations   int       `json:"observations"`
	Tags           []string  `json:"tags"`
}

// History lists the distinct snapshots of u, newest first, with the tags
// pointing at each.
func (s *Store) History(u identity.URI) ([]SnapshotInfo, error) {
	tags, err := s.Tags(u)
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	out := []SnapshotInfo{}
	err = s.walkChain(resourceRef(u), func(_ gitstore.OID, o *Observation) bool {
		i, ok := index[o.Snapshot]
		if !ok {
			i = len(out)
			index[o.Snapshot] = i
			out = append(out, SnapshotInfo{Snapshot: o.Snapshot, ContentHash: o.ContentHash, Bytes: o.Bytes,
				ContentType: o.ContentType, SourceRevision: o.SourceRevision, LastObserved: o.ObservedAt, Tags: []string{}})
		}
		out[i].FirstObserved = o.ObservedAt
		out[i].Observations++
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("resource %s: %w", u, err)
	}
	if len(out) == 0 {
		pol, err := s.Policy()
		if err != nil {
			return nil, err
		}
		if _, declared := pol.Lookup(u); !declared {
			return nil, hint.With(fmt.Errorf("%s: %w in %s", u, ErrNotRegistered, pol.Path),
				NotRegisteredHint(pol, u, fmt.Sprintf("check the URI's spelling (`readproof resource list`), or register it: readproof resource add %s --source-type filesystem --path FILE", u)))
		}
	}
	for _, t := range tags {
		if i, ok := index[t.Snapshot]; ok {
			out[i].Tags = append(out[i].Tags, t.Tag)
		}
	}
	return out, nil
}

// Inspection shows how a reference would resolve, without reading the
// source or recording anything.
type Inspection struct {
	URI        string       `json:"uri"`
	Ref        string       `json:"ref"`
	Declared   bool         `json:"declared"`
	Definition *Definition  `json:"definition,omitempty"`
	Current    *Observation `json:"current,omitempty"`
	Tag        *TagState    `json:"tag,omitempty"`
	Tags       []string     `json:"tags"`
	// Decision is what `get` would decide now.
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// Inspect describes a resource or uri@tag.
func (s *Store) Inspect(ref string) (*Inspection, error) {
	u, err := identity.ParseURI(ref)
	if err != nil {
		return nil, hint.With(err, identity.URIHint(ref, true))
	}
	pol, err := s.Policy()
	if err != nil {
		return nil, err
	}
	in := &Inspection{URI: u.String(), Ref: u.Tag, Tags: []string{}}
	if r, ok := pol.Lookup(u); ok {
		d := DefinitionOf(r)
		in.Declared, in.Definition = true, &d
	}
	if in.Current, _, err = s.current(u, nil); err != nil {
		return nil, err
	}
	tags, err := s.Tags(u)
	if err != nil {
		return nil, err
	}
	for _, t := range tags {
		in.Tags = append(in.Tags, t.Tag)
	}
	switch {
	case u.Tag != "":
		t, err := s.Tag(u, u.Tag)
		if err != nil {
			return nil, s.nearTag(u, u.Tag, err)
		}
		in.Tag = t
		in.Decision, in.Reason = manifest.DecisionUseTag, "the tag names snapshot "+manifest.Short(t.Snapshot)+"; no fetch, policy not consulted"
	case !in.Declared:
		in.Decision, in.Reason = "", "not declared in "+pol.Path
	default:
		r, _ := pol.Lookup(u)
		switch r.Freshness.Strategy {
		case policy.Pinned:
			// get fails on a snapshot not recorded for u; say so, as it would
			if _, _, err := s.findObservation(u, r.Freshness.Snapshot); errors.Is(err, ErrNoSnapshot) {
				in.Decision, in.Reason = "", "pinned to snapshot "+manifest.Short(r.Freshness.Snapshot)+", which is not recorded for "+u.String()+": get fails; pin a snapshot listed by `readproof history "+u.String()+"`"
				break
			}
			in.Decision, in.Reason = manifest.DecisionUsePinned, "pinned to snapshot "+manifest.Short(r.Freshness.Snapshot)
		case policy.AllowStale:
			var age time.Duration
			if in.Current != nil {
				age = s.now().Sub(in.Current.ObservedAt)
			}
			switch {
			case in.Current != nil && reusable(age, r.Freshness.MaxAge):
				in.Decision, in.Reason = manifest.DecisionUseCurrent, "current snapshot observed "+age.Round(time.Second).String()+" ago, within max_age "+policy.FormatDuration(r.Freshness.MaxAge)
			case in.Current != nil && age < 0:
				in.Decision, in.Reason = manifest.DecisionFetch, "current snapshot observed "+(-age).Round(time.Second).String()+" after this clock's time; a snapshot whose age is unknown is read again"
			default:
				in.Decision, in.Reason = manifest.DecisionFetch, "no snapshot within max_age "+policy.FormatDuration(r.Freshness.MaxAge)
			}
		default:
			in.Decision, in.Reason = manifest.DecisionFetch, "require_fresh reads the source on every resolve"
		}
	}
	return in, nil
}
