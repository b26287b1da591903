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
	"net/netip"
	"sort"
	"strings"
	"time"
)

// Spec is a resource's source as declared in readproof.toml. Values keep
// their ${NAME} references; adapters expand them at fetch time.
type Spec struct {
	Type     string            `toml:"type" json:"type"`
	Path     string            `toml:"path,omitempty" json:"path,omitempty"`
	URL      string            `toml:"url,omitempty" json:"url,omitempty"`
	Headers  map[string]string `toml:"headers,omitempty" json:"headers,omitempty"`
	Owner    string            `toml:"owner,omitempty" json:"owner,omitempty"`
	Repo     string            `toml:"repo,omitempty" json:"repo,omitempty"`
	Ref      string            `toml:"ref,omitempty" json:"ref,omitempty"`
	APIBase  string            `toml:"api_base,omitempty" json:"api_base,omitempty"`
	TokenEnv string            `toml:"token_env,omitempty" json:"token_env,omitempty"`
}

// Env is what the policy file allows sources to do.
type Env struct {
	// BaseDir is the directory of readproof.toml; relative paths are
	// relative to it.
	BaseDir string
	// Roots are the directories filesystem sources may read (absolute).
	// Empty means BaseDir only.
	Roots []string
	// EnvAllow lists the environment variables ${NAME} may expand.
	EnvAllow []string
	// LookupEnv reads the environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Network is the address policy for http, github and git over http.
	Network NetPolicy
	// MaxBytes bounds one document. Zero means DefaultMaxBytes.
	MaxBytes int64
	// CacheDir holds the git adapter's clones, outside the evidence store.
	CacheDir string
}

// NetPolicy bounds network sources.
type NetPolicy struct {
	AllowHosts   []string
	AllowCIDRs   []netip.Prefix
	Timeout      time.Duration
	MaxRedirects int
}

// Defaults used when the policy file says nothing.
const (
	DefaultMaxBytes     = 10 << 20
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRedirects = 5
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
	ErrRefused  = errors.New("refused by policy")
	ErrConfig   = errors.New("invalid source configuration")
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

// MaxBytes returns env's size limit with the default applied.
func (e Env) MaxBytesOrDefault() int64 {
	if e.MaxBytes > 0 {
		return e.MaxBytes
	}
	return DefaultMaxBytes
}
