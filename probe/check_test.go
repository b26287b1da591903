package probe_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/probe"
)

func mustIssue(t *testing.T, k probe.Keys, session string, now time.Time, n int) (probe.Issued, string) {
	t.Helper()
	iss, s, err := k.Issue(session, now, n)
	if err != nil {
		t.Fatal(err)
	}
	return iss, s
}

func mustCheck(t *testing.T, k probe.Keys, iss probe.Issued, reported string, now time.Time, o probe.CheckOptions) probe.Result {
	t.Helper()
	r, err := k.Check(iss, reported, now, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCheckWindows(t *testing.T) {
	k := testKeys(t, "check")
	iss, s := mustIssue(t, k, "run-7.0", at(b0, 120), 0)
	if iss.Length != 16 || iss.Bucket != b0 || iss.Session != "run-7.0" {
		t.Fatalf("issued %+v", iss)
	}
	cases := []struct {
		name string
		now  time.Time
		want probe.Verdict
	}{
		{"last second of the bucket", at(b0, 299), probe.ReadVerified},
		{"first second of the next", at(b0+1, 0), probe.ReadVerified},
		{"skew edge inside", at(b0+1, 59), probe.ReadVerified},
		{"skew edge outside", at(b0+1, 60), probe.ReadStale},
		{"horizon edge inside", at(b0+288, 299), probe.ReadStale},
		{"horizon edge outside", at(b0+289, 0), probe.Hallucinated},
		{"clock moved backwards across the boundary", at(b0-1, 299), probe.Hallucinated},
		{"clock moved backwards within the bucket", at(b0, 0), probe.ReadVerified},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantVerdict(t, mustCheck(t, k, iss, s, c.now, probe.CheckOptions{}), c.want)
		})
	}
	if r := mustCheck(t, k, iss, s, at(b0-1, 0), probe.CheckOptions{}); !strings.Contains(r.Reason, "backwards") {
		t.Errorf("reason %q", r.Reason)
	}
}

func TestCheckReplayAndRotation(t *testing.T) {
	k := testKeys(t, "check-replay")
	now := at(b0, 10)
	iss, s := mustIssue(t, k, "run-7.0", now, 24)
	other, os := mustIssue(t, k, "run-6.0", at(b0-3, 0), 24)

	wantVerdict(t, mustCheck(t, k, iss, s, now, probe.CheckOptions{Adjudicated: true}), probe.ReplaySuspect)
	// A record past the horizon is HALLUCINATED even if adjudicated before.
	wantVerdict(t, mustCheck(t, k, iss, s, at(b0+300, 0), probe.CheckOptions{Adjudicated: true}), probe.Hallucinated)

	r := mustCheck(t, k, iss, os, now, probe.CheckOptions{Others: []probe.Issued{other}})
	wantVerdict(t, r, probe.ReplaySuspect)
	if strings.Contains(r.Reason, "run-6") {
		t.Errorf("reason names the other session: %q", r.Reason)
	}
	// Without the record of the other issuance it is made up.
	wantVerdict(t, mustCheck(t, k, iss, os, now, probe.CheckOptions{}), probe.Hallucinated)
	// An issuance of the same session in Others does not count as "other".
	// (an earlier issuance of it, whose sentinel the answer quotes)
	same, sameS := mustIssue(t, k, iss.Session, at(b0-3, 0), 24)
	wantVerdict(t, mustCheck(t, k, iss, sameS, now, probe.CheckOptions{Others: []probe.Issued{same}}), probe.Hallucinated)
	// Other issuances outside the window do not count.
	wantVerdict(t, mustCheck(t, k, iss, os, at(b0+290, 0), probe.CheckOptions{Others: []probe.Issued{other}}), probe.Hallucinated)

	rotated := testKeys(t, "check-replay rotated")
	wantVerdict(t, mustCheck(t, rotated, iss, s, now, probe.CheckOptions{}), probe.Hallucinated)

	for _, v := range []string{s[:len(s)-1], s + "=", strings.Replace(s, s[3:4], "+", 1), "", s[:22]} {
		wantVerdict(t, mustCheck(t, k, iss, v, now, probe.CheckOptions{}), probe.Hallucinated)
	}
}

func TestCheckInvalidRecord(t *testing.T) {
	k := testKeys(t, "check-bad")
	now := at(b0, 0)
	for _, iss := range []probe.Issued{
		{Session: "", Bucket: b0, Length: 16},
		{Session: "ok", Bucket: -1, Length: 16},
		{Session: "ok", Bucket: b0, Length: 0},
		{Session: "ok", Bucket: b0, Length: 33},
	} {
		if _, err := k.Check(iss, "x", now, probe.CheckOptions{}); !errors.Is(err, probe.ErrOptions) {
			t.Errorf("%+v: %v", iss, err)
		}
	}
	good := probe.Issued{Session: "ok", Bucket: b0, Length: 16}
	if _, err := k.Check(good, "x", now, probe.CheckOptions{Others: []probe.Issued{{}}}); !errors.Is(err, probe.ErrOptions) {
		t.Errorf("invalid other: %v", err)
	}
	if _, err := (probe.Keys{}).Check(good, "x", now, probe.CheckOptions{}); err == nil {
		t.Error("zero keys accepted")
	}
}

func TestCheckAnswer(t *testing.T) {
	k := testKeys(t, "answer")
	mount := at(b0, 30)
	var entries []probe.Issued
	var sents []string
	for i := 0; i < 3; i++ {
		sess, err := probe.EntrySession("nightly-42", i)
		if err != nil {
			t.Fatal(err)
		}
		iss, s := mustIssue(t, k, sess, mount, 0)
		entries, sents = append(entries, iss), append(sents, s)
	}
	// Each entry has its own sentinel.
	if sents[0] == sents[1] || sents[1] == sents[2] {
		t.Fatal("entries share a sentinel")
	}
	prevRun, prevS := mustIssue(t, k, "nightly-41.0", at(b0-20, 0), 0)

	answer := "Refunds are possible within 30 days.\n" + probe.ProbeLine(sents[0]) +
		"\nAlso saw `" + sents[2] + "`, and " + prevS + " and made up " + strings.Repeat("Q", 22) + "."
	res, err := k.CheckAnswer(entries, answer, at(b0+1, 5), probe.AnswerOptions{Others: []probe.Issued{prevRun}})
	if err != nil {
		t.Fatal(err)
	}
	wantVerdict(t, res[0], probe.ReadVerified)
	wantVerdict(t, res[1], probe.ReplaySuspect) // its own is missing and a foreign one is quoted
	wantVerdict(t, res[2], probe.ReadVerified)
	for i, r := range res {
		if r.Session != entries[i].Session {
			t.Errorf("result %d is for %q", i, r.Session)
		}
		for _, s := range append(sents, prevS) {
			if strings.Contains(r.Reason, s) {
				t.Errorf("reason carries a sentinel")
			}
		}
	}

	// Without the foreign record the missing entry is HALLUCINATED.
	res, _ = k.CheckAnswer(entries, answer, at(b0+1, 5), probe.AnswerOptions{})
	wantVerdict(t, res[1], probe.Hallucinated)

	// An earlier issuance of an entry's own session, quoted and recorded in
	// Others, is not another session's: the entry is HALLUCINATED, not
	// REPLAY_SUSPECT (and the other entries' verdicts stand).
	same, sameS := mustIssue(t, k, entries[1].Session, at(b0-20, 0), 0)
	res, _ = k.CheckAnswer(entries, probe.ProbeLine(sents[0])+"\n"+sameS, at(b0+1, 5), probe.AnswerOptions{Others: []probe.Issued{same}})
	wantVerdict(t, res[0], probe.ReadVerified)
	wantVerdict(t, res[1], probe.Hallucinated)

	// No sentinel at all.
	res, _ = k.CheckAnswer(entries, "I read everything, trust me.", at(b0, 40), probe.AnswerOptions{})
	for _, r := range res {
		wantVerdict(t, r, probe.Hallucinated)
		if !strings.Contains(r.Reason, "no sentinel") {
			t.Errorf("reason %q", r.Reason)
		}
	}

	// Later: stale; a second check of an adjudicated entry: replay.
	res, _ = k.CheckAnswer(entries, answer, at(b0+10, 0), probe.AnswerOptions{Adjudicated: []bool{true, false, false}})
	wantVerdict(t, res[0], probe.ReplaySuspect)
	wantVerdict(t, res[2], probe.ReadStale)

	// A padded or truncated quote is not found.
	res, _ = k.CheckAnswer(entries[:1], "value: "+sents[0]+"==", at(b0, 40), probe.AnswerOptions{})
	wantVerdict(t, res[0], probe.Hallucinated)
	res, _ = k.CheckAnswer(entries[:1], "value: "+sents[0][:21], at(b0, 40), probe.AnswerOptions{})
	wantVerdict(t, res[0], probe.Hallucinated)

	if _, err := k.CheckAnswer(entries, answer, mount, probe.AnswerOptions{Adjudicated: []bool{true}}); !errors.Is(err, probe.ErrOptions) {
		t.Errorf("mismatched flags: %v", err)
	}
}

func TestDeliverRoundTrip(t *testing.T) {
	k := testKeys(t, "deliver")
	iss, s := mustIssue(t, k, "run-1.0", at(b0, 0), 0)
	for _, content := range []string{"", "one line\n", "no final newline", "a\r\nb\r\n"} {
		out, err := k.Deliver([]byte(content), iss)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(out), content) || !strings.HasSuffix(string(out), probe.ProbeLine(s)+"\n") {
			t.Fatalf("delivered %q", out)
		}
		if strings.Count(string(out), "\n") != strings.Count(content, "\n")+1+boolInt(content != "" && !strings.HasSuffix(content, "\n")) {
			t.Errorf("line breaks of %q", out)
		}
		if got := probe.FindSentinels(string(out)); len(got) != 1 || got[0] != s {
			t.Errorf("FindSentinels(delivered) = %v", got)
		}
		// Deliver recomputes: the same record gives the same bytes later.
		again, _ := k.Deliver([]byte(content), iss)
		if string(again) != string(out) {
			t.Error("Deliver is not deterministic")
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
