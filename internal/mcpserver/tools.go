package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/proofread"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/receipts"
)

// Tool names.
const (
	ToolResourcesList      = "readproof_resources_list"
	ToolResolve            = "readproof_resolve"
	ToolHistory            = "readproof_history"
	ToolRunStart           = "readproof_run_start"
	ToolRunMount           = "readproof_run_mount"
	ToolRunCommit          = "readproof_run_commit"
	ToolManifest           = "readproof_manifest"
	ToolDiff               = "readproof_diff"
	ToolReplay             = "readproof_replay"
	ToolTagSet             = "readproof_tag_set"
	ToolTagList            = "readproof_tag_list"
	ToolTagDelete          = "readproof_tag_delete"
	ToolEvidenceExport     = "readproof_evidence_export"
	ToolProbeCheck         = "readproof_probe_check"
	ToolReceiptsVerifyClms = "readproof_receipts_verify_claims"
)

func (s *Server) addTools() {
	addTool(s, &mcp.Tool{Name: ToolResourcesList, Annotations: readOnly("List readproof resources"),
		Description: "List every document registered in readproof.toml: its readproof:// URI, source (credentials redacted), " +
			"freshness policy, current snapshot and tags. The discovery call; reads nothing from any source."}, s.resourcesList)
	addTool(s, &mcp.Tool{Name: ToolResolve, Annotations: reads("Read a document"),
		Description: "Read one document by readproof:// URI, exactly as `readproof get` does, and return its bytes with the snapshot id, " +
			"content hash, source revision and the decision (fetch, use_current, use_pinned, use_tag). " +
			"Side effect: under the resource's freshness policy this may read the source and record a new snapshot in the store. " +
			"URI@TAG returns the tagged snapshot without reading the source. Inline content is capped at 1 MiB. " +
			"To record the read in a run, use readproof_run_mount instead."}, s.resolve)
	addTool(s, &mcp.Tool{Name: ToolHistory, Annotations: readOnly("Snapshot history"),
		Description: "List a resource's distinct snapshots, newest first, with the tags pointing at each."}, s.history)
	addTool(s, &mcp.Tool{Name: ToolRunStart, Annotations: writes("Start a run", false, false),
		Description: "Open a run: the container that records which documents one piece of work reads. " +
			"Then mount documents with readproof_run_mount and freeze the run with readproof_run_commit."}, s.runStart)
	addTool(s, &mcp.Tool{Name: ToolRunMount, Annotations: reads("Read a document into a run"),
		Description: "Read a document (readproof://NS/PATH or URI@TAG) and record it at the next position of an open run; returns the bytes " +
			"with their provenance. Side effect: like readproof_resolve it may read the source and record a new snapshot, and it " +
			"appends an entry to the run. Use exactly the returned bytes in your reasoning. Inline content is capped at 1 MiB."}, s.runMount)
	addTool(s, &mcp.Tool{Name: ToolRunCommit, Annotations: writes("Commit a run", false, false),
		Description: "Freeze an open run into an immutable manifest and return the manifest id (40 hex). Cite the manifest id in your answer: " +
			"readproof_manifest, readproof_diff, readproof_replay and readproof_evidence_export all take it."}, s.runCommit)
	addTool(s, &mcp.Tool{Name: ToolManifest, Annotations: readOnly("Show a manifest"),
		Description: "Show a committed manifest by run id or manifest id: every entry's URI, tag, snapshot, content hash, source revision, " +
			"observation time and decision."}, s.manifest)
	addTool(s, &mcp.Tool{Name: ToolDiff, Annotations: readOnly("Compare two runs"),
		Description: "Compare two runs (run ids or manifest ids): which documents were added, removed, changed or unchanged, why " +
			"(source revision, observation time, tag), and a unified diff of changed text (at most 1 MiB of diff in all)."}, s.diff)
	addTool(s, &mcp.Tool{Name: ToolReplay, Annotations: readOnly("Replay a run"),
		Description: "Rebuild a run's bytes from the store alone (never the live source) and re-hash every entry; all_match says whether " +
			"every entry reproduces. include_content returns the bytes: all of them by default (no 1 MiB cap), or a window with " +
			"position, offset and max_bytes for clients that limit result sizes; next_offset continues a window."}, s.replay)
	addTool(s, &mcp.Tool{Name: ToolTagSet, Annotations: writes("Set a tag", false, false),
		Description: "Point a named tag at a snapshot of a resource (default: its current snapshot), so URI@TAG delivers exactly those bytes. " +
			"The move is recorded in the tag's history."}, s.tagSet)
	addTool(s, &mcp.Tool{Name: ToolTagList, Annotations: readOnly("List tags"),
		Description: "List a resource's tags, each with the exact URI@TAG reference to read it by."}, s.tagList)
	addTool(s, &mcp.Tool{Name: ToolTagDelete, Annotations: writes("Delete a tag", true, false),
		Description: "Remove a tag. The snapshot stays, manifests that mounted it still replay, and the deletion is recorded in the tag's history."}, s.tagDelete)
	addTool(s, &mcp.Tool{Name: ToolEvidenceExport, Annotations: readOnly("Export evidence"),
		Description: "Build the evidence bundle (an in-toto statement with the Merkle root over the run's entries, replayed from the store) for a " +
			"run id or manifest id, exactly as `readproof evidence export` writes it (unsigned), and return its bytes as a string. " +
			"with_content embeds every delivered byte (no 1 MiB cap)."}, s.evidenceExport)
	addTool(s, &mcp.Tool{Name: ToolReceiptsVerifyClms, Annotations: readOnly("Check cited receipts"),
		Description: "Check the tool receipt ids cited in a text (or a JSON list of ids) against the store: each is valid, fabricated, " +
			"tampered, from another session or under an unknown key; receipts of the session that were not cited are listed as omitted."}, s.verifyClaims)
	addTool(s, &mcp.Tool{Name: ToolProbeCheck, Annotations: writes("Check proof of read", false, false),
		Description: "Check an answer for the proof-of-read sentinels delivered in a run's probed mounts (readproof_run_mount with probe), " +
			"as `readproof probe check` does: each probed entry gets a verdict (READ_VERIFIED, READ_STALE, HALLUCINATED, REPLAY_SUSPECT), " +
			"and the verdicts are recorded in the store."}, s.probeCheck)
}

// Inputs ---------------------------------------------------------------------

// NoInput is the input of tools without arguments.
type NoInput struct{}

// URIInput names one resource, optionally with @tag.
type URIInput struct {
	URI string `json:"uri" jsonschema:"readproof://NAMESPACE/PATH, optionally with @TAG"`
}

// PlainURIInput names one resource, without @tag.
type PlainURIInput struct {
	URI string `json:"uri" jsonschema:"readproof://NAMESPACE/PATH (no @TAG)"`
}

// RunInput names a run.
type RunInput struct {
	RunID string `json:"run_id" jsonschema:"run id: letters, digits, '.', '_' and '-', starting with a letter or digit"`
}

func (in RunInput) runOf() string { return in.RunID }

// MountInput names a run and a document.
type MountInput struct {
	RunID string `json:"run_id" jsonschema:"id of an open run (see readproof_run_start)"`
	URI   string `json:"uri" jsonschema:"readproof://NAMESPACE/PATH, optionally with @TAG"`
	Probe bool   `json:"probe,omitempty" jsonschema:"append a proof-of-read probe line to the delivered text (needs a probe key); check the answer later with readproof_probe_check"`
}

func (in MountInput) runOf() string { return in.RunID }

// TargetInput names a committed run.
type TargetInput struct {
	Target string `json:"target" jsonschema:"run id or manifest id (40 hex)"`
}

func (in TargetInput) runOf() string { return runOfTarget(in.Target) }

// runOfTarget is the run a target names for its receipt: a run id, not a
// manifest id.
func runOfTarget(target string) string {
	if identity.IsObjectID(target) {
		return ""
	}
	return target
}

// DiffInput names two committed runs.
type DiffInput struct {
	A string `json:"a" jsonschema:"the earlier run: run id or manifest id"`
	B string `json:"b" jsonschema:"the later run: run id or manifest id"`
}

// ReplayInput selects what replay returns.
type ReplayInput struct {
	Target         string `json:"target" jsonschema:"run id or manifest id (40 hex)"`
	IncludeContent bool   `json:"include_content,omitempty" jsonschema:"return the replayed bytes of each entry (text, or base64 for binary content)"`
	Position       *int   `json:"position,omitempty" jsonschema:"with include_content: return the content of this entry position only"`
	Offset         int64  `json:"offset,omitempty" jsonschema:"with include_content: first byte to return of each selected entry (default 0)"`
	MaxBytes       int64  `json:"max_bytes,omitempty" jsonschema:"with include_content: most bytes to return per entry; 0 (default) returns every byte. Text windows end on a character boundary"`
}

func (in ReplayInput) runOf() string { return runOfTarget(in.Target) }

// TagSetInput points a tag.
type TagSetInput struct {
	URI      string `json:"uri" jsonschema:"readproof://NAMESPACE/PATH, or URI@TAG naming the tag"`
	Tag      string `json:"tag,omitempty" jsonschema:"tag name (letters, digits, '.', '_', '-'); omit when uri carries @TAG"`
	Snapshot string `json:"snapshot,omitempty" jsonschema:"snapshot id or content hash (or a prefix of at least 4 hex digits) to tag; default the current snapshot"`
}

// TagInput names a tag.
type TagInput struct {
	URI string `json:"uri" jsonschema:"readproof://NAMESPACE/PATH, or URI@TAG naming the tag"`
	Tag string `json:"tag,omitempty" jsonschema:"tag name; omit when uri carries @TAG"`
}

// EvidenceInput names a run to export.
type EvidenceInput struct {
	Target      string `json:"target" jsonschema:"run id or manifest id (40 hex)"`
	WithContent bool   `json:"with_content,omitempty" jsonschema:"embed every delivered byte (base64) in the bundle"`
}

func (in EvidenceInput) runOf() string { return runOfTarget(in.Target) }

// ClaimsInput carries the receipt ids an agent cites.
type ClaimsInput struct {
	Claims  string `json:"claims" jsonschema:"the text citing receipt ids (rcpt_...), or a JSON list of receipt ids"`
	Session string `json:"session,omitempty" jsonschema:"receipt session to check against; default this server's session"`
}

// ProbeInput carries an answer to check.
type ProbeInput struct {
	Target string `json:"target" jsonschema:"run id or manifest id of the probed run"`
	Answer string `json:"answer" jsonschema:"the answer text that should contain the sentinels"`
}

func (in ProbeInput) runOf() string { return runOfTarget(in.Target) }

// Outputs --------------------------------------------------------------------

// Document is a delivered document with its provenance.
type Document struct {
	URI            string            `json:"uri" jsonschema:"the resource URI, without @TAG"`
	Ref            string            `json:"ref" jsonschema:"the tag the read was pinned to; empty for a plain URI"`
	Snapshot       string            `json:"snapshot" jsonschema:"snapshot id: the git blob id (40 hex) of the bytes"`
	ContentHash    string            `json:"content_hash" jsonschema:"sha256:<64 hex> of the complete bytes"`
	SourceRevision string            `json:"source_revision" jsonschema:"the source's revision of these bytes (commit, ETag or content hash)"`
	ObservedAt     time.Time         `json:"observed_at" jsonschema:"when the source was read for this snapshot"`
	Decision       string            `json:"decision" jsonschema:"why these bytes: fetch, use_current, use_pinned or use_tag"`
	ContentType    string            `json:"content_type" jsonschema:"media type of the bytes"`
	Provenance     map[string]string `json:"provenance,omitempty" jsonschema:"source-specific details (credentials redacted)"`
	Encoding       string            `json:"encoding" jsonschema:"text: the bytes are in content; base64: they are in content_b64"`
	Content        string            `json:"content" jsonschema:"the document text; when truncated, cut on a character boundary with a marker line appended"`
	ContentB64     string            `json:"content_b64,omitempty" jsonschema:"the document bytes in base64, for content that is not text"`
	Truncated      bool              `json:"truncated" jsonschema:"true when only the first shown_bytes of total_bytes are included"`
	TotalBytes     int64             `json:"total_bytes" jsonschema:"size of the complete document in bytes"`
	ShownBytes     int64             `json:"shown_bytes" jsonschema:"bytes of the document included in this result"`
}

func documentOf(d *store.Delivery, content []byte) (Document, inline) {
	in := prepare(d.ContentType, content, d.ContentHash, InlineLimit)
	doc := Document{
		URI: d.URI, Ref: d.Ref, Snapshot: d.Snapshot, ContentHash: d.ContentHash, SourceRevision: d.SourceRevision,
		ObservedAt: d.ObservedAt, Decision: d.Decision, ContentType: d.ContentType, Provenance: redactProvenance(d.Provenance),
		Truncated: in.Cut, TotalBytes: in.Total, ShownBytes: in.Shown,
	}
	if in.IsText {
		doc.Encoding, doc.Content = "text", in.Text
	} else {
		doc.Encoding, doc.ContentB64 = "base64", b64(in.Blob)
	}
	return doc, in
}

// redactProvenance hides URL credentials in provenance values that are
// URLs; adapters already keep secrets out of provenance.
func redactProvenance(p map[string]string) map[string]string {
	if len(p) == 0 {
		return nil
	}
	out := make(map[string]string, len(p))
	for k, v := range p {
		if strings.Contains(v, "://") {
			v = adapters.Spec{Type: "http", URL: v}.Redacted().URL
		}
		out[k] = v
	}
	return out
}

func documentMeta(doc Document, in inline) mcp.Meta {
	m := mcp.Meta{"truncated": in.Cut, "total_bytes": in.Total, "content_hash": doc.ContentHash, "snapshot": doc.Snapshot}
	if in.Cut {
		m["shown_bytes"] = in.Shown
		m["truncation_notice"] = in.Notice
	}
	return m
}

func documentLine(doc Document) string {
	ref := doc.URI
	if doc.Ref != "" {
		ref += "@" + doc.Ref
	}
	s := fmt.Sprintf("%s: %d bytes %s, decision %s, snapshot %s, %s, source revision %s, observed %s.",
		ref, doc.TotalBytes, doc.ContentType, doc.Decision, manifest.Short(doc.Snapshot), doc.ContentHash,
		doc.SourceRevision, doc.ObservedAt.UTC().Format(time.RFC3339))
	where := "content"
	if doc.Encoding == "base64" {
		where = "content_b64"
	}
	if doc.Truncated {
		s += fmt.Sprintf(" Truncated: %d of %d bytes in %s; readproof_replay with include_content returns all of them.", doc.ShownBytes, doc.TotalBytes, where)
	} else {
		s += " The bytes are in " + where + "."
	}
	return s
}

// ResourceItem is one declared resource.
type ResourceItem struct {
	URI         string             `json:"uri" jsonschema:"readproof://NAMESPACE/PATH"`
	Namespace   string             `json:"namespace"`
	Path        string             `json:"path"`
	Description string             `json:"description" jsonschema:"source kind, freshness policy and origin (credentials redacted)"`
	Note        string             `json:"note,omitempty" jsonschema:"the description given in readproof.toml"`
	Source      adapters.Spec      `json:"source" jsonschema:"where the bytes come from (credentials redacted)"`
	Policy      store.PolicyView   `json:"policy" jsonschema:"freshness policy"`
	ContentType string             `json:"content_type,omitempty" jsonschema:"declared content type, if any"`
	Current     *store.Observation `json:"current,omitempty" jsonschema:"the newest snapshot, if one was recorded"`
	Tags        []string           `json:"tags" jsonschema:"tags of this resource; read one as URI@TAG"`
}

// ResourcesOutput lists declared resources.
type ResourcesOutput struct {
	Resources []ResourceItem `json:"resources"`
	Count     int            `json:"count"`
	Receipt
}

func (s *Server) resourcesList(_ context.Context, c *call, _ NoInput) (*ResourcesOutput, reply, error) {
	infos, err := c.st.Resources()
	if err != nil {
		return nil, reply{}, err
	}
	out := &ResourcesOutput{Resources: []ResourceItem{}}
	var names []string
	for _, r := range infos {
		item := ResourceItem{URI: r.URI, Namespace: r.Namespace, Path: r.Path, Description: describe(r.Definition), Note: r.Description,
			Source: r.Source, Policy: r.Policy, ContentType: r.ContentType, Current: r.Current, Tags: r.Tags}
		if item.Tags == nil {
			item.Tags = []string{}
		}
		if item.Current != nil {
			cur := *item.Current
			cur.Provenance = redactProvenance(cur.Provenance)
			item.Current = &cur
		}
		out.Resources = append(out.Resources, item)
		names = append(names, r.URI)
	}
	out.Count = len(out.Resources)
	text := "No resources are declared; add one with `readproof resource add`."
	if out.Count > 0 {
		text = fmt.Sprintf("%d resource%s: %s", out.Count, plural(out.Count), strings.Join(names, ", "))
	}
	return out, reply{text: text}, nil
}

// DocumentOutput is a resolved document.
type DocumentOutput struct {
	Document
	Receipt
}

func (s *Server) resolve(ctx context.Context, c *call, in URIInput) (*DocumentOutput, reply, error) {
	d, err := c.st.Resolve(ctx, in.URI)
	if err != nil {
		return nil, reply{}, err
	}
	doc, inl := documentOf(d, d.Content)
	return &DocumentOutput{Document: doc}, reply{text: documentLine(doc), meta: documentMeta(doc, inl)}, nil
}

// HistoryOutput lists snapshots.
type HistoryOutput struct {
	URI       string               `json:"uri"`
	Snapshots []store.SnapshotInfo `json:"snapshots" jsonschema:"distinct snapshots, newest first"`
	Receipt
}

func plainURI(s string) (identity.URI, error) {
	u, err := identity.ParseURI(s)
	if err != nil {
		return u, hint.With(err, "resource URIs look like readproof://NAMESPACE/PATH")
	}
	if u.Tag != "" {
		return u, hint.With(fmt.Errorf("%s: %w: this tool takes a URI without @tag", s, identity.ErrInvalid), "pass "+u.String())
	}
	return u, nil
}

func (s *Server) history(_ context.Context, c *call, in PlainURIInput) (*HistoryOutput, reply, error) {
	u, err := plainURI(in.URI)
	if err != nil {
		return nil, reply{}, err
	}
	h, err := c.st.History(u)
	if err != nil {
		return nil, reply{}, fmt.Errorf("%s: %w", u, err)
	}
	out := &HistoryOutput{URI: u.String(), Snapshots: h}
	if out.Snapshots == nil {
		out.Snapshots = []store.SnapshotInfo{}
	}
	text := fmt.Sprintf("%s: no snapshot recorded yet; read it with readproof_resolve.", u)
	if len(h) > 0 {
		text = fmt.Sprintf("%s: %d snapshot%s; newest %s (%s).", u, len(h), plural(len(h)), manifest.Short(h[0].Snapshot), h[0].ContentHash)
	}
	return out, reply{text: text}, nil
}

// RunOutput is an opened run.
type RunOutput struct {
	RunID string `json:"run_id"`
	Open  bool   `json:"open"`
	Receipt
}

func (s *Server) runStart(_ context.Context, c *call, in RunInput) (*RunOutput, reply, error) {
	if err := c.st.StartRun(in.RunID); err != nil {
		return nil, reply{}, err
	}
	return &RunOutput{RunID: in.RunID, Open: true},
		reply{text: fmt.Sprintf("Started run %s. Mount documents with readproof_run_mount, then commit with readproof_run_commit.", in.RunID)}, nil
}

// MountOutput is a document recorded in a run.
type MountOutput struct {
	RunID    string          `json:"run_id"`
	Position int             `json:"position" jsonschema:"the entry's position in the run, from 0"`
	Probe    *manifest.Probe `json:"probe,omitempty" jsonschema:"set when a probe line was appended: the delivered bytes differ from the snapshot by that line"`
	Document
	Receipt
}

func (s *Server) runMount(ctx context.Context, c *call, in MountInput) (*MountOutput, reply, error) {
	d, err := mount(ctx, c.st, in.RunID, in.URI, in.Probe)
	if err != nil {
		return nil, reply{}, err
	}
	content := d.Content
	doc, inl := documentOf(d, content)
	text := fmt.Sprintf("Mounted at position %d of run %s. %s", d.Position, in.RunID, documentLine(doc))
	return &MountOutput{RunID: in.RunID, Position: d.Position, Probe: d.Probe, Document: doc}, reply{text: text, meta: documentMeta(doc, inl)}, nil
}

// CommitOutput is a committed run.
type CommitOutput struct {
	ManifestID string    `json:"manifest_id" jsonschema:"the manifest id (40 hex): cite it"`
	RunID      string    `json:"run_id"`
	Entries    int       `json:"entries"`
	CreatedAt  time.Time `json:"created_at"`
	Receipt
}

func (s *Server) runCommit(_ context.Context, c *call, in RunInput) (*CommitOutput, reply, error) {
	m, err := c.st.CommitRun(in.RunID)
	if err != nil {
		return nil, reply{}, err
	}
	return &CommitOutput{ManifestID: m.ID, RunID: m.RunID, Entries: len(m.Entries), CreatedAt: m.CreatedAt},
		reply{text: fmt.Sprintf("Committed manifest %s for run %s (%d entr%s).", m.ID, m.RunID, len(m.Entries), pluralY(len(m.Entries))),
			meta: mcp.Meta{"manifest_id": m.ID}}, nil
}

// ManifestOutput is a committed manifest.
type ManifestOutput struct {
	ManifestID string           `json:"manifest_id"`
	RunID      string           `json:"run_id"`
	StartedAt  time.Time        `json:"started_at"`
	CreatedAt  time.Time        `json:"created_at"`
	Entries    []manifest.Entry `json:"entries"`
	Extra      map[string]any   `json:"extra,omitempty" jsonschema:"data added by optional features (proof-of-read verdicts)"`
	Receipt
}

func (s *Server) manifest(_ context.Context, c *call, in TargetInput) (*ManifestOutput, reply, error) {
	m, err := c.st.Manifest(in.Target)
	if err != nil {
		return nil, reply{}, err
	}
	out := &ManifestOutput{ManifestID: m.ID, RunID: m.RunID, StartedAt: m.StartedAt, CreatedAt: m.CreatedAt, Entries: m.Entries}
	if out.Entries == nil {
		out.Entries = []manifest.Entry{}
	}
	for i := range out.Entries {
		out.Entries[i].Provenance = redactProvenance(out.Entries[i].Provenance)
	}
	por, _, err := proofread.ManifestPart(c.st, m)
	if err != nil {
		return nil, reply{}, err
	}
	if por != nil {
		out.Extra = map[string]any{proofread.ExtraKey: por}
	}
	var uris []string
	for _, e := range m.Entries {
		r := e.URI
		if e.Ref != "" {
			r += "@" + e.Ref
		}
		uris = append(uris, r)
	}
	text := fmt.Sprintf("Manifest %s of run %s, created %s: %d entr%s", m.ID, m.RunID, m.CreatedAt.UTC().Format(time.RFC3339), len(m.Entries), pluralY(len(m.Entries)))
	if len(uris) > 0 {
		text += ": " + strings.Join(uris, ", ")
	}
	return out, reply{text: text + "."}, nil
}

// DiffChange is one entry's fate between two runs.
type DiffChange struct {
	Kind             string          `json:"kind" jsonschema:"added, removed, changed or unchanged"`
	URI              string          `json:"uri"`
	A                *manifest.Entry `json:"a,omitempty" jsonschema:"the entry in run a"`
	B                *manifest.Entry `json:"b,omitempty" jsonschema:"the entry in run b"`
	Why              string          `json:"why,omitempty" jsonschema:"for changed entries: source revision, observation time and tag on each side"`
	Unified          string          `json:"unified,omitempty" jsonschema:"unified diff of the content, for changed entries"`
	UnifiedTruncated bool            `json:"unified_truncated,omitempty" jsonschema:"the unified diff was cut or left out to keep the result under 1 MiB"`
}

// DiffCounts counts changes by kind.
type DiffCounts struct {
	Changed   int `json:"changed"`
	Added     int `json:"added"`
	Removed   int `json:"removed"`
	Unchanged int `json:"unchanged"`
}

// DiffOutput compares two runs.
type DiffOutput struct {
	A       string       `json:"a" jsonschema:"manifest id of run a"`
	B       string       `json:"b" jsonschema:"manifest id of run b"`
	RunA    string       `json:"run_a"`
	RunB    string       `json:"run_b"`
	Counts  DiffCounts   `json:"counts"`
	Changes []DiffChange `json:"changes"`
	Receipt
}

func (s *Server) diff(_ context.Context, c *call, in DiffInput) (*DiffOutput, reply, error) {
	a, err := c.st.Manifest(in.A)
	if err != nil {
		return nil, reply{}, err
	}
	b, err := c.st.Manifest(in.B)
	if err != nil {
		return nil, reply{}, err
	}
	cmp := manifest.Compare(a, b)
	out := &DiffOutput{A: a.ID, B: b.ID, RunA: a.RunID, RunB: b.RunID, Changes: []DiffChange{},
		Counts: DiffCounts{Changed: cmp.Changed, Added: cmp.Added, Removed: cmp.Removed, Unchanged: cmp.Unchanged}}
	budget := InlineLimit
	var lines []string
	for _, ch := range cmp.Changes {
		dc := DiffChange{Kind: ch.Kind, URI: ch.URI, A: redactEntry(ch.A), B: redactEntry(ch.B)}
		if ch.Kind == manifest.Changed {
			dc.Why = ch.Why()
			lines = append(lines, ch.URI+" changed; "+dc.Why)
			if ch.A.ContentHash != ch.B.ContentHash {
				ab, err := c.st.Content(ch.A.Snapshot)
				if err != nil {
					return nil, reply{}, fmt.Errorf("diff: %s in %s: %w", ch.URI, a.RunID, err)
				}
				bb, err := c.st.Content(ch.B.Snapshot)
				if err != nil {
					return nil, reply{}, fmt.Errorf("diff: %s in %s: %w", ch.URI, b.RunID, err)
				}
				u := manifest.Unified("a/"+ch.A.File, "b/"+ch.B.File, ab, bb, 3)
				if len(u) > budget {
					n := runeCut([]byte(u), budget)
					u = u[:n]
					dc.UnifiedTruncated = true
				}
				budget -= len(u)
				dc.Unified = u
			}
		} else if ch.Kind != manifest.Unchanged {
			lines = append(lines, ch.URI+" "+ch.Kind)
		}
		out.Changes = append(out.Changes, dc)
	}
	text := fmt.Sprintf("%s (%s) → %s (%s): %d changed, %d added, %d removed, %d unchanged.",
		a.RunID, manifest.Short(a.ID), b.RunID, manifest.Short(b.ID), cmp.Changed, cmp.Added, cmp.Removed, cmp.Unchanged)
	if len(lines) > 0 {
		text += "\n" + strings.Join(lines, "\n")
	}
	return out, reply{text: text}, nil
}

func redactEntry(e *manifest.Entry) *manifest.Entry {
	if e == nil {
		return nil
	}
	cp := *e
	cp.Provenance = redactProvenance(cp.Provenance)
	return &cp
}

// ReplayEntry is one replayed entry.
type ReplayEntry struct {
	Position      int    `json:"position"`
	URI           string `json:"uri"`
	Ref           string `json:"ref,omitempty"`
	ExpectedHash  string `json:"expected_hash" jsonschema:"content hash the manifest records"`
	ActualHash    string `json:"actual_hash,omitempty" jsonschema:"hash of the bytes rebuilt from the store"`
	Match         bool   `json:"match"`
	Error         string `json:"error,omitempty"`
	TotalBytes    int64  `json:"total_bytes" jsonschema:"size of the entry's bytes"`
	Encoding      string `json:"encoding,omitempty" jsonschema:"with include_content: text (bytes in content) or base64 (bytes in content_b64)"`
	Content       string `json:"content,omitempty" jsonschema:"with include_content: the replayed text"`
	ContentB64    string `json:"content_b64,omitempty" jsonschema:"with include_content: the replayed bytes in base64"`
	ContentOffset int64  `json:"content_offset,omitempty" jsonschema:"offset of the first returned byte"`
	ContentBytes  int64  `json:"content_bytes,omitempty" jsonschema:"number of bytes returned"`
	Complete      bool   `json:"complete,omitempty" jsonschema:"with include_content: the returned window reaches the end of the entry"`
	NextOffset    int64  `json:"next_offset,omitempty" jsonschema:"offset to pass to continue a window, when not complete"`
}

// ReplayOutput is the outcome of a replay.
type ReplayOutput struct {
	ManifestID string        `json:"manifest_id"`
	RunID      string        `json:"run_id"`
	AllMatch   bool          `json:"all_match" jsonschema:"every entry re-hashes to its recorded content hash"`
	Matched    int           `json:"matched"`
	Entries    []ReplayEntry `json:"entries"`
	Notes      []string      `json:"notes,omitempty" jsonschema:"further checks by optional features"`
	Truncated  bool          `json:"truncated" jsonschema:"true when some returned content is a window (max_bytes or offset) rather than every byte"`
	TotalBytes int64         `json:"total_bytes" jsonschema:"bytes of all entries"`
	Receipt
}

func (s *Server) replay(_ context.Context, c *call, in ReplayInput) (*ReplayOutput, reply, error) {
	if !in.IncludeContent && (in.Position != nil || in.Offset != 0 || in.MaxBytes != 0) {
		return nil, reply{}, hint.With(errors.New("replay: position, offset and max_bytes select content: they need include_content"), "set include_content to true")
	}
	if in.Offset < 0 || in.MaxBytes < 0 {
		return nil, reply{}, hint.With(fmt.Errorf("replay: offset %d and max_bytes %d must not be negative", in.Offset, in.MaxBytes), "pass 0 or a positive number")
	}
	res, rerr := c.st.Replay(in.Target)
	if res == nil {
		return nil, reply{}, rerr
	}
	if in.Position != nil && (*in.Position < 0 || *in.Position >= len(res.Entries)) {
		return nil, reply{}, hint.With(fmt.Errorf("replay %s: no entry at position %d (the run has %d)", in.Target, *in.Position, len(res.Entries)), "positions count from 0")
	}
	out := &ReplayOutput{ManifestID: res.Manifest.ID, RunID: res.Manifest.RunID, AllMatch: res.AllMatch, Matched: res.Matched, Entries: []ReplayEntry{}}
	notes, err := proofread.ReplayLines(c.st, res)
	out.Notes = notes
	if err != nil {
		out.AllMatch = false
		out.Notes = append(out.Notes, err.Error())
	}
	for i, e := range res.Entries {
		me := res.Manifest.Entries[i]
		re := ReplayEntry{Position: e.Position, URI: e.URI, Ref: e.Ref, ExpectedHash: e.Expected, ActualHash: e.Actual,
			Match: e.Match, Error: e.Error, TotalBytes: me.Bytes}
		if in.IncludeContent && e.Match && (in.Position == nil || *in.Position == e.Position) {
			window(&re, me.ContentType, e.Content, in.Offset, in.MaxBytes)
			if !re.Complete || re.ContentOffset > 0 {
				out.Truncated = true
			}
		}
		out.TotalBytes += me.Bytes
		out.Entries = append(out.Entries, re)
	}
	var text string
	if out.AllMatch {
		text = fmt.Sprintf("Replay verified: SHA-256 match for %d/%d entries of run %s (manifest %s), rebuilt from the store alone.",
			res.Matched, len(res.Entries), res.Manifest.RunID, res.Manifest.ID)
	} else {
		text = fmt.Sprintf("REPLAY FAILED for run %s (manifest %s): %d of %d entries reproduce.", res.Manifest.RunID, res.Manifest.ID, res.Matched, len(res.Entries))
		for _, e := range out.Entries {
			if !e.Match {
				why := e.Error
				if why == "" {
					why = "bytes hash to " + e.ActualHash + ", manifest records " + e.ExpectedHash
				}
				text += fmt.Sprintf("\n[%d] %s: %s", e.Position, e.URI, why)
			}
		}
		for _, n := range out.Notes {
			text += "\n" + n
		}
	}
	if in.IncludeContent {
		if out.Truncated {
			text += " Content returned as windows; continue with offset = next_offset."
		} else if out.AllMatch {
			text += " Every byte is in content / content_b64."
		}
	}
	return out, reply{text: text, meta: mcp.Meta{"truncated": out.Truncated, "total_bytes": out.TotalBytes, "all_match": out.AllMatch}}, nil
}

// window fills re with content[offset : offset+max] (all when max is 0),
// as text when the entry is text and the window is valid UTF-8, else base64.
func window(re *ReplayEntry, contentType string, content []byte, offset, max int64) {
	total := int64(len(content))
	if offset > total {
		offset = total
	}
	end := total
	if max > 0 && offset+max < total {
		end = offset + max
	}
	text := IsText(contentType, content)
	if text && end < total {
		cut := int64(runeCut(content[offset:], int(end-offset)))
		if cut > 0 {
			end = offset + cut
		}
	}
	part := content[offset:end]
	if text && utf8.Valid(part) && (offset == 0 || offset == total || utf8.RuneStart(content[offset])) {
		re.Encoding, re.Content = "text", string(part)
	} else {
		re.Encoding, re.ContentB64 = "base64", b64(part)
	}
	re.ContentOffset, re.ContentBytes = offset, int64(len(part))
	re.Complete = end == total
	if !re.Complete {
		re.NextOffset = end
	}
}

// TagOutput is a tag's new state.
type TagOutput struct {
	URI              string    `json:"uri"`
	Tag              string    `json:"tag"`
	Reference        string    `json:"reference" jsonschema:"the URI@TAG to read the tagged snapshot by"`
	Snapshot         string    `json:"snapshot,omitempty"`
	ContentHash      string    `json:"content_hash,omitempty"`
	PreviousSnapshot string    `json:"previous_snapshot,omitempty" jsonschema:"where the tag pointed before this move"`
	Deleted          bool      `json:"deleted"`
	SetAt            time.Time `json:"set_at"`
	Receipt
}

func tagOutput(t *store.TagState) *TagOutput {
	return &TagOutput{URI: t.URI, Tag: t.Tag, Reference: t.Reference(), Snapshot: t.Snapshot, ContentHash: t.ContentHash,
		PreviousSnapshot: t.PreviousSnapshot, Deleted: t.Deleted, SetAt: t.SetAt}
}

// uriAndTag takes the tag from uri@tag or from tag.
func uriAndTag(uri, tag string) (identity.URI, string, error) {
	u, err := identity.ParseURI(uri)
	if err != nil {
		return u, "", hint.With(err, "resource URIs look like readproof://NAMESPACE/PATH, optionally with @TAG")
	}
	t := u.Tag
	u.Tag = ""
	switch {
	case t != "" && tag != "" && t != tag:
		return u, "", hint.With(fmt.Errorf("%s names tag %q but tag is %q", uri, t, tag), "give the tag once, in uri or in tag")
	case t == "" && tag == "":
		return u, "", hint.With(fmt.Errorf("%s: no tag given", uri), "pass tag, or write the URI as URI@TAG")
	case t == "":
		t = tag
	}
	if err := identity.ValidateTag(t); err != nil {
		return u, "", hint.With(err, "tag names are letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters")
	}
	return u, t, nil
}

func (s *Server) tagSet(_ context.Context, c *call, in TagSetInput) (*TagOutput, reply, error) {
	u, tag, err := uriAndTag(in.URI, in.Tag)
	if err != nil {
		return nil, reply{}, err
	}
	t, err := c.st.SetTag(u, tag, in.Snapshot)
	if err != nil {
		return nil, reply{}, err
	}
	return tagOutput(t), reply{text: fmt.Sprintf("Tagged %s -> snapshot %s (%s). Read it as %s.", t.Reference(), t.Snapshot, t.ContentHash, t.Reference())}, nil
}

// TagItem is one live tag.
type TagItem struct {
	Tag         string    `json:"tag"`
	Reference   string    `json:"reference" jsonschema:"the URI@TAG to read it by"`
	Snapshot    string    `json:"snapshot"`
	ContentHash string    `json:"content_hash"`
	SetAt       time.Time `json:"set_at"`
}

// TagListOutput lists a resource's tags.
type TagListOutput struct {
	URI  string    `json:"uri"`
	Tags []TagItem `json:"tags"`
	Receipt
}

func (s *Server) tagList(_ context.Context, c *call, in PlainURIInput) (*TagListOutput, reply, error) {
	u, err := plainURI(in.URI)
	if err != nil {
		return nil, reply{}, err
	}
	tags, err := c.st.Tags(u)
	if err != nil {
		return nil, reply{}, err
	}
	out := &TagListOutput{URI: u.String(), Tags: []TagItem{}}
	var refs []string
	for _, t := range tags {
		out.Tags = append(out.Tags, TagItem{Tag: t.Tag, Reference: t.Reference(), Snapshot: t.Snapshot, ContentHash: t.ContentHash, SetAt: t.SetAt})
		refs = append(refs, t.Reference()+" -> "+manifest.Short(t.Snapshot))
	}
	text := u.String() + " has no tags; set one with readproof_tag_set."
	if len(refs) > 0 {
		text = fmt.Sprintf("%s has %d tag%s: %s", u, len(refs), plural(len(refs)), strings.Join(refs, ", "))
	}
	return out, reply{text: text}, nil
}

func (s *Server) tagDelete(_ context.Context, c *call, in TagInput) (*TagOutput, reply, error) {
	u, tag, err := uriAndTag(in.URI, in.Tag)
	if err != nil {
		return nil, reply{}, err
	}
	t, err := c.st.DeleteTag(u, tag)
	if err != nil {
		return nil, reply{}, err
	}
	return tagOutput(t), reply{text: fmt.Sprintf("Deleted %s; the snapshot stays and manifests that mounted it still replay.", t.Reference())}, nil
}

// EvidenceOutput is an exported bundle.
type EvidenceOutput struct {
	Target       string `json:"target"`
	RunID        string `json:"run_id"`
	ManifestID   string `json:"manifest_id"`
	MerkleRoot   string `json:"merkle_root" jsonschema:"the Merkle root over the entries: the statement's subject digest"`
	Entries      int    `json:"entries"`
	WithContent  bool   `json:"with_content"`
	Bundle       string `json:"bundle" jsonschema:"the bundle file's exact bytes (JSON); save it verbatim to verify it later with readproof evidence verify"`
	BundleBytes  int    `json:"bundle_bytes"`
	BundleSHA256 string `json:"bundle_sha256" jsonschema:"sha256 of the bundle bytes"`
	Receipt
}

func (s *Server) evidenceExport(_ context.Context, c *call, in EvidenceInput) (*EvidenceOutput, reply, error) {
	data, st, err := c.st.ExportEvidence(in.Target, store.EvidenceOptions{WithContent: in.WithContent, ExporterVersion: s.opts.Version})
	if err != nil {
		return nil, reply{}, err
	}
	sum := sha256.Sum256(data)
	out := &EvidenceOutput{Target: in.Target, WithContent: in.WithContent, Bundle: string(data), BundleBytes: len(data), BundleSHA256: hex.EncodeToString(sum[:])}
	p := st.Predicate
	out.RunID, out.ManifestID, out.MerkleRoot, out.Entries = p.RunID, p.ManifestID, p.Merkle.Root, len(p.Entries)
	what := "without content"
	if in.WithContent {
		what = "with content"
	}
	return out, reply{text: fmt.Sprintf("Evidence bundle for run %s (manifest %s, %d entr%s, Merkle root %s), %s: %d bytes, sha256 %s. "+
		"Its exact bytes are in bundle; save them verbatim and check them with `readproof evidence verify FILE`.",
		p.RunID, p.ManifestID, len(p.Entries), pluralY(len(p.Entries)), p.Merkle.Root, what, len(data), out.BundleSHA256)}, nil
}

// ClaimsOutput is a claims report (receipts.JSON).
type ClaimsOutput struct {
	receipts.JSON
	Receipt
}

func (s *Server) verifyClaims(_ context.Context, c *call, in ClaimsInput) (*ClaimsOutput, reply, error) {
	if s.opts.ReceiptKey.IsZero() {
		return nil, reply{}, hint.With(errors.New("tool receipts are not configured for this server"),
			"set [receipts] key in readproof.toml (create the key with readproof receipts keygen) and restart the MCP server")
	}
	session := in.Session
	if session == "" {
		session = s.opts.Session
	}
	claims, err := receipts.ParseClaims([]byte(in.Claims))
	if err != nil {
		return nil, reply{}, hint.With(err, "pass the text that cites rcpt_ ids, or a JSON list of ids")
	}
	rep, err := receipts.VerifyClaims(c.st.Receipts(), s.opts.ReceiptKey, session, claims)
	if err != nil {
		return nil, reply{}, err
	}
	j := rep.JSON()
	text := fmt.Sprintf("Session %s: %d claim%s: %d valid, %d fabricated, %d tampered, %d from another session, %d under an unknown key; %d receipt%s not cited.",
		session, j.Counts.Claims, plural(j.Counts.Claims), j.Counts.Valid, j.Counts.Fabricated, j.Counts.Tampered, j.Counts.OtherSession,
		j.Counts.UnknownKey, j.Counts.Omitted, plural(j.Counts.Omitted))
	if j.StrictFail {
		text += " STRICT CHECK FAILS: a cited receipt is fabricated, tampered or unverifiable."
	}
	return &ClaimsOutput{JSON: j}, reply{text: text}, nil
}

// ProbeOutput is a proof-of-read report.
type ProbeOutput struct {
	Target string           `json:"target"`
	Report proofread.Report `json:"report" jsonschema:"the proof-of-read report, as readproof probe check --json prints it"`
	Receipt
}

func (s *Server) probeCheck(ctx context.Context, c *call, in ProbeInput) (*ProbeOutput, reply, error) {
	m, err := proofread.Manifest(c.st, in.Target)
	if errors.Is(err, proofread.ErrNotProbed) {
		return nil, reply{}, hint.With(err, "mount documents with readproof_run_mount and probe set to true")
	}
	if err != nil {
		return nil, reply{}, err
	}
	if len(in.Answer) > proofread.MaxAnswerBytes {
		return nil, reply{}, hint.With(proofread.ErrAnswerTooLarge, "pass only the agent's answer")
	}
	keys, _, err := proofread.LoadKeys("", c.st)
	if err != nil {
		return nil, reply{}, err
	}
	rec, err := proofread.Check(ctx, c.st, m, []byte(in.Answer), proofread.CheckOptions{Keys: keys})
	if err != nil {
		return nil, reply{}, err
	}
	rep := proofread.Report{Commit: rec.ID, VerdictRecord: rec}
	return &ProbeOutput{Target: in.Target, Report: rep}, reply{text: probeSummary(in.Target, rec)}, nil
}

// probeSummary lists the verdict of each probed entry.
func probeSummary(target string, rec *store.VerdictRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Proof-of-read check of %s:", target)
	for _, e := range rec.Entries {
		fmt.Fprintf(&b, " [%d] %s %s;", e.Position, e.URI, e.Verdict)
	}
	if len(rec.Entries) == 0 {
		b.WriteString(" no verdicts;")
	}
	return strings.TrimSuffix(b.String(), ";") + ". Details are in report."
}

func plural(n int) string  { return text.Plural(n, "", "s") }
func pluralY(n int) string { return text.Plural(n, "y", "ies") }

// mount records ref in the open run, with a proof-of-read probe line when
// probed is set (the key is [probe] key or the default location), as
// `readproof run mount [--probe]` does. The delivery's Content holds the
// bytes handed to the model.
func mount(ctx context.Context, st *store.Store, runID, ref string, probed bool) (*store.Delivery, error) {
	if !probed {
		return st.Mount(ctx, runID, ref)
	}
	keys, _, err := proofread.LoadKeys("", st)
	if err != nil {
		return nil, err
	}
	pm, err := proofread.Mount(ctx, st, keys, runID, ref)
	if err != nil {
		return nil, err
	}
	return pm.Delivery, nil
}
