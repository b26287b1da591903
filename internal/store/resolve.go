package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/telemetry"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
)

// Observation is one look at a resource's source, stored as observation.json
// in a commit of the resource's chain.
type Observation struct {
	URI            string            `json:"uri"`
	Snapshot       string            `json:"snapshot"`
	ContentHash    string            `json:"content_hash"`
	SourceRevision string            `json:"source_revision"`
	ObservedAt     time.Time         `json:"observed_at"`
	ContentType    string            `json:"content_type"`
	Bytes          int64             `json:"bytes"`
	Provenance     map[string]string `json:"provenance,omitempty"`
	NotModified    bool              `json:"not_modified,omitempty"`
	ETag           string            `json:"etag,omitempty"`
	LastModified   string            `json:"last_modified,omitempty"`
}

// Definition is the redacted resource definition stored with observations
// (resource.json) so a record shows the source and policy in force.
type Definition struct {
	URI         string        `json:"uri"`
	Source      adapters.Spec `json:"source"`
	Policy      PolicyView    `json:"policy"`
	ContentType string        `json:"content_type,omitempty"`
	Description string        `json:"description,omitempty"`
}

// PolicyView is a freshness policy as shown and stored.
type PolicyView struct {
	Strategy      string `json:"strategy"`
	MaxAgeSeconds int64  `json:"max_age_seconds,omitempty"`
	Snapshot      string `json:"snapshot,omitempty"`
}

// DefinitionOf returns the redacted definition of a declared resource.
func DefinitionOf(r *policy.Resource) Definition {
	return Definition{
		URI:    r.URI.String(),
		Source: r.Source.Redacted(),
		Policy: PolicyView{
			Strategy:      string(r.Freshness.Strategy),
			MaxAgeSeconds: int64(r.Freshness.MaxAge / time.Second),
			Snapshot:      r.Freshness.Snapshot,
		},
		ContentType: r.ContentType,
		Description: r.Description,
	}
}

// Delivery is a resolved document: the bytes and the record of why these.
type Delivery struct {
	manifest.Entry
	Content []byte `json:"-"`
}

// batch collects the ref moves of one operation so they are published in one
// transaction, and lets later resolves in the same operation see earlier
// pending observations as the current tip.
//
// A run of observation commits on one resource chain, built but not yet
// published, is one ref move in obs: Name the resource ref, Old the tip
// the commits were built on, New the newest of them; a chain staged more
// than once in the batch keeps the commits before New in earlier, oldest
// first. It holds ids, not the observations: a run of many documents keeps
// a few words per resource (obs is handed to gitstore.Update as it is,
// without a copy), and a rebase or a later resolve in the batch reads a
// commit back.
type batch struct {
	obs     []gitstore.RefUpdate
	earlier map[int][]gitstore.OID
	byRef   map[string]int // index in obs
	// run is set when the resolves are mounted into a run, whose manifest
	// records every observation: a re-read that found exactly the current
	// snapshot and revision then adds nothing to the resource chain.
	run bool
	// reuseReads is set when no delivery of the batch is handed back with
	// its content (RunOnceProgress): each filesystem read then goes into
	// readBuf, the memory of the one before, instead of a new buffer (a
	// 10,000-document run allocated 40 MB for its reads).
	reuseReads bool
	readBuf    []byte
	// noRecord is set for a reader that may not write (ResolveStored): a
	// resolve that would read the source fails with ErrWouldRecord.
	noRecord bool
}

func newBatch() *batch { return &batch{byRef: map[string]int{}} }

// newRunBatch is the batch of a run of about docs documents: obs has room
// for a move each and the run's own refs (publish appends them in place).
func newRunBatch(docs int) *batch {
	b := newBatch()
	b.run = true
	b.obs = make([]gitstore.RefUpdate, 0, docs+runRefs)
	return b
}

// runRefs is how many refs a run moves besides its resource chains: the
// run, its open marker, the journal.
const runRefs = 3

// Resolve reads one document as `readproof get` does: uri@tag delivers the
// tagged snapshot; otherwise the resource's freshness policy decides whether
// the source is read. A new observation is recorded when the source is read.
func (s *Store) Resolve(ctx context.Context, ref string) (*Delivery, error) {
	b := newBatch()
	d, err := s.resolve(ctx, ref, b)
	if err != nil {
		return nil, err
	}
	if err := s.publish(b, nil); err != nil {
		return nil, err
	}
	return d, nil
}

// ErrWouldRecord: a read that may not write (ResolveStored) would have read
// the source and recorded a new snapshot.
var ErrWouldRecord = errors.New("reading it now would read the source and record a new snapshot")

// ResolveStored is Resolve for a reader that may not write to the store: it
// delivers what Resolve delivers without reading the source (a tagged
// snapshot, a pinned one, or under allow_stale the current one within
// max_age) and, where the freshness policy would read the source and record
// an observation, fails with ErrWouldRecord before the source is contacted
// or anything is written.
func (s *Store) ResolveStored(ctx context.Context, ref string) (*Delivery, error) {
	b := newBatch()
	b.noRecord = true
	return s.resolve(ctx, ref, b)
}

func (s *Store) resolve(ctx context.Context, ref string, b *batch) (d *Delivery, err error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanResolve)
	defer func() { s.endResolve(span, ref, d, err) }()
	u, err := identity.ParseURI(ref)
	if err != nil {
		return nil, hint.With(err, s.uriHint(ref))
	}
	if u.Tag != "" {
		return s.resolveTag(u)
	}
	pol, err := s.Policy()
	if err != nil {
		return nil, err
	}
	res, ok := pol.Lookup(u)
	if !ok {
		return nil, hint.With(fmt.Errorf("%s: %w in %s", u, ErrNotRegistered, pol.Path),
			NotRegisteredHint(pol, u, fmt.Sprintf("register it: readproof resource add %s --source-type filesystem --path FILE", u)))
	}
	switch res.Freshness.Strategy {
	case policy.Pinned:
		return s.resolvePinned(u, res)
	case policy.AllowStale:
		cur, _, err := s.current(u, b)
		if err != nil {
			return nil, err
		}
		if cur != nil && reusable(s.now().Sub(cur.ObservedAt), res.Freshness.MaxAge) {
			return deliveryOf(s, cur, manifest.DecisionUseCurrent, "")
		}
	}
	if b.noRecord {
		return nil, fmt.Errorf("%s: %w (its freshness policy is %s)", u, ErrWouldRecord, res.Freshness.Strategy)
	}
	return s.fetch(ctx, u, res, b)
}

// uriHint is the hint for ref, which is no URI: identity.URIHint, or when
// ref is the file of a declared filesystem resource (given where its URI
// goes), that resource's URI.
func (s *Store) uriHint(ref string) string {
	h := identity.URIHint(ref, true)
	if identity.MendURI(ref) != "" {
		return h
	}
	pol, err := s.Policy()
	if err != nil {
		return h
	}
	abs, err := filepath.Abs(ref)
	if err != nil {
		return h
	}
	for _, r := range pol.Resources() {
		if r.Source.Type != "filesystem" || r.Source.Path == "" {
			continue
		}
		p := r.Source.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(pol.Dir, p)
		}
		if filepath.Clean(p) == abs {
			return "did you mean " + r.URI.String() + "? (declared with path " + text.Escape(r.Source.Path) + "; " + h + ")"
		}
	}
	return h
}

// NotRegisteredHint is the hint of ErrNotRegistered for u: the declared URI
// u is a slip of (a letter's case, a letter more or less), when there is
// one, since registering u would declare a second resource beside the one
// meant; otherwise the hint given.
func NotRegisteredHint(pol *policy.File, u identity.URI, otherwise string) string {
	if near := pol.Near(u); near != "" {
		return "did you mean " + near + "? (`readproof resource list` lists the declared resources)"
	}
	return otherwise
}

// reusable reports whether allow_stale may deliver a snapshot of this age
// (now minus when it was observed) without reading the source: at most
// maxAge old, and not observed after now. A snapshot from the clock's future
// (the clock was set back, or the observation came by pull from a machine
// whose clock ran ahead) has no age to trust: reused, it would be served
// until the clock caught up, plus maxAge, however long that is.
func reusable(age, maxAge time.Duration) bool { return age >= 0 && age <= maxAge }

func deliveryOf(s *Store, o *Observation, decision, ref string) (*Delivery, error) {
	content, err := s.git.Blob(gitstore.OID(o.Snapshot))
	if err != nil {
		return nil, fmt.Errorf("%s: snapshot %s: %w", o.URI, o.Snapshot, err)
	}
	if got := contentHash(content); got != o.ContentHash {
		return nil, fmt.Errorf("%s: snapshot %s hashes to %s, recorded %s: %w", o.URI, o.Snapshot, got, o.ContentHash, ErrMismatch)
	}
	return &Delivery{
		Entry: manifest.Entry{
			URI: o.URI, Ref: ref, Snapshot: o.Snapshot, ContentHash: o.ContentHash,
			SourceRevision: o.SourceRevision, ObservedAt: o.ObservedAt, Decision: decision,
			Bytes: int64(len(content)), ContentType: o.ContentType, Provenance: o.Provenance,
		},
		Content: content,
	}, nil
}

// current returns the newest observation of u (pending in b first), or nil.
func (s *Store) current(u identity.URI, b *batch) (*Observation, gitstore.OID, error) {
	if b != nil {
		if i, ok := b.byRef[resourceRef(u)]; ok {
			commit := b.obs[i].New
			o, err := s.observationAt(commit)
			if err != nil {
				return nil, "", fmt.Errorf("resource %s: %w", u, err)
			}
			return o, commit, nil
		}
	}
	tip, err := s.ref(resourceRef(u))
	if err != nil || tip == "" {
		return nil, "", err
	}
	o, err := s.observationAt(tip)
	if err != nil {
		return nil, "", fmt.Errorf("resource %s: %w", u, err)
	}
	return o, tip, nil
}

func (s *Store) observationAt(commit gitstore.OID) (*Observation, error) {
	c, err := s.git.Commit(commit)
	if err != nil {
		return nil, fmt.Errorf("observation %s: %w", commit, err)
	}
	data, err := s.readFile(c, "observation.json")
	if err != nil {
		return nil, fmt.Errorf("observation %s: %w", commit, err)
	}
	var o Observation
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("observation %s: %w", commit, err)
	}
	return &o, nil
}

// source opens the adapter of a declared resource. Sources that keep
// something worth reusing (an HTTP client's connections, a git mirror) are
// kept per resource for the life of the store handle; a filesystem source
// is only its path and roots, cheaper to open again than to keep: one per
// resource held about 3.5 MB of a 10,000-document run until it ended.
func (s *Store) source(res *policy.Resource) (adapters.Source, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := res.Source.Type != "filesystem"
	var key string
	if keep {
		key = res.URI.String()
		if src, ok := s.sources[key]; ok {
			return src, nil
		}
	}
	pol, err := s.Policy()
	if err != nil {
		return nil, err
	}
	env := pol.AdapterEnv()
	env.LockWait = s.opts.Git.LockWait // a git mirror's lock
	env.Warn = s.warnOnce
	src, err := s.opts.OpenSource(res.Source, env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", res.URI, err)
	}
	if keep {
		s.sources[key] = src
	}
	return src, nil
}

// warnOnce passes a source's warning to SetSourceWarn's function, else
// Options.Git.Warn, the first time it is given: every fetch of every ssh
// source of a command reads ~/.ssh/config, and a Match block there is
// said once.
func (s *Store) warnOnce(err error) {
	s.warnMu.Lock()
	said := s.warned[err.Error()]
	if !said {
		if s.warned == nil {
			s.warned = map[string]bool{}
		}
		s.warned[err.Error()] = true
	}
	to := s.sourceWarn
	s.warnMu.Unlock()
	if to == nil {
		to = s.opts.Git.Warn
	}
	if !said && to != nil {
		to(err)
	}
}

func (s *Store) fetch(ctx context.Context, u identity.URI, res *policy.Resource, b *batch) (*Delivery, error) {
	src, err := s.source(res)
	if err != nil {
		return nil, err
	}
	cur, _, err := s.current(u, b)
	if err != nil {
		return nil, err
	}
	req := adapters.Request{URI: u.String()}
	if cur != nil {
		req.Previous = &adapters.Previous{Revision: cur.SourceRevision, ContentHash: cur.ContentHash, ETag: cur.ETag, LastModified: cur.LastModified}
	}
	if b.reuseReads {
		req.Buffer = b.readBuf
	}
	fctx, fspan := startFetch(ctx, res)
	r, err := src.Fetch(fctx, req)
	endFetch(fspan, r, err)
	if err != nil {
		return nil, s.withheld(u, res, cur, err)
	}
	obs := Observation{URI: u.String(), ObservedAt: s.now(), Provenance: r.Provenance, ETag: r.ETag, LastModified: r.LastModified, SourceRevision: r.Revision}
	var content []byte
	if r.NotModified {
		if cur == nil {
			return nil, fmt.Errorf("%s: the source answered \"not modified\" but no snapshot is recorded", u)
		}
		content, err = s.git.Blob(gitstore.OID(cur.Snapshot))
		if err != nil {
			return nil, fmt.Errorf("%s: current snapshot %s: %w", u, cur.Snapshot, err)
		}
		obs.NotModified = true
		obs.ContentType = cur.ContentType
		if obs.SourceRevision == "" {
			obs.SourceRevision = cur.SourceRevision
		}
		if obs.ETag == "" {
			obs.ETag = cur.ETag
		}
		if obs.LastModified == "" {
			obs.LastModified = cur.LastModified
		}
	} else {
		content = r.Content
		obs.ContentType = r.ContentType
	}
	if res.ContentType != "" {
		obs.ContentType = res.ContentType
	}
	if obs.ContentType == "" {
		obs.ContentType = "application/octet-stream"
	}
	blob, err := s.git.PutBlob(content)
	if err != nil {
		return nil, err
	}
	obs.Snapshot = string(blob)
	obs.ContentHash = contentHash(content)
	obs.Bytes = int64(len(content))
	if obs.SourceRevision == "" {
		obs.SourceRevision = obs.ContentHash
	}
	if !(b.run && unchanged(cur, &obs) && res.Freshness.Strategy != policy.AllowStale) {
		def := DefinitionOf(res)
		if err := s.stage(b, resourceRef(u), obs, &def); err != nil {
			return nil, err
		}
	}
	if b.reuseReads && !r.NotModified && res.Source.Type == "filesystem" {
		// The bytes are stored (PutBlob copies them) and hashed: the next
		// read of the batch reuses their memory, so the delivery goes
		// without them. A filesystem source's content is its own buffer or
		// Request.Buffer, never memory something else holds.
		b.readBuf, content = content, nil
	}
	return &Delivery{
		Entry: manifest.Entry{
			URI: obs.URI, Snapshot: obs.Snapshot, ContentHash: obs.ContentHash, SourceRevision: obs.SourceRevision,
			ObservedAt: obs.ObservedAt, Decision: manifest.DecisionFetch, Bytes: obs.Bytes, ContentType: obs.ContentType,
			Provenance: obs.Provenance,
		},
		Content: content,
	}, nil
}

// withheld adds to err, a source's failure, a hint that says why the
// snapshot recorded for u (cur) was not delivered in its place and how to
// read it deliberately. A source's own message already ends with what to
// fix in the source; an interrupt, or a resource with nothing recorded, has
// nothing to add.
func (s *Store) withheld(u identity.URI, res *policy.Resource, cur *Observation, err error) error {
	if cur == nil || hint.Of(err) != "" || errors.Is(err, context.Canceled) {
		return err
	}
	observed := cur.ObservedAt.UTC().Format(time.RFC3339)
	var why string
	switch age := s.now().Sub(cur.ObservedAt); {
	case res.Freshness.Strategy != policy.AllowStale:
		why = fmt.Sprintf("%s reads the source on every read and never delivers the recorded snapshot (observed %s) in its place", res.Freshness.Strategy, observed)
	case age < 0:
		why = fmt.Sprintf("the recorded snapshot was observed at %s, after this clock's time, so allow_stale does not deliver it", observed)
	default:
		why = fmt.Sprintf("the recorded snapshot (observed %s, %s ago) is older than max_age %s, so allow_stale does not deliver it",
			observed, age.Round(time.Second), policy.FormatDuration(res.Freshness.MaxAge))
	}
	return hint.With(err, fmt.Sprintf("%s; to read it deliberately, tag it (readproof tag set %s TAG) and read %s@TAG", why, u, u))
}

// unchanged reports whether o found exactly what cur records: the same
// snapshot, source revision and validators.
func unchanged(cur, o *Observation) bool {
	return cur != nil && cur.Snapshot == o.Snapshot && cur.SourceRevision == o.SourceRevision &&
		cur.ETag == o.ETag && cur.LastModified == o.LastModified && cur.ContentType == o.ContentType
}

// stage builds an observation commit on top of the current tip (or the
// pending ones in b) and adds it to b.
func (s *Store) stage(b *batch, ref string, obs Observation, def *Definition) error {
	i, ok := b.byRef[ref]
	var parent gitstore.OID
	if ok {
		parent = b.obs[i].New
	} else {
		tip, err := s.ref(ref)
		if err != nil {
			return err
		}
		parent = tip
	}
	id, err := s.buildObservation(obs, def, parent)
	if err != nil {
		return err
	}
	if !ok {
		b.byRef[ref] = len(b.obs)
		b.obs = append(b.obs, gitstore.RefUpdate{Name: ref, Old: parent, New: id})
		return nil
	}
	if b.earlier == nil {
		b.earlier = map[int][]gitstore.OID{}
	}
	b.earlier[i] = append(b.earlier[i], parent)
	b.obs[i].New = id
	return nil
}

func (s *Store) buildObservation(obs Observation, def *Definition, parent gitstore.OID) (gitstore.OID, error) {
	obsJSON, err := json.MarshalIndent(obs, "", "  ")
	if err != nil {
		return "", err
	}
	defJSON, err := json.MarshalIndent(def, "", "  ")
	if err != nil {
		return "", err
	}
	obsBlob, err := s.git.PutBlob(append(obsJSON, '\n'))
	if err != nil {
		return "", err
	}
	defBlob, err := s.git.PutBlob(append(defJSON, '\n'))
	if err != nil {
		return "", err
	}
	tree, err := s.git.PutTree([]gitstore.TreeEntry{
		{Name: "content", Mode: gitstore.ModeFile, OID: gitstore.OID(obs.Snapshot)},
		{Name: "observation.json", Mode: gitstore.ModeFile, OID: obsBlob},
		{Name: "resource.json", Mode: gitstore.ModeFile, OID: defBlob},
	})
	if err != nil {
		return "", err
	}
	var parents []gitstore.OID
	if parent != "" {
		parents = []gitstore.OID{parent}
	}
	note := ""
	if obs.NotModified {
		note = " (not modified)"
	}
	msg := fmt.Sprintf("observe %s%s\n\nsnapshot %s\ncontent-hash %s\nsource-revision %s\nobserved-at %s\n",
		obs.URI, note, obs.Snapshot, obs.ContentHash, obs.SourceRevision, obs.ObservedAt.Format(time.RFC3339Nano))
	sig := s.signature(obs.ObservedAt)
	return s.git.PutCommit(gitstore.Commit{Tree: tree, Parents: parents, Author: sig, Committer: sig, Message: msg})
}

// rebase rebuilds the pending observations of b.obs[i] on the ref's
// current tip after a conflict. Observations only accumulate, so any tip is
// a valid parent. Each commit is the one buildObservation made, with the
// new parent: the same tree, signatures and message, read back from the
// store.
func (s *Store) rebase(b *batch, i int) error {
	u := &b.obs[i]
	tip, err := s.ref(u.Name)
	if err != nil {
		return err
	}
	earlier := b.earlier[i]
	parent := tip
	rebuild := func(id gitstore.OID) (gitstore.OID, error) {
		c, err := s.git.Commit(id)
		if err != nil {
			return "", fmt.Errorf("rebase %s: %w", u.Name, err)
		}
		c.Parents = nil
		if parent != "" {
			c.Parents = []gitstore.OID{parent}
		}
		return s.git.PutCommit(c)
	}
	for k, id := range earlier {
		if parent, err = rebuild(id); err != nil {
			return err
		}
		earlier[k] = parent
	}
	if parent, err = rebuild(u.New); err != nil {
		return err
	}
	u.Old, u.New = tip, parent
	return nil
}

// publish moves every pending observation ref plus extra updates in one
// transaction. On a conflict of an observation ref it rebases and retries;
// a conflict on an extra ref is returned to the caller (via retry in the
// caller, which rebuilds extra).
func (s *Store) publish(b *batch, extra func() ([]gitstore.RefUpdate, error)) error {
	return retry("record", func() error {
		// The extra updates go after the observation refs, into obs's
		// spare room when it has some (a run's batch): obs itself is not
		// changed, and 10,000 moves are not copied.
		ups := b.obs
		if extra != nil {
			more, err := extra()
			if err != nil {
				return err
			}
			ups = append(ups, more...)
		}
		if len(ups) == 0 {
			return nil
		}
		err := s.git.Update(ups...)
		var ce *gitstore.ConflictError
		if errors.As(err, &ce) {
			if i, ok := b.byRef[ce.Ref]; ok {
				if rerr := s.rebase(b, i); rerr != nil {
					return rerr
				}
			}
		}
		return err
	})
}

// resolvePinned delivers the snapshot named by a pinned policy.
func (s *Store) resolvePinned(u identity.URI, res *policy.Resource) (*Delivery, error) {
	o, _, err := s.findObservation(u, res.Freshness.Snapshot)
	if err != nil {
		return nil, hint.With(fmt.Errorf("%s is pinned to snapshot %s: %w", u, res.Freshness.Snapshot, err),
			"pin a snapshot listed by `readproof history "+u.String()+"`")
	}
	return deliveryOf(s, o, manifest.DecisionUsePinned, "")
}

// noSnapshotHint is the hint for u, of which nothing is recorded: read it
// once, when it is declared; else the declared URI it is a slip of, or to
// declare it first (`get` of an undeclared URI fails).
func (s *Store) noSnapshotHint(u identity.URI) string {
	h := "read it once first: readproof get " + u.String()
	pol, err := s.Policy()
	if err != nil {
		return h
	}
	if _, ok := pol.Lookup(u); ok {
		return h
	}
	return NotRegisteredHint(pol, u, u.String()+" is not declared in "+pol.Path+": declare it with `readproof resource add "+u.String()+" --source-type TYPE ...`, then read it once: readproof get "+u.String())
}

// findObservation walks u's chain for the newest observation of a snapshot
// given as a full or abbreviated snapshot id or content hash.
func (s *Store) findObservation(u identity.URI, want string) (*Observation, gitstore.OID, error) {
	if want == "" {
		o, c, err := s.current(u, nil)
		if err == nil && o == nil {
			err = hint.With(fmt.Errorf("%s: %w recorded yet", u, ErrNoSnapshot), s.noSnapshotHint(u))
		}
		return o, c, err
	}
	if len(want) < 4 {
		return nil, "", hint.With(fmt.Errorf("snapshot %q: too short, give at least 4 hex digits", want), "list its snapshots with: readproof history "+u.String())
	}
	var found *Observation
	var foundAt gitstore.OID
	err := s.walkChain(resourceRef(u), func(commit gitstore.OID, o *Observation) bool {
		if strings.HasPrefix(o.Snapshot, want) || strings.HasPrefix(o.ContentHash, want) || strings.HasPrefix(o.ContentHash, "sha256:"+want) {
			if found != nil && found.Snapshot != o.Snapshot {
				found, foundAt = nil, "ambiguous"
				return false
			}
			if found == nil {
				found, foundAt = o, commit
			}
		}
		return true
	})
	if err != nil {
		return nil, "", err
	}
	if foundAt == "ambiguous" {
		return nil, "", hint.With(fmt.Errorf("snapshot %q of %s is ambiguous; give more digits", want, u), "list its snapshots with: readproof history "+u.String())
	}
	if found == nil {
		return nil, "", hint.With(fmt.Errorf("snapshot %q: %w recorded for %s", want, ErrNoSnapshot, u), "list its snapshots with: readproof history "+u.String())
	}
	return found, foundAt, nil
}

// walkChain visits the observations of a resource chain, newest first,
// following first parents (and every parent of a merge, once), until fn
// returns false.
func (s *Store) walkChain(ref string, fn func(gitstore.OID, *Observation) bool) error {
	tip, err := s.ref(ref)
	if err != nil || tip == "" {
		return err
	}
	return s.walkCommits(tip, func(id gitstore.OID, c gitstore.Commit) (bool, error) {
		if len(c.Parents) > 1 {
			return true, nil // a merge after sync repeats its newest parent's observation
		}
		data, err := s.readFile(c, "observation.json")
		if err != nil {
			return false, fmt.Errorf("observation %s: %w", id, err)
		}
		var o Observation
		if err := json.Unmarshal(data, &o); err != nil {
			return false, fmt.Errorf("observation %s: %w", id, err)
		}
		return fn(id, &o), nil
	})
}

// walkCommits visits the commits reachable from tip, newest committer time
// first, each once.
func (s *Store) walkCommits(tip gitstore.OID, fn func(gitstore.OID, gitstore.Commit) (bool, error)) error {
	type item struct {
		id gitstore.OID
		c  gitstore.Commit
	}
	seen := map[gitstore.OID]bool{tip: true}
	c, err := s.git.Commit(tip)
	if err != nil {
		return err
	}
	queue := []item{{tip, c}}
	for len(queue) > 0 {
		// pick the newest
		best := 0
		for i := range queue {
			if queue[i].c.Committer.When.After(queue[best].c.Committer.When) {
				best = i
			}
		}
		it := queue[best]
		queue = append(queue[:best], queue[best+1:]...)
		more, err := fn(it.id, it.c)
		if err != nil || !more {
			return err
		}
		for _, p := range it.c.Parents {
			if seen[p] {
				continue
			}
			seen[p] = true
			pc, err := s.git.Commit(p)
			if err != nil {
				return fmt.Errorf("commit %s: %w", p, err)
			}
			queue = append(queue, item{p, pc})
		}
	}
	return nil
}
