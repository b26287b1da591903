package gitstore

import (
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/hint"
)

// TestCheckURLPasswordAccessTokenUser: a URL whose user part is an access
// token (GitHub and GitLab accept https://TOKEN@host/...) holds a
// credential as surely as user:password@ does, and would be kept in the
// store's config the same way: refused, the token in no message. A plain
// user name is kept (git asks a credential helper for its password).
func TestCheckURLPasswordAccessTokenUser(t *testing.T) {
	const tok = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	for _, u := range []string{
		"https://" + tok + "@github.com/acme/runs.git",
		"https://github_pat_11ABCDEFG0123456789_abcdefghijklmnop@github.com/acme/runs.git",
		"https://glpat-abcdefghij0123456789@gitlab.com/acme/runs.git",
	} {
		err := CheckURLPassword("origin", u)
		if err == nil {
			t.Errorf("%s: kept", RedactURL(u))
			continue
		}
		if strings.Contains(err.Error(), "ghp_0123") || strings.Contains(err.Error(), "github_pat_11") || strings.Contains(err.Error(), "glpat-abc") {
			t.Errorf("the refusal repeats the token: %v", err)
		}
	}
	// one slash (a typo git takes for host:path): the password is refused
	// all the same, and the hint's URL drops it
	err := CheckURLPassword("origin", "https:/alice:s3cr3t@github.com/acme/runs.git")
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || strings.Contains(hint.Of(err), "s3cr3t") || !strings.Contains(hint.Of(err), "https:/github.com/acme/runs.git") {
		t.Errorf("a password after one slash: %v (hint %q); want a refusal that hides it", err, hint.Of(err))
	}
	for _, u := range []string{"https://alice@github.com/acme/runs.git", "ssh://git@github.com/acme/runs.git", "git@github.com:acme/runs.git", "https://github.com/acme/runs.git"} {
		if err := CheckURLPassword("origin", u); err != nil {
			t.Errorf("%s: %v; want it kept", u, err)
		}
	}
}
