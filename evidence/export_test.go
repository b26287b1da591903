package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

// jsonIndent is the reference encoding Marshal must equal.
func jsonIndent(t *testing.T, st *Statement) []byte {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(st); err != nil {
		t.Fatal(err)
	}
	return want.Bytes()
}

// exportInputs are inputs of many shapes: few and many entries (the
// parallel encoding starts at 64), odd provenance, empty content.
func exportInputs(t *testing.T) map[string]Input {
	three, _ := threeInput(t)
	many := benchInput(300, 100)
	many.Resources = three.Resources
	many.Git = three.Git
	many.ProofOfRead = json.RawMessage(`{"b": [1.50, null], "a": "<&>"}`)
	for i := range many.Entries {
		switch i % 7 {
		case 1:
			many.Entries[i].Provenance = nil
		case 2:
			many.Entries[i].Provenance = map[string]string{}
		case 3:
			many.Entries[i].Provenance["weird"] = "line\nbreak <tag> \\ \u2028 \"q\" ünï \x01 \xff"
			many.Entries[i].Provenance["\u00e9\t\"key"] = "v"
			many.Entries[i].Provenance["token"] = "hunter2"
		case 4:
			many.Entries[i].Content = []byte{}
			many.Entries[i].Bytes = 0
			many.Entries[i].ContentHash = hashOf(nil)
			many.Entries[i].SnapshotID = gitBlobID(nil)
		case 5:
			many.Entries[i].Ref = "prod"
			many.Entries[i].URI += "/ü"
		}
	}
	noContent := benchInput(100, 10)
	noContent.WithContent = false
	verified := benchInput(80, 50)
	for i := range verified.Entries {
		verified.Entries[i].ContentVerified = true
	}
	return map[string]Input{"three": three, "many": many, "no content": noContent, "verified": verified, "empty": {ManifestID: "m"}}
}

// TestExportMatchesBuildMarshal: Export writes exactly Marshal(Build(in)),
// which is exactly encoding/json's indented encoding, and returns Build's
// statement without the content strings.
func TestExportMatchesBuildMarshal(t *testing.T) {
	t.Parallel()
	for name, in := range exportInputs(t) {
		st, err := Build(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if ref := jsonIndent(t, st); !bytes.Equal(want, ref) {
			t.Fatalf("%s: Marshal differs from encoding/json:\n--- got\n%s\n--- want\n%s", name, want, ref)
		}
		got, est, err := Export(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: Export differs from Marshal(Build):\n--- got\n%s\n--- want\n%s", name, got, want)
		}
		for i := range st.Predicate.Entries {
			st.Predicate.Entries[i].ContentB64 = ""
		}
		if a, b := jsonIndent(t, st), jsonIndent(t, est); !bytes.Equal(a, b) {
			t.Fatalf("%s: Export's statement is not Build's without content:\n%s\n%s", name, b, a)
		}
		if r, _ := Verify(got, VerifyOptions{Offline: true}); in.Replay != nil && !r.OK() {
			t.Fatalf("%s: does not verify:\n%s", name, r.Listing())
		}
	}
}

// TestMarshalProvenanceShapes: provenance as a decoded bundle may hold it
// (nil, numbers, nested values) is encoded as encoding/json does, in the
// parallel encoding too.
func TestMarshalProvenanceShapes(t *testing.T) {
	t.Parallel()
	st, err := Build(benchInput(200, 10))
	if err != nil {
		t.Fatal(err)
	}
	for i := range st.Predicate.Entries {
		p := &st.Predicate.Entries[i].Provenance
		switch i % 5 {
		case 0:
			*p = nil
		case 1:
			(*p)["n"] = 1.5
		case 2:
			(*p)["nested"] = map[string]any{"b": []any{true, nil, "x"}, "a": map[string]any{}}
		case 3:
			(*p)["s"] = "<&> \u2028  "
		}
	}
	got, err := Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if want := jsonIndent(t, st); !bytes.Equal(got, want) {
		t.Fatalf("Marshal differs from encoding/json:\n--- got\n%s\n--- want\n%s", got, want)
	}
}

// TestExportRefusesAsBuild: Export refuses what Build refuses, with the
// same error; ContentVerified skips only the hash, not the size check.
func TestExportRefusesAsBuild(t *testing.T) {
	t.Parallel()
	in, _ := threeInput(t)
	in.Entries[1].Content = []byte("changed\n")
	_, berr := Build(in)
	_, _, eerr := Export(in)
	if !errors.Is(berr, ErrDigestMismatch) || eerr == nil || berr.Error() != eerr.Error() {
		t.Fatalf("Build: %v\nExport: %v", berr, eerr)
	}
	in.Entries[1].ContentVerified = true
	_, berr = Build(in)
	_, _, eerr = Export(in)
	if !errors.Is(berr, ErrInvalidInput) || eerr == nil || berr.Error() != eerr.Error() {
		t.Fatalf("a verified entry of the wrong size: Build: %v\nExport: %v", berr, eerr)
	}
	in, _ = threeInput(t)
	in.Entries[2].Provenance = map[string]string{"k": fmt.Sprint(1)}
	in.Entries[2].Content = nil
	_, berr = Build(in)
	_, _, eerr = Export(in)
	if berr == nil || eerr == nil || berr.Error() != eerr.Error() {
		t.Fatalf("no content: Build: %v\nExport: %v", berr, eerr)
	}
}

func BenchmarkExport1k(b *testing.B) {
	in := benchInput(1000, 4096)
	for i := range in.Entries {
		in.Entries[i].ContentVerified = true
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		data, _, err := Export(in)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
	}
}
