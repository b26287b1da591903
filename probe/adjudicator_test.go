package probe_test

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/probe"
)

func wantVerdict(t *testing.T, r probe.Result, v probe.Verdict) {
	t.Helper()
	if r.Verdict != v {
		t.Fatalf("verdict %s (%s), want %s", r.Verdict, r.Reason, v)
	}
}

func TestAdjudicateWindows(t *testing.T) {
	k := testKeys(t, "windows")
	cases := []struct {
		name    string
		issueAt time.Time
		report  time.Time
		want    probe.Verdict
		bucket  int64
		age     int64
	}{
		{"same second", at(b0, 0), at(b0, 0), probe.ReadVerified, b0, 0},
		{"last second of the bucket", at(b0, 0), at(b0, 299), probe.ReadVerified, b0, 299},
		{"issued in the last second, reported in the first of the next", at(b0, 299), at(b0+1, 0), probe.ReadVerified, b0, 300},
		{"inside the skew: 59 s into the next bucket", at(b0, 10), at(b0+1, 59), probe.ReadVerified, b0, 359},
		{"just outside the skew: 60 s into the next bucket", at(b0, 10), at(b0+1, 60), probe.ReadStale, b0, 360},
		{"two buckets later", at(b0, 0), at(b0+2, 0), probe.ReadStale, b0, 600},
		{"stale horizon edge, inside: 288 buckets later, last second", at(b0, 0), at(b0+288, 299), probe.ReadStale, b0, 288*300 + 299},
		{"stale horizon edge, just outside: 289 buckets later", at(b0, 0), at(b0+289, 0), probe.Hallucinated, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := newFakeClock(c.issueAt)
			a := newAdj(t, k, clk, probe.Options{})
			s := issue(t, a, "sess-1")
			clk.Set(c.report)
			r := a.Adjudicate("sess-1", s)
			wantVerdict(t, r, c.want)
			if r.Session != "sess-1" {
				t.Errorf("session %q", r.Session)
			}
			if c.want == probe.Hallucinated {
				if r.Matched {
					t.Errorf("matched outside the horizon: %+v", r)
				}
				return
			}
			if !r.Matched || r.Bucket != c.bucket || r.AgeSeconds != c.age {
				t.Errorf("got matched=%v bucket=%d age=%d, want bucket %d age %d", r.Matched, r.Bucket, r.AgeSeconds, c.bucket, c.age)
			}
		})
	}
}

func TestAdjudicateCustomWindows(t *testing.T) {
	k := testKeys(t, "custom")
	clk := newFakeClock(at(b0, 0))
	// No skew: the first second of the next bucket is already stale.
	a := newAdj(t, k, clk, probe.Options{Window: probe.Window{Skew: -1, StaleHorizon: time.Hour}})
	s1, s2 := issue(t, a, "x1"), issue(t, a, "x2")
	clk.Set(at(b0+1, 0))
	wantVerdict(t, a.Adjudicate("x1", s1), probe.ReadStale)
	// A one-hour horizon is 12 buckets.
	clk.Set(at(b0+13, 0))
	wantVerdict(t, a.Adjudicate("x2", s2), probe.Hallucinated)

	b := newAdj(t, k, clk, probe.Options{Window: probe.Window{Skew: 90 * time.Second, StaleHorizon: time.Hour}})
	clk.Set(at(b0, 0))
	s3, s4 := issue(t, b, "y1"), issue(t, b, "y2")
	clk.Set(at(b0+1, 89))
	wantVerdict(t, b.Adjudicate("y1", s3), probe.ReadVerified)
	clk.Set(at(b0+12, 299))
	wantVerdict(t, b.Adjudicate("y2", s4), probe.ReadStale)
}

func TestAdjudicateLengths(t *testing.T) {
	for _, n := range []int{16, 17, 24, 31, 32} {
		k := testKeys(t, "len")
		clk := newFakeClock(at(b0, 5))
		a := newAdj(t, k, clk, probe.Options{Length: n})
		s := issue(t, a, "len-test")
		if len(s) != probe.EncodedLength(n) {
			t.Fatalf("length %d: sentinel of %d chars, want %d", n, len(s), probe.EncodedLength(n))
		}
		wantVerdict(t, a.Adjudicate("len-test", s), probe.ReadVerified)
	}
}

func TestAdjudicateOtherSession(t *testing.T) {
	k := testKeys(t, "other")
	clk := newFakeClock(at(b0, 0))
	a := newAdj(t, k, clk, probe.Options{})
	alice := issue(t, a, "alice")
	r := a.Adjudicate("bob", alice)
	wantVerdict(t, r, probe.ReplaySuspect)
	if strings.Contains(r.Reason, "alice") || r.Matched {
		t.Errorf("reason or result reveals the other session: %+v", r)
	}
	// A replay under another session does not use up alice's own report.
	wantVerdict(t, a.Adjudicate("alice", alice), probe.ReadVerified)
	// Still a replay for bob later on, while the sentinel is in the horizon...
	clk.Set(at(b0+100, 0))
	wantVerdict(t, a.Adjudicate("bob", alice), probe.ReplaySuspect)
	// ...and nothing at all once it left it.
	clk.Set(at(b0+289, 0))
	wantVerdict(t, a.Adjudicate("bob", alice), probe.Hallucinated)
}

func TestAdjudicateSecondReport(t *testing.T) {
	k := testKeys(t, "second")
	clk := newFakeClock(at(b0, 0))
	a := newAdj(t, k, clk, probe.Options{})
	s := issue(t, a, "twice")
	wantVerdict(t, a.Adjudicate("twice", s), probe.ReadVerified)
	r := a.Adjudicate("twice", s)
	wantVerdict(t, r, probe.ReplaySuspect)
	if !r.Matched || r.Bucket != b0 {
		t.Errorf("second report: %+v", r)
	}
	clk.Set(at(b0+5, 0))
	wantVerdict(t, a.Adjudicate("twice", s), probe.ReplaySuspect)
	// Issuing again in the same bucket hands out the same, already used, value.
	clk.Set(at(b0, 1))
	if again := issue(t, a, "twice"); again != s {
		t.Fatalf("reissue in the same bucket gave a different sentinel")
	}
	wantVerdict(t, a.Adjudicate("twice", s), probe.ReplaySuspect)
	// The next bucket gives a fresh sentinel.
	clk.Set(at(b0+1, 0))
	fresh := issue(t, a, "twice")
	if fresh == s {
		t.Fatal("sentinel did not change with the bucket")
	}
	wantVerdict(t, a.Adjudicate("twice", fresh), probe.ReadVerified)
}

func TestAdjudicateStaleThenAgain(t *testing.T) {
	k := testKeys(t, "stale-again")
	clk := newFakeClock(at(b0, 0))
	a := newAdj(t, k, clk, probe.Options{})
	s := issue(t, a, "late")
	clk.Set(at(b0+3, 0))
	wantVerdict(t, a.Adjudicate("late", s), probe.ReadStale)
	wantVerdict(t, a.Adjudicate("late", s), probe.ReplaySuspect)
}

func TestAdjudicateMalformed(t *testing.T) {
	k := testKeys(t, "malformed")
	clk := newFakeClock(at(b0, 0))
	a := newAdj(t, k, clk, probe.Options{})
	s := issue(t, a, "m")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	long, err := k.Sentinel("m", b0, 24)
	if err != nil {
		t.Fatal(err)
	}
	// Flip the unused low bits of the last character: same bytes under a
	// lenient decoder, not the canonical encoding.
	last := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", s[len(s)-1])
	noncanon := s[:len(s)-1] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last|1])
	bad := map[string]string{
		"empty":              "",
		"truncated":          s[:len(s)-1],
		"truncated half":     s[:11],
		"padded":             s + "==",
		"padded once":        s + "=",
		"std base64":         base64.StdEncoding.EncodeToString(raw),
		"non-base64url":      s[:10] + "+" + s[11:],
		"slash":              s[:10] + "/" + s[11:],
		"space":              " " + s,
		"newline":            s + "\n",
		"24-byte sentinel":   long,
		"24 truncated to 22": long[:len(s)],
		"extended":           s + "A",
		"non-canonical":      noncanon,
		"upper-cased":        strings.ToUpper(s),
		"hex of the bytes":   strings.Repeat("0", 32),
		"probe line":         probe.ProbeLine(s),
	}
	for name, v := range bad {
		if v == s {
			continue // only when the transformation happened to be the identity
		}
		t.Run(name, func(t *testing.T) {
			wantVerdict(t, a.Adjudicate("m", v), probe.Hallucinated)
		})
	}
	// None of those used up the sentinel.
	wantVerdict(t, a.Adjudicate("m", s), probe.ReadVerified)
}

func TestAdjudicateRandomValues(t *testing.T) {
	k := testKeys(t, "random")
	clk := newFakeClock(at(b0, 0))
	a := newAdj(t, k, clk, probe.Options{})
	issue(t, a, "r")
	for i := 0; i < 200; i++ {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		wantVerdict(t, a.Adjudicate("r", base64.RawURLEncoding.EncodeToString(b)), probe.Hallucinated)
	}
	wantVerdict(t, a.Adjudicate("bad session!", "x"), probe.Hallucinated)
}

func TestAdjudicateRotation(t *testing.T) {
	clk := newFakeClock(at(b0, 0))
	old := newAdj(t, testKeys(t, "before rotation"), clk, probe.Options{})
	s := issue(t, old, "rot")
	rotated := newAdj(t, testKeys(t, "after rotation"), clk, probe.Options{})
	issue(t, rotated, "rot")
	wantVerdict(t, rotated.Adjudicate("rot", s), probe.Hallucinated)
	wantVerdict(t, rotated.Adjudicate("other", s), probe.Hallucinated)
	// The old key still recognises it: the verdict follows the key.
	wantVerdict(t, old.Adjudicate("rot", s), probe.ReadVerified)
}

func TestAdjudicateClockBackwards(t *testing.T) {
	k := testKeys(t, "backwards")
	clk := newFakeClock(at(b0, 100))
	a := newAdj(t, k, clk, probe.Options{})

	// Within one bucket a backward step changes nothing.
	s1 := issue(t, a, "within")
	clk.Set(at(b0, 50))
	wantVerdict(t, a.Adjudicate("within", s1), probe.ReadVerified)

	// Across a boundary the later sentinel is HALLUCINATED, for its own
	// session and for others, until the clock catches up.
	clk.Set(at(b0+1, 10))
	s2 := issue(t, a, "across")
	clk.Set(at(b0, 299))
	r := a.Adjudicate("across", s2)
	wantVerdict(t, r, probe.Hallucinated)
	if !strings.Contains(r.Reason, "backwards") {
		t.Errorf("reason %q does not mention the clock", r.Reason)
	}
	wantVerdict(t, a.Adjudicate("someone-else", s2), probe.Hallucinated)
	clk.Set(at(b0+1, 20))
	wantVerdict(t, a.Adjudicate("across", s2), probe.ReadVerified)

	// Issuing while the clock is back mints the earlier bucket's sentinel.
	clk.Set(at(b0+2, 0))
	s3 := issue(t, a, "mint")
	clk.Set(at(b0+1, 0))
	s4 := issue(t, a, "mint")
	if s3 == s4 {
		t.Fatal("a backward step across a boundary should change the sentinel")
	}
	wantVerdict(t, a.Adjudicate("mint", s4), probe.ReadVerified)
	wantVerdict(t, a.Adjudicate("mint", s3), probe.Hallucinated)
}

func TestAdjudicateLogLoss(t *testing.T) {
	// Losing the issuance log (a restart with the same key, a second
	// verifier) degrades REPLAY_SUSPECT only.
	k := testKeys(t, "log loss")
	clk := newFakeClock(at(b0, 0))
	a := newAdj(t, k, clk, probe.Options{})
	alice := issue(t, a, "alice")
	bob := issue(t, a, "bob")
	wantVerdict(t, a.Adjudicate("alice", alice), probe.ReadVerified)

	fresh := newAdj(t, k, clk, probe.Options{})
	// The second report is not recognised as such...
	wantVerdict(t, fresh.Adjudicate("alice", alice), probe.ReadVerified)
	// ...another session's sentinel reads as made up...
	wantVerdict(t, fresh.Adjudicate("carol", bob), probe.Hallucinated)
	// ...while the other verdicts are unchanged.
	wantVerdict(t, fresh.Adjudicate("bob", bob), probe.ReadVerified)
	clk.Set(at(b0+2, 0))
	other := newAdj(t, k, clk, probe.Options{})
	wantVerdict(t, other.Adjudicate("alice", alice), probe.ReadStale)
	wantVerdict(t, other.Adjudicate("alice", "AAAAAAAAAAAAAAAAAAAAAA"), probe.Hallucinated)
}

func TestIssuanceLogBounded(t *testing.T) {
	k := testKeys(t, "bounded")
	clk := newFakeClock(at(b0, 0))
	a := newAdj(t, k, clk, probe.Options{LogLimit: 3})
	var ss []string
	for _, id := range []string{"s0", "s1", "s2", "s3", "s4"} {
		ss = append(ss, issue(t, a, id))
		if a.LogLen() > 3 {
			t.Fatalf("log holds %d entries, limit 3", a.LogLen())
		}
	}
	// The two oldest were dropped: their replays are no longer recognised.
	wantVerdict(t, a.Adjudicate("zz", ss[0]), probe.Hallucinated)
	wantVerdict(t, a.Adjudicate("zz", ss[1]), probe.Hallucinated)
	wantVerdict(t, a.Adjudicate("zz", ss[4]), probe.ReplaySuspect)
	// Own-session verdicts do not depend on the log.
	wantVerdict(t, a.Adjudicate("s0", ss[0]), probe.ReadVerified)
	wantVerdict(t, a.Adjudicate("s0", ss[0]), probe.ReplaySuspect)
}

func TestIssuanceLogExpires(t *testing.T) {
	k := testKeys(t, "expiry")
	clk := newFakeClock(at(b0, 0))
	a := newAdj(t, k, clk, probe.Options{Window: probe.Window{StaleHorizon: time.Hour}})
	for i := 0; i < 10; i++ {
		issue(t, a, "e"+string(rune('a'+i)))
	}
	if a.LogLen() != 10 {
		t.Fatalf("log holds %d", a.LogLen())
	}
	clk.Set(at(b0+12, 0))
	issue(t, a, "kept")
	if a.LogLen() != 11 {
		t.Fatalf("entries expired inside the horizon: %d", a.LogLen())
	}
	clk.Set(at(b0+13, 0))
	issue(t, a, "late")
	if a.LogLen() != 2 {
		t.Fatalf("after the horizon the log holds %d entries, want 2", a.LogLen())
	}
}

func TestAdjudicatorOptions(t *testing.T) {
	k := testKeys(t, "opts")
	bad := []probe.Options{
		{Length: 15},
		{Length: 33},
		{Window: probe.Window{Skew: 300 * time.Second}},
		{Window: probe.Window{StaleHorizon: 299 * time.Second}},
		{Window: probe.Window{StaleHorizon: 8 * 24 * time.Hour}},
		{LogLimit: -1},
	}
	for _, o := range bad {
		if _, err := probe.NewAdjudicator(k, o); !errors.Is(err, probe.ErrOptions) {
			t.Errorf("%+v: error %v, want ErrOptions", o, err)
		}
	}
	if _, err := probe.NewAdjudicator(probe.Keys{}, probe.Options{}); err == nil {
		t.Error("zero keys accepted")
	}
	a, err := probe.NewAdjudicator(k, probe.Options{})
	if err != nil || a.Length() != 16 {
		t.Fatalf("defaults: %v, length %d", err, a.Length())
	}
	if _, _, err := a.Issue("bad id"); !errors.Is(err, probe.ErrInvalidSession) {
		t.Errorf("Issue(bad id): %v", err)
	}
	old := newAdj(t, k, newFakeClock(time.Unix(-1, 0)), probe.Options{})
	if _, _, err := old.Issue("x"); !errors.Is(err, probe.ErrBucket) {
		t.Errorf("Issue before 1970: %v", err)
	}
	wantVerdict(t, old.Adjudicate("x", "AAAAAAAAAAAAAAAAAAAAAA"), probe.Hallucinated)
}
