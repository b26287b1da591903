package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

// checkFastMatchesJSON: whatever decodeFast accepts, encoding/json (as
// Decode used it alone) accepts with the same Manifest.
//
// Both readings are checked: with the entries split between two goroutines
// wherever that can be done (decodeFastSplit's minSplit 0), and in one go;
// they accept the same inputs.
func checkFastMatchesJSON(t *testing.T, data []byte) {
	t.Helper()
	m, ok := decodeFastSplit(data, 0)
	whole, wholeOK := decodeFastSplit(data, math.MaxInt)
	if ok != wholeOK || !reflect.DeepEqual(m, whole) {
		t.Fatalf("decodeFast reads differently with the entries split (%v) and not (%v):\n got %+v\nwant %+v\n%q", ok, wholeOK, m, whole, data)
	}
	if !ok {
		return
	}
	want, err := decodeJSON(data)
	if err != nil {
		t.Fatalf("decodeFast accepted what encoding/json refuses (%v):\n%q", err, data)
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("decodeFast reads differently:\n got %+v\nwant %+v\n%q", m, want, data)
	}
}

func fastManifestSeeds(t testing.TB) [][]byte {
	good, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	compact := new(bytes.Buffer)
	if err := json.Compact(compact, good); err != nil {
		t.Fatal(err)
	}
	seeds := [][]byte{good, compact.Bytes()}
	for _, name := range []string{"testdata/manifest.json", "testdata/manifest-trace.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	for _, s := range []string{
		`{"format":"readproof-manifest/1","run_id":"r","entries":[]}`,
		`{"format":"readproof-manifest/1","run_id":"r","entries":null}`,
		`{"format":"readproof-manifest/1","run_id":"r","run_id":"s","entries":[]}`,
		`{"Format":"readproof-manifest/1","run_id":"r","entries":[]}`,
		`{"format":"readproof-manifest/1","run_id":"r","entries":[]} `,
		`{"format":"readproof-manifest/1","run_id":"r","entries":[]}}`,
		`{"format":"readproof-manifest/1","run_id":"r","entries":[]}{}`,
		` {"format":"readproof-manifest/1","r\u0075n_id":"\u00e9\ud83d\ude00\n\t\"\\\/","entries":[]}`,
		`{"format":"readproof-manifest/1","run_id":"\ud800","entries":[]}`,
		"{\"format\":\"readproof-manifest/1\",\"run_id\":\"\xff\",\"entries\":[]}",
		`{"format":"readproof-manifest/1","run_id":"r","started_at":"2026-01-02T03:04:05.123456789+01:00","created_at":"2026-01-02T03:04:05Z","entries":[]}`,
		`{"format":"readproof-manifest/1","run_id":"r","created_at":"2026-01-02 03:04:05Z","entries":[]}`,
		`{"format":"readproof-manifest/1","run_id":"r","created_at":"2026-01-02T03:04:05\u005a","entries":[]}`,
		`{"format":"readproof-manifest/1","run_id":"r","entries":[{"position":0,"uri":"readproof://a/b","bytes":1e3}]}`,
		`{"format":"readproof-manifest/1","run_id":"r","entries":[{"position":-0,"uri":"readproof://a/b","bytes":01}]}`,
		`{"format":"readproof-manifest/1","run_id":"r","entries":[{"position":0,"bytes":9223372036854775808}]}`,
		`{"format":"readproof-manifest/1","run_id":"r","entries":[{"position":0,"provenance":{},"probe":{"bucket":1,"length":2,"delivered_hash":"h","delivered_bytes":3}}]}`,
		`{"format":"readproof-manifest/1","run_id":"r","entries":[{"position":0,"provenance":{"a":"1","a":"2"}}]}`,
		`{"format":"readproof-manifest/1","run_id":"r","entries":[{"position":0,"probe":null}]}`,
		`{"format":"readproof-manifest/1","run_id":"r","entries":[{"position":0,"provenance":{"a":"1"},"provenance":{"b":"2"},"probe":{"bucket":1},"probe":{"length":2}}]}`,
		`{"format":"readproof-manifest/1","run_id":"r","caller":"ci","trace_id":"0af7651916cd43dd8448eb211c80319c","entries":[]}`,
		`{"format":"readproof-manifest/1","run_id":"r","entries":[{"position":123456789,"bytes":999999999999999999,"probe":{"bucket":-123456789012345678,"length":1234567890}}]}`,
		`{"format":"readproof-manifest/1","run_id":"r","entries":[{"position":-9223372036854775808,"bytes":-0}]}`,
		// Where decodeFastSplit may split the entries: between entries,
		// after a nested object, after the entries, in a string.
		"{\"format\":\"readproof-manifest/1\",\"run_id\":\"r\",\"entries\":[{\"position\":0\n},\n{\"position\":1\n} ,\t{\"position\":2,\"ref\":\"a\"\n}\r,{\"position\":3\n},{\"position\":4}]}",
		"{\"format\":\"readproof-manifest/1\",\"run_id\":\"r\",\"entries\":[{\"position\":0\n},\n{\"position\":1\n},\n{\"position\":2,\"provenance\":{\"a\":\"b\"\n},\"file\":\"x\"\n}]}",
		"{\"format\":\"readproof-manifest/1\",\"run_id\":\"r\",\"entries\":[{\"position\":0\n},\n{\"position\":1,\"provenance\":{\"a\":\"b\"\n},{\"c\":\"d\"}}]}",
		"{\"format\":\"readproof-manifest/1\",\"run_id\":\"r\",\"entries\":[{\"position\":0\n},\n{\"position\":1\n},\n{\"position\":2,\"uri\":1\n}]}",
		"{\"format\":\"readproof-manifest/1\",\"run_id\":\"r\",\"entries\":[{\"position\":0\n},\n{\"position\":1\n},\n{\"position\":2\n},]}",
		"{\"format\":\"readproof-manifest/1\",\"run_id\":\"r\",\"entries\":[{\"position\":0\n},\n{\"position\":1\n},\n{\"position\":2\n}]\n},{}",
		"{\"format\":\"readproof-manifest/1\",\"run_id\":\"r\",\"entries\":[{\"position\":0\n},\n{\"position\":1\n},\n{\"position\":2\n}}}",
		"{\"format\":\"readproof-manifest/1\",\"entries\":[{\"position\":0}],\"run_id\":\"r\n},{\"}",
		"{\"format\":\"readproof-manifest/1\",\"entries\":[{\"position\":0,\"uri\":\"a\n},{\"},{\"position\":1}],\"run_id\":\"r\"}",
		// Indentation of each width up to and past a word.
		"{\n\"format\":\"readproof-manifest/1\",\n \"run_id\":\"r\",\n  \"entries\":[\n   {\n    \"position\":0,\n     \"ref\":\"\"\n      },\n       {\n        \"position\":1\n         }\n          ]\n\t\n   \r\n                  }\n",
		"{\"format\":\"readproof-manifest/1\",\"run_id\":\"r\",\"entries\":[]\n       \u0000}",
		"{\"format\":\"readproof-manifest/1\",\"run_id\":\"r\",\"entries\":[]\n   \n    \x0b}",
		`[]`, `{`, `{}`, `{"entries":[{}]}`, `{"x":1}`, ``,
	} {
		seeds = append(seeds, []byte(s))
	}
	// plain reads string bytes eight at a time: each byte that needs
	// attention at each offset of a word, in a key and in a value.
	for _, c := range []string{`"`, `\\`, `\"`, `\u00e9`, "\x01", "\x1f", " ", "~", "\x7f", "\x80", "\xc3\xa9", "\xff", "\xe2\x82"} {
		for off := 0; off < 10; off++ {
			pad := strings.Repeat("a", off)
			seeds = append(seeds,
				[]byte(`{"format":"readproof-manifest/1","run_id":"`+pad+c+`bcdefghijklmnop","entries":[]}`),
				[]byte(`{"format":"readproof-manifest/1","entries":[{"provenance":{"`+pad+c+`bcdefghij":"x"}}]}`))
		}
	}
	return seeds
}

func TestDecodeFastMatchesJSONSeeds(t *testing.T) {
	for _, s := range fastManifestSeeds(t) {
		checkFastMatchesJSON(t, s)
	}
}

// Manifests as readproof writes them take the fast path: otherwise the
// speed is silently lost.
func TestDecodeFastTaken(t *testing.T) {
	for _, s := range fastManifestSeeds(t)[:4] {
		if _, ok := decodeFast(s); !ok {
			t.Errorf("not read by decodeFast:\n%s", s)
		}
	}
	big, err := Encode(manifestOf(1000))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := decodeFast(big); !ok {
		t.Error("a 1,000-entry manifest is not read by decodeFast")
	}
	d := &fastJSON{b: big, i: bytes.Index(big, []byte(`"entries"`))}
	if d.splitBrace() < 0 {
		t.Error("a 1,000-entry manifest is read in one go, not in two halves")
	}
	checkFastMatchesJSON(t, big)
}

// FuzzDecodeFastMatchesJSON holds decodeFast to encoding/json: on any input
// it accepts, encoding/json accepts too and reads the same manifest.
//
// Seeds and inputs are kept under maxFuzzManifest: the fuzzer minimizes
// every input that finds new coverage, at a cost quadratic in its length,
// and with whole manifests as seeds it spent its time minimizing.
func FuzzDecodeFastMatchesJSON(f *testing.F) {
	one := manifestOf(1)
	one.Entries[0].Probe = &Probe{Bucket: 1, Length: 2, DeliveredHash: "h", DeliveredSize: 3}
	small, err := json.Marshal(one)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(small)
	for _, s := range fastManifestSeeds(f) {
		if len(s) <= maxFuzzManifest {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzManifest {
			return
		}
		checkFastMatchesJSON(t, data)
	})
}

const maxFuzzManifest = 1 << 10

// manifestOf is sample() with n entries.
func manifestOf(n int) *Manifest {
	m := sample()
	proto := m.Entries[0]
	m.Entries = nil
	for i := 0; i < n; i++ {
		e := proto
		e.Position = i
		e.URI = fmt.Sprintf("readproof://bench/docs/d%d", i)
		e.File = fmt.Sprintf("content/bench/docs/d%d", i)
		e.Provenance = map[string]string{"path": fmt.Sprintf("docs/d%d.md", i), "source_type": "filesystem"}
		m.Entries = append(m.Entries, e)
	}
	return m
}

// benchDecode times decode of a manifest of n entries.
func benchDecode(b *testing.B, n int, decode func([]byte) (*Manifest, error)) {
	data, err := Encode(manifestOf(n))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecode1000 decodes a manifest of 1,000 entries, what manifest,
// diff, replay and evidence export read first.
func BenchmarkDecode1000(b *testing.B) { benchDecode(b, 1000, Decode) }

func BenchmarkDecodeJSON1000(b *testing.B) { benchDecode(b, 1000, decodeJSON) }

// BenchmarkDecode10000 is BenchmarkDecode1000 at the 10,000 entries of
// issue 14's large run.
func BenchmarkDecode10000(b *testing.B) { benchDecode(b, 10000, Decode) }

// BenchmarkValidate10000 is Decode's Validate alone.
func BenchmarkValidate10000(b *testing.B) {
	m := manifestOf(10000)
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}
