// Package keyloc decides where readproof's secret keys live: the evidence
// signing key and the tool-receipts key (the probe key's place is decided by
// package proofread, which owns proof of read). It also keeps the policy
// cache's key, which no user names or sees: PolicyCacheKey makes it on
// first need and reads it. For each key it applies one
// order of precedence (a path given on the command line, the environment,
// readproof.toml, the default under the user's config directory), names the
// directories a key must stay out of (the store and the project), loads the
// key through its own package, and adds a hint to every error.
//
// What a key file is, how it is written and which modes and places are
// refused is the key packages' business (evidence, receipts, through
// internal/keyfile); this package only chooses the path. The CLI and the
// MCP server call it; it prints nothing.
//
// It imports evidence, receipts, policy and hint; it must not import the
// CLI packages.
package keyloc
