// Package sourcespec holds what the policy file says about sources, apart
// from the code that fetches: Spec (a resource's source as declared), Env
// (what sources may do: roots, allow-listed variables, network policy,
// limits), NetPolicy, the defaults, ErrConfig and ErrRefused, the ${NAME}
// reference syntax, and the redaction rules that keep credentials out of
// anything stored or shown.
//
// internal/policy builds these values; package adapters consumes them. It
// imports only the standard library, so the policy file parser does not pull
// in the adapters, gitstore or go-git (internal/layering enforces it).
package sourcespec
