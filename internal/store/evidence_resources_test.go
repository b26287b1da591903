package store

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/identity"
)

// TestEvidenceResourcesParallel: resource definitions read on two handles
// are those read one at a time, in the manifest's order, including the
// definition in force at the run (not the current one), a removed resource,
// and, when chains are broken, the same first error.
func TestEvidenceResourcesParallel(t *testing.T) {
	t.Parallel()
	body, files, uris := manyDocs(70, 16)
	f := newFixture(t, body, files)
	if _, _, err := f.s.RunOnce(context.Background(), "run-a", uris); err != nil {
		t.Fatal(err)
	}
	// after the run: some definitions change, one resource goes away, and
	// some documents are read again later under the new definitions
	changed := strings.Replace(body, `path = "docs/d00007.md" }`, `path = "docs/d00007.md" }`+"\npolicy = \"allow_stale\"\nmax_age = \"1h\"", 1)
	changed = strings.Replace(changed, `path = "docs/d00069.md" }`, `path = "docs/d00069.md" }`+"\ndescription = \"moved\"", 1)
	changed = strings.Replace(changed, "[[resource]]\nuri = \"readproof://bench/docs/d00050\"\nsource = { type = \"filesystem\", path = \"docs/d00050.md\" }\n", "", 1)
	f.write(t, "readproof.toml", changed)
	f.reopen(t, Options{})
	f.clock.Add(time.Minute)
	if _, _, err := f.s.RunOnce(context.Background(), "run-b", []string{uris[7], uris[69]}); err != nil {
		t.Fatal(err)
	}
	m, err := f.s.Manifest("run-a")
	if err != nil {
		t.Fatal(err)
	}
	one, err := f.s.evidenceResourcesOn(m, 1)
	if err != nil {
		t.Fatal(err)
	}
	two, err := f.s.evidenceResourcesOn(m, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, two) {
		t.Fatalf("two readers give\n%+v\none gives\n%+v", two, one)
	}
	if len(one) != 70 || !one[50].Missing || one[7].Strategy == "allow_stale" || one[8].Missing {
		t.Fatalf("resources %+v", one)
	}
	// Break two chains (a ref naming a commit the store does not hold):
	// both ways report the first in the manifest's order.
	for _, i := range []int{66, 31} {
		u, err := identity.ParseURI(uris[i])
		if err != nil {
			t.Fatal(err)
		}
		ref := filepath.Join(f.dir, ".readproof", filepath.FromSlash(resourceRef(u)))
		if err := os.MkdirAll(filepath.Dir(ref), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ref, []byte(strings.Repeat("ab", 20)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err1 := f.s.evidenceResourcesOn(m, 1)
	_, err2 := f.s.evidenceResourcesOn(m, 2)
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() || !strings.Contains(err1.Error(), "d00031") {
		t.Fatalf("broken chains: one reader: %v\ntwo readers: %v", err1, err2)
	}
}
