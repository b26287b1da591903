package store

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/probe"
)

var updateVectors = flag.Bool("update-verdict-vectors", false, "rewrite testdata/verdictmac/*.json")

// verdictVector is one file of testdata/verdictmac: the master secret, the
// verdict subkey, the parent commit, verdicts.json as stored, and the MAC
// input; docs/PROBE_PROTOCOL.md §10.6 describes them.
type verdictVector struct {
	Comment          string `json:"comment"`
	MasterSecretHex  string `json:"master_secret_hex"`
	VerdictSubkeyHex string `json:"verdict_subkey_hex"`
	Parent           string `json:"parent"`
	VerdictsJSON     string `json:"verdicts_json"`
	InputHex         string `json:"input_hex"`
}

func vectorKeys(t testing.TB) (probe.Keys, []byte) {
	master := make([]byte, probe.MasterSize)
	for i := range master {
		master[i] = byte(i + 1)
	}
	keys, err := probe.DeriveKeys(master)
	if err != nil {
		t.Fatal(err)
	}
	return keys, master
}

func vectorRecord() *VerdictRecord {
	age := int64(310)
	at := time.Date(2026, 11, 29, 21, 14, 54, 500000000, time.UTC)
	return &VerdictRecord{
		Format: VerdictsFormat, RunID: "r1", ManifestID: "87e44ccbc0282bf5561005a63c6c450b00e6257b",
		CheckedAt: time.Date(2026, 11, 29, 21, 15, 10, 0, time.UTC), Check: 2,
		Entries: []VerdictEntry{
			{Position: 0, URI: "readproof://demo/refunds", Session: "r1.0", Verdict: "REPLAY_SUSPECT",
				Reason: "this entry's sentinel was already adjudicated", Bucket: 5986622, AgeSeconds: &age,
				AnswerSHA256:          "sha256:962b8ff0bf237840002dd2367f79b533d47ec4009b6646ab9b0d946ea8ac9465",
				DeliveredHashVerified: true, Adjudicated: true, AdjudicatedVerdict: "READ_VERIFIED", AdjudicatedAt: &at},
			{Position: 1, URI: "readproof://demo/shipping", Session: "r1.1", Verdict: "HALLUCINATED",
				Reason: "the answer contains no sentinel-shaped value", Bucket: 5986622,
				AnswerSHA256: "sha256:962b8ff0bf237840002dd2367f79b533d47ec4009b6646ab9b0d946ea8ac9465"},
		},
	}
}

const vectorParent = "3493c9787de4fd33f153fc02fde098532b0e925e"

// TestVerdictMACVector reproduces testdata/verdictmac/record-1.json, and
// the Python checker (written from the protocol text) agrees with it.
func TestVerdictMACVector(t *testing.T) {
	t.Parallel()
	keys, master := vectorKeys(t)
	rec := vectorRecord()
	if err := rec.seal(keys, vectorParent); err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := hkdf.Key(sha256.New, master, []byte(probe.HKDFSalt), probe.InfoVerdict, 32)
	if err != nil {
		t.Fatal(err)
	}
	got := verdictVector{
		Comment:          "docs/PROBE_PROTOCOL.md §10.6: the MAC of a verdict record; verdicts_json is the file as stored",
		MasterSecretHex:  hex.EncodeToString(master),
		VerdictSubkeyHex: hex.EncodeToString(sub),
		Parent:           vectorParent,
		VerdictsJSON:     string(data) + "\n",
		InputHex:         hex.EncodeToString(VerdictMACInput(rec, vectorParent)),
	}
	out, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, '\n')
	path := filepath.Join("testdata", "verdictmac", "record-1.json")
	if *updateVectors {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Fatalf("%s differs from what the code computes (run with -update-verdict-vectors after a deliberate change):\n%s", path, out)
	}
	// Decoding the stored file and checking it round-trips.
	dec, err := decodeVerdicts("r1", []byte(got.VerdictsJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckVerdictMAC(dec, vectorParent, keys); err != nil {
		t.Fatal(err)
	}
	if err := CheckVerdictMAC(dec, "", keys); !errors.Is(err, ErrVerdictMAC) {
		t.Fatalf("moved to another chain position: %v", err)
	}
	py, err := testproc.LookPathBinary("python3") // not through a version manager's shim
	if err != nil {
		t.Skip("python3 not installed")
	}
	cmd := exec.Command(py, filepath.Join("testdata", "verdictmac", "check_record_mac.py"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python checker: %v\n%s", err, out)
	}
}

// TestVerdictMACEveryField: changing any member of a sealed record breaks
// its MAC; so do another key and a stripped MAC.
func TestVerdictMACEveryField(t *testing.T) {
	t.Parallel()
	keys, _ := vectorKeys(t)
	other, err := probe.NewRandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	edits := map[string]func(r *VerdictRecord){
		"verdict":        func(r *VerdictRecord) { r.Entries[1].Verdict = "READ_VERIFIED" },
		"adjudicated":    func(r *VerdictRecord) { r.Entries[0].Adjudicated = false },
		"adjudicated_at": func(r *VerdictRecord) { r.Entries[0].AdjudicatedAt = nil },
		"age":            func(r *VerdictRecord) { r.Entries[0].AgeSeconds = nil },
		"check":          func(r *VerdictRecord) { r.Check = 3 },
		"run":            func(r *VerdictRecord) { r.RunID = "r2" },
		"manifest":       func(r *VerdictRecord) { r.ManifestID = "0000000000000000000000000000000000000000" },
		"checked_at":     func(r *VerdictRecord) { r.CheckedAt = r.CheckedAt.Add(time.Second) },
		"override":       func(r *VerdictRecord) { r.ClockOverride = true },
		"entry dropped":  func(r *VerdictRecord) { r.Entries = r.Entries[:1] },
		"reason":         func(r *VerdictRecord) { r.Entries[1].Reason += "." },
		"hash verified":  func(r *VerdictRecord) { r.Entries[1].DeliveredHashVerified = true },
		// field boundaries: moving bytes between two fields changes the input
		"boundary": func(r *VerdictRecord) { r.Entries[1].URI += "r"; r.Entries[1].Session = r.Entries[1].Session[1:] },
	}
	for name, edit := range edits {
		rec := vectorRecord()
		if err := rec.seal(keys, vectorParent); err != nil {
			t.Fatal(err)
		}
		edit(rec)
		if err := CheckVerdictMAC(rec, vectorParent, keys); !errors.Is(err, ErrVerdictMAC) {
			t.Errorf("%s edited: %v, want ErrVerdictMAC", name, err)
		}
	}
	rec := vectorRecord()
	if err := rec.seal(keys, vectorParent); err != nil {
		t.Fatal(err)
	}
	if err := CheckVerdictMAC(rec, vectorParent, other); !errors.Is(err, ErrVerdictOtherKey) {
		t.Errorf("another key: %v", err)
	}
	rec.MAC, rec.MACKey = "", ""
	if err := CheckVerdictMAC(rec, vectorParent, keys); !errors.Is(err, ErrVerdictUnauthenticated) {
		t.Errorf("stripped: %v", err)
	}
}

// FuzzVerdictMAC: whatever verdicts.json holds, checking its MAC never
// panics, and a record the check accepts is, member for member, the one
// that was sealed.
func FuzzVerdictMAC(f *testing.F) {
	keys, _ := vectorKeys(f)
	rec := vectorRecord()
	if err := rec.seal(keys, vectorParent); err != nil {
		f.Fatal(err)
	}
	want := VerdictMACInput(rec, vectorParent)
	data, _ := json.Marshal(rec)
	f.Add(data, vectorParent)
	f.Add(bytes.Replace(data, []byte("HALLUCINATED"), []byte("READ_VERIFIED"), 1), vectorParent)
	f.Add([]byte(`{"format":"readproof-verdicts/1","run_id":"r1","mac":"hmac-sha256:00"}`), "")
	// A shadowing member: refused by decodeVerdicts (TestDecodeVerdictsRefusesShadowedMembers).
	f.Add(bytes.Replace(data, []byte(`"verdict":"HALLUCINATED"`), []byte(`"verdict":"READ_VERIFIED","Verdict":"HALLUCINATED"`), 1), vectorParent)
	f.Fuzz(func(t *testing.T, data []byte, parent string) {
		r, err := decodeVerdicts("r1", data)
		if err != nil {
			return
		}
		if CheckVerdictMAC(r, gitstore.OID(parent), keys) == nil && !bytes.Equal(VerdictMACInput(r, parent), want) {
			t.Fatalf("accepted a record that is not the sealed one: %s", data)
		}
	})
}

// TestVerdictMACDocAbsentMembers: docs/PROBE_PROTOCOL.md §10.6 says how each
// optional member the record leaves out enters the MAC input, as the code
// writes it: an auditor recomputing a MAC from the text alone must get the
// same bytes (a clock_override left out is "false", not "").
func TestVerdictMACDocAbsentMembers(t *testing.T) {
	t.Parallel()
	rec := vectorRecord() // no clock_override; entry 1 has no age_seconds, adjudicated_verdict or adjudicated_at
	in := VerdictMACInput(rec, vectorParent)
	var fields []string
	for len(in) > 0 {
		n := int(in[0])<<24 | int(in[1])<<16 | int(in[2])<<8 | int(in[3])
		fields = append(fields, string(in[4:4+n]))
		in = in[4+n:]
	}
	const entry1 = 10 + 12 // label, parent, eight record fields; then 12 per entry
	if len(fields) != entry1+12 {
		t.Fatalf("%d fields, want %d", len(fields), entry1+12)
	}
	age, verdict, at := fields[entry1+6], fields[entry1+10], fields[entry1+11]
	if age != verdict || age != at {
		t.Fatalf("absent age_seconds %q, adjudicated_verdict %q, adjudicated_at %q: the doc's one sentence no longer fits", age, verdict, at)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "PROBE_PROTOCOL.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	for _, want := range []string{
		"An absent `clock_override` is `" + fields[6] + "`",
		"an absent `age_seconds`, `adjudicated_verdict` or `adjudicated_at` is `\"" + age + "\"`",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("docs/PROBE_PROTOCOL.md §10.6 does not say %q, which is what VerdictMACInput writes", want)
		}
	}
}
