package store

import "testing"

// ReplaceRefObject is what both evidence verify (store_replace) and
// readproof verify (replace) name a replace ref's object as: the id git
// reads from its name, the rest of a refs/replace/ name git ignores, and
// nothing for a ref under another base git ignores.
func TestReplaceRefObject(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef01234567"
	t.Setenv("GIT_REPLACE_REF_BASE", "refs/alt/")
	for name, want := range map[string]string{
		"refs/replace/" + id:                                    id,
		"refs/replace/x/" + id + "tail":                         id,
		"refs/replace/0123456789ABCDEF0123456789ABCDEF01234567": id,
		"refs/replace/junk":                                     "junk",
		"refs/replace/x/junk":                                   "x/junk",
		"refs/alt/" + id:                                        id,
		"refs/alt/junk":                                         "",
		"refs/heads/main":                                       "",
	} {
		if got := ReplaceRefObject(name); got != want {
			t.Errorf("ReplaceRefObject(%q) = %q, want %q", name, got, want)
		}
	}
}
