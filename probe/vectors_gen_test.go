package probe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors/*.json from the package")

// vector is the committed test vector format (PROBE_PROTOCOL.md §11).
type vector struct {
	Name            string `json:"name"`
	Description     string `json:"description"`
	MasterSecretHex string `json:"master_secret_hex"`
	HKDFSalt        string `json:"hkdf_salt"`
	InfoSentinel    string `json:"info_sentinel"`
	InfoAudit       string `json:"info_audit"`
	SentinelKeyHex  string `json:"sentinel_subkey_hex"`
	AuditKeyHex     string `json:"audit_subkey_hex"`
	Label           string `json:"label"`
	SessionID       string `json:"session_id"`
	UnixTime        int64  `json:"unix_time"`
	Bucket          int64  `json:"bucket"`
	Length          int    `json:"length"`
	FramedHex       string `json:"framed_hex"`
	MACHex          string `json:"mac_hex"`
	Sentinel        string `json:"sentinel"`
	ProbeLine       string `json:"probe_line"`
	ClientAddress   string `json:"client_address"`
	ClientHash      string `json:"client_hash"`
}

type vectorCase struct {
	name, desc string
	master     []byte
	session    string
	unix       int64
	length     int
	client     string
}

func vectorCases() []vectorCase {
	m1 := make([]byte, 32)
	for i := range m1 {
		m1[i] = byte(i)
	}
	m2 := sha256.Sum256([]byte("readproof probe test vector master 2"))
	// A 192-byte session id: the longest allowed.
	var long strings.Builder
	long.WriteString("max-")
	for long.Len() < MaxSessionLen {
		long.WriteString("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-")
	}
	maxSession := long.String()[:MaxSessionLen]
	const typical = 1789477777 // 2026-09-15T13:09:37Z
	const large = (int64(1)<<40 + 12345) * BucketSeconds
	return []vectorCase{
		{"01-bucket0-short-session", "one-character session, last second of bucket 0, default length", m1, "a", 299, 16, "192.0.2.7"},
		{"02-typical-len16", "ASCII session, a 2026 timestamp, default length", m1, "run-2026-09-15.nightly_7", typical, 16, "192.0.2.7"},
		{"03-typical-len24", "as 02 with a 24-byte sentinel", m1, "run-2026-09-15.nightly_7", typical, 24, "192.0.2.7"},
		{"04-typical-len32", "as 02 with a 32-byte sentinel (the whole MAC)", m1, "run-2026-09-15.nightly_7", typical, 32, "192.0.2.7"},
		{"05-max-session", "192-byte session id, the maximum", m1, maxSession, typical, 16, "2001:db8::1"},
		{"06-large-bucket", "bucket 2^40+12345 (all of the int64 framing bytes in use but the top two)", m1, "entry.12", large + 299, 32, "198.51.100.23"},
		{"07-second-master", "another master secret, first second of a bucket", m2[:], "agent_A", 1700000100, 24, "203.0.113.9"},
		{"08-entry-session", "an offline run entry session (RUNID.ENTRY)", m2[:], "nightly-42.3", typical, 16, "127.0.0.1"},
		{"09-content-session", "an offline run entry session bound to its content (RUNID.ENTRY.cTAG, §10.2): the published example's content_hash sha256:c8b0bb21...", m1, "nightly-42.3.cc8b0bb212e93151d720746e36ff3b707", typical, 16, "192.0.2.7"},
	}
}

func buildVector(t *testing.T, c vectorCase) vector {
	t.Helper()
	k, err := DeriveKeys(c.master)
	if err != nil {
		t.Fatal(err)
	}
	b := Bucket(time.Unix(c.unix, 0))
	mac, err := k.MAC(c.session, b)
	if err != nil {
		t.Fatal(err)
	}
	s, err := k.Sentinel(c.session, b, c.length)
	if err != nil {
		t.Fatal(err)
	}
	return vector{
		Name: c.name, Description: c.desc,
		MasterSecretHex: hex.EncodeToString(c.master),
		HKDFSalt:        HKDFSalt, InfoSentinel: InfoSentinel, InfoAudit: InfoAudit,
		SentinelKeyHex: hex.EncodeToString(k.sentinel[:]),
		AuditKeyHex:    hex.EncodeToString(k.audit[:]),
		Label:          Label, SessionID: c.session, UnixTime: c.unix, Bucket: b, Length: c.length,
		FramedHex: hex.EncodeToString(Framed(c.session, b)),
		MACHex:    hex.EncodeToString(mac),
		Sentinel:  s, ProbeLine: ProbeLine(s),
		ClientAddress: c.client, ClientHash: k.ClientHash(c.client),
	}
}

// TestVectorsPackage checks that the package reproduces every committed
// vector byte for byte (and, with -update, rewrites them).
func TestVectorsPackage(t *testing.T) {
	dir := filepath.Join("testdata", "vectors")
	for _, c := range vectorCases() {
		v := buildVector(t, c)
		want, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, '\n')
		path := filepath.Join(dir, c.name+".json")
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./probe -run TestVectorsPackage -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the package does not reproduce the committed vector\n got file: %s\npackage: %s", path, got, want)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != len(vectorCases()) {
		t.Errorf("%d vector files, %d cases: remove stale files", len(files), len(vectorCases()))
	}
}
