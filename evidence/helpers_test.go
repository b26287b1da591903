package evidence

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

const refundsURI = "readproof://demo/policies/refunds"
const refundsText = "Products can be refunded within 30 days.\n"
const refundsHash = "sha256:c8b0bb212e93151d720746e36ff3b7076727cb577614feafa0d61f168965aedb"
const publishedRoot = "a9b73469f1a6e956024399ac407d174cc71e5d74a66e5ce390af3d64102821be"

var (
	t0 = time.Date(2026, 8, 20, 22, 42, 21, 761651000, time.UTC)
	t1 = time.Date(2026, 8, 20, 22, 42, 27, 389302000, time.UTC)
)

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func mkEntry(pos int, uri, content string) Entry {
	return Entry{
		Position:       pos,
		URI:            uri,
		SnapshotID:     gitBlobID([]byte(content)),
		ContentHash:    hashOf([]byte(content)),
		SourceRevision: hashOf([]byte(content))[:19],
		ObservedAt:     t0.Add(-time.Second),
		ContentType:    "text/markdown",
		Bytes:          int64(len(content)),
		Provenance:     map[string]string{"source_type": "filesystem", "path": "/srv/" + uri[len("readproof://"):] + ".md"},
		Content:        []byte(content),
	}
}

// fakeStore replays from a fixed table, as the store would from its blobs.
type fakeStore struct {
	entries map[string][]ReplayEntry
	err     error
}

func (f fakeStore) ReplayHashes(id string) ([]ReplayEntry, error) {
	if f.err != nil {
		return nil, f.err
	}
	e, ok := f.entries[id]
	if !ok {
		return nil, fmt.Errorf("manifest %s: %w", id, errors.New("not found"))
	}
	return append([]ReplayEntry(nil), e...), nil
}

func storeFor(manifestID string, entries []Entry) fakeStore {
	var rs []ReplayEntry
	for _, e := range entries {
		rs = append(rs, ReplayEntry{Position: e.Position, URI: e.URI, ContentHash: hashOf(e.Content)})
	}
	return fakeStore{entries: map[string][]ReplayEntry{manifestID: rs}}
}

const manifestA = "4f9d1c3a7e2b8f6051d4c9a2e7b3f8061a5d2c9e"

// threeInput is a three-entry manifest with content and a matching replay.
func threeInput(t testing.TB) (Input, fakeStore) {
	t.Helper()
	entries := []Entry{
		mkEntry(0, refundsURI, refundsText),
		mkEntry(1, "readproof://demo/policies/shipping", "We ship within 2 business days.\n"),
		mkEntry(2, "readproof://demo/faq/returns", "Returns: see the refund policy.\n"),
	}
	entries[1].Ref = "prod"
	store := storeFor(manifestA, entries)
	return Input{
		RunID:             "run-a",
		ManifestID:        manifestA,
		ManifestCreatedAt: t0,
		GeneratedAt:       t1,
		ExporterVersion:   "0.4.0-test",
		Entries:           entries,
		Resources: []Resource{
			{URI: refundsURI, Namespace: "demo", Path: "policies/refunds", SourceKind: "http",
				Config:   map[string]any{"http": map[string]any{"url": "https://policies.internal/refunds", "headers": map[string]any{"Authorization": "Bearer abc123"}}},
				Strategy: "allow_stale", MaxAgeSeconds: 3600},
			{URI: "readproof://demo/policies/shipping", Namespace: "demo", Path: "policies/shipping", SourceKind: "filesystem",
				Config: map[string]any{"filesystem": map[string]any{"path": "/srv/shipping.md"}}, Strategy: "require_fresh"},
			{URI: "readproof://demo/faq/returns", Namespace: "demo", Path: "faq/returns", Missing: true},
		},
		Replay:      Replay(store, manifestA, t1),
		WithContent: true,
		Git:         &GitInfo{RunRef: "refs/tags/readproof/runs/run-a", Tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904"},
	}, store
}

func mustBundle(t testing.TB, in Input) []byte {
	t.Helper()
	st, err := Build(in)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	data, err := Marshal(st)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return data
}

// editBundle decodes a bundle into generic JSON, lets fn change it, and
// re-encodes it.
func editBundle(t testing.TB, data []byte, fn func(p map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	fn(doc["predicate"].(map[string]any))
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func failedNames(r Report) []string {
	var out []string
	for _, c := range r.Failed() {
		out = append(out, c.Name)
	}
	sort.Strings(out)
	return out
}

func checkByName(r Report, name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// wantFailed asserts that exactly the named checks failed.
func wantFailed(t *testing.T, r Report, names ...string) {
	t.Helper()
	sort.Strings(names)
	got := failedNames(r)
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("failing checks = %v, want %v\n%s", got, names, r.Listing())
	}
	if len(names) == 0 && !r.OK() {
		t.Fatalf("report not OK:\n%s", r.Listing())
	}
	if len(names) > 0 && r.Err() == nil {
		t.Fatalf("Err() = nil with failing checks")
	}
}

// gitBlobID is the id git gives a blob holding b, computed apart from
// contentChecker.blobID.
func gitBlobID(b []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(b)) + "\x00"))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
