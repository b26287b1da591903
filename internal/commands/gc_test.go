package commands

import (
	"testing"
	"time"
)

func TestParseGrace(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"2w": 14 * 24 * time.Hour, "3d": 72 * time.Hour, "1.5d": 36 * time.Hour, "1h": time.Hour, "90m": 90 * time.Minute, " 1h30m ": 90 * time.Minute,
	} {
		got, now, err := parseGrace(in)
		if err != nil || now || got != want {
			t.Errorf("parseGrace(%q) = %v, %v, %v; want %v", in, got, now, err, want)
		}
	}
	for _, in := range []string{"now", "0"} {
		if _, now, err := parseGrace(in); err != nil || !now {
			t.Errorf("parseGrace(%q): now %v, err %v", in, now, err)
		}
	}
	for _, in := range []string{"", "w", "-1d", "0d", "NaNw", "1y", "-5m", "abc", "1e9w", "0s"} {
		if _, _, err := parseGrace(in); err == nil {
			t.Errorf("parseGrace(%q) accepted", in)
		}
	}
}

// FuzzParseGrace looks at short inputs only: a grace period is a few
// characters, each exec of this package's test binary is slow (it links and
// instruments the whole program, about 1,600 execs/s), and Go's minimizer
// spends about n*n/2 execs on every n-byte input that reaches new coverage,
// so long mutants kept the only worker minimizing with the coordinator
// reporting 0 execs/s.
func FuzzParseGrace(f *testing.F) {
	for _, s := range []string{"2w", "3d", "1h", "now", "0", "", "NaNw", "1e308d", "-1h", "1.5w", "90m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 32 {
			return
		}
		d, now, err := parseGrace(s)
		if err != nil {
			return
		}
		if now {
			if d != 0 {
				t.Fatalf("%q: now with duration %v", s, d)
			}
			return
		}
		if d <= 0 {
			t.Fatalf("%q: accepted non-positive %v", s, d)
		}
	})
}
