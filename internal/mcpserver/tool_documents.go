package mcpserver

// Documents: the shape every delivered document takes in a tool result, and
// the tools that list, resolve and trace resources.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
)

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

func documentOf(d *store.Delivery, content []byte, clean func(string) string) (Document, inline) {
	in := prepare(d.ContentType, content, d.ContentHash, InlineLimit)
	doc := Document{
		URI: d.URI, Ref: d.Ref, Snapshot: d.Snapshot, ContentHash: d.ContentHash, SourceRevision: d.SourceRevision,
		ObservedAt: d.ObservedAt, Decision: d.Decision, ContentType: d.ContentType, Provenance: redactProvenance(d.Provenance, clean),
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
// URLs (adapters already keep secrets out of provenance), and words each
// value for the client by clean (declaredForClient: over HTTP, a file
// source's path or a git source's local repository is hidden as in
// resources_list).
func redactProvenance(p map[string]string, clean func(string) string) map[string]string {
	if len(p) == 0 {
		return nil
	}
	out := make(map[string]string, len(p))
	for k, v := range p {
		if strings.Contains(v, "://") {
			v = adapters.Spec{Type: "http", URL: v}.Redacted().URL
		}
		out[k] = clean(v)
	}
	return out
}

// sourceFor is a resource's (redacted) source definition as the client
// reads it: its path, URL and API base worded by clean (declaredForClient:
// over HTTP a path of the server's machine is hidden as in an error, and
// so is a relative path that climbs out of the policy's directory; one
// below it, the policy file's own name, stays).
func sourceFor(sp adapters.Spec, clean func(string) string) adapters.Spec {
	sp.Path, sp.URL, sp.APIBase = clean(sp.Path), clean(sp.URL), clean(sp.APIBase)
	return sp
}

// definitionFor is d with its source worded by clean (sourceFor), for its
// description (describe).
func definitionFor(d store.Definition, clean func(string) string) store.Definition {
	d.Source = sourceFor(d.Source, clean)
	return d
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
	// the content type and the revision are a source's words: through
	// text.Printable, quoted whole when they hold a line break, which
	// escapeLines would leave as the start of a line of the client's text
	// (a forged "Receipt:" line; before session 31's re-read)
	s := fmt.Sprintf("%s: %d bytes %s, decision %s, snapshot %s, %s, source revision %s, observed %s.",
		ref, doc.TotalBytes, text.Printable(doc.ContentType), doc.Decision, manifest.Short(doc.Snapshot), doc.ContentHash,
		text.Printable(doc.SourceRevision), doc.ObservedAt.UTC().Format(time.RFC3339))
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
	clean, note := s.declaredForClient(c.req), s.noteForClient(c.req)
	for _, r := range infos {
		item := ResourceItem{URI: r.URI, Namespace: r.Namespace, Path: r.Path, Description: describe(definitionFor(r.Definition, clean)), Note: note(r.Description),
			Source: sourceFor(r.Source, clean), Policy: r.Policy, ContentType: r.ContentType, Current: r.Current, Tags: r.Tags}
		if item.Tags == nil {
			item.Tags = []string{}
		}
		if item.Current != nil {
			cur := *item.Current
			cur.Provenance = redactProvenance(cur.Provenance, clean)
			item.Current = &cur
		}
		out.Resources = append(out.Resources, item)
		names = append(names, r.URI)
	}
	out.Count = len(out.Resources)
	text := "No resources are declared; the operator declares them in readproof.toml (`readproof resource add`)."
	if out.Count > 0 {
		text = fmt.Sprintf("%d resource%s: %s", out.Count, plural(out.Count), some(names, ", "))
	}
	return out, reply{text: text}, nil
}

// DocumentOutput is a resolved document.
type DocumentOutput struct {
	Document
	Warned
	Receipt
}

func (s *Server) resolve(ctx context.Context, c *call, in URIInput) (*DocumentOutput, reply, error) {
	d, err := resolveFor(ctx, c.st, c.req, in.URI)
	if err != nil {
		return nil, reply{}, err
	}
	doc, inl := documentOf(d, d.Content, s.declaredForClient(c.req))
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
		return u, hint.With(err, identity.URIHint(s, false))
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

// resolveFor resolves ref for the client of req: as `readproof get` does,
// or, for a token of scope read, without writing (store.ResolveStored): a
// snapshot recorded by a read is a write, so a read token is served what
// the store holds (a tag, a pin, an allow_stale snapshot within max_age)
// and refused where the freshness policy would read the source and record
// a new snapshot.
func resolveFor(ctx context.Context, st *store.Store, req mcp.Request, ref string) (*store.Delivery, error) {
	name, canWrite := requestCaller(req)
	if canWrite {
		return st.Resolve(ctx, ref)
	}
	d, err := st.ResolveStored(ctx, ref)
	if errors.Is(err, store.ErrWouldRecord) {
		return nil, hint.With(fmt.Errorf("%w: a write, and the token %q has scope read: refused", err, name),
			"read a tagged snapshot instead (URI@TAG; readproof_tag_list names the tags), or ask the operator for a write token (readproof mcp token add NAME --scope write)")
	}
	return d, err
}
