package manifest

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// lightEntry keeps of e what Spool.Encode reads from the manifest: what
// Validate checks and the file.
func lightEntry(e Entry) Entry {
	return Entry{Position: e.Position, URI: e.URI, Ref: e.Ref, Snapshot: e.Snapshot, ContentHash: e.ContentHash,
		Decision: e.Decision, Bytes: e.Bytes, File: e.File}
}

// checkSpoolMatchesEncode spools m's entries (their files blanked, as a
// run spools them before AssignFiles) and holds Spool.Encode of m with
// light entries to Encode of m: same bytes, same error.
func checkSpoolMatchesEncode(t *testing.T, m *Manifest) {
	t.Helper()
	want, werr := Encode(m)
	var file bytes.Buffer
	sp := NewSpool(&file)
	light := *m
	light.Entries = nil
	if m.Entries != nil {
		light.Entries = []Entry{}
	}
	for _, e := range m.Entries {
		noFile := e
		noFile.File = ""
		if err := sp.Add(&noFile); err != nil {
			t.Fatalf("Add: %v", err)
		}
		light.Entries = append(light.Entries, lightEntry(e))
	}
	if err := sp.Flush(); err != nil {
		t.Fatal(err)
	}
	if sp.Len() != len(m.Entries) {
		t.Fatalf("Len %d, %d entries", sp.Len(), len(m.Entries))
	}
	got, gerr := sp.Encode(&light, bytes.NewReader(file.Bytes()))
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("Spool.Encode error %v, Encode error %v", gerr, werr)
	}
	if werr != nil && !errors.Is(gerr, ErrInvalid) == errors.Is(werr, ErrInvalid) {
		t.Fatalf("Spool.Encode error %v does not match ErrInvalid as %v does", gerr, werr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Spool.Encode differs from Encode:\n--- got\n%s\n--- want\n%s", got, want)
	}
	if werr != nil {
		return
	}
	// The reader gives the same bytes read a byte at a time, and its size.
	size, rd, err := sp.Reader(&light, bytes.NewReader(file.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(iotest.OneByteReader(rd))
	if err != nil || !bytes.Equal(got, want) || size != int64(len(want)) {
		t.Fatalf("Spool.Reader: size %d, %d bytes read, %v; want %d bytes", size, len(got), err, len(want))
	}
}

// TestSpoolMatchesEncode (issue 14, memory): a run of many documents spools
// its entries and assembles manifest.json from them at the end; the bytes
// and errors are Encode's: empty, one and many entries, files with '~',
// tags, a provenance key "file", text encoding/json escapes, probes, and
// manifests that do not validate.
func TestSpoolMatchesEncode(t *testing.T) {
	for _, n := range []int{0, 1, 2, 1000} {
		m := manifestOf(n)
		checkSpoolMatchesEncode(t, m)
		m.TraceID = "0af7651916cd43dd8448eb211c80319c"
		m.Caller = "ci <agent> & \"friends\" é"
		checkSpoolMatchesEncode(t, m)
	}
	m := manifestOf(4)
	m.Entries[1].Provenance = map[string]string{"a<b>": "c&d", "\u2028": "\x7f", "file": "", "x": "\n      \"file\": \"\""}
	m.Entries[2].Probe = &Probe{Bucket: 3, Length: 4, DeliveredHash: "sha256:00", DeliveredSize: 5}
	m.Entries[0].Provenance = nil
	m.Entries[3].File = "content/a<b>&\"c\"\u2028~3"
	checkSpoolMatchesEncode(t, m)

	bad := manifestOf(3)
	bad.Entries[2].Snapshot = "nope"
	checkSpoolMatchesEncode(t, bad)
	bad = manifestOf(3)
	bad.Entries[1].File = bad.Entries[0].File
	checkSpoolMatchesEncode(t, bad)
	bad = manifestOf(3)
	bad.TraceID = "xyz"
	checkSpoolMatchesEncode(t, bad)
}

// TestSpoolEncodeShortRead: spooled bytes that are not all there are an
// error, not a manifest.
func TestSpoolEncodeShortRead(t *testing.T) {
	m := manifestOf(3)
	var file bytes.Buffer
	sp := NewSpool(&file)
	for i := range m.Entries {
		if err := sp.Add(&m.Entries[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := sp.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Encode(m, bytes.NewReader(file.Bytes()[:file.Len()-1])); err == nil {
		t.Fatal("Encode of a short spool succeeded")
	}
	if _, err := sp.Encode(&Manifest{RunID: m.RunID, Entries: m.Entries[:2]}, bytes.NewReader(file.Bytes())); err == nil {
		t.Fatal("Encode of fewer entries than spooled succeeded")
	}
}

// FuzzSpoolMatchesEncode holds Spool.Encode to Encode for any manifest
// encoding/json can read.
func FuzzSpoolMatchesEncode(f *testing.F) { fuzzManifests(f, checkSpoolMatchesEncode) }
