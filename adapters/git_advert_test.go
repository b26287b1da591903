package adapters

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
)

// A remote whose list of refs passes the mirror's bound is a size refusal
// that says what was too large and how to get past it.
func TestGitFetchErrAdvertTooLarge(t *testing.T) {
	s := &gitSource{shown: "https://git.example.test/docs.git", path: "a.md", ref: "main"}
	cause := fmt.Errorf("%w: its ref advertisement is over 104857600 bytes", gitstore.ErrAdvertTooLarge)
	err := s.fetchErr(context.Background(), "readproof://t/a", cause)
	if !errors.Is(err, ErrTooLarge) || !errors.Is(err, gitstore.ErrAdvertTooLarge) {
		t.Fatalf("fetchErr = %v, want ErrTooLarge wrapping gitstore.ErrAdvertTooLarge", err)
	}
	for _, want := range []string{"readproof://t/a", "https://git.example.test/docs.git", "more refs", "over 104857600 bytes", "max_bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}
