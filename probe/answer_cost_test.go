package probe_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/readproof/readproof/probe"
)

// TestCheckAnswerLarge: the answer is the agent's, and so is the number of
// probed entries (an agent mounts with probe set over MCP), so a checker
// looks each entry's sentinel up among the candidates instead of comparing
// every pair: an answer of 1 MiB holds some 45,000 sentinel-shaped values,
// and 4,000 entries compared pairwise took seconds. This test holds the
// verdicts at 1,000 entries with 256 KiB and 4,000 with 1 MiB; the time is
// BenchmarkCheckAnswerMany's to hold (a count of lookups kept here in session
// 27 could not fail: it counted one per lookup whatever the lookup cost).
func TestCheckAnswerLarge(t *testing.T) {
	t.Parallel()
	k := testKeys(t, "linear")
	now := at(b0, 10)
	for _, size := range []int{1, 4} {
		n := 1000 * size
		entries, answer, other := answerOfSize(t, k, n, size<<18)
		results, err := k.CheckAnswer(entries, answer, now, probe.AnswerOptions{Others: []probe.Issued{other}})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range results {
			want := probe.ReplaySuspect
			if i == n/2 {
				want = probe.ReadVerified
			}
			if r.Verdict != want {
				t.Fatalf("%d entries: entry %d: %s (%s), want %s", n, i, r.Verdict, r.Reason, want)
			}
		}
		if len(results) != n {
			t.Fatalf("%d entries: %d results", n, len(results))
		}
	}
}

// answerOfSize makes n entries and an answer of size bytes holding the
// sentinel of the middle entry, another session's (other), and
// sentinel-shaped values that are no one's.
func answerOfSize(t testing.TB, k probe.Keys, n, size int) (entries []probe.Issued, answer string, other probe.Issued) {
	entries = make([]probe.Issued, n)
	for i := range entries {
		entries[i] = probe.Issued{Session: sprintf("run.%d", i), Bucket: b0, Length: 16}
	}
	own, err := k.SentinelFor(entries[n/2])
	if err != nil {
		t.Fatal(err)
	}
	other = probe.Issued{Session: "elsewhere.0", Bucket: b0, Length: 16}
	otherSentinel, err := k.SentinelFor(other)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(own + " " + otherSentinel + " ")
	var ctr [8]byte
	for i := uint64(0); b.Len() < size; i++ {
		binary.BigEndian.PutUint64(ctr[:], i)
		sum := sha256.Sum256(ctr[:])
		b.WriteString(base64.RawURLEncoding.EncodeToString(sum[:16]))
		b.WriteByte('\n')
	}
	return entries, b.String(), other
}

// BenchmarkCheckAnswerMany checks 4,000 entries against a 1 MiB answer: the
// guard of the lookup's speed (about 20 ms; pairwise comparison took 6.2 s).
func BenchmarkCheckAnswerMany(b *testing.B) {
	k := testKeys(b, "linear")
	now := at(b0, 10)
	entries, answer, other := answerOfSize(b, k, 4000, 1<<20)
	b.SetBytes(int64(len(answer)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.CheckAnswer(entries, answer, now, probe.AnswerOptions{Others: []probe.Issued{other}}); err != nil {
			b.Fatal(err)
		}
	}
}
