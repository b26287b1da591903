package manifest

import (
	"math"
	"reflect"
	"testing"
)

// someKeeps are the selections checkSomeMatchesDecode reads with.
var someKeeps = map[string]func(i int) bool{
	"none":  func(int) bool { return false },
	"all":   func(int) bool { return true },
	"odd":   func(i int) bool { return i%2 == 1 },
	"first": func(i int) bool { return i == 0 },
	"page":  func(i int) bool { return i >= 1 && i < 700 },
}

// checkSomeMatchesDecode: DecodeSome accepts what Decode accepts, refuses
// what it refuses with the same error, and reads the View, start and kept
// entries Decode's Manifest has, with the entries split wherever they can
// be (minSplit 0) and in one go.
func checkSomeMatchesDecode(t *testing.T, data []byte) {
	t.Helper()
	m, err := Decode(data)
	for name, keep := range someKeeps {
		for _, split := range []int{0, math.MaxInt} {
			if v, d, ok := decodeViewFastKeep(data, split, keep); ok {
				if err != nil {
					t.Fatalf("%s: decodeViewFastKeep accepted what Decode refuses (%v):\n%q", name, err, data)
				}
				got := &Some{View: *v, StartedAt: d.started, Kept: d.wholes}
				checkSome(t, name, got, m, keep, data)
			}
		}
		s, serr := DecodeSome(data, keep)
		if err != nil {
			if serr == nil || serr.Error() != err.Error() {
				t.Fatalf("%s: DecodeSome's error %v, Decode's %v:\n%q", name, serr, err, data)
			}
			continue
		}
		if serr != nil {
			t.Fatalf("%s: DecodeSome refused what Decode accepts: %v\n%q", name, serr, data)
		}
		checkSome(t, name, s, m, keep, data)
	}
}

func checkSome(t *testing.T, name string, got *Some, m *Manifest, keep func(int) bool, data []byte) {
	t.Helper()
	var kept []Entry
	for i := range m.Entries {
		if keep(i) {
			kept = append(kept, m.Entries[i])
		}
	}
	v := ViewOf(m)
	v.ID = ""
	if !reflect.DeepEqual(&got.View, v) || !got.StartedAt.Equal(m.StartedAt) || len(got.Kept) != len(kept) || (len(kept) > 0 && !reflect.DeepEqual(got.Kept, kept)) {
		t.Fatalf("%s: DecodeSome reads differently:\n got %+v\nwant %+v %v %+v\n%q", name, got, v, m.StartedAt, kept, data)
	}
}

func TestDecodeSomeMatchesDecodeSeeds(t *testing.T) {
	for _, s := range viewSeeds(t) {
		checkSomeMatchesDecode(t, s)
	}
	big, err := Encode(manifestOf(1000))
	if err != nil {
		t.Fatal(err)
	}
	checkSomeMatchesDecode(t, big)
}

// FuzzDecodeSomeMatchesDecode holds DecodeSome to Decode on any input.
func FuzzDecodeSomeMatchesDecode(f *testing.F) {
	for _, s := range viewSeeds(f) {
		if len(s) <= maxFuzzManifest {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzManifest {
			return
		}
		checkSomeMatchesDecode(t, data)
	})
}
