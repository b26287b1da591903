package receipts

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestIssueExecEvenOnFailure(t *testing.T) {
	needSh(t)
	f := newFixture(t)
	for _, argv := range [][]string{
		{"sh", "-c", "echo fine"},
		{"sh", "-c", "echo bad >&2; exit 3"},
		{"sh", "-c", "kill -KILL $$"},
		{"readproof-no-such-command-xyz"},
	} {
		var so, se bytes.Buffer
		res, _ := Exec(context.Background(), ExecOptions{Argv: argv, Stdout: &so, Stderr: &se})
		r, err := f.issuer.Issue(context.Background(), CommandCall("exec-sess", "run-1", argv, res))
		if err != nil {
			t.Fatalf("%q: Issue: %v", argv, err)
		}
		if r.ExitCode == nil || *r.ExitCode != res.ExitCode || r.Signal != res.Signal || r.Error != res.Err || r.Tool != "exec" || r.Run != "run-1" {
			t.Errorf("%q: receipt %+v does not record the outcome %+v", argv, r, res)
		}
		if r.ArgsSHA256 != ArgvArgs(argv).SHA256() || r.ResultSHA256 != CommandResult(so.Bytes(), se.Bytes(), res.ExitCode, res.Signal).SHA256() {
			t.Errorf("%q: receipt hashes do not match the streamed output", argv)
		}
		if !r.Start.Equal(res.Start) || !r.End.Equal(res.End) {
			t.Errorf("%q: times %v..%v, exec %v..%v", argv, r.Start, r.End, res.Start, res.End)
		}
	}
	rs, err := f.ledger.List("exec-sess")
	if err != nil || len(rs) != 4 {
		t.Fatalf("List = %d, %v", len(rs), err)
	}
	codes := []int{}
	for _, r := range rs {
		codes = append(codes, *r.ExitCode)
		if err := Verify(r, f.key); err != nil {
			t.Error(err)
		}
	}
	if !slices.Equal(codes, []int{0, 3, 137, 127}) {
		t.Errorf("exit codes in the ledger %v", codes)
	}
}

func TestIssuerDefaultsAndRefusals(t *testing.T) {
	now := time.Date(2026, 5, 1, 0, 0, 0, 42, time.FixedZone("X", 3600))
	is := NewIssuer(testKey(t, 1), nil)
	is.Now = func() time.Time { return now }
	r, err := is.Issue(context.Background(), Call{Session: "s", Tool: "t", Args: ArgvArgs(nil), Result: BytesResult(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Start.Equal(now) || !r.End.Equal(now) || r.End.Location() != time.UTC {
		t.Errorf("times %v %v, want %v in UTC", r.Start, r.End, now)
	}
	if r.ExitCode != nil {
		t.Error("a byte result got an exit code")
	}
	for name, c := range map[string]Call{
		"no args":     {Session: "s", Tool: "t", Result: BytesResult(nil)},
		"no result":   {Session: "s", Tool: "t", Args: ArgvArgs(nil)},
		"bad session": {Session: "a/b", Tool: "t", Args: ArgvArgs(nil), Result: BytesResult(nil)},
		"bad run":     {Session: "s", Run: "..", Tool: "t", Args: ArgvArgs(nil), Result: BytesResult(nil)},
		"no tool":     {Session: "s", Args: ArgvArgs(nil), Result: BytesResult(nil)},
		"end<start":   {Session: "s", Tool: "t", Args: ArgvArgs(nil), Result: BytesResult(nil), Start: now, End: now.Add(-1)},
	} {
		if _, err := is.Issue(context.Background(), c); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Issue = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := NewIssuer(Key{}, nil).Issue(context.Background(), Call{Session: "s", Tool: "t", Args: ArgvArgs(nil), Result: BytesResult(nil)}); err == nil {
		t.Error("Issue with a zero key succeeded")
	}
	// A long error message with control characters is cleaned and cut.
	long := BytesResult(nil).WithError(string(bytes.Repeat([]byte("é\n"), 2000)))
	r, err = is.Issue(context.Background(), Call{Session: "s", Tool: "t", Args: ArgvArgs(nil), Result: long})
	if err != nil || len(r.Error) > MaxErrorLen || bytes.ContainsAny([]byte(r.Error), "\n") {
		t.Errorf("long error: %v, %d bytes", err, len(r.Error))
	}
}

func TestSummary(t *testing.T) {
	f := newFixture(t)
	var rs []Receipt
	for _, tool := range []string{"b", "a", "b"} {
		rs = append(rs, f.issue(t, "s", tool))
	}
	s := Summary(rs)
	if s.Count != 3 || !slices.Equal(s.IDs, ids(rs)) || !slices.Equal(s.Tools, []string{"a", "b"}) ||
		!slices.Equal(s.KeyIDs, []string{f.key.ID()}) || len(s.Digest) != len("sha256:")+64 {
		t.Fatalf("summary %+v", s)
	}
	stored, err := f.ledger.GetAll(s.IDs)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifySummary(s, stored, f.key); err != nil {
		t.Errorf("VerifySummary(genuine) = %v", err)
	}
	if err := VerifySummary(s, stored, testKey(t, 77)); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("VerifySummary under another key = %v, want ErrUnknownKey", err)
	}
	// Order, membership, a MAC or a summary field changed: mismatch.
	swapped := []Receipt{stored[1], stored[0], stored[2]}
	if err := s.Matches(swapped); !errors.Is(err, ErrSummaryMismatch) {
		t.Errorf("reordered receipts: %v", err)
	}
	if err := s.Matches(stored[:2]); !errors.Is(err, ErrSummaryMismatch) {
		t.Errorf("missing receipt: %v", err)
	}
	edited := slices.Clone(stored)
	edited[2].MAC[0] ^= 1
	if err := s.Matches(edited); !errors.Is(err, ErrSummaryMismatch) {
		t.Errorf("edited MAC: %v", err)
	}
	forged := slices.Clone(stored)
	forged[0].Tool = "x"
	s2 := Summary(forged) // a summary made over an edited receipt
	if err := VerifySummary(s2, forged, f.key); !errors.Is(err, ErrTampered) {
		t.Errorf("summary over an edited receipt: %v, want ErrTampered", err)
	}
	bad := s
	bad.Tools = []string{"a"}
	if err := bad.Matches(stored); !errors.Is(err, ErrSummaryMismatch) {
		t.Errorf("edited tools: %v", err)
	}
	empty := Summary(nil)
	if err := empty.Matches(nil); err != nil || empty.IDs == nil || empty.Tools == nil {
		t.Errorf("empty summary %+v: %v", empty, err)
	}
	if _, err := f.ledger.GetAll([]string{NewID()}); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetAll(unknown) = %v", err)
	}
}
