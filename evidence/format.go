package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// Format constants of the Readproof v0.3 evidence statement.
const (
	// StatementType is the in-toto Statement v1 _type.
	StatementType = "https://in-toto.io/Statement/v1"
	// PredicateType names the predicate schema; it carries the major version.
	PredicateType = "urn:readproof:evidence:v0.3"
	// MerkleAlgorithm is the hash of the Merkle tree.
	MerkleAlgorithm = "sha256"
	// ExporterName is predicate.exporter.name in bundles this package builds.
	ExporterName = "readproof"
	// Redacted replaces credential-looking values in resource definitions.
	Redacted = "[REDACTED]"
)

// Statement is the in-toto Statement v1 that a bundle is. Field order is the
// JSON order of the Readproof v0.3 format.
type Statement struct {
	Type          string    `json:"_type"`
	Subject       []Subject `json:"subject"`
	PredicateType string    `json:"predicateType"`
	Predicate     Predicate `json:"predicate"`
}

// Subject names the manifest; its sha256 digest is the Merkle root over the
// entries, not the hash of any file.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Predicate is the Readproof v0.3 predicate. The fields after Replay are
// readproof additions that v0.3 verifiers ignore.
type Predicate struct {
	RunID             string           `json:"run_id"`
	ManifestID        string           `json:"manifest_id"`
	ManifestCreatedAt string           `json:"manifest_created_at"`
	GeneratedAt       string           `json:"generated_at"`
	Exporter          Exporter         `json:"exporter"`
	Merkle            Merkle           `json:"merkle"`
	Entries           []BundleEntry    `json:"entries"`
	Resources         []BundleResource `json:"resources"`
	Replay            *BundleReplay    `json:"replay,omitempty"`

	// Git records where the manifest lives in the store (addition).
	Git *GitInfo `json:"git,omitempty"`
	// ProofOfRead carries proof-of-read verdicts, as the probe package
	// shapes them (addition).
	ProofOfRead json.RawMessage `json:"proof_of_read,omitempty"`
	// Receipts carries a tool-receipt summary, as the receipts package
	// shapes it (addition).
	Receipts json.RawMessage `json:"receipts,omitempty"`
}

// Exporter names the program that wrote the bundle.
type Exporter struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Merkle describes the root. LeafCount is a readproof addition: the number of
// leaves the root was computed over.
type Merkle struct {
	Algorithm string `json:"algorithm"`
	Leaf      string `json:"leaf"`
	Root      string `json:"root"`
	LeafCount *int   `json:"leaf_count,omitempty"`
}

// BundleEntry is one manifest entry as the bundle lists it. Ref is a readproof
// addition (the @tag the entry was mounted by).
type BundleEntry struct {
	Position          int            `json:"position"`
	URI               string         `json:"uri"`
	SnapshotID        string         `json:"snapshot_id"`
	MaterializationID string         `json:"materialization_id"`
	ContentHash       string         `json:"content_hash"`
	SourceRevision    string         `json:"source_revision"`
	ObservedAt        string         `json:"observed_at"`
	ContentType       string         `json:"content_type"`
	Bytes             int64          `json:"bytes"`
	Provenance        map[string]any `json:"provenance"`
	ContentB64        string         `json:"content_b64,omitempty"`
	Ref               string         `json:"ref,omitempty"`

	// content is the bytes content_b64 encodes when Export left
	// ContentB64 empty: Marshal encodes them straight into the output.
	content []byte
	// b64 is the text of content_b64 when Verify's decoder left
	// ContentB64 empty: a slice of the bundle it read, not a copy.
	b64 []byte
}

// hasContent reports whether e embeds content: ContentB64, or its text in
// b64.
func (e *BundleEntry) hasContent() bool {
	return e.ContentB64 != "" || len(e.b64) > 0
}

// BundleResource is a resource definition, redacted. Source and Policy are
// absent when Missing is true.
type BundleResource struct {
	URI       string        `json:"uri"`
	Namespace string        `json:"namespace"`
	Path      string        `json:"path"`
	Source    *BundleSource `json:"source,omitempty"`
	Policy    *BundlePolicy `json:"policy,omitempty"`
	Missing   bool          `json:"missing,omitempty"`
}

// BundleSource is a resource's source kind and redacted configuration.
type BundleSource struct {
	Kind   string         `json:"kind"`
	Config map[string]any `json:"config"`
}

// BundlePolicy is a resource's freshness policy.
type BundlePolicy struct {
	Strategy      string `json:"strategy"`
	MaxAgeSeconds int64  `json:"max_age_seconds,omitempty"`
}

// BundleReplay is the replay the exporter ran when it wrote the bundle.
type BundleReplay struct {
	VerifiedAt string              `json:"verified_at"`
	AllMatch   bool                `json:"all_match"`
	Entries    []BundleReplayEntry `json:"entries"`
	Error      string              `json:"error,omitempty"`
}

// BundleReplayEntry is the replay outcome of one entry. Error is a readproof
// addition.
type BundleReplayEntry struct {
	Position     int    `json:"position"`
	Match        bool   `json:"match"`
	ExpectedHash string `json:"expected_hash"`
	ActualHash   string `json:"actual_hash"`
	Error        string `json:"error,omitempty"`
}

// GitInfo is the readproof addition that ties a bundle to the git store.
type GitInfo struct {
	// ManifestCommit is the manifest commit id (equal to the manifest id).
	ManifestCommit string `json:"manifest_commit"`
	// Tree is the manifest commit's tree id.
	Tree string `json:"tree,omitempty"`
	// RunRef is the ref that names the run, refs/tags/readproof/runs/<id>.
	RunRef string `json:"run_ref,omitempty"`
	// ManifestSHA256 is the plain SHA-256 of the manifest.json blob: a
	// digest of a real file for tools that expect one.
	ManifestSHA256 string `json:"manifest_sha256,omitempty"`
	// CommitSigner is the SHA256 fingerprint of the key that SSH-signed the
	// manifest commit, when it is signed.
	CommitSigner string `json:"commit_signer,omitempty"`
	// Store is a location hint for the store (a path or remote URL);
	// credentials in a URL are redacted.
	Store string `json:"store,omitempty"`
}

// Entry is one manifest entry handed to Build, in position order.
type Entry struct {
	Position       int
	URI            string
	Ref            string // the @tag the entry was mounted by, "" for none
	SnapshotID     string // git blob id of the content
	ContentHash    string // "sha256:<64 hex>"
	SourceRevision string
	ObservedAt     time.Time
	ContentType    string
	Bytes          int64
	Provenance     map[string]string
	Content        []byte // nil unless the bundle embeds content
	// ContentVerified says the caller has hashed Content itself and found
	// ContentHash (a replay from the store does): Build then does not hash
	// the bytes a second time.
	ContentVerified bool
}

// Resource is a resource definition handed to Build. Config must already be
// redacted by the caller; Build redacts again what looks like a credential.
type Resource struct {
	URI           string
	Namespace     string
	Path          string
	SourceKind    string
	Config        map[string]any
	Strategy      string
	MaxAgeSeconds int64
	// Missing marks a URI whose definition was removed after the run.
	Missing bool
}

// ReplayEntry is the store's replay of one manifest entry: the hash of the
// bytes the store reconstructs now, or Err when it could not.
type ReplayEntry struct {
	Position    int
	URI         string
	ContentHash string
	Err         error
}

// Replayer replays a manifest from the store. The caller implements it on the
// store; it must read the bytes from the store's own objects and hash them,
// never trust a recorded hash.
type Replayer interface {
	// ReplayHashes returns one ReplayEntry per manifest entry in position
	// order. An error means the manifest itself could not be read.
	ReplayHashes(manifestID string) ([]ReplayEntry, error)
}

// ReplayResult is a replay run at export time.
type ReplayResult struct {
	VerifiedAt time.Time
	Entries    []ReplayEntry
	// Err is set when the replay could not run at all.
	Err error
}

// Replay runs r for manifestID and records the outcome at time at. It never
// fails: a replay that cannot run is recorded in ReplayResult.Err, which the
// bundle carries as replay.error.
func Replay(r Replayer, manifestID string, at time.Time) *ReplayResult {
	entries, err := r.ReplayHashes(manifestID)
	return &ReplayResult{VerifiedAt: at, Entries: entries, Err: err}
}

// Input is everything Build needs. GeneratedAt is the only field allowed to
// differ between two exports of the same manifest (with Replay.VerifiedAt).
type Input struct {
	RunID             string
	ManifestID        string
	ManifestCreatedAt time.Time
	GeneratedAt       time.Time
	ExporterVersion   string // "" means "devel"
	Entries           []Entry
	Resources         []Resource
	Replay            *ReplayResult // nil records replay.error "replay not run"
	WithContent       bool

	// Additions.
	Git         *GitInfo
	ProofOfRead json.RawMessage // any JSON; re-encoded with sorted keys
	Receipts    json.RawMessage // any JSON; re-encoded with sorted keys
}

// isContentHash reports whether h is "sha256:" and 64 lower-case hex
// digits.
func isContentHash(h string) bool {
	return len(h) == len("sha256:")+64 && h[:7] == "sha256:" && isLowerHex(h[7:])
}

// Build assembles the statement for one manifest. It checks what it is given:
// positions 0..n-1 in order, well-formed content hashes, and with WithContent
// that every entry carries bytes that hash to its content hash (errors wrap
// ErrInvalidInput or ErrDigestMismatch).
func Build(in Input) (*Statement, error) {
	return build(in, false)
}

// Export is Marshal(Build(in)), the same bytes (a test holds it to that),
// in one pass: embedded content is base64-encoded straight into the output
// and the entries are encoded on all cores. The statement it returns is
// Build's without the entries' ContentB64 (the bytes are in data only).
func Export(in Input) ([]byte, *Statement, error) {
	st, err := build(in, true)
	if err != nil {
		return nil, nil, err
	}
	data, err := Marshal(st)
	for i := range st.Predicate.Entries {
		st.Predicate.Entries[i].content = nil
	}
	if err != nil {
		return nil, nil, err
	}
	return data, st, nil
}

// build is Build; with lazyContent it keeps embedded bytes in the entries'
// content for Marshal instead of filling ContentB64.
func build(in Input, lazyContent bool) (*Statement, error) {
	bad := func(format string, args ...any) (*Statement, error) {
		return nil, fmt.Errorf("%w: manifest %q: %s", ErrInvalidInput, in.ManifestID, fmt.Sprintf(format, args...))
	}
	if in.ManifestID == "" {
		return bad("manifest id is empty")
	}
	if int64(len(in.Entries)) > int64(^uint32(0)) {
		return bad("%d entries exceed the uint32 positions the Merkle leaf encodes", len(in.Entries))
	}
	entries := make([]BundleEntry, len(in.Entries))
	leaves := make([][32]byte, len(in.Entries))
	h := sha256.New()
	red := newRedactor() // provenance keys repeat: each is matched once
	for i, e := range in.Entries {
		if e.Position != i {
			return bad("entry %d has position %d: entries must be in position order 0..n-1", i, e.Position)
		}
		if e.URI == "" {
			return bad("entry %d has no uri", i)
		}
		if !isContentHash(e.ContentHash) {
			return bad("entry %d (%s): content hash %q is not sha256:<64 lower-case hex>", i, e.URI, e.ContentHash)
		}
		be := BundleEntry{
			Position:          e.Position,
			URI:               e.URI,
			SnapshotID:        e.SnapshotID,
			MaterializationID: e.SnapshotID, // bytes are delivered verbatim from the snapshot blob
			ContentHash:       e.ContentHash,
			SourceRevision:    e.SourceRevision,
			ObservedAt:        formatTime(e.ObservedAt),
			ContentType:       e.ContentType,
			Bytes:             e.Bytes,
			Provenance:        make(map[string]any, len(e.Provenance)),
			Ref:               e.Ref,
		}
		for k, v := range e.Provenance {
			be.Provenance[k] = red.provenance(k, v)
		}
		if in.WithContent {
			if e.Content == nil {
				return bad("entry %d (%s) has no content to embed: load the snapshot bytes or export without content", i, e.URI)
			}
			// (with ContentVerified the caller hashed these bytes already)
			if !e.ContentVerified {
				if got := "sha256:" + hex.EncodeToString(sha256Sum(e.Content)); got != e.ContentHash {
					return nil, fmt.Errorf("%w: manifest %q entry %d (%s): content hashes to %s, entry records %s: the store is damaged; run the store check",
						ErrDigestMismatch, in.ManifestID, i, e.URI, got, e.ContentHash)
				}
			}
			if be.Bytes == 0 {
				be.Bytes = int64(len(e.Content))
			} else if be.Bytes != int64(len(e.Content)) {
				return bad("entry %d (%s) records %d bytes but its content has %d", i, e.URI, be.Bytes, len(e.Content))
			}
			if lazyContent {
				be.content = e.Content
			} else {
				be.ContentB64 = base64.StdEncoding.EncodeToString(e.Content)
			}
		}
		entries[i] = be
		leaves[i] = leafWith(h, uint32(e.Position), e.URI, e.ContentHash)
	}
	root := Root(leaves)
	rootHex := hex.EncodeToString(root[:])
	n := len(entries)

	resources, err := buildResources(in.Resources, red)
	if err != nil {
		return bad("%v", err)
	}

	version := in.ExporterVersion
	if version == "" {
		version = "devel"
	}
	p := Predicate{
		RunID:             in.RunID,
		ManifestID:        in.ManifestID,
		ManifestCreatedAt: formatTime(in.ManifestCreatedAt),
		GeneratedAt:       formatTime(in.GeneratedAt),
		Exporter:          Exporter{Name: ExporterName, Version: version},
		Merkle:            Merkle{Algorithm: MerkleAlgorithm, Leaf: MerkleLeafRule, Root: rootHex, LeafCount: &n},
		Entries:           entries,
		Resources:         resources,
		Replay:            buildReplay(in.Replay, in.Entries, in.GeneratedAt),
	}
	if in.Git != nil {
		g := *in.Git
		if g.ManifestCommit == "" {
			g.ManifestCommit = in.ManifestID
		}
		g.Store = redactURL(g.Store)
		p.Git = &g
	}
	if p.ProofOfRead, err = canonicalJSON(in.ProofOfRead); err != nil {
		return bad("proof_of_read: %v", err)
	}
	if p.Receipts, err = canonicalJSON(in.Receipts); err != nil {
		return bad("receipts: %v", err)
	}
	return &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: in.ManifestID, Digest: map[string]string{"sha256": rootHex}}},
		PredicateType: PredicateType,
		Predicate:     p,
	}, nil
}

func buildResources(in []Resource, red *redactor) ([]BundleResource, error) {
	out := make([]BundleResource, 0, len(in))
	seen := make(map[string]bool, len(in))
	for _, r := range in {
		if r.URI == "" {
			return nil, fmt.Errorf("a resource has no uri")
		}
		if seen[r.URI] {
			return nil, fmt.Errorf("resource %s is listed twice", r.URI)
		}
		seen[r.URI] = true
		br := BundleResource{URI: r.URI, Namespace: r.Namespace, Path: r.Path, Missing: r.Missing}
		if !r.Missing {
			cfg, _ := red.value("", r.Config).(map[string]any)
			if cfg == nil {
				cfg = map[string]any{}
			}
			br.Source = &BundleSource{Kind: r.SourceKind, Config: cfg}
			br.Policy = &BundlePolicy{Strategy: r.Strategy, MaxAgeSeconds: r.MaxAgeSeconds}
		}
		out = append(out, br)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return out, nil
}

func buildReplay(r *ReplayResult, entries []Entry, generatedAt time.Time) *BundleReplay {
	if r == nil {
		return &BundleReplay{VerifiedAt: formatTime(generatedAt), Entries: []BundleReplayEntry{}, Error: "replay not run by the exporter"}
	}
	out := &BundleReplay{VerifiedAt: formatTime(r.VerifiedAt), Entries: []BundleReplayEntry{}}
	if r.Err != nil {
		out.Error = r.Err.Error()
		return out
	}
	all := len(r.Entries) == len(entries)
	for _, re := range r.Entries {
		be := BundleReplayEntry{Position: re.Position, ActualHash: re.ContentHash}
		if re.Position >= 0 && re.Position < len(entries) {
			be.ExpectedHash = entries[re.Position].ContentHash
		}
		if re.Err != nil {
			be.Error = re.Err.Error()
			be.ActualHash = ""
		}
		be.Match = re.Err == nil && be.ExpectedHash != "" && be.ActualHash == be.ExpectedHash
		all = all && be.Match
		out.Entries = append(out.Entries, be)
	}
	if !all && len(r.Entries) != len(entries) {
		out.Error = fmt.Sprintf("replay returned %d entries for a manifest of %d", len(r.Entries), len(entries))
	}
	out.AllMatch = all
	return out
}

// formatTime renders RFC 3339 in UTC with the fraction trimmed; the zero time
// renders as "".
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// canonicalJSON re-encodes arbitrary JSON with sorted object keys, keeping
// numbers exactly as written.
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("not valid JSON: more than one value")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n")), nil
}
