package gitstore

import (
	"context"
	"testing"
)

// TestAddRemoteURLRuleThatCannotMatch: an insteadOf rule rewrites a URL
// only when its value is a prefix of the URL (git's rewrite rules, the
// longest prefix winning). A rule no prefix of the URL names (the common
// `url."git@github.com:".insteadOf https://github.com/`) leaves the URL as
// it is, so AddRemoteURL returns it and a clone from a path copies the
// objects instead of fetching them through git; a rule that may apply, an
// empty one (a prefix of everything), or a value-less one still leaves the
// URL to git. Each answer is held to `git ls-remote --get-url`.
func TestAddRemoteURLRuleThatCannotMatch(t *testing.T) {
	ctx := context.Background()
	s, tr := newTransport(t)
	git(t, s.Path(), "config", "url.git@github.com:.insteadOf", "https://github.com/")
	git(t, s.Path(), "config", "url.ssh://h/.pushInsteadOf", "/srv/")
	got, err := tr.AddRemoteURL(ctx, "o", "/srv/a.git", nil)
	if err != nil || got != "/srv/a.git" {
		t.Fatalf("AddRemoteURL with a rule that cannot match = %q, %v; want /srv/a.git", got, err)
	}
	if want := git(t, s.Path(), "ls-remote", "--get-url", "--", "o"); want != got {
		t.Fatalf("git resolves o to %q, AddRemoteURL said %q", want, got)
	}
	git(t, s.Path(), "config", "url./srv/b.git.insteadOf", "/srv/a")
	if got, err := tr.AddRemoteURL(ctx, "p", "/srv/a.git", nil); err != nil || got != "" {
		t.Fatalf("AddRemoteURL with a rule whose value is a prefix = %q, %v; want \"\" (git resolves it)", got, err)
	}
	if u := git(t, s.Path(), "ls-remote", "--get-url", "--", "p"); u != "/srv/b.git.git" {
		t.Fatalf("git resolves p to %q", u)
	}
	s2, tr2 := newTransport(t)
	git(t, s2.Path(), "config", "url./elsewhere/.insteadOf", "")
	if got, err := tr2.AddRemoteURL(ctx, "o", "/srv/a.git", nil); err != nil || got != "" {
		t.Fatalf("AddRemoteURL with an empty rule = %q, %v; want \"\"", got, err)
	}
}
