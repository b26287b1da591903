package receipts

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testsize"
)

func testKey(t testing.TB, seed byte) Key {
	t.Helper()
	k, err := NewKey(bytes.Repeat([]byte{seed}, KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func intp(v int) *int { return &v }

func sampleReceipt(t testing.TB, key Key) Receipt {
	t.Helper()
	start := time.Date(2026, 11, 29, 20, 0, 0, 123456789, time.UTC)
	r := Receipt{
		ID: NewID(), Session: "sess-1", Run: "run-1", Tool: "exec",
		ArgsSHA256: ArgvArgs([]string{"go", "test"}).SHA256(), ResultSHA256: CommandResult([]byte("ok\n"), nil, 0, "").SHA256(),
		Start: start, End: start.Add(1500 * time.Millisecond), ExitCode: intp(0),
	}
	r, err := key.Seal(r)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestNewIDFormat(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 2000; i++ {
		id := NewID()
		if !ValidID(id) {
			t.Fatalf("NewID() = %q is not a valid id", id)
		}
		if seen[id] {
			t.Fatalf("NewID() repeated %q", id)
		}
		seen[id] = true
	}
	// All 32 digits appear in every position over many ids (no stuck bits).
	for pos := len(IDPrefix); pos < IDLen; pos++ {
		digits := map[byte]bool{}
		for id := range seen {
			digits[id[pos]] = true
		}
		if len(digits) != 32 {
			t.Errorf("position %d uses %d of 32 digits", pos, len(digits))
		}
	}
}

func TestIDFromKnownBytes(t *testing.T) {
	// 20 zero bytes -> 32 zeros; 20 0xff bytes -> 32 'z'; 0x08 then zeros
	// puts 00001 in the first digit.
	cases := map[string]string{
		strings.Repeat("\x00", 20):          "rcpt_" + strings.Repeat("0", 32),
		strings.Repeat("\xff", 20):          "rcpt_" + strings.Repeat("z", 32),
		"\x08" + strings.Repeat("\x00", 19): "rcpt_1" + strings.Repeat("0", 31),
	}
	for in, want := range cases {
		got, err := newIDFrom(strings.NewReader(in))
		if err != nil || got != want {
			t.Errorf("newIDFrom(%x) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := newIDFrom(strings.NewReader("short")); err == nil {
		t.Error("newIDFrom accepted 5 bytes of randomness")
	}
}

func TestValidID(t *testing.T) {
	good := "rcpt_" + "0123456789abcdefghjkmnpqrstvwxyz"
	if !ValidID(good) {
		t.Fatalf("ValidID(%q) = false", good)
	}
	for _, bad := range []string{
		"", "rcpt_", good[:len(good)-1], good + "0", "RCPT_" + good[5:], "rcpt-" + good[5:],
		"rcpt_" + strings.Repeat("i", 32), "rcpt_" + strings.Repeat("l", 32), "rcpt_" + strings.Repeat("o", 32),
		"rcpt_" + strings.Repeat("u", 32), "rcpt_" + strings.Repeat("A", 32), "rcpt_" + strings.Repeat("_", 32),
	} {
		if ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	key := testKey(t, 1)
	r := sampleReceipt(t, key)
	for _, mod := range []func(*Receipt){
		func(*Receipt) {},
		func(r *Receipt) { r.Run = "" },
		func(r *Receipt) { r.ExitCode = nil },
		func(r *Receipt) { r.ExitCode, r.Signal = intp(137), "SIGKILL" },
		func(r *Receipt) {
			r.ExitCode, r.Error = intp(127), `exec: "nope": executable file not found in $PATH <&>`
		},
		func(r *Receipt) { r.ExitCode = intp(-1) },
		func(r *Receipt) { r.Tool = "mcp:github/search é" },
		func(r *Receipt) { r.Caller = "ci-bot" },
	} {
		c := r
		mod(&c)
		c, err := key.Seal(c)
		if err != nil {
			t.Fatal(err)
		}
		enc := c.Encode()
		if !bytes.HasSuffix(enc, []byte("}\n")) || bytes.Count(enc, []byte("\n")) != 1 {
			t.Errorf("Encode is not one line ending in a newline: %q", enc)
		}
		d, err := DecodeReceipt(enc)
		if err != nil {
			t.Fatalf("DecodeReceipt(%s): %v", enc, err)
		}
		if !d.Equal(c) || !bytes.Equal(d.Encode(), enc) {
			t.Errorf("round trip changed the receipt:\n%s\n%s", enc, d.Encode())
		}
		if err := Verify(d, key); err != nil {
			t.Errorf("Verify after round trip: %v", err)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	key := testKey(t, 1)
	good := string(sampleReceipt(t, key).Encode())
	macAt := strings.Index(good, `"mac":"`) + len(`"mac":"`)
	for name, in := range map[string]string{
		"empty":          "",
		"not json":       "hello",
		"trailing":       good + "{}",
		"unknown member": strings.Replace(good, `{"v":1,`, `{"v":1,"extra":true,`, 1),
		"version 3":      strings.Replace(good, `{"v":1,`, `{"v":3,`, 1),
		"v1 bound":       strings.Replace(good, `,"mac"`, `,"run_manifest":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","mac"`, 1),
		"v1 started":     strings.Replace(good, `,"mac"`, `,"run_started":"2026-11-29T20:00:00.000000000Z","mac"`, 1),
		"v2 both":        strings.Replace(strings.Replace(good, `{"v":1,`, `{"v":2,`, 1), `,"mac"`, `,"run_manifest":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","run_started":"2026-11-29T20:00:00.000000000Z","mac"`, 1),
		"v2 short oid":   strings.Replace(strings.Replace(good, `{"v":1,`, `{"v":2,`, 1), `,"mac"`, `,"run_manifest":"4b825dc6","mac"`, 1),
		"v2 bad start":   strings.Replace(strings.Replace(good, `{"v":1,`, `{"v":2,`, 1), `,"mac"`, `,"run_started":"2026-11-29T20:00:00Z","mac"`, 1),
		"v2 Run_Started": strings.Replace(strings.Replace(good, `{"v":1,`, `{"v":2,`, 1), `,"mac"`, `,"Run_Started":"2026-11-29T20:00:00.000000000Z","mac"`, 1),
		"no mac":         good[:strings.Index(good, `,"mac"`)] + "}",
		"no args":        strings.Replace(good, `"args_sha256"`, `"_x"`, 1),
		"upper hex":      good[:macAt] + "A" + good[macAt+1:],
		"short mac":      good[:macAt] + good[macAt+1:],
		"short time":     strings.Replace(good, ".123456789Z", ".12Z", 1),
		"offset time":    strings.Replace(good, ".123456789Z", ".123456789+01:00", 1),
		"bad session":    strings.Replace(good, `"sess-1"`, `"../x"`, 1),
		"bad id":         strings.Replace(good, `"rcpt_`, `"rcpX_`, 1),
		"end before":     strings.Replace(good, `"start":"2026`, `"start":"2027`, 1),
		"control char":   strings.Replace(good, `"tool":"exec"`, `"tool":"ex\u0007ec"`, 1),
		"huge":           good[:len(good)-2] + strings.Repeat(" ", MaxEncodedLen) + "}",
	} {
		if _, err := DecodeReceipt([]byte(in)); err == nil {
			t.Errorf("%s: DecodeReceipt accepted %q", name, truncate(in, 200))
		} else if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v does not wrap ErrInvalid", name, err)
		}
	}
}

func TestVerifyClassifies(t *testing.T) {
	key, other := testKey(t, 1), testKey(t, 2)
	r := sampleReceipt(t, key)
	if err := Verify(r, key); err != nil {
		t.Fatalf("Verify(genuine) = %v", err)
	}
	if err := Verify(r, other); !errors.Is(err, ErrUnknownKey) || errors.Is(err, ErrTampered) {
		t.Errorf("Verify under another key = %v, want ErrUnknownKey", err)
	}
	edits := map[string]func(*Receipt){
		"id":       func(r *Receipt) { r.ID = NewID() },
		"session":  func(r *Receipt) { r.Session = "sess-2" },
		"run":      func(r *Receipt) { r.Run = "" },
		"tool":     func(r *Receipt) { r.Tool = "exec2" },
		"args":     func(r *Receipt) { r.ArgsSHA256[0] ^= 1 },
		"result":   func(r *Receipt) { r.ResultSHA256[31] ^= 0x80 },
		"start":    func(r *Receipt) { r.Start = r.Start.Add(-time.Nanosecond) },
		"end":      func(r *Receipt) { r.End = r.End.Add(time.Nanosecond) },
		"exit nil": func(r *Receipt) { r.ExitCode = nil },
		"exit 1":   func(r *Receipt) { r.ExitCode = intp(1) },
		"signal":   func(r *Receipt) { r.Signal = "SIGTERM" },
		"error":    func(r *Receipt) { r.Error = "x" },
		"caller":   func(r *Receipt) { r.Caller = "mallory" },
		"mac":      func(r *Receipt) { r.MAC[5] ^= 4 },
		"invalid":  func(r *Receipt) { r.Tool = "" },
	}
	for name, edit := range edits {
		c := r
		c.ExitCode = intp(*r.ExitCode)
		edit(&c)
		if err := Verify(c, key); !errors.Is(err, ErrTampered) {
			t.Errorf("edit %s: Verify = %v, want ErrTampered", name, err)
		}
	}
	// The key id is public: editing it yields unknown key, not a pass.
	c := r
	c.KeyID = other.ID()
	if err := Verify(c, key); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("edited key id: Verify = %v, want ErrUnknownKey", err)
	}
}

func TestKeyDoesNotPrintSecret(t *testing.T) {
	k := testKey(t, 7)
	mac := k.secret.mac
	leaks := func(s string) bool {
		return strings.Contains(s, fmt.Sprintf("%x", mac[:4])) || strings.Contains(s, fmt.Sprint(mac[:4])[1:8]) ||
			strings.Contains(s, string(mac[:4]))
	}
	is := NewIssuer(k, nil)
	for _, s := range []string{
		fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %x %s %q", k, k, k, k, k, k),
		fmt.Sprintf("%v %+v %#v", is, is, is), fmt.Sprintf("%+v", []Key{k}), fmt.Sprintf("%+v", struct{ K Key }{k}),
	} {
		if leaks(s) {
			t.Errorf("printing leaks the MAC key: %s", s)
		}
	}
	if !strings.Contains(fmt.Sprint(k), k.ID()) {
		t.Errorf("a printed key %q does not show its id", fmt.Sprint(k))
	}
	if len(k.ID()) != 16 || !validKeyID(k.ID()) {
		t.Errorf("key id %q is not 16 hex digits", k.ID())
	}
	if testKey(t, 8).ID() == k.ID() {
		t.Error("two keys share a key id")
	}
}

// decodeMACInput is a test-only parser of the MAC input. That it recovers
// every field from the bytes alone is the proof that the encoding is
// injective: equal encodings give equal parses, hence equal tuples.
//
// Twelve fields always, then the caller (field 13) only when bytes remain; an
// encoder never writes an empty caller, so a present one is never empty.
func decodeMACInput(b []byte) (fields [13][]byte, err error) {
	if len(b) == 0 || b[0] != Version {
		return fields, errors.New("bad version byte")
	}
	b = b[1:]
	for i := range fields {
		if i == 12 && len(b) == 0 {
			break
		}
		if len(b) < 4 {
			return fields, fmt.Errorf("field %d: short length", i)
		}
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint32(len(b)) < n {
			return fields, fmt.Errorf("field %d: short data", i)
		}
		fields[i], b = b[:n], b[n:]
	}
	if len(b) != 0 {
		return fields, errors.New("trailing bytes")
	}
	if fields[12] != nil && len(fields[12]) == 0 {
		return fields, errors.New("an empty caller is written as no field")
	}
	return fields, nil
}

func tupleOf(r Receipt) [13][]byte {
	exit := []byte(nil)
	if r.ExitCode != nil {
		exit = binary.BigEndian.AppendUint32(nil, uint32(int32(*r.ExitCode)))
	}
	var caller []byte
	if r.Caller != "" {
		caller = []byte(r.Caller)
	}
	return [13][]byte{
		[]byte(r.ID), []byte(r.Session), []byte(r.Run), []byte(r.Tool),
		r.ArgsSHA256[:], r.ResultSHA256[:],
		binary.BigEndian.AppendUint64(nil, uint64(r.Start.UnixNano())),
		binary.BigEndian.AppendUint64(nil, uint64(r.End.UnixNano())),
		exit, []byte(r.Signal), []byte(r.Error), []byte(r.KeyID), caller,
	}
}

func sameTuple(a, b [13][]byte) bool {
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// randomReceipt draws field values from a small alphabet so that adjacent
// fields often share bytes, which is where a weak framing would collide.
func randomReceipt(rng *rand.Rand) Receipt {
	str := func(max int) string {
		n := rng.IntN(max + 1)
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab0\x00\x01"[rng.IntN(5)]
		}
		return string(b)
	}
	var r Receipt
	r.ID, r.Session, r.Run, r.Tool = str(4), str(4), str(4), str(4)
	if rng.IntN(3) == 0 {
		r.Run = ""
	}
	r.ArgsSHA256[rng.IntN(32)] = byte(rng.IntN(3))
	r.ResultSHA256[rng.IntN(32)] = byte(rng.IntN(3))
	r.Start = time.Unix(0, int64(rng.IntN(5))-2)
	r.End = time.Unix(0, int64(rng.IntN(5))-2)
	if rng.IntN(2) == 0 {
		r.ExitCode = intp(rng.IntN(3) - 1)
	}
	r.Signal, r.Error, r.KeyID = str(3), str(3), str(3)
	if rng.IntN(2) == 0 {
		r.Caller = str(3)
	}
	return r
}

func TestMACInputInjective(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	byEncoding := map[string][13][]byte{}
	n := testsize.Pick(t, 50000, 200000)
	for i := 0; i < n; i++ {
		r := randomReceipt(rng)
		enc := r.macInput()
		want := tupleOf(r)
		got, err := decodeMACInput(enc)
		if err != nil || !sameTuple(got, want) {
			t.Fatalf("encoding of %+v does not parse back: %v", r, err)
		}
		if prev, ok := byEncoding[string(enc)]; ok && !sameTuple(prev, want) {
			t.Fatalf("two tuples encode alike:\n%q\n%q", prev, want)
		}
		byEncoding[string(enc)] = want
	}
	if len(byEncoding) < n/2 { // at least half the receipts encode differently
		t.Fatalf("only %d distinct encodings: the generator is too narrow to mean anything", len(byEncoding))
	}
}

func TestMACInputBoundaries(t *testing.T) {
	key := testKey(t, 3)
	base := sampleReceipt(t, key)
	type variant struct {
		name string
		edit func(*Receipt)
	}
	// Pairs that a naive concatenation (no lengths, or a separator that can
	// occur in the data) would encode alike.
	variants := []variant{
		{"base (exit 0)", func(*Receipt) {}},
		{"run empty", func(r *Receipt) { r.Run = "" }},
		{"shift run->session", func(r *Receipt) { r.Session, r.Run = "sess-1r", "un-1" }},
		{"shift session->run", func(r *Receipt) { r.Session, r.Run = "sess-", "1run-1" }},
		{"shift run->tool", func(r *Receipt) { r.Run, r.Tool = "run-1e", "xec" }},
		{"shift tool->run", func(r *Receipt) { r.Run, r.Tool = "run-", "1exec" }},
		{"exit absent", func(r *Receipt) { r.ExitCode = nil }},
		{"exit 256", func(r *Receipt) { r.ExitCode = intp(256) }},
		{"exit absent, signal 4 zero bytes", func(r *Receipt) { r.ExitCode, r.Signal = nil, "\x00\x00\x00\x00" }},
		{"signal empty, error x", func(r *Receipt) { r.Signal, r.Error = "", "x" }},
		{"signal x, error empty", func(r *Receipt) { r.Signal, r.Error = "x", "" }},
		{"error to key id", func(r *Receipt) { r.Error, r.KeyID = r.KeyID[:1], r.KeyID[1:] }},
		{"start/end swapped", func(r *Receipt) { r.Start, r.End = r.End, r.Start }},
		{"exit -1", func(r *Receipt) { r.ExitCode = intp(-1) }},
		{"exit max", func(r *Receipt) { r.ExitCode = intp(math.MaxInt32) }},
		{"exit min", func(r *Receipt) { r.ExitCode = intp(math.MinInt32) }},
		{"signal with length bytes", func(r *Receipt) { r.Signal = "\x00\x00\x00\x01" }},
		{"caller", func(r *Receipt) { r.Caller = "agent-7" }},
		{"caller a", func(r *Receipt) { r.Caller = "a" }},
	}
	seen := map[string]string{}
	for _, v := range variants {
		r := base
		v.edit(&r)
		enc := string(r.macInput())
		if prev, ok := seen[enc]; ok {
			t.Errorf("variants %q and %q encode alike", prev, v.name)
		}
		seen[enc] = v.name
		if f, err := decodeMACInput([]byte(enc)); err != nil || !sameTuple(f, tupleOf(r)) {
			t.Errorf("variant %q does not parse back: %v", v.name, err)
		}
	}
}

// TestCallerIsCoveredAndOptional: a receipt with a caller carries it in its
// JSON and under its MAC (changing or dropping it is tampering); a receipt
// without one encodes exactly as before the field existed.
func TestCallerIsCoveredAndOptional(t *testing.T) {
	key := testKey(t, 1)
	r := sampleReceipt(t, key)
	if bytes.Contains(r.Encode(), []byte(`"caller"`)) {
		t.Fatalf("a receipt without a caller names one: %s", r.Encode())
	}
	c := r
	c.Caller = "agent-7"
	c, err := key.Seal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(c.Encode(), []byte(`"caller":"agent-7","mac"`)) {
		t.Fatalf("caller not stored before the mac: %s", c.Encode())
	}
	dropped := c
	dropped.Caller = ""
	if err := Verify(dropped, key); !errors.Is(err, ErrTampered) {
		t.Fatalf("dropping the caller: %v", err)
	}
	bad := c
	bad.Caller = "a b"
	if _, err := key.Seal(bad); err == nil {
		t.Fatal("a caller with a space was sealed")
	}
}
