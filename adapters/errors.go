package adapters

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// Where the policy file lets users lift a limit; the messages below name
// these keys so a refusal says what to change.
const (
	hintNetwork  = "allow it with [network] allow_hosts or allow_cidrs in readproof.toml"
	hintEnv      = "add it to [sources] env in readproof.toml to let sources read it"
	hintRoots    = "add its directory to [sources] roots in readproof.toml or move the file"
	hintMaxBytes = "raise [defaults] max_bytes in readproof.toml"
	hintTimeout  = "raise [network] timeout in readproof.toml or check the server"
)

// Rules named by policy refusals (Error.Rule).
const (
	RuleScheme           = "only http and https URLs"
	RuleLoopback         = "no loopback addresses"
	RulePrivate          = "no private addresses"
	RuleLinkLocal        = "no link-local addresses"
	RuleUniqueLocal      = "no unique-local addresses"
	RuleUnspecified      = "no unspecified addresses"
	RuleMulticast        = "no multicast addresses"
	RuleReserved         = "no reserved addresses"
	RuleRoots            = "reads confined to roots"
	RuleRegular          = "regular files only"
	RuleEnvAllow         = "environment allow-list"
	RuleSecretInDocument = "no secrets in documents"
	RuleCleartext        = "no secrets over plain http"
)

// kindError is a message that matches a sentinel (ErrNotFound, ...) and
// keeps its cause for errors.Is and errors.As, without printing either: the
// message is written whole, ending with what the user can do.
type kindError struct {
	msg   string
	kind  error
	cause error
}

func (e *kindError) Error() string { return e.msg }

func (e *kindError) Unwrap() []error {
	var out []error
	if e.kind != nil {
		out = append(out, e.kind)
	}
	if e.cause != nil {
		out = append(out, e.cause)
	}
	return out
}

// fail builds an *Error for uri whose message is format/args and which
// matches kind and cause.
func fail(uri string, kind, cause error, format string, args ...any) *Error {
	return &Error{URI: uri, Err: &kindError{msg: fmt.Sprintf(format, args...), kind: kind, cause: cause}}
}

// refuse builds a policy refusal naming rule.
func refuse(uri, rule, format string, args ...any) *Error {
	e := fail(uri, ErrRefused, nil, format, args...)
	e.Rule = rule
	return e
}

// withURI returns err as an *Error naming uri. An *Error inside err (from a
// dial hook or a redirect check, which do not know the resource) is reused
// with its URI filled in.
func withURI(uri string, err error) error {
	var ae *Error
	if errors.As(err, &ae) {
		out := *ae
		out.URI = uri
		return &out
	}
	return &Error{URI: uri, Err: err}
}

// cancelled reports a fetch stopped by the caller's context.
func cancelled(uri, what string, ctxErr error) *Error {
	return fail(uri, nil, ctxErr, "%s: cancelled (%v)", what, ctxErr)
}

// shortHash is the revision of a source without one of its own:
// "sha256:" and the first 12 hex digits of the content's SHA-256, the form
// Readproof has always shown (the full hash is recorded as the snapshot's
// content hash).
func shortHash(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])[:12]
}

// checkCtx returns a cancellation error when ctx is done.
func checkCtx(ctx context.Context, uri, what string) error {
	if err := ctx.Err(); err != nil {
		return cancelled(uri, what, err)
	}
	return nil
}
