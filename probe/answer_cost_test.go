package probe_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/probe"
)

// TestCheckAnswerLinear: the answer is the agent's, and so is the number of
// probed entries (an agent mounts with probe set over MCP), so checking one
// against the other takes time in their sum, not their product. An answer of
// 1 MiB holds some 45,000 sentinel-shaped values; 4,000 entries compared
// with each of them took seconds (27 s for 1,000 entries and a 16 MiB answer).
func TestCheckAnswerLinear(t *testing.T) {
	t.Parallel()
	k := testKeys(t, "linear")
	now := at(b0, 10)
	const n = 4000
	entries := make([]probe.Issued, n)
	for i := range entries {
		entries[i] = probe.Issued{Session: sprintf("run.%d", i), Bucket: b0, Length: 16}
	}
	own, err := k.SentinelFor(entries[n/2])
	if err != nil {
		t.Fatal(err)
	}
	other := probe.Issued{Session: "elsewhere.0", Bucket: b0, Length: 16}
	otherSentinel, err := k.SentinelFor(other)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(own + " " + otherSentinel + " ")
	var ctr [8]byte
	for i := uint64(0); b.Len() < 1<<20; i++ {
		binary.BigEndian.PutUint64(ctr[:], i)
		sum := sha256.Sum256(ctr[:])
		b.WriteString(base64.RawURLEncoding.EncodeToString(sum[:16]))
		b.WriteByte('\n')
	}
	start := time.Now()
	results, err := k.CheckAnswer(entries, b.String(), now, probe.AnswerOptions{Others: []probe.Issued{other}})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		want := probe.ReplaySuspect
		if i == n/2 {
			want = probe.ReadVerified
		}
		if r.Verdict != want {
			t.Fatalf("entry %d: %s (%s), want %s", i, r.Verdict, r.Reason, want)
		}
	}
	if took > 2*time.Second {
		t.Fatalf("checking %d entries against a 1 MiB answer took %v, want well under 2s", n, took.Round(time.Millisecond))
	}
	t.Logf("%d entries, 1 MiB answer: %v", n, took.Round(time.Millisecond))
}
