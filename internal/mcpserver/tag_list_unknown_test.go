package mcpserver_test

import "testing"

// TestTagListUnknownURI: readproof_tag_list of a URI neither declared nor
// recorded (a misspelt one) is a tool error naming it, as `readproof tag
// list` is (exit 1) and readproof_history is; it used to answer "has no
// tags; set one with readproof_tag_set", sending the model to tag a
// resource that does not exist. A declared resource without tags is still
// an empty list.
func TestTagListUnknownURI(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	msg := s.fail(t, "readproof_tag_list", map[string]any{"uri": "readproof://demo/nosuch"})
	mustContain(t, "readproof_tag_list of an unknown URI", msg, "readproof://demo/nosuch", "not registered")
	if got := s.ok(t, "readproof_tag_list", map[string]any{"uri": refundsURI}); len(got["tags"].([]any)) != 0 {
		t.Errorf("readproof_tag_list of a declared resource without tags: %v", got)
	}
}
