package manifest

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"math"
	"reflect"
	"slices"
	"testing"
)

// checkViewMatchesDecode: DecodeView accepts what Decode accepts, refuses
// what it refuses with the same error, and reads ViewOf what Decode reads;
// decodeViewFast accepts only what Decode accepts, and reads the same with
// the entries split wherever they can be (minSplit 0) and in one go.
func checkViewMatchesDecode(t *testing.T, data []byte) {
	t.Helper()
	m, err := Decode(data)
	fast, fastOK := decodeViewFastSplit(data, 0)
	whole, wholeOK := decodeViewFastSplit(data, math.MaxInt)
	if fastOK != wholeOK || !reflect.DeepEqual(fast, whole) {
		t.Fatalf("decodeViewFast reads differently with the entries split (%v) and not (%v):\n got %+v\nwant %+v\n%q", fastOK, wholeOK, fast, whole, data)
	}
	v, verr := DecodeView(data)
	if err != nil {
		if fastOK {
			t.Fatalf("decodeViewFast accepted what Decode refuses (%v):\n%q", err, data)
		}
		if verr == nil || verr.Error() != err.Error() {
			t.Fatalf("DecodeView's error %v, Decode's %v:\n%q", verr, err, data)
		}
		return
	}
	if verr != nil {
		t.Fatalf("DecodeView refused what Decode accepts: %v\n%q", verr, data)
	}
	want := ViewOf(m)
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("DecodeView reads differently:\n got %+v\nwant %+v\n%q", v, want, data)
	}
	if fastOK && !reflect.DeepEqual(fast, want) {
		t.Fatalf("decodeViewFast reads differently:\n got %+v\nwant %+v\n%q", fast, want, data)
	}
}

// viewSeeds are fastManifestSeeds and manifests that Decode accepts, each
// with one fault Validate finds.
func viewSeeds(t testing.TB) [][]byte {
	seeds := fastManifestSeeds(t)
	one := manifestOf(3)
	one.Entries[1].Ref = "v1"
	one.Entries[2].Probe = &Probe{Bucket: 1, Length: 2, DeliveredHash: "h", DeliveredSize: 3}
	one.Caller = "ci"
	one.TraceID = "0af7651916cd43dd8448eb211c80319c"
	for _, bad := range []func(m *Manifest){
		func(m *Manifest) {},
		func(m *Manifest) { m.Format = "readproof-manifest/2" },
		func(m *Manifest) { m.RunID = "" },
		func(m *Manifest) { m.RunID = "a b" },
		func(m *Manifest) { m.Caller = "a b" },
		func(m *Manifest) { m.TraceID = "00000000000000000000000000000000" },
		func(m *Manifest) { m.Entries[1].Position = 2 },
		func(m *Manifest) { m.Entries[1].URI = "readproof://a/b@t" },
		func(m *Manifest) { m.Entries[1].URI = "https://a/b" },
		func(m *Manifest) { m.Entries[1].URI = "readproof://a/\"b" },
		func(m *Manifest) { m.Entries[1].Ref = "a b" },
		func(m *Manifest) { m.Entries[1].Snapshot = "abc" },
		func(m *Manifest) { m.Entries[1].ContentHash = "sha256:ABC" },
		func(m *Manifest) { m.Entries[1].Decision = "guess" },
		func(m *Manifest) { m.Entries[1].Decision = "" },
		func(m *Manifest) { m.Entries[1].Bytes = -1 },
		func(m *Manifest) { m.Entries[1].File = "elsewhere/x" },
		func(m *Manifest) { m.Entries[1].File = m.Entries[0].File },
		func(m *Manifest) { m.Entries[1].File = "" },
		func(m *Manifest) { m.Entries[0].File, m.Entries[1].File = "", "" },
		func(m *Manifest) { m.Entries[1].Provenance = nil },
		func(m *Manifest) { m.Entries[1].Provenance = map[string]string{"a\"b": "c\nd"} },
		func(m *Manifest) { m.Entries = nil },
		// A probe session this readproof does not know: Decode refuses
		// the manifest, and so must DecodeView (`readproof manifest`).
		func(m *Manifest) {
			m.Entries[2].Probe = &Probe{Bucket: 1, Length: 2, DeliveredHash: "h", DeliveredSize: 3, Session: "bogus"}
		},
	} {
		cp := *one
		cp.Entries = append([]Entry(nil), one.Entries...)
		bad(&cp)
		// Marshal, not Encode: Encode refuses what Validate refuses.
		data, err := json.MarshalIndent(&cp, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	// One entry as Encode writes it (read by canonical), under the
	// fuzzer's maxFuzzManifest: with provenance, and with a probe instead.
	small := manifestOf(1)
	probed := manifestOf(1)
	probed.Entries[0].Provenance = nil
	probed.Entries[0].Probe = &Probe{Bucket: 1, Length: 2, DeliveredHash: "h", DeliveredSize: 3}
	for _, m := range []*Manifest{small, probed} {
		data, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > maxFuzzManifest {
			t.Fatalf("a one-entry manifest is %d bytes, over maxFuzzManifest", len(data))
		}
		seeds = append(seeds, data)
	}
	return seeds
}

func TestDecodeViewMatchesDecodeSeeds(t *testing.T) {
	for _, s := range viewSeeds(t) {
		checkViewMatchesDecode(t, s)
	}
}

// Manifests as readproof writes them take the fast path: those of
// fastManifestSeeds that decodeFast takes, and the valid ones of
// viewSeeds' own (but an entries list of null, which decodeFast leaves to
// encoding/json).
func TestDecodeViewFastTaken(t *testing.T) {
	fastSeeds := fastManifestSeeds(t)
	own := viewSeeds(t)[len(fastSeeds):]
	for _, s := range slices.Concat(fastSeeds[:4], own) {
		if _, err := Decode(s); err != nil || bytes.Contains(s, []byte(`"entries": null`)) {
			continue
		}
		if _, ok := decodeViewFast(s); !ok {
			t.Errorf("not read by decodeViewFast:\n%s", s)
		}
	}
	big, err := Encode(manifestOf(1000))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := decodeViewFast(big); !ok {
		t.Error("a 1,000-entry manifest is not read by decodeViewFast")
	}
	d := &fastJSON{b: big, i: bytes.Index(big, []byte(`"entries"`))}
	if d.splitBrace() < 0 {
		t.Error("a 1,000-entry manifest is read in one go, not in two halves")
	}
	checkViewMatchesDecode(t, big)
}

// FuzzDecodeViewMatchesDecode holds DecodeView to ViewOf(Decode) on any
// input, and decodeViewFast to accepting only what Decode accepts.
func FuzzDecodeViewMatchesDecode(f *testing.F) {
	for _, s := range viewSeeds(f) {
		if len(s) <= maxFuzzManifest {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzManifest {
			return
		}
		checkViewMatchesDecode(t, data)
	})
}

// BenchmarkDecodeView10000 is BenchmarkDecode10000 for DecodeView, what
// `readproof manifest RUN` reads.
func BenchmarkDecodeView10000(b *testing.B) {
	data, err := Encode(manifestOf(10000))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeView(data); err != nil {
			b.Fatal(err)
		}
	}
}

// Entries as Encode writes them, with and without a tag, provenance and a
// probe, are read by canonical (the fields matched as text).
func TestViewCanonicalTaken(t *testing.T) {
	m := manifestOf(4)
	m.Entries[1].Ref = "v1"
	m.Entries[1].Provenance = nil
	m.Entries[2].Probe = &Probe{Bucket: 1, Length: 2, DeliveredHash: "h", DeliveredSize: 3}
	m.Entries[3].File = ""
	data, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	const open = `"entries": [`
	d := &viewJSON{fastJSON: fastJSON{b: data, i: bytes.Index(data, []byte(open)) + len(open)}, seed: maphash.MakeSeed(), filesOK: true}
	for i, want := range ViewOf(m).Entries {
		if i > 0 && !d.byte(',') {
			t.Fatalf("no comma before entry %d", i)
		}
		var e ViewEntry
		var f entryFields
		if !d.canonical(&e, &f) || e != want || !f.decided {
			t.Fatalf("entry %d: canonical read %+v (decided %v), want %+v:\n%s", i, e, f.decided, want, data)
		}
	}
	if !d.byte(']') {
		t.Fatal("no closing bracket after the entries")
	}
}
