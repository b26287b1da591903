// Package adapters reads documents from where they live. Each source type
// (filesystem, http, github, git) implements Source; Open picks the
// implementation named by a Spec's Type.
//
// Adapters never see the evidence store and never write anything: they fetch
// bytes, bounded in size and time, and describe what they fetched (a source
// revision and provenance safe to record). Everything an adapter returns in
// Result.Provenance and every error it returns must be free of secrets: a
// header value expanded from the environment must never appear in either.
//
// Revisions: "sha256:" and 12 hex digits of the content (filesystem, and http
// without an ETag), the ETag as sent (http), "<blob>@<commit>" (github),
// "<commit>:<blob>" (git). Openers never fail on a bad Spec; Fetch reports
// it as an *Error naming the resource, and Check reports it up front.
// Spec.Redacted hides the whole value of a credential-looking header (even a
// bare ${NAME}), keeps ${NAME} references in other headers, and strips URL
// user information and credential query values. Only gitstore imports go-git;
// the git source reads through gitstore's mirror cache.
package adapters

import (
	"context"
	"errors"
	"fmt"
	"github.com/readproof/readproof/adapters/sourcespec"
	"sort"
	"strings"
)

// Spec, Env, NetPolicy, the defaults and ErrConfig/ErrRefused live in
// adapters/sourcespec, a leaf package the policy file parser can import
// without pulling in the adapters (and gitstore behind the git source).
type (
	// Spec is sourcespec.Spec.
	Spec = sourcespec.Spec
	// Env is sourcespec.Env.
	Env = sourcespec.Env
	// NetPolicy is sourcespec.NetPolicy.
	NetPolicy = sourcespec.NetPolicy
)

// Defaults used when the policy file says nothing (sourcespec's).
const (
	DefaultMaxBytes     = sourcespec.DefaultMaxBytes
	DefaultTimeout      = sourcespec.DefaultTimeout
	DefaultMaxRedirects = sourcespec.DefaultMaxRedirects
)

// Previous describes the snapshot currently recorded for the resource, so an
// adapter can make a conditional request.
type Previous struct {
	Revision     string
	ContentHash  string
	ETag         string
	LastModified string
}

// Request is one fetch.
type Request struct {
	// URI names the resource in errors.
	URI      string
	Previous *Previous
	// Buffer, when not nil, is memory the source may read the content
	// into (its capacity reused) instead of allocating: the caller passes
	// it only once it is done with whatever content it read into it
	// before. A source may ignore it; the filesystem source uses it.
	Buffer []byte
}

// Result is what a fetch observed.
type Result struct {
	Content     []byte
	ContentType string
	// Revision identifies the source's version of the document (a content
	// hash, an ETag, a commit and blob id).
	Revision string
	// Provenance describes where the bytes came from; safe to store.
	Provenance map[string]string
	// NotModified is true when the source confirmed that Previous is still
	// current (an HTTP 304); Content is then empty.
	NotModified bool
	// ETag and LastModified are validators for the next conditional request.
	ETag         string
	LastModified string
}

// Source fetches one declared document.
type Source interface {
	Fetch(ctx context.Context, req Request) (Result, error)
}

// Errors every adapter reports through errors.Is, so callers and the
// conformance suite can tell failures apart.
var (
	ErrNotFound = errors.New("document not found at the source")
	ErrTooLarge = errors.New("document exceeds the size limit")
	ErrRefused  = sourcespec.ErrRefused
	ErrConfig   = sourcespec.ErrConfig
)

// Error is an adapter failure that names the resource and, for policy
// refusals, the rule that refused it.
type Error struct {
	URI  string
	Rule string
	Err  error
	Hint string
}

func (e *Error) Error() string {
	msg := e.Err.Error()
	if e.Rule != "" {
		msg = e.Rule + ": " + msg
	}
	if e.URI != "" {
		msg = e.URI + ": " + msg
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Opener builds a Source for a Spec.
type Opener func(spec Spec, env Env) (Source, error)

var openers = map[string]Opener{}

// Register makes a source type available to Open. It is called from init
// functions of the files that implement each type.
func Register(typ string, open Opener) { openers[typ] = open }

// Types lists the registered source types.
func Types() []string {
	var out []string
	for t := range openers {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Open returns the Source for spec.
func Open(spec Spec, env Env) (Source, error) {
	open, ok := openers[spec.Type]
	if !ok {
		return nil, fmt.Errorf("unknown source type %q (known: %s): %w", spec.Type, strings.Join(Types(), ", "), ErrConfig)
	}
	return open(spec, env)
}
