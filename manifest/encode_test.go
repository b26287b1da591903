package manifest

import (
	"bytes"
	"encoding/json"
	"testing"
)

// encodeWhole is Encode as it was before entries were encoded one by one:
// the whole document through one json.Encoder. Encode must give the same
// bytes (manifest ids are hashes of them).
func encodeWhole(m *Manifest) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	cp := *m
	cp.Format = Format
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&cp); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func checkEncodeMatchesWhole(t *testing.T, m *Manifest) {
	t.Helper()
	want, werr := encodeWhole(m)
	got, gerr := Encode(m)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("Encode error %v, whole-document error %v", gerr, werr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Encode differs from the whole-document encoding:\n--- got\n%s\n--- want\n%s", got, want)
	}
}

// TestEncodeMatchesWholeDocument (issue 14, JSON re-encoding): Encode writes
// the entries one by one into one buffer, and the bytes are those of the
// whole-document encoding: empty, one and many entries, trace id and
// caller after and before the entries, text that encoding/json would escape
// for HTML, unicode, probes.
func TestEncodeMatchesWholeDocument(t *testing.T) {
	for _, n := range []int{0, 1, 2, 1000} {
		m := manifestOf(n)
		checkEncodeMatchesWhole(t, m)
		m.TraceID = "0af7651916cd43dd8448eb211c80319c"
		m.Caller = "ci <agent> & \"friends\" é"
		checkEncodeMatchesWhole(t, m)
	}
	m := manifestOf(3)
	m.Entries[1].Provenance = map[string]string{"a<b>": "c&d", "\u2028": "\x7f"}
	m.Entries[2].Probe = &Probe{Bucket: 3, Length: 4, DeliveredHash: "sha256:00", DeliveredSize: 5}
	m.Entries[0].Provenance = nil
	checkEncodeMatchesWhole(t, m)
	m.Entries = nil
	checkEncodeMatchesWhole(t, m)
}

// FuzzEncodeMatchesWholeDocument holds Encode to the whole-document encoding
// for any manifest encoding/json can read.
func FuzzEncodeMatchesWholeDocument(f *testing.F) { fuzzManifests(f, checkEncodeMatchesWhole) }

// fuzzManifests runs check on every manifest encoding/json reads from the
// fuzzer's input, seeded with fastManifestSeeds.
func fuzzManifests(f *testing.F, check func(*testing.T, *Manifest)) {
	for _, s := range fastManifestSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Manifest
		if json.Unmarshal(data, &m) != nil {
			return
		}
		check(t, &m)
	})
}
