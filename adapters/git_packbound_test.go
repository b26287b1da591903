package adapters

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
)

// A remote whose pack passes the mirror's bounds (its bytes, its number
// of objects) is a size refusal that names the resource, the bound and
// the setting that raises it.
func TestGitFetchErrRepoTooLarge(t *testing.T) {
	s := &gitSource{shown: "https://git.example.test/docs.git", path: "a.md", ref: "main"}
	cause := fmt.Errorf("git mirror: receiving objects: %w: the pack holds 9000000 objects, over the limit of 512000", gitstore.ErrRepoTooLarge)
	err := s.fetchErr(context.Background(), "readproof://t/a", cause)
	if !errors.Is(err, ErrTooLarge) || !errors.Is(err, gitstore.ErrRepoTooLarge) {
		t.Fatalf("fetchErr = %v, want ErrTooLarge wrapping gitstore.ErrRepoTooLarge", err)
	}
	// The bound is 10 times the larger of max_bytes and 100 MiB: raising
	// max_bytes to 50 MiB, say, changes nothing, so the hint names a
	// value that does.
	for _, want := range []string{"readproof://t/a", "https://git.example.test/docs.git", "9000000 objects", "limit of 512000", "10 times the larger of max_bytes and 100 MiB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if !strings.HasSuffix(err.Error(), hintMaxBytes+" above 100 MiB") {
		t.Errorf("%q does not end in the hint", err)
	}
}
