package evidence

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/readproof/readproof/internal/testsize"
)

// sameAsJSON checks the fast decoder against encoding/json on data: when
// the fast decoder accepts it, encoding/json must accept it too and yield
// the same document (and the same statement for an envelope's payload).
// It reports whether the fast decoder accepted it.
func sameAsJSON(t *testing.T, data []byte) bool {
	t.Helper()
	var fast, slow document
	ok := decodeDocument(data, &fast, true, nil)
	err := json.Unmarshal(data, &slow)
	if ok {
		contentInPlace(t, data, &fast.Statement)
		if fast.payloadB64 != nil {
			if fast.Payload == nil || *fast.Payload != "" || (len(fast.payloadB64) > 0 && !within(data, fast.payloadB64)) {
				t.Fatalf("payloadB64 %d bytes, a slice of the bundle: %v; Payload %v", len(fast.payloadB64), within(data, fast.payloadB64), fast.Payload)
			}
			*fast.Payload, fast.payloadB64 = string(fast.payloadB64), nil
		}
		if err != nil {
			t.Fatalf("fast decoder accepted what encoding/json refuses (%v):\n%q", err, data)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast decoder differs from encoding/json on\n%q\nfast %#v\njson %#v", data, fast, slow)
		}
	}
	var fastSt, slowSt Statement
	if decodeStatement(data, &fastSt, nil) {
		contentInPlace(t, data, &fastSt)
		if err := json.Unmarshal(data, &slowSt); err != nil {
			t.Fatalf("fast statement decoder accepted what encoding/json refuses (%v):\n%q", err, data)
		}
		if !reflect.DeepEqual(fastSt, slowSt) {
			t.Fatalf("fast statement decoder differs from encoding/json on\n%q\nfast %#v\njson %#v", data, fastSt, slowSt)
		}
	}
	return ok
}

// contentInPlace moves the text of each entry's content_b64 from b64, where
// the fast decoder leaves it, to ContentB64, where encoding/json puts it,
// after checking that b64 is a slice of data, not a copy.
func contentInPlace(t testing.TB, data []byte, st *Statement) {
	t.Helper()
	for i := range st.Predicate.Entries {
		e := &st.Predicate.Entries[i]
		if e.b64 == nil {
			continue
		}
		if len(e.b64) == 0 || e.ContentB64 != "" {
			t.Fatalf("entry %d: b64 %q beside ContentB64 %q", i, e.b64, e.ContentB64)
		}
		if !within(data, e.b64) {
			t.Fatalf("entry %d: the text of its content_b64 is a copy, not a slice of the bundle", i)
		}
		e.ContentB64, e.b64 = string(e.b64), nil
	}
}

// within reports whether sub is a slice of data's array, inside data.
func within(data, sub []byte) bool {
	off := cap(data) - cap(sub)
	return len(sub) > 0 && off >= 0 && off+len(sub) <= len(data) && &data[off] == &sub[0]
}

// decodeSeeds are bundles as we write them, and edits of them that stay in
// or leave the fast decoder's subset.
func decodeSeeds(t testing.TB) [][]byte {
	in, _ := threeInput(t)
	good := mustBundle(t, in)
	k := testKey(t, 1)
	signed, err := Sign(good, k.PrivateKey())
	if err != nil {
		t.Fatal(err)
	}
	bench := benchInput(20, 100)
	bench.Resources = []Resource{{URI: "readproof://a/b", Namespace: "a", Path: "b", SourceKind: "http",
		Config: map[string]any{"http": map[string]any{"n": 1.5, "list": []any{true, false, nil, 0.25, 1e300, "ü"}, "o": map[string]any{}}}}}
	bench.ProofOfRead = json.RawMessage(`{"verdicts":[{"a":2,"z":1e5,"s":"x\"y\u00e9"}],"e":[],"n":null}`)
	bench.Receipts = json.RawMessage(`"summary"`)
	v03, err := os.ReadFile("testdata/v03-bundle.json")
	if err != nil {
		t.Fatal(err)
	}
	seeds := [][]byte{good, signed, v03, mustBundle(t, bench), []byte("{}"), []byte(" {} \n"), []byte("null"), []byte("[]"), []byte(""),
		[]byte(`{"payload":"e30=","payloadType":"x","signatures":[{"sig":"AAAA"}]}`),
		[]byte(`{"payload":"e30=","signatures":[]}`),
		[]byte(`{"predicate":{"entries":[{"position":4294967296}]}}`),
		[]byte(`{"predicate":{"entries":[{"position":-0,"bytes":123456789012345678}]}}`),
		[]byte(`{"predicate":{"entries":[{"position":1.0}]}}`),
		[]byte(`{"predicate":{"entries":[{"position":1e2}]}}`),
		[]byte(`{"predicate":{"entries":[{"position":01}]}}`),
		[]byte(`{"predicate":{"entries":[{"position":1234567890123456789012}]}}`),
		[]byte(`{"predicate":{"entries":[{"uri":"a","URI":"b"}]}}`),
		[]byte(`{"predicate":{"entries":[{"uri":"a","uri":"b"}]}}`),
		[]byte(`{"predicate":{"entries":[{"provenance":{"a":"1","a":{"b":[1,2]}}}]}}`),
		[]byte(`{"predicate":{"entries":[{"provenance":null}]}}`),
		[]byte(`{"predicate":{"entries":[{"uri":"\u0061"}]}}`),
		[]byte(`{"predicate":{"entries":[{"uri":"caf\xc3\xa9"}]}}`),
		[]byte(`{"predicate":{"entries":[{"uri":"bad \xff utf8"}]}}`),
		[]byte("{\"predicate\":{\"entries\":[{\"uri\":\"tab\tin string\"}]}}"),
		[]byte(`{"predicate":{"merkle":{"leaf_count":3},"entries":[{},{},{}]}}`),
		[]byte(`{"predicate":{"merkle":{"leaf_count":99999999},"entries":[]}}`),
		[]byte(`{"predicate":{"proof_of_read": {"a" : [1, "x\\"] } ,"receipts":null}}`),
		[]byte(`{"predicate":{"proof_of_read":"\ud800"}}`),
		[]byte(`{"predicate":{"resources":[{"source":{"kind":"x","config":{"k":1e400}},"policy":{"max_age_seconds":5},"missing":true}]}}`),
		[]byte(`{"predicate":{"replay":{"entries":[{"position":0,"match":true,"error":"e"}],"all_match":false,"error":"x"}}}`),
		[]byte(`{"predicate":{"git":{"manifest_commit":"a","store":"b","tree":"c"}},"subject":[{"name":"n","digest":{"sha256":"x","sha256":"y"}}]}`),
		[]byte(`{"_type":"t"} x`),
		[]byte(`{"_type":"t",}`),
		[]byte(`{"_type":"t"`),
		[]byte(`{"subject":[{"digest":{"sha256":1}}]}`),
		[]byte(`{"predicate":{"replay":{"all_match":tru}}}`),
	}
	// Every member of an entry repeated, renamed in another case, or given
	// the wrong type.
	for _, member := range []string{`"position": 0`, `"uri": "`, `"bytes": `, `"provenance": {`, `"content_b64": "`} {
		i := bytes.Index(good, []byte(member))
		if i < 0 {
			t.Fatalf("no %s in the bundle", member)
		}
		upper := append(append(append([]byte(nil), good[:i+1]...), bytes.ToUpper(good[i+1:i+3])...), good[i+3:]...)
		dup := append(append(append([]byte(nil), good[:i]...), []byte(member[:strings.Index(member, ":")]+`: "x", `)...), good[i:]...)
		null := append(append(append([]byte(nil), good[:i]...), []byte(member[:strings.Index(member, ":")]+`: null, `)...), good[i:]...)
		seeds = append(seeds, upper, dup, null)
	}
	return seeds
}

func TestFastDecodeMatchesJSON(t *testing.T) {
	t.Parallel()
	seeds := decodeSeeds(t)
	for i, data := range seeds {
		ok := sameAsJSON(t, data)
		// our own bundles, plain and signed, take the fast path
		if i < 4 && !ok {
			t.Errorf("seed %d: the fast decoder gave up on a bundle we write", i)
		}
	}
	// Prefixes of a bundle (all invalid) and one-byte edits: every
	// position at full size, every 7th by default.
	good := seeds[0][:2000]
	step := testsize.Pick(t, 7, 1)
	for n := 0; n < len(good); n += step {
		sameAsJSON(t, good[:n])
	}
	for i := 0; i < len(good); i += step {
		for _, c := range []byte{'"', '\\', '{', '}', '[', ']', ',', ':', '0', 'n', ' ', 0x01, 0xff, 'A'} {
			edited := append([]byte(nil), good...)
			edited[i] = c
			sameAsJSON(t, edited)
		}
	}
}

// TestVerifyFastAndJSONAgree verifies each seed with the report a decode by
// encoding/json alone yields: the same checks, names and details.
func TestVerifyFastAndJSONAgree(t *testing.T) {
	t.Parallel()
	for _, data := range decodeSeeds(t) {
		got, err := Verify(data, VerifyOptions{Offline: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Statement != nil {
			contentInPlace(t, got.Payload, got.Statement)
		}
		var doc document
		if err := json.Unmarshal(data, &doc); err != nil {
			if c, ok := checkByName(got, "parse"); !ok || !strings.Contains(c.Detail, err.Error()) {
				t.Fatalf("encoding/json refuses %q (%v); Verify says\n%s", data, err, got.Listing())
			}
			continue
		}
		if err := ambiguousMember(data, reflect.TypeFor[document]()); err != nil {
			// encoding/json would take one reading of it: Verify refuses it
			if c, ok := checkByName(got, "parse"); !ok || c.OK || len(got.Checks) != 1 || !strings.Contains(c.Detail, err.Error()) {
				t.Fatalf("%q is ambiguous (%v); Verify says\n%s", data, err, got.Listing())
			}
			continue
		}
		if doc.rawEnvelope.present() {
			continue // needs a key: TestVerifyEnvelopeTamper
		}
		var want Report
		want.Payload = data
		want.Statement = &doc.Statement
		verifyStatement(&want, &doc.Statement, VerifyOptions{Offline: true}, nil)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("on %q\nVerify:\n%s\nencoding/json:\n%s", data, got.Listing(), want.Listing())
		}
	}
}

func FuzzFastDecode(f *testing.F) {
	for _, seed := range decodeSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsJSON(t, data)
	})
}

func BenchmarkVerifyOffline1k(b *testing.B) {
	in := benchInput(1000, 4096)
	in.Replay = &ReplayResult{VerifiedAt: in.GeneratedAt}
	for _, e := range in.Entries {
		in.Replay.Entries = append(in.Replay.Entries, ReplayEntry{Position: e.Position, URI: e.URI, ContentHash: e.ContentHash})
	}
	st, err := Build(in)
	if err != nil {
		b.Fatal(err)
	}
	data, err := Marshal(st)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := Verify(data, VerifyOptions{Offline: true})
		if err != nil || !r.OK() {
			b.Fatalf("%v\n%s", err, r.Listing())
		}
	}
}

// countingStore records the manifest ids it was asked to replay.
type countingStore struct {
	fakeStore
	mu  sync.Mutex
	ids []string
}

func (c *countingStore) ReplayHashes(id string) ([]ReplayEntry, error) {
	c.mu.Lock()
	c.ids = append(c.ids, id)
	c.mu.Unlock()
	return c.fakeStore.ReplayHashes(id)
}

// TestVerifyEarlyWork: the content checks and the store replay that start
// while a bundle is decoded give the report of checks run afterwards, also
// when the fast decoder gives up half way (an unknown member); when what it
// read first is not what encoding/json would keep (a repeated manifest_id or
// entries, whose last value counts for encoding/json), the report is the
// parse failure alone, with nothing of the work started early.
func TestVerifyEarlyWork(t *testing.T) {
	t.Parallel()
	in, fake := threeInput(t)
	good := mustBundle(t, in)
	// entry 0's content tampered, an unknown member in the last entry
	tampered := bytes.Replace(good, []byte(`"content_b64": "UHJvZHVjdHMg`), []byte(`"content_b64": "UHJvZHVjdHNn`), 1)
	last := bytes.LastIndex(tampered, []byte(`"position": 2`))
	unknown := append(append(append([]byte(nil), tampered[:last]...), []byte(`"extra": 1, `)...), tampered[last:]...)
	dupID := bytes.Replace(good, []byte(`"manifest_id": "`+manifestA+`"`), []byte(`"manifest_id": "`+strings.Repeat("0", 40)+`", "manifest_id": "`+manifestA+`"`), 1)
	// entries given twice: the fast decoder reads the good ones (their
	// content checked early) and gives up; encoding/json keeps the tampered
	var top struct {
		Predicate struct {
			Entries json.RawMessage `json:"entries"`
		} `json:"predicate"`
	}
	if err := json.Unmarshal(good, &top); err != nil {
		t.Fatal(err)
	}
	dupEntries := bytes.Replace(tampered, []byte(`"entries": [`), append(append([]byte(`"entries": `), top.Predicate.Entries...), []byte(`, "entries": [`)...), 1)
	for name, data := range map[string][]byte{"good": good, "tampered": tampered, "unknown member": unknown, "repeated manifest_id": dupID, "repeated entries": dupEntries} {
		for _, offline := range []bool{true, false} {
			store := &countingStore{fakeStore: fake}
			opts := VerifyOptions{Offline: offline, Store: store}
			got, err := Verify(data, opts)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(name, "repeated") {
				if len(got.Checks) != 1 || got.Checks[0].Name != "parse" || !strings.Contains(got.Checks[0].Detail, "appears twice") {
					t.Fatalf("%s (offline %v): want the parse failure alone, got\n%s", name, offline, got.Listing())
				}
				continue
			}
			var doc document
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			contentInPlace(t, data, got.Statement)
			ref := &countingStore{fakeStore: fake}
			want := Report{Payload: data, Statement: &doc.Statement}
			verifyStatement(&want, &doc.Statement, VerifyOptions{Offline: offline, Store: ref}, nil)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s (offline %v):\nVerify:\n%s\nchecks run afterwards:\n%s", name, offline, got.Listing(), want.Listing())
			}
			if offline && len(store.ids) != 0 {
				t.Fatalf("%s: offline verify replayed %v", name, store.ids)
			}
			if !offline && (len(store.ids) == 0 || store.ids[len(store.ids)-1] != manifestA) {
				t.Fatalf("%s: replayed %v, last must be %s", name, store.ids, manifestA)
			}
		}
	}
	if r, _ := Verify(tampered, VerifyOptions{Offline: true}); r.OK() {
		t.Fatal("tampered content verified")
	}
}

// TestEarlyChecksKeptOnFallback: when the fast decoder gives up part way
// (a member outside its subset), encoding/json decodes the bundle again and
// puts the text of content_b64 in ContentB64, where the fast decoder left it
// in b64. The content checks made early are about the same entries and must
// be kept, not all made again one by one; a changed text is another entry.
func TestEarlyChecksKeptOnFallback(t *testing.T) {
	t.Parallel()
	in, _ := threeInput(t)
	data := mustBundle(t, in)
	var fast, slow Statement
	if !decodeStatement(data, &fast, nil) {
		t.Fatal("the fast decoder refused a bundle as Marshal writes it")
	}
	if err := json.Unmarshal(data, &slow); err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range fast.Predicate.Entries {
		a, b := &fast.Predicate.Entries[i], &slow.Predicate.Entries[i]
		if !a.hasContent() {
			continue
		}
		n++
		if !sameEntry(a, b) || !sameEntry(b, a) {
			t.Errorf("entry %d: decoded by the fast decoder and by encoding/json, sameEntry says they differ", i)
		}
		c := *b
		c.ContentB64 = "A" + c.ContentB64[1:]
		if c.ContentB64 != b.ContentB64 && (sameEntry(a, &c) || sameEntry(&c, a)) {
			t.Errorf("entry %d: another content_b64 text is the same entry", i)
		}
	}
	if n == 0 {
		t.Fatal("no entry embeds content")
	}
}
