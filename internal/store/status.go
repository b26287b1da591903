package store

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/manifest"
)

// Peeked is what a source holds now, read without recording anything.
type Peeked struct {
	URI string `json:"uri"`
	// Snapshot is the id the bytes would get as a snapshot (their git blob
	// id); ContentHash their content hash.
	Snapshot    string `json:"snapshot"`
	ContentHash string `json:"content_hash"`
	Bytes       int64  `json:"bytes"`
	Revision    string `json:"source_revision,omitempty"`
	// NotModified is true when the source confirmed the current snapshot
	// (an HTTP 304); the other fields then describe that snapshot.
	NotModified bool `json:"not_modified,omitempty"`
}

// BlobID is the git blob id of data: the snapshot id data gets when it is
// recorded.
func BlobID(data []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// Peek reads a declared resource's source now, with a conditional request
// against the current snapshot when the source supports one, and records
// nothing: no observation, no object, no ref.
func (s *Store) Peek(ctx context.Context, u identity.URI) (*Peeked, error) {
	pol, err := s.Policy()
	if err != nil {
		return nil, err
	}
	res, ok := pol.Lookup(u)
	if !ok {
		return nil, hint.With(fmt.Errorf("%s: %w in %s", u, ErrNotRegistered, pol.Path),
			NotRegisteredHint(pol, u, fmt.Sprintf("register it: readproof resource add %s --source-type filesystem --path FILE", u)))
	}
	cur, _, err := s.current(u, nil)
	if err != nil {
		return nil, err
	}
	return s.peek(ctx, res, cur)
}

func (s *Store) peek(ctx context.Context, res *policy.Resource, cur *Observation) (*Peeked, error) {
	src, err := s.source(res)
	if err != nil {
		return nil, err
	}
	u := res.URI
	req := adapters.Request{URI: u.String()}
	if cur != nil {
		req.Previous = &adapters.Previous{Revision: cur.SourceRevision, ContentHash: cur.ContentHash, ETag: cur.ETag, LastModified: cur.LastModified}
	}
	r, err := src.Fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	p := &Peeked{URI: u.String(), Revision: r.Revision}
	if r.NotModified {
		if cur == nil {
			return nil, fmt.Errorf("%s: the source answered \"not modified\" but no snapshot is recorded", u)
		}
		p.NotModified = true
		p.Snapshot, p.ContentHash, p.Bytes = cur.Snapshot, cur.ContentHash, cur.Bytes
		if p.Revision == "" {
			p.Revision = cur.SourceRevision
		}
		return p, nil
	}
	p.Snapshot, p.ContentHash, p.Bytes = BlobID(r.Content), contentHash(r.Content), int64(len(r.Content))
	return p, nil
}

// Status states of a resource.
const (
	StatusUpToDate    = "up-to-date"
	StatusChanged     = "changed"
	StatusNoSnapshot  = "no-snapshot"
	StatusSourceError = "source-error"
)

// PointStatus compares one named position (a tag, or the pinned snapshot)
// with the source.
type PointStatus struct {
	Name        string `json:"name"`
	Snapshot    string `json:"snapshot"`
	ContentHash string `json:"content_hash,omitempty"`
	// Behind is true when the source no longer holds these bytes.
	Behind bool `json:"behind"`
}

// ResourceStatus is one declared resource compared with its source.
type ResourceStatus struct {
	URI     string        `json:"uri"`
	State   string        `json:"state"`
	Current *Observation  `json:"current,omitempty"`
	Source  *Peeked       `json:"source,omitempty"`
	Error   string        `json:"error,omitempty"`
	Tags    []PointStatus `json:"tags"`
	Pinned  *PointStatus  `json:"pinned,omitempty"`
	// Drift is true when the source no longer matches the latest snapshot,
	// a tag or the pin, or nothing was recorded yet.
	Drift bool `json:"drift"`
	// err is the source error, for errors.Is by callers.
	err error
}

// Err is the source error of a StatusSourceError resource.
func (r *ResourceStatus) Err() error { return r.err }

// Describe is the state in words: "up to date", "changed since snapshot
// X", "no snapshot yet" or "source error: ...".
func (r *ResourceStatus) Describe() string {
	switch r.State {
	case StatusUpToDate:
		return "up to date"
	case StatusChanged:
		return "changed since snapshot " + manifest.Short(r.Current.Snapshot)
	case StatusNoSnapshot:
		return "no snapshot yet"
	}
	return "source error: " + r.Error
}

// Status reads the source of every resource declared in the policy file,
// without recording anything, and compares it with the latest snapshot,
// each live tag and the pinned snapshot. A source that cannot be read is
// reported in its ResourceStatus, not as an error of the call.
func (s *Store) Status(ctx context.Context) ([]ResourceStatus, error) {
	pol, err := s.Policy()
	if err != nil {
		return nil, err
	}
	out := []ResourceStatus{}
	for i := range pol.Resources() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res := &pol.Resources()[i]
		st, err := s.statusOf(ctx, res)
		if err != nil {
			return nil, err
		}
		out = append(out, *st)
	}
	return out, nil
}

func (s *Store) statusOf(ctx context.Context, res *policy.Resource) (*ResourceStatus, error) {
	u := res.URI
	st := &ResourceStatus{URI: u.String(), Tags: []PointStatus{}}
	cur, _, err := s.current(u, nil)
	if err != nil {
		return nil, err
	}
	st.Current = cur
	tags, err := s.Tags(u)
	if err != nil {
		return nil, err
	}
	peek, err := s.peek(ctx, res, cur)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		st.State, st.Error, st.err = StatusSourceError, err.Error(), err
	} else {
		st.Source = peek
	}
	switch {
	case st.Source == nil:
	case cur == nil:
		st.State, st.Drift = StatusNoSnapshot, true
	case cur.ContentHash == peek.ContentHash:
		st.State = StatusUpToDate
	default:
		st.State, st.Drift = StatusChanged, true
	}
	for _, t := range tags {
		p := PointStatus{Name: t.Tag, Snapshot: t.Snapshot, ContentHash: t.ContentHash}
		if peek != nil && t.ContentHash != peek.ContentHash {
			p.Behind, st.Drift = true, true
		}
		st.Tags = append(st.Tags, p)
	}
	if res.Freshness.Strategy == policy.Pinned {
		p := &PointStatus{Name: "pinned", Snapshot: res.Freshness.Snapshot}
		if peek != nil && p.Snapshot != peek.Snapshot {
			p.Behind, st.Drift = true, true
		}
		st.Pinned = p
	}
	return st, nil
}
