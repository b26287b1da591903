package receipts_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/readproof/readproof/receipts"
)

// summaryVectorDigest is the evidence summary digest (docs/receipts.md,
// "Evidence summary") of the receipts of testdata/vectors in file order,
// computed from the document alone with Python's hashlib and struct.
const summaryVectorDigest = "sha256:2951920e03b4ba1965856d67aeaa1adafee0a017f80884fecbd46c872329b594"

// TestSummaryVector pins the summary digest, the one hash of the receipts
// format without a vector: the package's Summary over the stored vector
// receipts, and an independent framing from the document, must both give it.
func TestSummaryVector(t *testing.T) {
	files, err := filepath.Glob("testdata/vectors/*.json")
	if err != nil || len(files) < 6 {
		t.Fatalf("want at least 6 vector files, found %d (%v)", len(files), err)
	}
	var rs []receipts.Receipt
	frame := func(b []byte, p []byte) []byte { return append(binary.BigEndian.AppendUint32(b, uint32(len(p))), p...) }
	input := frame(nil, []byte("readproof receipt summary v1"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Expect struct {
				ID      string `json:"id"`
				MAC     string `json:"mac"`
				Receipt string `json:"receipt"`
			} `json:"expect"`
		}
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		r, err := receipts.DecodeReceipt([]byte(v.Expect.Receipt))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		rs = append(rs, r)
		mac, err := hex.DecodeString(v.Expect.MAC)
		if err != nil {
			t.Fatal(err)
		}
		input = frame(frame(input, []byte(v.Expect.ID)), mac)
	}
	sum := sha256.Sum256(input)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != summaryVectorDigest {
		t.Errorf("independent digest %s, want %s", got, summaryVectorDigest)
	}
	if got := receipts.Summary(rs).Digest; got != summaryVectorDigest {
		t.Errorf("Summary digest %s, want %s", got, summaryVectorDigest)
	}
}
