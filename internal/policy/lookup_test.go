package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/readproof/readproof/identity"
)

func TestLookupIndexed(t *testing.T) {
	var sb strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&sb, "[[resource]]\nuri = \"readproof://ns%d/docs/d%d\"\nsource = { type = \"filesystem\", path = \"d%d.md\" }\n", i%3, i, i)
	}
	f, err := Parse("/srv/readproof.toml", []byte(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	if f.byURI == nil {
		t.Fatal("Parse built no index")
	}
	for i := 0; i < 50; i++ {
		u := mustURI(t, fmt.Sprintf("readproof://ns%d/docs/d%d@prod", i%3, i))
		r, ok := f.Lookup(u)
		if !ok || r != &f.Resources()[i] {
			t.Fatalf("Lookup(%s) = %v, %v; want resource %d", u, r, ok, i)
		}
	}
	for _, s := range []string{"readproof://ns1/docs/d0", "readproof://ns0/docs/d50", "readproof://ns0/docs"} {
		if r, ok := f.Lookup(mustURI(t, s)); ok {
			t.Errorf("Lookup(%s) = %v, want none", s, r.URI)
		}
	}

	// Appended after parsing, or built by hand: still found.
	extra := mustURI(t, "readproof://ns9/late")
	f.res = append(f.res, Resource{URI: extra})
	if r, ok := f.Lookup(extra); !ok || r.URI != extra {
		t.Errorf("Lookup of an appended resource = %v, %v", r, ok)
	}
	hand := &File{res: []Resource{{URI: extra}}}
	if _, ok := hand.Lookup(extra); !ok {
		t.Error("Lookup on a File built by hand found nothing")
	}
}

// BenchmarkLookup1000 looks up each of 1,000 declared resources once, as a
// run mounting all of them does.
func BenchmarkLookup1000(b *testing.B) {
	f := &File{}
	var uris []identity.URI
	for i := 0; i < 1000; i++ {
		u := mustURI(b, fmt.Sprintf("readproof://bench/docs/d%d", i))
		f.res = append(f.res, Resource{URI: u})
		uris = append(uris, u)
	}
	f.index()
	for b.Loop() {
		for _, u := range uris {
			if _, ok := f.Lookup(u); !ok {
				b.Fatal(u)
			}
		}
	}
}
