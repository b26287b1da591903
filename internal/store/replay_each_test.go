package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestReplayEachSeesEveryEntryOnce: ReplayEach calls each with every
// entry, in position order, with the bytes Replay gives it while the call
// lasts, and returns what ReplayNoContentContext returns, at any
// read-ahead bound (one blob at a time included).
func TestReplayEachSeesEveryEntryOnce(t *testing.T) {
	t.Parallel()
	const n = 40
	var toml strings.Builder
	files := map[string]string{}
	var uris []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("d%02d.md", i)
		fmt.Fprintf(&toml, "[[resource]]\nuri = \"readproof://each/docs/%s\"\nsource = { type = \"filesystem\", path = %q }\n\n", name, name)
		files[name] = fmt.Sprintf("%s %s\n", name, strings.Repeat("x", i*100))
		uris = append(uris, "readproof://each/docs/"+name)
	}
	f := newFixture(t, toml.String(), files)
	m, _, err := f.s.RunOnce(context.Background(), "run-each", uris)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := f.s.Replay("run-each")
	if err != nil {
		t.Fatal(err)
	}
	want, err := f.s.ReplayNoContentContext(context.Background(), "run-each", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ahead := range []int64{0, 1, 1 << 10, 1 << 30} {
		next := 0
		got, err := f.s.ReplayEach(context.Background(), m, ahead, func(i int, r *ReplayEntry) {
			if i != next || r.Position != i {
				t.Fatalf("ahead %d: entry %d (position %d) seen when %d was due", ahead, i, r.Position, next)
			}
			next++
			if w := whole.Entries[i]; string(r.Content) != string(w.Content) || r.Match != w.Match || r.Actual != w.Actual {
				t.Fatalf("ahead %d: entry %d seen as %+v, Replay has %+v", ahead, i, r, w)
			}
		})
		if err != nil || next != n {
			t.Fatalf("ahead %d: %v, %d entries seen", ahead, err, next)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ahead %d: ReplayEach returned %+v, ReplayNoContentContext %+v", ahead, got, want)
		}
	}
}
