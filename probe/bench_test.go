package probe_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/probe"
)

func perSecond(b *testing.B, unit string) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
}

func BenchmarkSentinel(b *testing.B) {
	k := testKeys(b, "bench")
	for _, n := range []int{16, 32} {
		b.Run(fmt.Sprintf("len%d", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, err := k.Sentinel("run-2026-09-15.nightly_7", b0+int64(i&1023), n); err != nil {
					b.Fatal(err)
				}
			}
			perSecond(b, "sentinels/s")
		})
	}
}

// BenchmarkAdjudicate measures adjudications per second on each path. The
// cost is one MAC per bucket searched: 1 for the current bucket, 289 (the
// whole 24 h horizon) for a value that matches nothing.
func BenchmarkAdjudicate(b *testing.B) {
	k := testKeys(b, "bench")
	clk := newFakeClock(at(b0, 100))
	const n = 4096
	a := newAdj(b, k, clk, probe.Options{})
	sessions := make([]string, n)
	sents := make([]string, n)
	for i := range sessions {
		sessions[i] = fmt.Sprintf("bench-%d", i)
		sents[i] = issue(b, a, sessions[i])
	}
	b.Run("current-bucket", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			a.Adjudicate(sessions[i%n], sents[i%n]) // first VERIFIED, then REPLAY_SUSPECT: same work
		}
		perSecond(b, "adj/s")
	})
	b.Run("current-bucket-parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				a.Adjudicate(sessions[i%n], sents[i%n])
				i++
			}
		})
		perSecond(b, "adj/s")
	})
	old, _ := k.Sentinel("old", b0-288, 16)
	b.Run("stale-288-buckets", func(b *testing.B) {
		for b.Loop() {
			a.Adjudicate("old", old)
		}
		perSecond(b, "adj/s")
	})
	b.Run("hallucinated", func(b *testing.B) {
		for b.Loop() {
			if r := a.Adjudicate("bench-1", "AAAAAAAAAAAAAAAAAAAAAA"); r.Verdict != probe.Hallucinated {
				b.Fatal(r)
			}
		}
		perSecond(b, "adj/s")
	})
	b.Run("other-session", func(b *testing.B) {
		for b.Loop() {
			a.Adjudicate("intruder", sents[7])
		}
		perSecond(b, "adj/s")
	})
	b.Run("malformed", func(b *testing.B) {
		for b.Loop() {
			a.Adjudicate("bench-1", "not a sentinel")
		}
		perSecond(b, "adj/s")
	})
}

func BenchmarkCheck(b *testing.B) {
	k := testKeys(b, "bench")
	now := at(b0, 10)
	iss, s, _ := k.Issue("run-1.0", now, 16)
	for b.Loop() {
		if r, _ := k.Check(iss, s, now, probe.CheckOptions{}); r.Verdict != probe.ReadVerified {
			b.Fatal(r)
		}
	}
	perSecond(b, "checks/s")
}

func BenchmarkCheckAnswer(b *testing.B) {
	k := testKeys(b, "bench")
	now := at(b0, 10)
	var entries []probe.Issued
	var text strings.Builder
	for i := 0; i < 20; i++ {
		iss, s, _ := k.Issue(fmt.Sprintf("run-1.%d", i), now, 16)
		entries = append(entries, iss)
		text.WriteString(strings.Repeat("lorem ipsum dolor sit amet ", 20))
		text.WriteString(s + "\n")
	}
	answer := text.String()
	b.SetBytes(int64(len(answer)))
	for b.Loop() {
		if _, err := k.CheckAnswer(entries, answer, now, probe.AnswerOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFindSentinels(b *testing.B) {
	text := strings.Repeat("The quick brown fox TW9pr7BTmyPAZRXZC5mK0w jumps over the lazy dog.\n", 1000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		probe.FindSentinels(text)
	}
}

// BenchmarkServerVerify measures the verify handler without the network.
func BenchmarkServerVerify(b *testing.B) {
	k := testKeys(b, "bench")
	clk := newFakeClock(at(b0, 10))
	srv, err := probe.NewServer(probe.ServerOptions{Keys: &k, Clock: clk,
		VerifyRate: probe.RateLimit{Burst: 1 << 30, Every: time.Nanosecond}})
	if err != nil {
		b.Fatal(err)
	}
	s, _ := k.Sentinel("bench-srv", b0, 16)
	body := []byte(`{"session_id":"bench-srv","sentinel":"` + s + `"}`)
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, probe.VerifyPath, bytes.NewReader(body))
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
	perSecond(b, "req/s")
}
