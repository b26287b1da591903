package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackedRefsBadPeeledLine: a peeled line after a record that is not
// "^<40 lower-case hex>" is refused in a sorted file as in an unsorted one
// (git refuses "^zz", "^" and a 64-digit id: "unexpected line in
// packed-refs"): a lookup or a listing that reaches the record fails
// naming the line, as for a bad record line, instead of skipping it.
func TestPackedRefsBadPeeledLine(t *testing.T) {
	t.Parallel()
	for _, header := range []string{"", "# pack-refs with: peeled fully-peeled sorted \n"} {
		for _, peeled := range []string{"^zz", "^" + strings.Repeat("A", 40), "^" + strings.Repeat("a", 64), "^"} {
			s := NewTestStore(t)
			c := mkCommit(t, s, "one")
			body := header + string(c) + " refs/heads/a\n" + peeled + "\n" + string(c) + " refs/heads/b\n"
			if err := os.WriteFile(filepath.Join(s.Path(), "packed-refs"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			name := map[bool]string{true: "sorted", false: "unsorted"}[header != ""] + " " + peeled
			refs, err := s.Refs("refs/heads/")
			if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "line ") {
				t.Errorf("%s: Refs = %v, %v; want the file refused, naming the line", name, refs, err)
			}
			if id, err := s.Ref("refs/heads/a"); err == nil || !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: Ref(refs/heads/a) = %s, %v; want the file refused", name, id, err)
			}
		}
	}
}
