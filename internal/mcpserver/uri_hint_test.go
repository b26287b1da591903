package mcpserver_test

import "testing"

// TestMistypedSchemeHint: a URI whose scheme is mistyped
// (readproof:/NS/PATH) gets the hint the CLI gives, identity.URIHint's,
// naming the URI meant, from every place the server parses a URI: the
// tools that take one with or without @TAG, a retried mount (its position
// given) and resources/read. The server spelled the hint itself there, as
// the shape of a URI only.
func TestMistypedSchemeHint(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	const typo = "readproof:/demo/policies/refunds"
	const meant = "did you mean " + refundsURI + "?"
	for name, c := range map[string]struct {
		tool string
		args map[string]any
	}{
		"history (no @TAG)": {"readproof_history", map[string]any{"uri": typo}},
		"tag set":           {"readproof_tag_set", map[string]any{"uri": typo, "tag": "prod"}},
		"mount, retried":    {"readproof_run_mount", map[string]any{"run_id": "r1", "uri": typo, "position": 0}},
		"resolve":           {"readproof_resolve", map[string]any{"uri": typo}},
	} {
		mustContain(t, name, s.fail(t, c.tool, c.args), meant, "resource URIs look like readproof://NAMESPACE/PATH")
	}
	mustContain(t, "resources/read", s.readErr(t, typo).Message, meant, "optionally with @TAG")
}
