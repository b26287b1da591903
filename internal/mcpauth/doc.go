// Package mcpauth owns the bearer tokens of `readproof mcp --http`: their
// form, the token file that stores only their SHA-256 hashes (one 0600 file
// outside the store, the project and every git repository, written through
// internal/keyfile like every other key), scopes, expiry and revocation, and
// the verifier that turns a presented token into the caller's name and
// scope with a constant-time comparison.
//
// A token is "rpmcp_" followed by 64 lower-case hex digits (256 random
// bits). It is shown once, when it is added; only its hash is kept, so a
// lost token is revoked and replaced, never recovered.
//
// mcpauth imports only the standard library, identity and
// internal/keyfile; the MCP SDK's middleware is wired to Verifier.Verify by
// internal/mcpserver.
//
//	tf, _ := mcpauth.Load(path, forbidden)
//	tok, _ := tf.Add("ci", mcpauth.ScopeWrite, 24*time.Hour, time.Now())
//	_ = tf.Save(path, forbidden)
//	fmt.Println(tok) // the only time it is printed
package mcpauth
