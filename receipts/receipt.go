package receipts

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/strictjson"
	"github.com/readproof/readproof/internal/text"
)

// Version is receipt format version 1: the first byte of the MAC input and
// the "v" member of the stored JSON of a receipt issued before session 24.
const Version = 1

// BoundVersion is receipt format version 2, the one Issue writes: version 1
// plus the receipt's binding (run_manifest, run_started) under its MAC
// (docs/receipts.md, "Version 2").
const BoundVersion = 2

// IDPrefix starts every receipt id.
const IDPrefix = "rcpt_"

// idAlphabet is Crockford's base32 alphabet in lower case: no i, l, o, u.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// idRandomBytes is the entropy of an id: 160 bits, exactly 32 base32 digits.
const idRandomBytes = 20

// IDLen is the length of a receipt id: the prefix and 32 base32 digits.
const IDLen = len(IDPrefix) + idRandomBytes*8/5

// Field limits. They keep receipts small and the MAC input unambiguous to
// print; the encoding itself would be injective without them.
const (
	MaxToolLen   = 128
	MaxSignalLen = 32
	MaxErrorLen  = 1024
)

var (
	// ErrInvalid is wrapped when a receipt, a call or an id breaks the format.
	ErrInvalid = errors.New("invalid receipt")
	// ErrTampered means a receipt's MAC does not match its fields under the
	// key it names: it was altered after it was issued.
	ErrTampered = errors.New("receipt MAC mismatch (tampered)")
	// ErrUnknownKey means a receipt was issued under a key other than the one
	// supplied (typically a rotated key); it can be neither confirmed nor
	// refuted.
	ErrUnknownKey = errors.New("receipt issued under an unknown key")
)

// Digest is a SHA-256 digest. It prints and marshals as 64 lower-case hex
// digits.
type Digest [32]byte

func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// MarshalText implements encoding.TextMarshaler.
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText accepts exactly 64 lower-case hex digits.
func (d *Digest) UnmarshalText(b []byte) error {
	if len(b) != 64 {
		return fmt.Errorf("digest %q: want 64 hex digits", truncate(string(b), 80))
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return fmt.Errorf("digest %q: want lower-case hex digits", truncate(string(b), 80))
		}
	}
	_, err := hex.Decode(d[:], b)
	return err
}

// Receipt is one issued receipt. Every field except MAC is covered by the
// MAC; see docs/receipts.md for the encoding.
type Receipt struct {
	ID      string
	Session string
	// Run is the run id the call belongs to, or "" for none.
	Run  string
	Tool string
	// ArgsSHA256 is the hash of the canonical arguments (see [Args]).
	ArgsSHA256 Digest
	// ResultSHA256 is the hash of the result (see [Result]).
	ResultSHA256 Digest
	// Start and End are when the call ran, in UTC with nanoseconds.
	Start, End time.Time
	// ExitCode is set for commands: the exit status, or 128+signal number
	// for a process killed by a signal.
	ExitCode *int
	// Signal names the signal that killed a command ("SIGKILL"), or "".
	Signal string
	// Error records why a call failed outside its result, for example a
	// command that could not be started; "" when none.
	Error string
	// KeyID is the public fingerprint of the key that made MAC.
	KeyID string
	// Caller names who made the call through an authenticated front end
	// (the MCP token's name, identity.ValidateCaller), or "".
	Caller string
	// Format is the format version: 0 or Version for version 1, or
	// BoundVersion. Only a BoundVersion receipt has Bound, and its MAC
	// covers it.
	Format int
	// Bound is the run the call was made for (a BoundVersion receipt's
	// run_manifest or run_started); zero for an unbound receipt and for
	// every version 1 receipt, whose binding is its append commit's line.
	Bound Binding
	MAC   Digest
}

// FormatVersion is the format version r is encoded with: Version (1), or
// BoundVersion (2) for a receipt whose MAC covers its binding.
func (r Receipt) FormatVersion() int { return r.version() }

// version is the format version r is encoded with.
func (r Receipt) version() int {
	if r.Format == 0 {
		return Version
	}
	return r.Format
}

// NewID returns a fresh receipt id with 160 bits from crypto/rand.
func NewID() string {
	id, err := newIDFrom(rand.Reader)
	if err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return id
}

func newIDFrom(r io.Reader) (string, error) {
	var b [idRandomBytes]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("reading randomness for a receipt id: %w", err)
	}
	out := make([]byte, 0, IDLen)
	out = append(out, IDPrefix...)
	// 160 bits = 32 groups of 5, most significant first.
	var acc uint64
	bits := 0
	for _, c := range b {
		acc = acc<<8 | uint64(c)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out = append(out, idAlphabet[(acc>>uint(bits))&31])
		}
	}
	return string(out), nil
}

// ValidID reports whether s is a well-formed receipt id: "rcpt_" followed by
// 32 characters of 0-9 and a-z without i, l, o and u.
func ValidID(s string) bool {
	if len(s) != IDLen || !strings.HasPrefix(s, IDPrefix) {
		return false
	}
	for i := len(IDPrefix); i < len(s); i++ {
		if strings.IndexByte(idAlphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}

// Validate checks every field against the format (not the MAC).
func (r Receipt) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: receipt %q: %s", ErrInvalid, truncate(r.ID, 80), fmt.Sprintf(format, a...))
	}
	if !ValidID(r.ID) {
		return bad("id must be %s followed by 32 base32 digits (0-9, a-z without i, l, o, u)", IDPrefix)
	}
	if err := identity.ValidateSessionID(r.Session); err != nil {
		return bad("%v", err)
	}
	if r.Run != "" {
		if err := identity.ValidateRunID(r.Run); err != nil {
			return bad("%v", err)
		}
	}
	if err := validateTool(r.Tool); err != nil {
		return bad("%v", err)
	}
	if err := validTime(r.Start); err != nil {
		return bad("start: %v", err)
	}
	if err := validTime(r.End); err != nil {
		return bad("end: %v", err)
	}
	if r.End.Before(r.Start) {
		return bad("end %s is before start %s", formatTime(r.End), formatTime(r.Start))
	}
	if r.ExitCode != nil && (*r.ExitCode < math.MinInt32 || *r.ExitCode > math.MaxInt32) {
		return bad("exit code %d out of the int32 range", *r.ExitCode)
	}
	if err := validText("signal", r.Signal, MaxSignalLen); err != nil {
		return bad("%v", err)
	}
	if err := validText("error", r.Error, MaxErrorLen); err != nil {
		return bad("%v", err)
	}
	if !validKeyID(r.KeyID) {
		return bad("key id must be %d lower-case hex digits", keyIDLen)
	}
	if r.Caller != "" {
		if err := identity.ValidateCaller(r.Caller); err != nil {
			return bad("%v", err)
		}
	}
	switch r.version() {
	case Version:
		if !r.Bound.IsZero() {
			return bad("a version %d receipt carries no binding (version %d does)", Version, BoundVersion)
		}
	case BoundVersion:
		if err := r.Bound.validate(r.Run); err != nil {
			return bad("%v", err)
		}
	default:
		return bad("format version %d; this readproof writes versions %d and %d", r.Format, Version, BoundVersion)
	}
	return nil
}

func validateTool(t string) error {
	if t == "" {
		return errors.New("empty tool name")
	}
	return validText("tool name", t, MaxToolLen)
}

// validText accepts valid UTF-8 without control characters, at most max bytes.
func validText(what, s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("%s longer than %d bytes", what, max)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8", what)
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			return fmt.Errorf("%s %q contains a control character", what, truncate(s, 80))
		}
	}
	return nil
}

// validTime accepts times whose Unix nanoseconds fit an int64 (1678-2262).
func validTime(t time.Time) error {
	if t.IsZero() {
		return errors.New("missing time")
	}
	if y := t.UTC().Year(); y < 1678 || y > 2262 || !time.Unix(0, t.UnixNano()).Equal(t) {
		return fmt.Errorf("time %s outside the range of int64 Unix nanoseconds", t.UTC().Format(time.RFC3339))
	}
	return nil
}

// macInput is the injective encoding the MAC covers (docs/receipts.md,
// "MAC input"): the version byte, then 12 fields, each as a 4-byte big-endian
// length followed by the bytes, and a 13th field, the caller, only when it is
// not empty (so receipts without one keep their MACs).
//
// A BoundVersion receipt's input starts with its version byte and has
// exactly 15 fields: the caller always, then run_manifest and run_started,
// each zero length when absent.
func (r Receipt) macInput() []byte {
	n := 1 + 15*4 + len(r.Caller) + len(r.ID) + len(r.Session) + len(r.Run) + len(r.Tool) + 32 + 32 + 8 + 8 + 4 +
		len(r.Signal) + len(r.Error) + len(r.KeyID) + len(r.Bound.Manifest) + 8
	b := make([]byte, 0, n)
	b = append(b, byte(r.version()))
	field := func(p []byte) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	str := func(s string) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	str(r.ID)
	str(r.Session)
	str(r.Run)
	str(r.Tool)
	field(r.ArgsSHA256[:])
	field(r.ResultSHA256[:])
	field(binary.BigEndian.AppendUint64(nil, uint64(r.Start.UnixNano())))
	field(binary.BigEndian.AppendUint64(nil, uint64(r.End.UnixNano())))
	if r.ExitCode == nil {
		field(nil)
	} else {
		field(binary.BigEndian.AppendUint32(nil, uint32(int32(*r.ExitCode))))
	}
	str(r.Signal)
	str(r.Error)
	str(r.KeyID)
	if r.version() == BoundVersion {
		str(r.Caller)
		str(r.Bound.Manifest)
		if r.Bound.RunStarted.IsZero() {
			field(nil)
		} else {
			field(binary.BigEndian.AppendUint64(nil, uint64(r.Bound.RunStarted.UnixNano())))
		}
		return b
	}
	if r.Caller != "" {
		str(r.Caller)
	}
	return b
}

// wireReceipt is the stored JSON shape. Field order is the output order.
type wireReceipt struct {
	V            int     `json:"v"`
	ID           string  `json:"id"`
	Session      string  `json:"session"`
	Run          string  `json:"run,omitempty"`
	Tool         string  `json:"tool"`
	ArgsSHA256   *Digest `json:"args_sha256"`
	ResultSHA256 *Digest `json:"result_sha256"`
	Start        string  `json:"start"`
	End          string  `json:"end"`
	ExitCode     *int    `json:"exit_code,omitempty"`
	Signal       string  `json:"signal,omitempty"`
	Error        string  `json:"error,omitempty"`
	KeyID        string  `json:"key_id"`
	Caller       string  `json:"caller,omitempty"`
	RunManifest  string  `json:"run_manifest,omitempty"`
	RunStarted   string  `json:"run_started,omitempty"`
	MAC          *Digest `json:"mac"`
}

const timeLayout = "2006-01-02T15:04:05.000000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	if len(s) != len(timeLayout) {
		return time.Time{}, fmt.Errorf("time %q: want YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ", truncate(s, 80))
	}
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q: want YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ", truncate(s, 80))
	}
	return t, nil
}

// Encode returns the canonical JSON of a receipt: the members in the order
// of docs/receipts.md, no insignificant whitespace, a final newline. It is
// the blob stored in git. Encode does not validate; Ledger.Append does.
func (r Receipt) Encode() []byte {
	mac, args, result := r.MAC, r.ArgsSHA256, r.ResultSHA256
	w := wireReceipt{
		V: r.version(), ID: r.ID, Session: r.Session, Run: r.Run, Tool: r.Tool,
		ArgsSHA256: &args, ResultSHA256: &result,
		Start: formatTime(r.Start), End: formatTime(r.End),
		ExitCode: r.ExitCode, Signal: r.Signal, Error: r.Error, KeyID: r.KeyID, Caller: r.Caller, MAC: &mac,
		RunManifest: r.Bound.Manifest,
	}
	if !r.Bound.RunStarted.IsZero() {
		w.RunStarted = formatTime(r.Bound.RunStarted)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		panic(err) // only strings, ints and digests: cannot fail
	}
	return buf.Bytes()
}

// MaxEncodedLen bounds the stored JSON of a receipt; DecodeReceipt refuses
// anything longer.
const MaxEncodedLen = 64 << 10

// DecodeReceipt parses a receipt's JSON (the form Encode writes, though
// member order and whitespace may vary) and validates its fields. Unknown
// members, a missing MAC and trailing data are refused. It does not check the
// MAC: use Verify.
func DecodeReceipt(data []byte) (Receipt, error) {
	if len(data) > MaxEncodedLen {
		return badJSON("%d bytes, more than %d", len(data), MaxEncodedLen)
	}
	if r, ok := decodeStored(data); ok {
		return r, nil
	}
	return decodeChecked(data)
}

// decodeChecked is DecodeReceipt for data of at most MaxEncodedLen bytes,
// member name by member name.
func decodeChecked(data []byte) (Receipt, error) {
	if err := checkMemberNames(data); err != nil {
		return badJSON("%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w wireReceipt
	if err := dec.Decode(&w); err != nil {
		return badJSON("%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badJSON("trailing data after the receipt object")
	}
	return w.receipt()
}

// decodeStored decodes data when it is exactly the stored JSON Encode
// writes of a receipt that validates, as every receipt readproof stores
// is: ok false otherwise, and decodeChecked, member by member, decides.
// Bytes equal to Encode's name each member once, spelt as the format
// spells it, and have nothing after the object, which decodeChecked's
// checks (strictjson.Check, most of a listing's time) would find; the
// receipt is the one it would give (FuzzDecodeStored).
func decodeStored(data []byte) (Receipt, bool) {
	if len(data) == 0 || data[0] != '{' || data[len(data)-1] != '\n' {
		return Receipt{}, false
	}
	var w wireReceipt
	if json.Unmarshal(data, &w) != nil {
		return Receipt{}, false
	}
	r, err := w.receipt()
	if err != nil || !bytes.Equal(r.Encode(), data) {
		return Receipt{}, false
	}
	return r, true
}

// receipt checks a decoded receipt's members and returns the receipt
// (DecodeReceipt's errors).
func (w wireReceipt) receipt() (Receipt, error) {
	if w.V != Version && w.V != BoundVersion {
		return badJSON("format version %d; this readproof reads versions %d and %d (upgrade readproof)", w.V, Version, BoundVersion)
	}
	if w.V == Version && (w.RunManifest != "" || w.RunStarted != "") {
		return badJSON("run_manifest and run_started are members of version %d receipts, not of version %d", BoundVersion, Version)
	}
	if w.ArgsSHA256 == nil || w.ResultSHA256 == nil || w.MAC == nil {
		return badJSON("args_sha256, result_sha256 and mac are required")
	}
	start, err := parseTime(w.Start)
	if err != nil {
		return badJSON("start: %v", err)
	}
	end, err := parseTime(w.End)
	if err != nil {
		return badJSON("end: %v", err)
	}
	r := Receipt{
		ID: w.ID, Session: w.Session, Run: w.Run, Tool: w.Tool,
		ArgsSHA256: *w.ArgsSHA256, ResultSHA256: *w.ResultSHA256,
		Start: start, End: end, ExitCode: w.ExitCode, Signal: w.Signal, Error: w.Error,
		KeyID: w.KeyID, Caller: w.Caller, MAC: *w.MAC,
		Bound: Binding{Manifest: w.RunManifest},
	}
	if w.V == BoundVersion {
		r.Format = BoundVersion // a version 1 receipt decodes as before: Format 0
	}
	if w.RunStarted != "" {
		if r.Bound.RunStarted, err = parseTime(w.RunStarted); err != nil {
			return badJSON("run_started: %v", err)
		}
		if r.Bound.RunStarted.IsZero() {
			// Go's zero time is no binding to Validate and the MAC
			// input: spelt out, it would be a member the MAC does not
			// cover, which another reader takes for a start
			return badJSON("run_started: time %s outside the range of int64 Unix nanoseconds (1678-2262)", w.RunStarted)
		}
	}
	if err := r.Validate(); err != nil {
		return Receipt{}, err
	}
	return r, nil
}

// badJSON is DecodeReceipt's error (ErrInvalid) for what format says.
func badJSON(format string, a ...any) (Receipt, error) {
	return Receipt{}, fmt.Errorf("%w: decoding receipt JSON: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// checkMemberNames refuses an object whose member names are not spelt
// exactly as wireReceipt's tags, or that names a member twice. encoding/json
// alone matches names case-insensitively and keeps the last of two members,
// so a blob could show a reader that takes the first, or the exact name,
// other fields than the ones the MAC was checked over. The rule is
// strictjson's; names are spelt exactly as docs/receipts.md spells them.
func checkMemberNames(data []byte) error {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	return strictjson.Check(data, strictjson.Closed{Known: receiptMember})
}

// receiptMember reports whether name is a member of a receipt, spelt as
// its tag spells it.
func receiptMember(name string) bool {
	switch name {
	case "v", "id", "session", "run", "tool", "args_sha256", "result_sha256", "start", "end",
		"exit_code", "signal", "error", "key_id", "caller", "run_manifest", "run_started", "mac":
		return true
	}
	return false
}

// Equal reports whether two receipts have the same fields (times compared as
// instants).
func (r Receipt) Equal(o Receipt) bool {
	return bytes.Equal(r.macInput(), o.macInput()) && r.MAC == o.MAC
}

// truncate cuts s for an error message (text.ShortenWith, with the "..."
// these messages have always used).
func truncate(s string, n int) string { return text.ShortenWith(s, n, "...") }
