package adapters_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/readproof/readproof/adapters"
)

// TestHugeMaxBytesReadsTheDocument: a max_bytes as large as an int64 goes
// (max_bytes = 9223372036854775807 in readproof.toml, read as "no limit")
// still reads every document whole. Before, the max+1 bytes each source
// reads to tell a document over the limit overflowed to a negative count:
// io.LimitReader then read nothing, and every http, filesystem and github
// document was recorded as an empty snapshot, without an error.
func TestHugeMaxBytesReadsTheDocument(t *testing.T) {
	const body = "Products can be refunded within 30 days.\n"
	for _, max := range []int64{math.MaxInt64, math.MaxInt64 / 2, math.MaxInt64 - 64<<10} {
		srv := newRecorder(t, ok(body))
		r, err := fetchSpec(t, httpSpec(srv.srv.URL+"/doc"), adapters.Env{Network: loopback, MaxBytes: max})
		if err != nil || string(r.Content) != body {
			t.Errorf("http, max_bytes %d: %q, %v", max, r.Content, err)
		}

		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "refunds.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err = fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "refunds.md"}, adapters.Env{BaseDir: dir, MaxBytes: max})
		if err != nil || string(r.Content) != body {
			t.Errorf("filesystem, max_bytes %d: %q, %v", max, r.Content, err)
		}

		g := newFakeGitHub(t, 1<<30)
		g.commit(map[string][]byte{"policies/refunds.md": []byte(body)})
		env := ghEnv()
		env.MaxBytes = max
		r, err = fetchSpec(t, g.spec("policies/refunds.md"), env)
		if err != nil || string(r.Content) != body {
			t.Errorf("github, max_bytes %d: %q, %v", max, r.Content, err)
		}
	}
}
