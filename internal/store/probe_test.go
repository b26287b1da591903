package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/manifest"
)

const probeToml = `[[resource]]
uri = "readproof://demo/a"
source = { type = "filesystem", path = "a.md" }
`

// probeDecorate sets a probe record that encodes the position it was
// computed for, so a test can see which invocation was recorded.
func probeDecorate(seen *[]int) func(*Delivery) error {
	return func(d *Delivery) error {
		*seen = append(*seen, d.Position)
		d.Probe = &manifest.Probe{Bucket: int64(1000 + d.Position), Length: 16,
			DeliveredHash: contentHash([]byte(fmt.Sprint(d.Position))), DeliveredSize: int64(d.Position)}
		return nil
	}
}

// TestMountWithPositionRecomputesOnConflict: a mount that lands while the
// hook runs takes the position; the hook runs again for the next position,
// and the recorded entry carries the second computation.
func TestMountWithPositionRecomputesOnConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t, probeToml, map[string]string{"a.md": "alpha\n"})
	ctx := context.Background()
	if err := f.s.StartRun("r"); err != nil {
		t.Fatal(err)
	}
	var seen []int
	inner := probeDecorate(&seen)
	d, err := f.s.MountWithPosition(ctx, "r", "readproof://demo/a", func(d *Delivery) error {
		if len(seen) == 0 {
			// another writer takes position 0 before this mount publishes
			if _, err := f.s.Mount(ctx, "r", "readproof://demo/a"); err != nil {
				return err
			}
		}
		if err := inner(d); err != nil {
			return err
		}
		d.Position = 99 // the hook cannot move the entry
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The hook runs once per attempt: the first for position 0, the last
	// (the recorded one) for position 1. The resource chain may add an
	// attempt of its own, which sees position 1 again.
	if len(seen) < 2 || seen[0] != 0 || seen[len(seen)-1] != 1 || d.Position != 1 {
		t.Fatalf("hook saw positions %v, delivery at %d; want 0 first, 1 last, delivery at 1", seen, d.Position)
	}
	if string(d.Content) != "alpha\n" {
		t.Fatalf("delivery content %q: the store must return the snapshot bytes", d.Content)
	}
	m, err := f.s.CommitRun("r")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) != 2 || m.Entries[0].Probe != nil || m.Entries[1].Probe == nil || m.Entries[1].Probe.Bucket != 1001 {
		got, _ := json.Marshal(m.Entries)
		t.Fatalf("entries %s: want a plain entry 0 and entry 1 probed for position 1", got)
	}
	c, err := f.s.Git().Commit(gitstore.OID(m.ID))
	if err != nil {
		t.Fatal(err)
	}
	blob, err := f.s.file(c.Tree, m.Entries[1].File)
	if err != nil || string(blob) != m.Entries[1].Snapshot {
		t.Fatalf("manifest tree file %s is %s (%v), want the snapshot %s", m.Entries[1].File, blob, err, m.Entries[1].Snapshot)
	}
}

func TestMountWithPositionHookErrorRecordsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, probeToml, map[string]string{"a.md": "alpha\n"})
	if err := f.s.StartRun("r"); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("no key")
	_, err := f.s.MountWithPosition(context.Background(), "r", "readproof://demo/a", func(*Delivery) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the hook's error", err)
	}
	m, err := f.s.CommitRun("r")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) != 0 {
		t.Fatalf("%d entries recorded after a failing hook", len(m.Entries))
	}
	if _, err := f.s.MountWithPosition(context.Background(), "r", "readproof://demo/a", nil); !errors.Is(err, ErrRunCommitted) {
		t.Fatalf("mount into a committed run: %v", err)
	}
}

// probedRun commits run id with n probed entries.
func probedRun(t *testing.T, f *fixture, id string, n int) *manifest.Manifest {
	t.Helper()
	if err := f.s.StartRun(id); err != nil {
		t.Fatal(err)
	}
	var seen []int
	for i := 0; i < n; i++ {
		if _, err := f.s.MountWithPosition(context.Background(), id, "readproof://demo/a", probeDecorate(&seen)); err != nil {
			t.Fatal(err)
		}
	}
	m, err := f.s.CommitRun(id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// record builds a well-formed record for every probed entry of m, with the
// given verdict, counting on from prev.
func record(m *manifest.Manifest, prev *VerdictRecord, verdict string, at time.Time) *VerdictRecord {
	r := &VerdictRecord{Format: VerdictsFormat, RunID: m.RunID, ManifestID: m.ID, CheckedAt: at, Check: 1}
	if prev != nil {
		r.Check = prev.Check + 1
	}
	for _, e := range m.Entries {
		r.Entries = append(r.Entries, VerdictEntry{Position: e.Position, URI: e.URI, Session: fmt.Sprintf("%s.%d", m.RunID, e.Position),
			Verdict: verdict, Reason: "test", Bucket: e.Probe.Bucket, AnswerSHA256: contentHash([]byte("answer"))})
	}
	return r
}

// verifiedRun is probedRun with check 1 recorded: every entry
// READ_VERIFIED.
func verifiedRun(t *testing.T, f *fixture, id string, n int) (*manifest.Manifest, *VerdictRecord) {
	t.Helper()
	m := probedRun(t, f, id, n)
	rec, err := f.s.RecordVerdicts(id, func(got *manifest.Manifest, prev *VerdictRecord) (*VerdictRecord, error) {
		return record(got, prev, "READ_VERIFIED", f.clock.Now()), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, rec
}

func TestRecordVerdictsChain(t *testing.T) {
	t.Parallel()
	f := newFixture(t, probeToml, map[string]string{"a.md": "alpha\n"})
	m := probedRun(t, f, "r", 2)
	if r, err := f.s.Verdicts("r"); r != nil || err != nil {
		t.Fatalf("Verdicts before any check = %v, %v; want nil, nil", r, err)
	}
	var prevs []*VerdictRecord
	for i, v := range []string{"READ_VERIFIED", "REPLAY_SUSPECT"} {
		r, err := f.s.RecordVerdicts("r", func(got *manifest.Manifest, prev *VerdictRecord) (*VerdictRecord, error) {
			if got.ID != m.ID {
				t.Fatalf("build got manifest %s, want %s", got.ID, m.ID)
			}
			prevs = append(prevs, prev)
			return record(got, prev, v, f.clock.Now()), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if r.Check != i+1 || r.ID == "" {
			t.Fatalf("check %d recorded as %d (%q)", i+1, r.Check, r.ID)
		}
		f.clock.Add(time.Minute)
	}
	if prevs[0] != nil || prevs[1] == nil || prevs[1].Entries[0].Verdict != "READ_VERIFIED" {
		t.Fatalf("build saw previous records %+v", prevs)
	}
	hist, err := f.s.VerdictHistory("r")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[0].Check != 2 || hist[1].Check != 1 {
		t.Fatalf("history %+v, want checks 2 then 1", hist)
	}
	latest, err := f.s.Verdicts("r")
	if err != nil || latest.ID != hist[0].ID || latest.Entries[1].Verdict != "REPLAY_SUSPECT" {
		t.Fatalf("Verdicts = %+v, %v", latest, err)
	}
	c, err := f.s.Git().Commit(gitstore.OID(latest.ID))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Parents) != 1 || string(c.Parents[0]) != hist[1].ID || !strings.Contains(c.Message, "Readproof-Manifest: "+m.ID) {
		t.Fatalf("verdict commit parents %v, message %q", c.Parents, c.Message)
	}
	if id, _ := f.s.ManifestID("r"); string(id) != m.ID {
		t.Fatalf("manifest id moved from %s to %s", m.ID, id)
	}
}

// TestRecordVerdictsConcurrentCheckRebuilds: a check that lands while
// another is being built makes the other rebuild on it, so two checks can
// never both see "not adjudicated".
func TestRecordVerdictsConcurrentCheckRebuilds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, probeToml, map[string]string{"a.md": "alpha\n"})
	probedRun(t, f, "r", 1)
	calls := 0
	r, err := f.s.RecordVerdicts("r", func(m *manifest.Manifest, prev *VerdictRecord) (*VerdictRecord, error) {
		calls++
		if calls == 1 {
			if _, err := f.s.RecordVerdicts("r", func(m *manifest.Manifest, prev *VerdictRecord) (*VerdictRecord, error) {
				return record(m, prev, "READ_VERIFIED", f.clock.Now()), nil
			}); err != nil {
				return nil, err
			}
		}
		v := "READ_VERIFIED"
		if prev != nil {
			v = "REPLAY_SUSPECT"
		}
		return record(m, prev, v, f.clock.Now()), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || r.Check != 2 || r.Entries[0].Verdict != "REPLAY_SUSPECT" {
		t.Fatalf("calls %d, check %d, verdict %s; want a rebuild on the landed check", calls, r.Check, r.Entries[0].Verdict)
	}
	hist, err := f.s.VerdictHistory("r")
	if err != nil || len(hist) != 2 {
		t.Fatalf("history %d records, %v", len(hist), err)
	}
}

func TestRecordVerdictsRefusesBadRecords(t *testing.T) {
	t.Parallel()
	f := newFixture(t, probeToml, map[string]string{"a.md": "alpha\n"})
	m := probedRun(t, f, "r", 2)
	if err := f.s.StartRun("plain"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Mount(context.Background(), "plain", "readproof://demo/a"); err != nil {
		t.Fatal(err)
	}
	_, err := f.s.RecordVerdicts("plain", func(m *manifest.Manifest, _ *VerdictRecord) (*VerdictRecord, error) {
		t.Fatal("build called for an open run")
		return nil, nil
	})
	if !errors.Is(err, ErrUnknownTarget) || !strings.Contains(err.Error(), "still open") {
		t.Fatalf("open run: %v", err)
	}
	if _, err := f.s.RecordVerdicts("nope", nil); !errors.Is(err, ErrUnknownTarget) {
		t.Fatalf("unknown run: %v", err)
	}
	plain, err := f.s.CommitRun("plain")
	if err != nil {
		t.Fatal(err)
	}
	now := f.clock.Now()
	cases := map[string]func(r *VerdictRecord){
		"format":        func(r *VerdictRecord) { r.Format = "x" },
		"run":           func(r *VerdictRecord) { r.RunID = "other" },
		"manifest":      func(r *VerdictRecord) { r.ManifestID = plain.ID },
		"time":          func(r *VerdictRecord) { r.CheckedAt = time.Time{} },
		"check":         func(r *VerdictRecord) { r.Check = 0 },
		"empty":         func(r *VerdictRecord) { r.Entries = nil },
		"order":         func(r *VerdictRecord) { r.Entries[0], r.Entries[1] = r.Entries[1], r.Entries[0] },
		"duplicate":     func(r *VerdictRecord) { r.Entries[1].Position = 0 },
		"beyond":        func(r *VerdictRecord) { r.Entries[1].Position = 7 },
		"uri":           func(r *VerdictRecord) { r.Entries[0].URI = "readproof://demo/b" },
		"bucket":        func(r *VerdictRecord) { r.Entries[0].Bucket++ },
		"verdict":       func(r *VerdictRecord) { r.Entries[0].Verdict = "" },
		"line break":    func(r *VerdictRecord) { r.Entries[0].Reason = "a\nb" },
		"answer hash":   func(r *VerdictRecord) { r.Entries[0].AnswerSHA256 = "sha256:abc" },
		"answer prefix": func(r *VerdictRecord) { r.Entries[0].AnswerSHA256 = strings.Repeat("a", 71) },
	}
	for name, mutate := range cases {
		_, err := f.s.RecordVerdicts("r", func(m *manifest.Manifest, prev *VerdictRecord) (*VerdictRecord, error) {
			r := record(m, prev, "HALLUCINATED", now)
			mutate(r)
			return r, nil
		})
		if !errors.Is(err, ErrVerdicts) {
			t.Errorf("%s: err = %v, want ErrVerdicts", name, err)
		}
	}
	if r, err := f.s.Verdicts("r"); r != nil || err != nil {
		t.Fatalf("a refused record moved the chain: %v, %v", r, err)
	}
	// an unprobed entry cannot carry a verdict
	_, err = f.s.RecordVerdicts("plain", func(pm *manifest.Manifest, _ *VerdictRecord) (*VerdictRecord, error) {
		r := record(m, nil, "HALLUCINATED", now)
		r.RunID, r.ManifestID, r.Entries = "plain", pm.ID, r.Entries[:1]
		return r, nil
	})
	if !errors.Is(err, ErrVerdicts) || !strings.Contains(err.Error(), "not delivered with a probe") {
		t.Fatalf("verdict on an unprobed entry: %v", err)
	}
}

func TestDecodeVerdicts(t *testing.T) {
	t.Parallel()
	good := `{"format":"readproof-verdicts/1","run_id":"r","manifest_id":"m","checked_at":"2026-01-01T00:00:00Z","check":1,"entries":[]}`
	if _, err := decodeVerdicts("r", []byte(good+"\n")); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		good + "{}", good + "}", `{"format":"readproof-verdicts/1","run_id":"r","sentinel":"x"}`,
		strings.Replace(good, `"r"`, `"s"`, 1), strings.Replace(good, "verdicts/1", "verdicts/2", 1), "", "[]",
	} {
		if _, err := decodeVerdicts("r", []byte(bad)); !errors.Is(err, ErrVerdicts) {
			t.Errorf("decode %q: %v, want ErrVerdicts", bad, err)
		}
	}
}

// FuzzDecodeVerdicts: the verdicts.json parser never panics, and whatever
// it accepts survives a round trip unchanged.
func FuzzDecodeVerdicts(f *testing.F) {
	f.Add([]byte(`{"format":"readproof-verdicts/1","run_id":"r","manifest_id":"m","checked_at":"2026-01-01T00:00:00Z","check":1,"entries":[{"position":0,"uri":"readproof://demo/a","session":"r.0","verdict":"READ_VERIFIED","reason":"x","bucket":5,"age_seconds":3,"answer_sha256":"sha256:00","delivered_hash_verified":true,"adjudicated":true,"adjudicated_verdict":"READ_VERIFIED","adjudicated_at":"2026-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"format":"readproof-verdicts/1","run_id":"r"}`))
	f.Add([]byte(`{"format":"readproof-verdicts/1","run_id":"r","entries":null} x`))
	f.Add([]byte(`not json`))
	// A member given twice or spelt in another case is refused
	// (TestDecodeVerdictsRefusesShadowedMembers).
	f.Add([]byte(`{"format":"readproof-verdicts/1","run_id":"r","entries":[{"verdict":"READ_VERIFIED","Verdict":"HALLUCINATED"}]}`))
	f.Add([]byte(`{"format":"readproof-verdicts/1","run_id":"r","check":1,"check":2,"entries":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeVerdicts("r", data)
		if err != nil {
			if !errors.Is(err, ErrVerdicts) {
				t.Fatalf("error %v does not wrap ErrVerdicts", err)
			}
			return
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeVerdicts("r", out)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", out, err)
		}
		out2, _ := json.Marshal(again)
		if string(out) != string(out2) {
			t.Fatalf("round trip changed the record:\n%s\n%s", out, out2)
		}
	})
}
