package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
)

// URITemplate is the one resource template: every declared resource and
// every uri@tag is readable through it.
const URITemplate = "readproof://{namespace}/{+path}"

func (s *Server) addResources() {
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: URITemplate,
		Name:        "readproof-resource",
		Title:       "readproof resource (optionally @tag)",
		Description: "A governed document: readproof://NAMESPACE/PATH resolves under the resource's freshness policy " +
			"(it may read the source and record a snapshot; a token of scope read is refused where it would); readproof://NAMESPACE/PATH@TAG delivers exactly the tagged snapshot.",
	}, s.readResource)
	// resources/list is answered from the store and readproof.toml as they
	// are now, not from a list registered at start-up.
	// resources/read of a URI that is not a readproof URI (outside the
	// template, or malformed inside it) is answered here, saying so, rather
	// than by the SDK's bare "Resource not found".
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "resources/list":
				return s.listResources(ctx, req)
			case "resources/read":
				if r, ok := req.(*mcp.ReadResourceRequest); ok && r.Params != nil {
					if _, err := identity.ParseURI(r.Params.URI); err != nil {
						return nil, notReadproofURI(r.Params.URI, err, s.forClient(req))
					}
				}
			}
			return next(ctx, method, req)
		}
	})
}

// listResources lists every declared resource with its current snapshot,
// worded for the client of req (forClient).
func (s *Server) listResources(_ context.Context, req mcp.Request) (*mcp.ListResourcesResult, error) {
	st, err := s.opts.Open()
	if err != nil {
		return nil, rpcError(err, s.forClient(req))
	}
	defer st.Close()
	infos, err := st.Resources()
	if err != nil {
		return nil, rpcError(err, s.forClient(req))
	}
	out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	out.CacheScope = "private"
	clean, note := s.declaredForClient(req), s.noteForClient(req)
	for _, r := range infos {
		out.Resources = append(out.Resources, resourceOf(r, clean, note))
	}
	return out, nil
}

// resourceOf is the resources/list entry of a declared resource, its
// source worded by clean (sourceFor, declaredForClient) and the operator's
// description by note (noteForClient).
func resourceOf(r store.ResourceInfo, clean, note func(string) string) *mcp.Resource {
	meta := mcp.Meta{
		"namespace":        r.Namespace,
		"path":             r.Path,
		"source":           sourceFor(r.Source, clean), // already redacted by store.DefinitionOf
		"policy":           r.Policy,
		"current_snapshot": "",
		"tags":             r.Tags,
	}
	if r.Description != "" {
		meta["description"] = note(r.Description)
	}
	res := &mcp.Resource{
		URI:         r.URI,
		Name:        r.Path,
		Title:       r.URI,
		Description: describe(definitionFor(r.Definition, clean)),
		Meta:        meta,
	}
	if c := r.Current; c != nil {
		res.MIMEType = c.ContentType
		res.Size = c.Bytes
		meta["current_snapshot"] = c.Snapshot
		meta["content_hash"] = c.ContentHash
		meta["observed_at"] = c.ObservedAt.UTC().Format(time.RFC3339Nano)
	}
	return res
}

// describe is "<source kind> · <policy> — <redacted origin>", the origin
// (readproof.toml's text) with its format characters escaped, as resource
// list and inspect show it.
func describe(d store.Definition) string {
	return d.Source.Type + " · " + describePolicy(d.Policy) + " — " + text.Escape(d.Source.Describe())
}

func describePolicy(p store.PolicyView) string {
	switch p.Strategy {
	case string(policy.AllowStale):
		return fmt.Sprintf("allow_stale (max_age %s)", policy.FormatDuration(time.Duration(p.MaxAgeSeconds)*time.Second))
	case string(policy.Pinned):
		if len(p.Snapshot) > 12 {
			return "pinned " + p.Snapshot[:12]
		}
		return "pinned " + p.Snapshot
	}
	return p.Strategy
}

// readResource resolves the URI exactly as `readproof get` does.
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	if _, err := identity.ParseURI(uri); err != nil {
		return nil, notReadproofURI(uri, err, s.forClient(req))
	}
	st, err := s.opts.Open()
	if err != nil {
		return nil, rpcError(err, s.forClient(req))
	}
	defer st.Close()
	warned := &sourceWarnings{log: s.log, what: "resources/read", clean: s.forClient(req)}
	st.SetSourceWarn(warned.add)
	d, err := resolveFor(ctx, st, req, uri)
	if err != nil {
		err = warned.onError(err)
		if notFound(err) {
			return nil, resourceNotFound(uri, err, s.forClient(req))
		}
		if errors.Is(err, store.ErrWouldRecord) {
			return nil, resourceRefused(uri, err, s.forClient(req))
		}
		s.log.Info("resources/read", "uri", uri, "err", err)
		return nil, rpcError(err, s.forClient(req))
	}
	in := prepare(d.ContentType, d.Content, d.ContentHash, InlineLimit)
	meta := mcp.Meta{
		"uri":             d.URI,
		"ref":             d.Ref,
		"snapshot":        d.Snapshot,
		"content_hash":    d.ContentHash,
		"source_revision": d.SourceRevision,
		"observed_at":     d.ObservedAt.UTC().Format(time.RFC3339Nano),
		"decision":        d.Decision,
		"bytes":           d.Bytes,
		"content_type":    d.ContentType,
		"truncated":       in.Cut,
		"total_bytes":     in.Total,
	}
	if in.Cut {
		meta["shown_bytes"] = in.Shown
		meta["truncation_notice"] = in.Notice
	}
	if ws := warned.list(); len(ws) > 0 {
		meta["warnings"] = ws
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: d.ContentType, Meta: meta}
	switch {
	case in.IsText && in.Text != "":
		c.Text = in.Text
	case in.IsText:
		// An empty document: "text" would be dropped as empty on the wire,
		// leaving a block with neither text nor blob; an empty blob is a
		// well-formed block.
		c.Blob = []byte{}
	default:
		c.Blob = in.Blob
	}
	out := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}
	// A document of this store for this caller: no intermediary may serve
	// it to another (the SDK's default scope is public).
	out.CacheScope = "private"
	return out, nil
}

// notFound reports an unknown resource or tag: not declared, no such tag,
// or nothing recorded for a pinned or tagged read (store.ErrNoSnapshot:
// before session 28's follow-up a resource pinned to a snapshot never
// recorded for it was an internal error, -32603, which clients retry).
func notFound(err error) bool {
	return errors.Is(err, store.ErrNotRegistered) || errors.Is(err, store.ErrUnknownTag) ||
		errors.Is(err, store.ErrNoSnapshot) || errors.Is(err, identity.ErrInvalid)
}

// rpcError is a protocol-level error for list and read: the message with
// its hint, since the client shows only the message, worded for the
// client by clean (forClient) before it is escaped (codedErrors' own
// wording came after the escaping before session 28's follow-up: a path
// after a tab or a no-break space was kept whole).
func rpcError(err error, clean func(string) string) error {
	msg := forModel(err.Error())
	if h := hint.Of(err); h != "" {
		msg += " (hint: " + forModel(h) + ")"
	}
	return &worded{&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: escapeLines(clean(msg))}}
}

// Why a resources/read found nothing (issue 15: the tools said which, the
// resource read did not): the error's message starts "Resource not found: "
// and one of these, and its data carries it as "reason".
const (
	reasonNotURI        = "not a readproof URI"
	reasonNotRegistered = "not registered"
	reasonUnknownTag    = "unknown tag"
	reasonNoSnapshot    = "no snapshot recorded"
)

// notFoundReason names which of the four err is.
func notFoundReason(err error) string {
	switch {
	case errors.Is(err, store.ErrUnknownTag):
		return reasonUnknownTag
	case errors.Is(err, store.ErrNoSnapshot):
		return reasonNoSnapshot
	case errors.Is(err, store.ErrNotRegistered):
		return reasonNotRegistered
	}
	return reasonNotURI
}

// notReadproofURI is the resource-not-found error for a URI that
// identity.ParseURI refused with err.
func notReadproofURI(uri string, err error, clean func(string) string) error {
	return resourceNotFound(uri, hint.With(err, identity.URIHint(uri, true)), clean)
}

// resourceNotFound is mcp.ResourceNotFoundError (code -32602, invalid
// params, as the specification says since SEP-2164) with its data encoded
// as JSON: the SDK quotes the URI with Go's %q, which is not JSON for a URI
// holding a control character or invalid UTF-8. The message says which of
// the reasons above applies, then the error and its hint; the data holds
// the URI and the reason.
func resourceNotFound(uri string, cause error, clean func(string) string) error {
	reason := notFoundReason(cause)
	return resourceError(uri, reason, "Resource not found: "+reason+": ", cause, clean)
}

// reasonReadScope is the reason of resourceRefused.
const reasonReadScope = "refused for a read token"

// resourceRefused is the error for a read that a token of scope read may
// not make (resolveFor: it would record a snapshot). It is invalid params
// (-32602), as resource-not-found is: the request is refused for what it
// asks, and asking again answers the same. Before the re-read of session 28
// it was an internal error (-32603), which says the server failed and which
// clients retry; a code of the server range (-32000 to -32099) means
// different things to different clients (-32001 is a timeout to some).
func resourceRefused(uri string, cause error, clean func(string) string) error {
	return resourceError(uri, reasonReadScope, "Resource refused: ", cause, clean)
}

// resourceError is an invalid-params error for uri: the message is prefix,
// the error and its hint, worded by clean (as rpcError) and escaped, and
// the data holds the URI and the reason.
func resourceError(uri, reason, prefix string, cause error, clean func(string) string) error {
	data, err := json.Marshal(struct {
		URI    string `json:"uri"`
		Reason string `json:"reason"`
	}{identity.Shorten(uri, identity.MaxURILen), reason})
	if err != nil {
		data = nil
	}
	msg := prefix + forModel(cause.Error())
	if h := hint.Of(cause); h != "" {
		msg += " (hint: " + forModel(h) + ")"
	}
	return &worded{&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: escapeLines(clean(msg)), Data: data}}
}
