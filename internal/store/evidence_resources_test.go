package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
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

// TestSpecFieldsRoundTrip: specFields is the JSON round trip specConfig
// made before, for every field of adapters.Spec; a new Spec field fails
// here until specFields writes it.
func TestSpecFieldsRoundTrip(t *testing.T) {
	t.Parallel()
	var tags []string
	st := reflect.TypeOf(adapters.Spec{})
	for i := 0; i < st.NumField(); i++ {
		tags = append(tags, st.Field(i).Tag.Get("json"))
	}
	const want = "type path,omitempty url,omitempty headers,omitempty public_headers,omitempty owner,omitempty repo,omitempty ref,omitempty api_base,omitempty token_env,omitempty"
	if strings.Join(tags, " ") != want {
		t.Fatalf("adapters.Spec fields are now %q: teach specFields the new ones", strings.Join(tags, " "))
	}
	roundTrip := func(sp adapters.Spec) map[string]any {
		data, err := json.Marshal(sp)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]any{}
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, sp := range []adapters.Spec{
		{},
		{Type: "filesystem", Path: "docs/a.md"},
		{Type: "http", URL: "https://x.example/a?b=<c>&d", Headers: map[string]string{"Authorization": "Bearer ${T}"}, PublicHeaders: map[string]string{}},
		{Type: "github", Owner: "o", Repo: "r", Ref: "main", Path: "p", APIBase: "https://api", TokenEnv: "GH", PublicHeaders: map[string]string{"Accept": "text/markdown", "ü": "\u2028"}},
		{Type: "http", URL: "bad \xff utf8"},
		{Type: "http", Headers: map[string]string{"k\xfe": "v"}},
	} {
		got, ok := specFields(sp)
		want := roundTrip(sp)
		if !ok {
			if utf8.ValidString(sp.URL) && len(sp.Headers) == 0 {
				t.Fatalf("%+v: gave up on valid UTF-8", sp)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v:\nspecFields %#v\nround trip %#v", sp, got, want)
		}
	}
}

// TestManifestWithSum: manifestWithSum reads what Manifest reads, with the
// same errors, and the SHA-256 of the stored manifest.json.
func TestManifestWithSum(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "v1\n"})
	m0, _, err := f.s.RunOnce(context.Background(), "run-a", []string{"readproof://demo/policies/refunds"})
	if err != nil {
		t.Fatal(err)
	}
	journal, err := f.s.git.Ref(JournalRef)
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"run-a", m0.ID, string(journal), strings.Repeat("ab", 20), "no-such-run", "not a run"} {
		want, werr := f.s.Manifest(target)
		got, sum, gerr := f.s.manifestWithSum(target)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || hint.Of(werr) != hint.Of(gerr) {
			t.Fatalf("%s: Manifest: %v (%s)\nmanifestWithSum: %v (%s)", target, werr, hint.Of(werr), gerr, hint.Of(gerr))
		}
		if werr != nil {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: manifests differ", target)
		}
		c, err := f.s.git.Commit(gitstore.OID(want.ID))
		if err != nil {
			t.Fatal(err)
		}
		data, err := f.s.readFile(c, "manifest.json")
		if err != nil {
			t.Fatal(err)
		}
		if s := sha256.Sum256(data); hex.EncodeToString(s[:]) != sum {
			t.Fatalf("%s: sum %s is not the manifest.json's", target, sum)
		}
	}
}
