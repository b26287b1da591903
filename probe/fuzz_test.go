package probe_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/probe"
)

func FuzzParseReport(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s1","sentinel":"TW9pr7BTmyPAZRXZC5mK0w"}`,
		`{"sentinel":"","session_id":"run-1.2"}`,
		`{"session_id":"s","sentinel":"x","extra":1}`,
		`{"session_id":"s","session_id":"t","sentinel":"x"}`,
		`{"session_id":"s","sentinel":"\ud800"}`,
		`[`, `{`, `{"session_id":`, `null`, ``, `{"session_id":"s","sentinel":"x"} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := probe.ParseReport(body)
		if err != nil {
			if !errors.Is(err, probe.ErrReport) {
				t.Fatalf("error %v does not wrap ErrReport", err)
			}
			return
		}
		if err := probe.ValidateSession(r.SessionID); err != nil {
			t.Fatalf("accepted an invalid session: %v", err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		again, err := probe.ParseReport(b)
		if err != nil || again != r {
			t.Fatalf("round trip: %+v -> %s -> %+v, %v", r, b, again, err)
		}
	})
}

var sessionOracle = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,191}$`)

func FuzzValidateSession(f *testing.F) {
	for _, s := range []string{"a", "run-1.2", "", "-a", "a..b", "a.", strings.Repeat("x", 192), strings.Repeat("x", 193), "a b", "é", "a/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := probe.ValidateSession(s)
		want := sessionOracle.MatchString(s) && !strings.Contains(s, "..") && !strings.HasSuffix(s, ".")
		if (err == nil) != want {
			t.Fatalf("ValidateSession(%q) = %v, oracle says valid=%v", s, err, want)
		}
		if err != nil {
			if !errors.Is(err, probe.ErrInvalidSession) {
				t.Fatalf("error %v does not wrap ErrInvalidSession", err)
			}
			return
		}
		// Accepted ids round-trip through a report and mint sentinels.
		b, _ := json.Marshal(probe.Report{SessionID: s})
		if r, err := probe.ParseReport(b); err != nil || r.SessionID != s {
			t.Fatalf("report round trip of %q: %+v, %v", s, r, err)
		}
		k := testKeys(t, "fuzz-session")
		if _, err := k.Sentinel(s, 1, 16); err != nil {
			t.Fatalf("Sentinel(%q): %v", s, err)
		}
	})
}

// findOracle is FindSentinels written with Go's regexp: maximal runs, then
// the boundary and decoding rules.
var runRE = regexp.MustCompile(`[A-Za-z0-9_-]+`)

func findOracle(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, loc := range runRE.FindAllStringIndex(text, -1) {
		run := text[loc[0]:loc[1]]
		if loc[1] < len(text) && text[loc[1]] == '=' {
			continue
		}
		if len(run) < 22 || len(run) > 43 {
			continue
		}
		raw, err := base64.RawURLEncoding.Strict().DecodeString(run)
		if err != nil || len(raw) < 16 || len(raw) > 32 {
			continue
		}
		if !seen[run] {
			seen[run] = true
			out = append(out, run)
		}
	}
	return out
}

func FuzzFindSentinels(f *testing.F) {
	for _, s := range []string{
		"", "TW9pr7BTmyPAZRXZC5mK0w", probe.ProbeLine("TW9pr7BTmyPAZRXZC5mK0w"),
		"a TW9pr7BTmyPAZRXZC5mK0w= b", "TW9pr7BTmyPAZRXZC5mK01JeuwHakdlY45xXMyiAqNY",
		"xTW9pr7BTmyPAZRXZC5mK0w", "ключ TW9pr7BTmyPAZRXZC5mK0w\x00TW9pr7BTmyPAZRXZC5mK0w",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := probe.FindSentinels(text)
		if want := findOracle(text); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("FindSentinels(%q) = %v, oracle %v", text, got, want)
		}
		for _, s := range got {
			raw, err := base64.RawURLEncoding.Strict().DecodeString(s)
			if err != nil || base64.RawURLEncoding.EncodeToString(raw) != s {
				t.Fatalf("%q does not round-trip", s)
			}
			// Whatever is found is found again inside a probe line.
			if again := probe.FindSentinels(probe.ProbeLine(s)); len(again) != 1 || again[0] != s {
				t.Fatalf("probe line of %q gives %v", s, again)
			}
		}
	})
}

// FuzzAdjudicate checks the MAC comparison: no input panics, and a
// positive verdict is only ever given to the genuine sentinel.
func FuzzAdjudicate(f *testing.F) {
	k := testKeys(f, "fuzz-adjudicate")
	real, _ := k.Sentinel("fz", b0, 16)
	f.Add("fz", real, int64(0))
	f.Add("fz", real+"=", int64(0))
	f.Add("fz", real[:21], int64(0))
	f.Add("other", real, int64(10))
	f.Add("fz", real, int64(400))
	f.Add("fz", real, int64(-5))
	f.Add("", "", int64(0))
	f.Fuzz(func(t *testing.T, session, reported string, shift int64) {
		clk := newFakeClock(at(b0, 0))
		a := newAdj(t, k, clk, probe.Options{})
		issue(t, a, "fz")
		clk.Set(at(b0+shift%600, 0))
		r := a.Adjudicate(session, reported)
		if !r.Verdict.Valid() {
			t.Fatalf("verdict %q", r.Verdict)
		}
		if strings.Contains(r.Reason, reported) && len(reported) > 3 {
			t.Fatalf("reason %q echoes the report", r.Reason)
		}
		switch r.Verdict {
		case probe.ReadVerified, probe.ReadStale:
			want, err := k.Sentinel(session, r.Bucket, 16)
			if err != nil || want != reported {
				t.Fatalf("%s for a value that is not the sentinel of %q at %d", r.Verdict, session, r.Bucket)
			}
		case probe.ReplaySuspect:
			if reported != real {
				t.Fatalf("REPLAY_SUSPECT for a value that was never issued")
			}
		}
		// The stateless form agrees on the genuine record.
		iss := probe.Issued{Session: "fz", Bucket: b0, Length: 16}
		cr, err := k.Check(iss, reported, at(b0+shift%600, 0), probe.CheckOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if (cr.Verdict == probe.ReadVerified || cr.Verdict == probe.ReadStale) != (reported == real && cr.Matched && b0 <= probe.Bucket(at(b0+shift%600, 0)) && probe.Bucket(at(b0+shift%600, 0))-b0 <= 288) {
			t.Fatalf("Check(%q) = %+v", reported, cr)
		}
	})
}

func FuzzCheckAnswer(f *testing.F) {
	k := testKeys(f, "fuzz-answer")
	now := at(b0, 100)
	e0, s0, _ := k.Issue("run.0", now, 16)
	e1, s1, _ := k.Issue("run.1", now, 32)
	f.Add("answer " + s0 + " and " + s1)
	f.Add(probe.ProbeLine(s1))
	f.Add(s0 + "=")
	f.Add("")
	f.Fuzz(func(t *testing.T, answer string) {
		res, err := k.CheckAnswer([]probe.Issued{e0, e1}, answer, now.Add(time.Minute), probe.AnswerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := probe.FindSentinels(answer)
		has := func(s string) bool {
			for _, v := range found {
				if v == s {
					return true
				}
			}
			return false
		}
		for i, s := range []string{s0, s1} {
			if (res[i].Verdict == probe.ReadVerified) != has(s) {
				t.Fatalf("entry %d: %s, sentinel found=%v", i, res[i].Verdict, has(s))
			}
		}
	})
}
