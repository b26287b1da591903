package store

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
)

// A manifest-id prefix of two or more manifests names them (at most five)
// with their runs, as a run id prefix names its runs; it got only "list runs
// with: readproof run list".
func TestManifestPrefixNamesCandidates(t *testing.T) {
	f := newFixture(t, "version = 1\n", nil)
	// blob contents whose ids share their first four hex digits: two of one
	// prefix, six of another (git's blob id: sha1 of "blob LEN\x00" + content)
	byPrefix := map[string][]string{}
	var two, six string
	for i := 0; two == "" || six == ""; i++ {
		c := fmt.Sprintf("manifest %d\n", i)
		sum := sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(c), c)))
		p := hex.EncodeToString(sum[:2])
		byPrefix[p] = append(byPrefix[p], c)
		if n := len(byPrefix[p]); n == 2 && two == "" && p != six {
			two = p
		} else if n == 6 && six == "" && p != two {
			six = p
		}
	}
	put := func(prefix string, n int) (ids []string) {
		for i, c := range byPrefix[prefix][:n] {
			oid, err := f.s.git.PutBlob([]byte(c))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(oid), prefix) {
				t.Fatalf("blob %q is %s, not %s...: not a SHA-1 store", c, oid, prefix)
			}
			run := fmt.Sprintf("run-%s-%d", prefix, i)
			if err := f.s.git.Update(gitstore.RefUpdate{Name: runRef(run), New: oid}); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, string(oid)+" (run "+run+")")
		}
		return ids
	}
	ids := put(two, 2)
	_, err := f.s.ManifestID(two)
	want := "manifest ids are written in full: " + two + " is the start of 2 manifests: " + strings.Join(ids, ", ") + " (list runs with: readproof run list)"
	if !errors.Is(err, ErrUnknownTarget) || hint.Of(err) != want {
		t.Fatalf("ManifestID(%s), two manifests: %v, hint\n%q\nwant hint\n%q", two, err, hint.Of(err), want)
	}
	ids = put(six, 6)
	_, err = f.s.ManifestID(six)
	want = "manifest ids are written in full: " + six + " is the start of 6 manifests: " + strings.Join(ids[:5], ", ") + ", … (list runs with: readproof run list)"
	if !errors.Is(err, ErrUnknownTarget) || hint.Of(err) != want {
		t.Fatalf("ManifestID(%s), six manifests: %v, hint\n%q\nwant hint\n%q", six, err, hint.Of(err), want)
	}
}
