package receipts_test

// The test vectors in testdata/vectors are checked twice: by the package
// (issuing the same receipt from the same inputs) and by an independent
// implementation written from docs/receipts.md alone, below, which uses
// none of the package's encoders (only its Canonicalize for the JSON
// canonical form, whose output the vector pins).

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/hkdf"

	"github.com/readproof/readproof/receipts"
)

var updateVectors = flag.Bool("update-vectors", false, "rewrite the expectations in testdata/vectors from the package")

type vectorArgs struct {
	Kind      string   `json:"kind"` // "argv" or "json"
	Argv      []string `json:"argv,omitempty"`
	JSON      string   `json:"json,omitempty"`
	Canonical string   `json:"canonical,omitempty"`
}

type vectorResult struct {
	Kind      string `json:"kind"` // "command" or "bytes"
	StdoutHex string `json:"stdout_hex,omitempty"`
	StderrHex string `json:"stderr_hex,omitempty"`
	ExitCode  int    `json:"exit_code,omitempty"`
	Signal    string `json:"signal,omitempty"`
	BytesHex  string `json:"bytes_hex,omitempty"`
}

type vectorExpect struct {
	MACKey       string `json:"mac_key"`
	KeyID        string `json:"key_id"`
	ID           string `json:"id"`
	ArgsSHA256   string `json:"args_sha256"`
	ResultSHA256 string `json:"result_sha256"`
	MACInput     string `json:"mac_input"`
	MAC          string `json:"mac"`
	Receipt      string `json:"receipt"`
}

type vector struct {
	Comment       string       `json:"comment"`
	KeyFile       string       `json:"key_file"`
	IDRandom      string       `json:"id_random"`
	Session       string       `json:"session"`
	Run           string       `json:"run"`
	Tool          string       `json:"tool"`
	Args          vectorArgs   `json:"args"`
	Result        vectorResult `json:"result"`
	Error         string       `json:"error"`
	StartUnixNano int64        `json:"start_unix_nano"`
	EndUnixNano   int64        `json:"end_unix_nano"`
	Caller        string       `json:"caller,omitempty"`
	// Format 2 (testdata/vectors2) adds the binding; absent is version 1
	// (testdata/vectors, issued before session 24).
	Format             int          `json:"format,omitempty"`
	RunManifest        string       `json:"run_manifest,omitempty"`
	RunStartedUnixNano int64        `json:"run_started_unix_nano,omitempty"`
	Expect             vectorExpect `json:"expect"`
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("hex %q: %v", s, err)
	}
	return b
}

// issueFromPackage issues the vector's receipt with the package.
func issueFromPackage(t *testing.T, v vector) (receipts.Key, receipts.Receipt) {
	t.Helper()
	key, err := receipts.NewKey(mustHex(t, v.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	var args receipts.Args
	if v.Args.Kind == "argv" {
		args = receipts.ArgvArgs(v.Args.Argv)
	} else if args, err = receipts.JSONArgs([]byte(v.Args.JSON)); err != nil {
		t.Fatal(err)
	}
	var res receipts.Result
	switch v.Result.Kind {
	case "command":
		res = receipts.CommandResult(mustHex(t, v.Result.StdoutHex), mustHex(t, v.Result.StderrHex), v.Result.ExitCode, v.Result.Signal)
	case "bytes":
		res = receipts.BytesResult(mustHex(t, v.Result.BytesHex))
	default:
		t.Fatalf("result kind %q", v.Result.Kind)
	}
	if v.Error != "" {
		res = res.WithError(v.Error)
	}
	is := receipts.NewIssuer(key, nil)
	is.Rand = bytes.NewReader(mustHex(t, v.IDRandom))
	bound := receipts.Binding{Manifest: v.RunManifest}
	if v.RunStartedUnixNano != 0 {
		bound.RunStarted = time.Unix(0, v.RunStartedUnixNano)
	}
	r, err := is.Issue(t.Context(), receipts.Call{
		Session: v.Session, Run: v.Run, Tool: v.Tool, Args: args, Result: res,
		Start: time.Unix(0, v.StartUnixNano), End: time.Unix(0, v.EndUnixNano), Caller: v.Caller,
		Bound: bound,
	})
	if err != nil {
		t.Fatal(err)
	}
	if v.Format == 0 {
		// a version 1 vector: the same receipt sealed as a readproof
		// before session 24 sealed it
		r.Format, r.Bound = receipts.Version, receipts.Binding{}
		if r, err = key.Seal(r); err != nil {
			t.Fatal(err)
		}
	} else if r.Format != v.Format {
		t.Fatalf("issued format %d, vector format %d", r.Format, v.Format)
	}
	return key, r
}

func TestVectors(t *testing.T) {
	files, err := filepath.Glob("testdata/vectors/*.json")
	if err != nil || len(files) < 6 {
		t.Fatalf("want at least 6 vector files, found %d (%v)", len(files), err)
	}
	files2, err := filepath.Glob("testdata/vectors2/*.json")
	if err != nil || len(files2) < 3 {
		t.Fatalf("want at least 3 version 2 vector files, found %d (%v)", len(files2), err)
	}
	for _, file := range append(files, files2...) {
		t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var v vector
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			key, r := issueFromPackage(t, v)
			if *updateVectors {
				v.Expect = vectorExpect{
					KeyID: key.ID(), ID: r.ID, ArgsSHA256: r.ArgsSHA256.String(), ResultSHA256: r.ResultSHA256.String(),
					MAC: r.MAC.String(), Receipt: strings.TrimSuffix(string(r.Encode()), "\n"),
				}
				ind := independent(t, v)
				v.Expect.MACKey, v.Expect.MACInput = ind.MACKey, ind.MACInput
				out, _ := json.MarshalIndent(v, "", "  ")
				if err := os.WriteFile(file, append(out, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			// The package reproduces the vector.
			e := v.Expect
			if key.ID() != e.KeyID || r.ID != e.ID || r.ArgsSHA256.String() != e.ArgsSHA256 ||
				r.ResultSHA256.String() != e.ResultSHA256 || r.MAC.String() != e.MAC {
				t.Errorf("package: key id %s id %s args %s result %s mac %s\nvector:  %+v", key.ID(), r.ID, r.ArgsSHA256, r.ResultSHA256, r.MAC, e)
			}
			if got := strings.TrimSuffix(string(r.Encode()), "\n"); got != e.Receipt {
				t.Errorf("package receipt JSON\n got %s\nwant %s", got, e.Receipt)
			}
			stored, err := receipts.DecodeReceipt([]byte(e.Receipt + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			if err := receipts.Verify(stored, key); err != nil {
				t.Errorf("Verify(vector receipt): %v", err)
			}
			// The independent implementation reproduces it too.
			ind := independent(t, v)
			for _, c := range [][3]string{
				{"mac key", ind.MACKey, e.MACKey}, {"key id", ind.KeyID, e.KeyID}, {"id", ind.ID, e.ID},
				{"args", ind.ArgsSHA256, e.ArgsSHA256}, {"result", ind.ResultSHA256, e.ResultSHA256},
				{"mac input", ind.MACInput, e.MACInput}, {"mac", ind.MAC, e.MAC}, {"receipt", ind.Receipt, e.Receipt},
			} {
				if c[1] != c[2] {
					t.Errorf("independent %s\n got %s\nwant %s", c[0], c[1], c[2])
				}
			}
		})
	}
}

// --- independent implementation, from docs/receipts.md ---

func frame(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = binary.BigEndian.AppendUint32(out, uint32(len(p)))
		out = append(out, p...)
	}
	return out
}

func sum(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

func hkdfBytes(t *testing.T, ikm []byte, info string, n int) []byte {
	out := make([]byte, n)
	if _, err := io.ReadFull(hkdf.New(sha256.New, ikm, []byte("readproof receipts v1"), []byte(info)), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// jsonString writes a receipt string member the way the document says:
// '"' and '\' escaped, U+2028 and U+2029 as \u2028 and \u2029, everything
// else (valid UTF-8 without control characters) as is.
func jsonString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\u2028", `\u2028`, "\u2029", `\u2029`)
	return `"` + r.Replace(s) + `"`
}

func independent(t *testing.T, v vector) vectorExpect {
	t.Helper()
	ikm := mustHex(t, v.KeyFile)
	macKey := hkdfBytes(t, ikm, "receipt mac key", 32)
	keyID := hex.EncodeToString(hkdfBytes(t, ikm, "receipt key id", 8))

	enc := base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)
	id := "rcpt_" + enc.EncodeToString(mustHex(t, v.IDRandom))

	var argsSum []byte
	if v.Args.Kind == "argv" {
		parts := [][]byte{[]byte("readproof receipt args argv v1")}
		for _, a := range v.Args.Argv {
			parts = append(parts, []byte(a))
		}
		argsSum = sum(frame(parts...))
	} else {
		canon, err := receipts.Canonicalize([]byte(v.Args.JSON))
		if err != nil || string(canon) != v.Args.Canonical {
			t.Errorf("canonical form of %q is %q (%v), vector says %q", v.Args.JSON, canon, err, v.Args.Canonical)
		}
		argsSum = sum(frame([]byte("readproof receipt args json v1"), []byte(v.Args.Canonical)))
	}

	var resultSum []byte
	var exit []byte
	signal := ""
	switch v.Result.Kind {
	case "command":
		exit = binary.BigEndian.AppendUint32(nil, uint32(int32(v.Result.ExitCode)))
		signal = v.Result.Signal
		resultSum = sum(frame([]byte("readproof receipt result command v1"),
			sum(mustHex(t, v.Result.StdoutHex)), sum(mustHex(t, v.Result.StderrHex)), exit))
	case "bytes":
		resultSum = sum(frame([]byte("readproof receipt result bytes v1"), sum(mustHex(t, v.Result.BytesHex))))
	}

	i64 := func(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }
	version := byte(1)
	if v.Format == 2 {
		version = 2
	}
	input := append([]byte{version}, frame(
		[]byte(id), []byte(v.Session), []byte(v.Run), []byte(v.Tool),
		argsSum, resultSum, i64(v.StartUnixNano), i64(v.EndUnixNano),
		exit, []byte(signal), []byte(v.Error), []byte(keyID),
	)...)
	switch {
	case version == 2: // fields 13 to 15, always
		var started []byte
		if v.RunStartedUnixNano != 0 {
			started = i64(v.RunStartedUnixNano)
		}
		input = append(input, frame([]byte(v.Caller), []byte(v.RunManifest), started)...)
	case v.Caller != "": // field 13, only when present
		input = append(input, frame([]byte(v.Caller))...)
	}
	m := hmac.New(sha256.New, macKey)
	m.Write(input)
	mac := hex.EncodeToString(m.Sum(nil))

	ts := func(n int64) string { return time.Unix(0, n).UTC().Format("2006-01-02T15:04:05.000000000Z") }
	var j strings.Builder
	j.WriteString(`{"v":` + strconv.Itoa(int(version)) + `,"id":` + jsonString(id) + `,"session":` + jsonString(v.Session))
	if v.Run != "" {
		j.WriteString(`,"run":` + jsonString(v.Run))
	}
	j.WriteString(`,"tool":` + jsonString(v.Tool))
	j.WriteString(`,"args_sha256":"` + hex.EncodeToString(argsSum) + `","result_sha256":"` + hex.EncodeToString(resultSum) + `"`)
	j.WriteString(`,"start":"` + ts(v.StartUnixNano) + `","end":"` + ts(v.EndUnixNano) + `"`)
	if exit != nil {
		j.WriteString(`,"exit_code":` + strconv.Itoa(v.Result.ExitCode))
	}
	if signal != "" {
		j.WriteString(`,"signal":` + jsonString(signal))
	}
	if v.Error != "" {
		j.WriteString(`,"error":` + jsonString(v.Error))
	}
	j.WriteString(`,"key_id":"` + keyID + `"`)
	if v.Caller != "" {
		j.WriteString(`,"caller":` + jsonString(v.Caller))
	}
	if v.RunManifest != "" {
		j.WriteString(`,"run_manifest":"` + v.RunManifest + `"`)
	}
	if v.RunStartedUnixNano != 0 {
		j.WriteString(`,"run_started":"` + ts(v.RunStartedUnixNano) + `"`)
	}
	j.WriteString(`,"mac":"` + mac + `"}`)

	return vectorExpect{
		MACKey: hex.EncodeToString(macKey), KeyID: keyID, ID: id,
		ArgsSHA256: hex.EncodeToString(argsSum), ResultSHA256: hex.EncodeToString(resultSum),
		MACInput: hex.EncodeToString(input), MAC: mac, Receipt: j.String(),
	}
}

// TestVectors2InDocs: docs/receipts.md ("Version 2") publishes the MAC of
// every version 2 vector, and the vectors reproduce it.
func TestVectors2InDocs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "receipts.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/vectors2/*.json")
	if err != nil || len(files) < 3 {
		t.Fatalf("want at least 3 version 2 vector files, found %d (%v)", len(files), err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var v vector
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		name := "vectors2/" + strings.TrimSuffix(filepath.Base(file), ".json")
		if !bytes.Contains(doc, []byte("`"+name+"`")) || !bytes.Contains(doc, []byte("`"+v.Expect.MAC+"`")) {
			t.Errorf("docs/receipts.md does not publish vector %s with its MAC %s", name, v.Expect.MAC)
		}
		if got := independent(t, v).MAC; got != v.Expect.MAC {
			t.Errorf("%s: recomputed MAC %s, published %s", name, got, v.Expect.MAC)
		}
	}
}
