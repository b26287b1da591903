package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// keyOrder returns the object keys of the JSON value at path, in document
// order.
func keyOrder(t *testing.T, data []byte, path ...string) []string {
	t.Helper()
	var raw json.RawMessage = data
	for _, p := range path {
		if idx, err := strconv.Atoi(p); err == nil {
			var arr []json.RawMessage
			if err := json.Unmarshal(raw, &arr); err != nil || len(arr) <= idx {
				t.Fatalf("path %v: not an array with index %d", path, idx)
			}
			raw = arr[idx]
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatalf("path %v: %v", path, err)
		}
		raw = obj[p]
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("path %v: not an object", path)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestBundleFieldOrder(t *testing.T) {
	t.Parallel()
	in, _ := threeInput(t)
	in.ProofOfRead = json.RawMessage(`{"verdicts":[{"z":1,"a":2}]}`)
	in.Receipts = json.RawMessage(`{"total":3}`)
	data := mustBundle(t, in)
	for _, tc := range []struct {
		path []string
		want string
	}{
		// The Readproof v0.3 order, then our additions.
		{nil, "_type subject predicateType predicate"},
		{[]string{"subject", "0"}, "name digest"},
		{[]string{"predicate"}, "run_id manifest_id manifest_created_at generated_at exporter merkle entries resources replay git proof_of_read receipts"},
		{[]string{"predicate", "exporter"}, "name version"},
		{[]string{"predicate", "merkle"}, "algorithm leaf root leaf_count"},
		{[]string{"predicate", "entries", "0"}, "position uri snapshot_id materialization_id content_hash source_revision observed_at content_type bytes provenance content_b64"},
		{[]string{"predicate", "entries", "0", "provenance"}, "path source_type"},
		{[]string{"predicate", "resources", "0"}, "uri namespace path missing"},
		{[]string{"predicate", "resources", "1"}, "uri namespace path source policy"},
		{[]string{"predicate", "resources", "1", "source"}, "kind config"},
		{[]string{"predicate", "resources", "1", "policy"}, "strategy max_age_seconds"},
		{[]string{"predicate", "resources", "1", "source", "config", "http"}, "headers url"},
		{[]string{"predicate", "replay"}, "verified_at all_match entries"},
		{[]string{"predicate", "replay", "entries", "0"}, "position match expected_hash actual_hash"},
		{[]string{"predicate", "git"}, "manifest_commit tree run_ref"},
	} {
		if got := strings.Join(keyOrder(t, data, tc.path...), " "); got != tc.want {
			t.Errorf("keys of %v = %q, want %q", tc.path, got, tc.want)
		}
	}
	var st Statement
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	p := st.Predicate
	if st.Type != StatementType || st.PredicateType != "urn:readproof:evidence:v0.3" {
		t.Fatalf("type %q predicateType %q", st.Type, st.PredicateType)
	}
	if st.Subject[0].Name != manifestA || p.ManifestID != manifestA || p.Git.ManifestCommit != manifestA {
		t.Fatalf("subject %q manifest %q git %q", st.Subject[0].Name, p.ManifestID, p.Git.ManifestCommit)
	}
	if p.Merkle.Leaf != "sha256(position_be_uint32 || 0x00 || uri || 0x00 || content_hash)" || p.Merkle.Algorithm != "sha256" {
		t.Fatalf("merkle %+v", p.Merkle)
	}
	if p.ManifestCreatedAt != "2026-08-20T22:42:21.761651Z" || p.GeneratedAt != "2026-08-20T22:42:27.389302Z" {
		t.Fatalf("times %q %q", p.ManifestCreatedAt, p.GeneratedAt)
	}
	e := p.Entries[1]
	if e.Ref != "prod" || e.MaterializationID != e.SnapshotID || len(e.SnapshotID) != 40 {
		t.Fatalf("entry 1 = %+v", e)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, p.ProofOfRead); err != nil || compact.String() != `{"verdicts":[{"a":2,"z":1}]}` {
		t.Fatalf("proof_of_read not canonical: %s", p.ProofOfRead)
	}
	if !p.Replay.AllMatch || len(p.Replay.Entries) != 3 || p.Replay.Error != "" {
		t.Fatalf("replay %+v", p.Replay)
	}
	if p.Resources[0].URI != "readproof://demo/faq/returns" || !p.Resources[0].Missing || p.Resources[0].Source != nil {
		t.Fatalf("resources not sorted by uri or missing not recorded: %+v", p.Resources[0])
	}
}

func TestMarshalMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	in, _ := threeInput(t)
	in.RunID = "run <a> & \"b\"\t\u2028 ünïcödé \x01"
	in.Entries[0].Provenance["weird"] = "line\nbreak <tag> \\ \u2029"
	in.Entries[2].Content = nil
	in.WithContent = false
	in.ProofOfRead = json.RawMessage(` [ {"b": 1.50, "a": [true, null]} ] `)
	in.Receipts = json.RawMessage(`"summary"`)
	in.Resources = append(in.Resources, Resource{URI: "readproof://z/empty", Config: nil})
	cases := map[string]*Statement{}
	st, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	cases["full"] = st
	empty, err := Build(Input{ManifestID: "m"})
	if err != nil {
		t.Fatal(err)
	}
	cases["empty"] = empty
	failed := *st
	failed.Predicate.Replay = &BundleReplay{VerifiedAt: "x", Entries: []BundleReplayEntry{{Position: 0, Error: "gone"}}, Error: "store unreachable"}
	failed.Predicate.Entries = nil
	failed.Predicate.Resources = []BundleResource{}
	failed.Subject = nil
	cases["odd"] = &failed
	for name, st := range cases {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(st); err != nil {
			t.Fatal(err)
		}
		got, err := Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: Marshal differs from encoding/json:\n--- got\n%s\n--- want\n%s", name, got, want.Bytes())
		}
	}
}

func TestExportDeterministic(t *testing.T) {
	t.Parallel()
	in, store := threeInput(t)
	a := mustBundle(t, in)
	// Same manifest exported later, resources and provenance given in
	// another map order: only generated_at and verified_at may differ.
	in.GeneratedAt = in.GeneratedAt.Add(time.Hour)
	in.Replay = Replay(store, manifestA, in.GeneratedAt.Add(time.Second))
	in.Resources = []Resource{in.Resources[2], in.Resources[0], in.Resources[1]}
	b := mustBundle(t, in)
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	if len(al) != len(bl) {
		t.Fatalf("line counts differ: %d vs %d", len(al), len(bl))
	}
	diffs := 0
	for i := range al {
		if al[i] != bl[i] {
			diffs++
			if !strings.Contains(al[i], `"generated_at"`) && !strings.Contains(al[i], `"verified_at"`) {
				t.Errorf("line %d differs:\n%s\n%s", i+1, al[i], bl[i])
			}
		}
	}
	if diffs != 2 {
		t.Fatalf("%d lines differ, want 2 (generated_at, verified_at)", diffs)
	}
	if !bytes.Equal(a, mustBundle(t, func() Input { in, _ := threeInput(t); return in }())) {
		t.Fatal("two exports of the same input differ")
	}
}

func TestBuildRedactsResources(t *testing.T) {
	t.Parallel()
	in, _ := threeInput(t)
	in.Resources[1].Config = map[string]any{"http": map[string]any{
		"url":     "https://user:hunter2@example.com/doc?token=s3cr3t&page=2",
		"headers": map[string]any{"X-Api-Key": "k-123", "Accept": "text/plain", "X-Custom": "Bearer abc"},
		"nested":  []any{"ghp_abcdefghijklmnopqrstuvwxyz0123456789", "fine"},
	}}
	data := mustBundle(t, in)
	for _, secret := range []string{"abc123", "hunter2", "s3cr3t", "k-123", "Bearer abc", "ghp_abcdef"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("bundle carries %q", secret)
		}
	}
	for _, kept := range []string{`"Accept": "text/plain"`, "page=2", `"fine"`, "example.com/doc", `"Authorization": "[REDACTED]"`} {
		if !bytes.Contains(data, []byte(kept)) {
			t.Errorf("bundle lost %q", kept)
		}
	}
	in.Entries[0].Provenance["url"] = "https://u:provsecret@host/x"
	in.Entries[0].Provenance["api_token"] = "provtoken"
	if data := mustBundle(t, in); bytes.Contains(data, []byte("provsecret")) || bytes.Contains(data, []byte("provtoken")) {
		t.Fatalf("provenance carries a secret")
	}
	in.Git.Store = "https://bob:pw@git.example.com/store.git"
	if data := mustBundle(t, in); bytes.Contains(data, []byte("pw@")) || !bytes.Contains(data, []byte("https://[REDACTED]@git.example.com/store.git")) {
		t.Fatalf("git.store not redacted")
	}
}

func TestBuildContent(t *testing.T) {
	t.Parallel()
	in, _ := threeInput(t)
	in.WithContent = false
	if data := mustBundle(t, in); bytes.Contains(data, []byte("content_b64")) {
		t.Fatal("content_b64 present without WithContent")
	}
	in.WithContent = true
	st, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Predicate.Entries[0].ContentB64; got != "UHJvZHVjdHMgY2FuIGJlIHJlZnVuZGVkIHdpdGhpbiAzMCBkYXlzLgo=" {
		t.Fatalf("content_b64 = %q", got)
	}
}

func TestBuildRejects(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		edit func(*Input)
		want error
	}{
		"no manifest id":     {func(in *Input) { in.ManifestID = "" }, ErrInvalidInput},
		"position gap":       {func(in *Input) { in.Entries[1].Position = 2 }, ErrInvalidInput},
		"reordered":          {func(in *Input) { in.Entries[0], in.Entries[1] = in.Entries[1], in.Entries[0] }, ErrInvalidInput},
		"bad hash":           {func(in *Input) { in.Entries[0].ContentHash = "sha256:ABC" }, ErrInvalidInput},
		"no uri":             {func(in *Input) { in.Entries[2].URI = "" }, ErrInvalidInput},
		"content missing":    {func(in *Input) { in.Entries[1].Content = nil }, ErrInvalidInput},
		"content mismatch":   {func(in *Input) { in.Entries[1].Content = []byte("changed") }, ErrDigestMismatch},
		"bytes mismatch":     {func(in *Input) { in.Entries[1].Bytes = 3 }, ErrInvalidInput},
		"duplicate resource": {func(in *Input) { in.Resources = append(in.Resources, in.Resources[0]) }, ErrInvalidInput},
		"bad extra json":     {func(in *Input) { in.Receipts = json.RawMessage(`{"a":`) }, ErrInvalidInput},
	} {
		t.Run(name, func(t *testing.T) {
			in, _ := threeInput(t)
			tc.edit(&in)
			if _, err := Build(in); !errors.Is(err, tc.want) {
				t.Fatalf("Build error = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestBuildReplayOutcomes(t *testing.T) {
	t.Parallel()
	in, store := threeInput(t)
	in.Replay = nil
	st, _ := Build(in)
	if st.Predicate.Replay == nil || st.Predicate.Replay.Error == "" || st.Predicate.Replay.AllMatch {
		t.Fatalf("no replay should record an error: %+v", st.Predicate.Replay)
	}
	in.Replay = Replay(fakeStore{err: errors.New("store unreachable")}, manifestA, t1)
	st, _ = Build(in)
	if st.Predicate.Replay.Error != "store unreachable" || st.Predicate.Replay.AllMatch {
		t.Fatalf("replay error not recorded: %+v", st.Predicate.Replay)
	}
	bad := store.entries[manifestA]
	bad[1].ContentHash = refundsHash
	bad[2].Err = errors.New("blob missing")
	in.Replay = &ReplayResult{VerifiedAt: t1, Entries: bad}
	st, _ = Build(in)
	r := st.Predicate.Replay
	if r.AllMatch || !r.Entries[0].Match || r.Entries[1].Match || r.Entries[2].Match || r.Entries[2].Error != "blob missing" || r.Entries[1].ActualHash != refundsHash {
		t.Fatalf("replay entries %+v", r)
	}
}
