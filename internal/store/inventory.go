package store

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/manifest"
)

// Read-only listings of everything the store holds, for whole-store checks
// (package storecheck) and tools layered on the store. Nothing here writes.

// ChainRef is the ref of a resource's observation chain.
type ChainRef struct {
	Ref string
	URI identity.URI
	Tip gitstore.OID
}

// TagRef is the ref of one tag's move chain.
type TagRef struct {
	Ref string
	URI identity.URI
	Tag string
	Tip gitstore.OID
}

// OpenRun is the state of an open run at one commit of its chain.
type OpenRun struct {
	RunID     string
	StartedAt time.Time
	Entries   []manifest.Entry
}

// KeyURI turns a resource key (NAMESPACE/PATH with '/' in PATH written as
// '+', see identity.URI.Key) back into its URI.
func KeyURI(key string) (identity.URI, error) {
	ns, path, ok := strings.Cut(key, "/")
	if !ok || strings.Contains(path, "/") {
		return identity.URI{}, fmt.Errorf("%w: resource key %q is not NAMESPACE/PATH", identity.ErrInvalid, key)
	}
	u, err := identity.ParseURI(identity.Scheme + ns + "/" + strings.ReplaceAll(path, "+", "/"))
	if err != nil {
		return identity.URI{}, err
	}
	if u.Tag != "" || u.Key() != key {
		return identity.URI{}, fmt.Errorf("%w: resource key %q does not round-trip", identity.ErrInvalid, key)
	}
	return u, nil
}

// ResourceChains lists the observation chain refs, sorted by ref name. A
// ref whose name is not a valid resource key is returned with an error
// naming it in bad, so a checker can report it instead of stopping.
func (s *Store) ResourceChains() (chains []ChainRef, bad []error, err error) {
	refs, err := s.git.Refs(ResourcesPrefix)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range refs {
		u, kerr := KeyURI(strings.TrimPrefix(r.Name, ResourcesPrefix))
		if kerr != nil {
			bad = append(bad, fmt.Errorf("ref %s: %w", r.Name, kerr))
			continue
		}
		chains = append(chains, ChainRef{Ref: r.Name, URI: u, Tip: r.OID})
	}
	return chains, bad, nil
}

// TagRefs lists every tag chain ref of every resource (deleted tags
// included: their chain records the deletion), sorted by ref name. Names
// that do not parse are returned in bad.
func (s *Store) TagRefs() (tags []TagRef, bad []error, err error) {
	refs, err := s.git.Refs(TagsPrefix)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range refs {
		rest := strings.TrimPrefix(r.Name, TagsPrefix)
		i := strings.LastIndexByte(rest, '/')
		if i < 0 {
			bad = append(bad, fmt.Errorf("ref %s: not %s<key>/<tag>: %w", r.Name, TagsPrefix, identity.ErrInvalid))
			continue
		}
		u, kerr := KeyURI(rest[:i])
		if kerr == nil {
			kerr = identity.ValidateTag(rest[i+1:])
		}
		if kerr != nil {
			bad = append(bad, fmt.Errorf("ref %s: %w", r.Name, kerr))
			continue
		}
		tags = append(tags, TagRef{Ref: r.Name, URI: u, Tag: rest[i+1:], Tip: r.OID})
	}
	return tags, bad, nil
}

// ObservationAt decodes observation.json of an observation commit.
func (s *Store) ObservationAt(commit gitstore.OID) (*Observation, error) {
	return s.observationAt(commit)
}

// TagStateAt decodes tag.json of a tag move commit.
func (s *Store) TagStateAt(commit gitstore.OID) (*TagState, error) {
	return s.tagAt(commit)
}

// OpenRunAt decodes run.json and the entries of an open run commit.
func (s *Store) OpenRunAt(commit gitstore.OID) (*OpenRun, error) {
	st, entries, _, err := s.openEntries(commit)
	if err != nil {
		return nil, err
	}
	return &OpenRun{RunID: st.RunID, StartedAt: st.StartedAt, Entries: entries}, nil
}

// DecodeObservation parses an observation.json blob and checks the fields
// every observation must carry.
func DecodeObservation(data []byte) (*Observation, error) {
	var o Observation
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("observation.json: %w", err)
	}
	if _, err := identity.ParseURI(o.URI); err != nil {
		return nil, fmt.Errorf("observation.json: %w", err)
	}
	if !identity.IsObjectID(o.Snapshot) {
		return nil, fmt.Errorf("observation.json: snapshot %q is not an object id", o.Snapshot)
	}
	if !manifest.IsContentHash(o.ContentHash) {
		return nil, fmt.Errorf("observation.json: content hash %q is not sha256:<64 hex>", o.ContentHash)
	}
	if o.Bytes < 0 {
		return nil, fmt.Errorf("observation.json: negative size %d", o.Bytes)
	}
	return &o, nil
}

// DecodeTagState parses a tag.json blob and checks its fields.
func DecodeTagState(data []byte) (*TagState, error) {
	var t TagState
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("tag.json: %w", err)
	}
	if _, err := identity.ParseURI(t.URI); err != nil {
		return nil, fmt.Errorf("tag.json: %w", err)
	}
	if err := identity.ValidateTag(t.Tag); err != nil {
		return nil, fmt.Errorf("tag.json: %w", err)
	}
	if t.Deleted {
		if t.Snapshot != "" {
			return nil, fmt.Errorf("tag.json: a deletion names snapshot %s", t.Snapshot)
		}
		return &t, nil
	}
	if !identity.IsObjectID(t.Snapshot) {
		return nil, fmt.Errorf("tag.json: snapshot %q is not an object id", t.Snapshot)
	}
	if !manifest.IsContentHash(t.ContentHash) {
		return nil, fmt.Errorf("tag.json: content hash %q is not sha256:<64 hex>", t.ContentHash)
	}
	return &t, nil
}

// ContentHash returns the content hash readproof records for data:
// "sha256:" and 64 lower-case hex digits.
func ContentHash(data []byte) string { return contentHash(data) }

// HashBlob returns ContentHash of blob id and its size, hashing the blob
// as it is inflated (gitstore's BlobTo) without holding it: a snapshot a
// remote sent, or one in a damaged store, may be of any size. A blob over
// max bytes (max < 0: no bound) is refused from its header, unread, with
// an error wrapping gitstore.ErrTooLarge.
func HashBlob(g gitstore.Reader, id gitstore.OID, max int64) (hash string, size int64, err error) {
	h := sha256.New()
	n, err := g.BlobTo(id, max, h)
	if err != nil {
		return "", 0, err
	}
	return contentHashOf(h.Sum(nil)), n, nil
}
