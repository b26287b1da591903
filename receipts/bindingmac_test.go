package receipts

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore/gitobj"
)

const (
	manifestA = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	manifestB = "9f2c4e1a7b3d5f60819a2b3c4d5e6f708192a3b4"
)

// issueBound issues a version 2 receipt of run r1 bound to b (as the
// store's Bind would) into f's ledger.
func issueBound(t *testing.T, f *fixture, session string, b Binding) Receipt {
	t.Helper()
	f.ledger.Bind = func(string) Binding { return b }
	r, err := f.issuer.Issue(context.Background(), Call{Session: session, Run: "r1", Tool: "t", Args: ArgvArgs([]string{"x"}), Result: BytesResult([]byte("y"))})
	if err != nil {
		t.Fatal(err)
	}
	if r.Format != BoundVersion || r.Bound != b && !r.Bound.RunStarted.Equal(b.RunStarted) {
		t.Fatalf("issued format %d bound %+v, want version %d bound %+v", r.Format, r.Bound, BoundVersion, b)
	}
	return r
}

// TestBindingUnderMAC: a version 2 receipt's binding is covered by its
// MAC: moving it to another manifest, to a start, out of every manifest,
// back to version 1, or replaying another receipt's binding onto it, all
// fail Verify as tampered; under another key it is unknown_key, binding
// and all.
func TestBindingUnderMAC(t *testing.T) {
	f := newFixture(t)
	r := issueBound(t, f, "s", Binding{Manifest: manifestA})
	other := issueBound(t, f, "s", Binding{Manifest: manifestB})
	if err := Verify(r, f.key); err != nil {
		t.Fatalf("Verify(genuine bound receipt): %v", err)
	}
	enc := string(r.Encode())
	if !strings.Contains(enc, `"v":2,`) || !strings.Contains(enc, `,"run_manifest":"`+manifestA+`","mac":"`) {
		t.Fatalf("stored JSON %s: want version 2 with run_manifest before mac", enc)
	}
	edits := map[string]string{
		"other manifest": strings.Replace(enc, manifestA, manifestB, 1),
		"to a start":     strings.Replace(enc, `"run_manifest":"`+manifestA+`"`, `"run_started":"2026-11-29T20:00:00.000000000Z"`, 1),
		"stripped":       strings.Replace(enc, `,"run_manifest":"`+manifestA+`"`, ``, 1),
		"as version 1":   strings.Replace(strings.Replace(enc, `,"run_manifest":"`+manifestA+`"`, ``, 1), `"v":2,`, `"v":1,`, 1),
		// the other receipt's binding with its MAC: the MAC covers the id
		"replayed": strings.Replace(strings.Replace(enc, manifestA, manifestB, 1), r.MAC.String(), other.MAC.String(), 1),
	}
	for name, in := range edits {
		if in == enc {
			t.Fatalf("%s: edit did not change the receipt", name)
		}
		d, err := DecodeReceipt([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := Verify(d, f.key); !errors.Is(err, ErrTampered) {
			t.Errorf("%s: Verify = %v, want ErrTampered", name, err)
		}
	}
	if err := Verify(r, testKey(t, 3)); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("another key: Verify = %v, want ErrUnknownKey", err)
	}
	// version 2 input: version byte 2, always fifteen fields; a binding
	// shifted between caller and manifest changes the input
	a := Receipt{ID: r.ID, Session: "s", Run: "r1", Tool: "t", Start: r.Start, End: r.End, KeyID: r.KeyID, Format: BoundVersion, Caller: "ab"}
	b := a
	b.Caller, b.Bound = "", Binding{Manifest: manifestA}
	c := a
	c.Format = Version
	if a.macInput()[0] != BoundVersion || bytes.Equal(a.macInput(), b.macInput()) || bytes.Equal(a.macInput(), c.macInput()) {
		t.Error("version 2 MAC inputs collide or do not start with byte 2")
	}
}

// rewriteAppend replaces the commit of chain ref whose first line is first
// by one with the message edit gives, and rewrites the commits after it on
// the first-parent chain, as someone with write access would with git
// commit-tree and update-ref.
func rewriteAppend(t *testing.T, f *fixture, ref, first string, edit func(string) string) {
	t.Helper()
	tip, err := f.ledger.ref(ref)
	if err != nil {
		t.Fatal(err)
	}
	var commits []gitobj.Commit
	for c := tip; c != ""; {
		cm, err := f.store.Commit(c)
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, cm)
		if strings.HasPrefix(cm.Message, first+"\n") {
			break
		}
		if len(cm.Parents) == 0 {
			t.Fatalf("no commit of %s starts with %q", ref, first)
		}
		c = cm.Parents[0]
	}
	var parent gitobj.OID
	for i := len(commits) - 1; i >= 0; i-- {
		cm := commits[i]
		if i == len(commits)-1 {
			cm.Message = edit(cm.Message)
		} else {
			cm.Parents = append([]gitobj.OID{parent}, cm.Parents[1:]...)
		}
		if parent, err = f.store.PutCommit(cm); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.store.Update(gitobj.RefUpdate{Name: ref, Old: tip, New: parent}); err != nil {
		t.Fatal(err)
	}
}

// TestBindingLineEdited: the binding line of a version 2 receipt's append
// commit must be the binding its MAC covers. Moving it to another
// manifest, stripping it, adding a second line, or editing the first line
// so that no commit appends the receipt, is reported as tampered by Scan
// (list, verify-claims, evidence verify), BindingOf (show) and Check
// (readproof verify), naming the receipt and its session; the binding
// Scan reports stays the one the MAC covers. A version 1 receipt's line
// is read as before, unchecked.
func TestBindingLineEdited(t *testing.T) {
	started := time.Date(2026, 11, 29, 19, 59, 0, 500000000, time.UTC)
	for _, tc := range []struct {
		name  string
		bound Binding
		chain string // "session" or "index"
		edit  func(msg string) string
	}{
		{"moved", Binding{Manifest: manifestA}, "session", func(m string) string { return strings.Replace(m, manifestA, manifestB, 1) }},
		{"moved in index", Binding{Manifest: manifestA}, "index", func(m string) string { return strings.Replace(m, manifestA, manifestB, 1) }},
		{"stripped", Binding{Manifest: manifestA}, "session", func(m string) string { return strings.Replace(m, "run-manifest: "+manifestA+"\n", "", 1) }},
		{"start stripped", Binding{RunStarted: started}, "session", func(m string) string { return m[:strings.Index(m, "run-started: ")] }},
		{"start moved", Binding{RunStarted: started}, "index", func(m string) string { return strings.Replace(m, "19:59:00.5Z", "19:59:00.6Z", 1) }},
		{"line added", Binding{}, "session", func(m string) string { return m + "run-manifest: " + manifestB + "\n" }},
		{"second line", Binding{Manifest: manifestA}, "session", func(m string) string { return m + "run-manifest: " + manifestB + "\n" }},
		{"first line", Binding{Manifest: manifestA}, "session", func(m string) string { return "edited " + m }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			keep := issueBound(t, f, "s", Binding{Manifest: manifestB})
			r := issueBound(t, f, "s", tc.bound)
			after := issueBound(t, f, "s", Binding{})
			ref, first := SessionRef("s"), "receipt "+r.ID
			if tc.chain == "index" {
				ref, first = indexRef(r.ID), "index receipt "+r.ID
			}
			before, err := f.ledger.Check()
			if err != nil || len(before) != 0 {
				t.Fatalf("Check before the edit: %v %v", before, err)
			}
			rewriteAppend(t, f, ref, first, tc.edit)

			checked := func(err error, where string) {
				t.Helper()
				if !errors.Is(err, ErrBindingEdited) || !errors.Is(err, ErrTampered) {
					t.Errorf("%s: %v, want ErrBindingEdited", where, err)
				} else if !strings.Contains(err.Error(), r.ID) || !strings.Contains(err.Error(), `session "s"`) || !strings.Contains(err.Error(), r.Bound.String()) {
					t.Errorf("%s: %v does not name the receipt, its session and its binding", where, err)
				}
			}
			issues, err := f.ledger.Check()
			if err != nil {
				t.Fatal(err)
			}
			if len(issues) != 1 || issues[0].ID != r.ID || issues[0].Ref != ref || !strings.Contains(issues[0].Message, "tampered binding") {
				t.Errorf("Check after the edit: %v, want one issue for %s in %s", issues, r.ID, ref)
			}
			entries, err := f.ledger.Scan("s")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				switch {
				case e.ID == r.ID && tc.chain == "session":
					checked(e.Err, "Scan")
					if e.Binding != r.Bound && !e.Binding.RunStarted.Equal(r.Bound.RunStarted) {
						t.Errorf("Scan: binding %+v, want the MAC's %+v", e.Binding, r.Bound)
					}
				case e.Err != nil:
					t.Errorf("Scan: %s: %v", e.ID, e.Err)
				}
			}
			_, err = f.ledger.BindingOf(r)
			if tc.chain == "index" {
				checked(err, "BindingOf")
			} else if err != nil {
				t.Errorf("BindingOf (index chain untouched): %v", err)
			}
			for _, o := range []Receipt{keep, after} {
				if _, err := f.ledger.BindingOf(o); err != nil {
					t.Errorf("BindingOf(%s): %v", o.ID, err)
				}
			}
		})
	}
}

// TestBindingLineVersion1: a version 1 receipt (issued before session 24)
// has no binding under its MAC; its append commit's line is its binding,
// read as before, and editing it is not reported (docs/receipts.md,
// "Limitations").
func TestBindingLineVersion1(t *testing.T) {
	f := newFixture(t)
	f.ledger.Bind = func(string) Binding { return Binding{Manifest: manifestA} }
	r, err := f.key.Seal(Receipt{ID: NewID(), Session: "s", Run: "r1", Tool: "t", Start: time.Unix(1, 0), End: time.Unix(2, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ledger.Append(r); err != nil {
		t.Fatal(err)
	}
	if enc := string(r.Encode()); !strings.HasPrefix(enc, `{"v":1,`) || strings.Contains(enc, "run_manifest") {
		t.Fatalf("version 1 receipt encodes as %s", enc)
	}
	rewriteAppend(t, f, SessionRef("s"), "receipt "+r.ID, func(m string) string { return strings.Replace(m, manifestA, manifestB, 1) })
	entries, err := f.ledger.Scan("s")
	if err != nil || len(entries) != 1 || entries[0].Err != nil || entries[0].Binding.Manifest != manifestB {
		t.Fatalf("Scan: %+v %v, want the edited line's binding, no error", entries, err)
	}
	if issues, err := f.ledger.Check(); err != nil || len(issues) != 0 {
		t.Errorf("Check: %v %v, want none", issues, err)
	}
}

// FuzzCheckBindingLine: checking an append commit's message never panics,
// passes exactly when the message's binding lines are the one the
// receipt's binding gives, passes the message Append writes, and passes
// anything for a version 1 receipt.
func FuzzCheckBindingLine(f *testing.F) {
	f.Add("receipt x\n\nsession: s\ntool: t\nrun-manifest: "+manifestA+"\n", manifestA, int64(0))
	f.Add("receipt x\n\nsession: s\ntool: t\n", "", int64(1795982340500000000))
	f.Add("run-manifest: "+manifestA+"\nrun-manifest: "+manifestA, manifestA, int64(0))
	f.Add("run-started: 2026-11-29T19:59:00.5Z", "", int64(1795982340500000000))
	f.Fuzz(func(t *testing.T, msg, manifest string, started int64) {
		r := Receipt{ID: "rcpt_zzqdvk5vnacrgxv6an2368gh03zyxqec", Session: "agent-7", Run: "r1", Tool: "exec", Format: BoundVersion}
		r.Bound.Manifest = manifest
		if started != 0 {
			r.Bound.RunStarted = time.Unix(0, started).UTC()
		}
		if r.Bound.validate(r.Run) != nil {
			return
		}
		err := CheckBindingLine(r, "ref", msg)
		if (err == nil) != (bindingLines(msg) == r.Bound.trailer()) {
			t.Fatalf("message %q, binding %+v: %v", msg, r.Bound, err)
		}
		if err != nil && (!errors.Is(err, ErrBindingEdited) || !strings.Contains(err.Error(), r.ID)) {
			t.Fatalf("error %v", err)
		}
		if err == nil && parseBinding(msg) != r.Bound && !parseBinding(msg).RunStarted.Equal(r.Bound.RunStarted) {
			t.Fatalf("message %q passes but binds %+v, not %+v", msg, parseBinding(msg), r.Bound)
		}
		if err := CheckBindingLine(r, "ref", appendMessage(r, r.Bound)); err != nil {
			t.Fatalf("the message Append writes fails: %v", err)
		}
		v1 := r
		v1.Format, v1.Bound = Version, Binding{}
		if err := CheckBindingLine(v1, "ref", msg); err != nil {
			t.Fatalf("version 1: %v", err)
		}
	})
}

// TestMACInputInjectiveAcrossVersions: random receipts of both versions,
// with random bindings drawn from a narrow alphabet, never share a MAC
// input unless their fields are the same; a version 2 input parses back
// into exactly fifteen fields, the last two the binding.
func TestMACInputInjectiveAcrossVersions(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	seen := map[string]string{}
	for i := 0; i < 50000; i++ {
		r := randomReceipt(rng)
		if rng.IntN(2) == 0 {
			r.Format = BoundVersion
			switch rng.IntN(3) {
			case 0:
				r.Bound.Manifest = string("ab0\x00"[rng.IntN(4)]) + r.Tool[:min(len(r.Tool), 1)]
			case 1:
				r.Bound.RunStarted = time.Unix(0, int64(rng.IntN(5))-2)
			}
		}
		enc := r.macInput()
		tuple := fmt.Sprintf("%d %q %v %q %v", r.version(), tupleOf(r), r.Bound.RunStarted.UnixNano(), r.Bound.Manifest, r.Bound.RunStarted.IsZero())
		if prev, ok := seen[string(enc)]; ok && prev != tuple {
			t.Fatalf("two receipts encode alike:\n%s\n%s", prev, tuple)
		}
		seen[string(enc)] = tuple
		if r.version() != BoundVersion {
			continue
		}
		// parse: version byte, then length-prefixed fields to the end
		if enc[0] != BoundVersion {
			t.Fatalf("version 2 input starts with %d", enc[0])
		}
		var fields [][]byte
		for rest := enc[1:]; len(rest) > 0; {
			if len(rest) < 4 {
				t.Fatalf("truncated field in %x", enc)
			}
			n := binary.BigEndian.Uint32(rest)
			fields, rest = append(fields, rest[4:4+n]), rest[4+n:]
		}
		wantStarted := []byte(nil)
		if !r.Bound.RunStarted.IsZero() {
			wantStarted = binary.BigEndian.AppendUint64(nil, uint64(r.Bound.RunStarted.UnixNano()))
		}
		if len(fields) != 15 || string(fields[12]) != r.Caller || string(fields[13]) != r.Bound.Manifest || !bytes.Equal(fields[14], wantStarted) {
			t.Fatalf("version 2 input %x parses into %d fields %q", enc, len(fields), fields)
		}
	}
	if len(seen) < 25000 {
		t.Fatalf("only %d distinct encodings: the generator is too narrow to mean anything", len(seen))
	}
}
