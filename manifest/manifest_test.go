package manifest

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./manifest -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func sample() *Manifest {
	at := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	e := func(pos int, uri, ref, snap, hash, rev string) Entry {
		return Entry{Position: pos, URI: uri, Ref: ref, Snapshot: snap, ContentHash: hash, SourceRevision: rev,
			ObservedAt: at, Decision: DecisionFetch, Bytes: 41, ContentType: "text/markdown",
			Provenance: map[string]string{"source_type": "filesystem", "path": "policies/refunds.md"}}
	}
	m := &Manifest{Format: Format, RunID: "run-a", StartedAt: at, CreatedAt: at.Add(time.Second), Entries: []Entry{
		e(0, "readproof://demo/policies/refunds", "", "1ae984e288457551a53914820e8411431331791c",
			"sha256:c8b0bb212e93151d720746e36ff3b7076727cb577614feafa0d61f168965aedb", "sha256:c8b0bb212e93"),
		e(1, "readproof://demo/policies/refunds", "prod", "1ae984e288457551a53914820e8411431331791c",
			"sha256:c8b0bb212e93151d720746e36ff3b7076727cb577614feafa0d61f168965aedb", "sha256:c8b0bb212e93"),
		e(2, "readproof://demo/policies/refunds", "", "1ae984e288457551a53914820e8411431331791c",
			"sha256:c8b0bb212e93151d720746e36ff3b7076727cb577614feafa0d61f168965aedb", "sha256:c8b0bb212e93"),
		e(3, "readproof://demo/policies", "", "2be984e288457551a53914820e8411431331791c",
			"sha256:8f4b00474456a1d8a3b7c9bb3b4f5d1a6e0e3d3f8c9d7e6f5a4b3c2d1e0f9a8b", "sha256:8f4b00474456"),
	}}
	m.Entries[1].Decision = DecisionUseTag
	AssignFiles(m.Entries)
	return m
}

func TestAssignFiles(t *testing.T) {
	m := sample()
	want := []string{
		"content/demo/policies/refunds",
		"content/demo/policies/refunds@prod",
		"content/demo/policies/refunds~2",
		"content/demo/policies~3", // also needed as a directory
	}
	for i, e := range m.Entries {
		if e.File != want[i] {
			t.Errorf("entry %d file %q, want %q", i, e.File, want[i])
		}
	}
}

func TestEncodeGoldenAndRoundTrip(t *testing.T) {
	m := sample()
	data, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "manifest.json", data)
	back, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Encode(back)
	if !bytes.Equal(again, data) {
		t.Fatal("decode then encode changed the bytes")
	}
	golden(t, "message.txt", []byte(Message(m)))
}

func TestDecodeRejects(t *testing.T) {
	good, _ := Encode(sample())
	cases := map[string]func(string) string{
		"unknown field": func(s string) string { return strings.Replace(s, `"run_id"`, `"surprise": 1, "run_id"`, 1) },
		"format":        func(s string) string { return strings.Replace(s, Format, "readproof-manifest/9", 1) },
		"position":      func(s string) string { return strings.Replace(s, `"position": 1`, `"position": 7`, 1) },
		"uri": func(s string) string {
			return strings.Replace(s, "readproof://demo/policies\"", "readproof://demo/../x\"", 1)
		},
		"uri with tag": func(s string) string {
			return strings.Replace(s, "readproof://demo/policies\"", "readproof://demo/policies@x\"", 1)
		},
		"hash":         func(s string) string { return strings.Replace(s, "sha256:c8b0bb", "sha256:C8B0BB", 1) },
		"snapshot":     func(s string) string { return strings.Replace(s, "1ae984e2", "zzz984e2", 1) },
		"decision":     func(s string) string { return strings.Replace(s, `"use_tag"`, `"guess"`, 1) },
		"file outside": func(s string) string { return strings.Replace(s, `"content/demo/policies~3"`, `"../etc/passwd"`, 1) },
		"duplicate file": func(s string) string {
			return strings.Replace(s, `"content/demo/policies~3"`, `"content/demo/policies/refunds"`, 1)
		},
		"run id":         func(s string) string { return strings.Replace(s, `"run-a"`, `"a/b"`, 1) },
		"trailing data":  func(s string) string { return s + "{}" },
		"negative bytes": func(s string) string { return strings.Replace(s, `"bytes": 41`, `"bytes": -1`, 1) },
		// what encoding/json would read as run_id, and jq would not
		"member in other case": func(s string) string { return strings.Replace(s, `"run_id"`, `"Run_ID"`, 1) },
		"member named twice": func(s string) string {
			return strings.Replace(s, `"run_id": "run-a"`, `"run_id": "run-b", "run_id": "run-a"`, 1)
		},
		"entry member named twice": func(s string) string {
			return strings.Replace(s, `"bytes": 41`, `"bytes": 99, "bytes": 41`, 1)
		},
		// what encoding/json would read as U+FFFD, and Python refuses
		"lone surrogate": func(s string) string {
			return strings.Replace(s, `"source_revision": "`, `"source_revision": "\udc00`, 1)
		},
		"invalid UTF-8": func(s string) string {
			return strings.Replace(s, `"source_revision": "`, "\"source_revision\": \"\xff", 1)
		},
	}
	for name, edit := range cases {
		bad := edit(string(good))
		if bad == string(good) {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if _, err := Decode([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Decode = %v, want ErrInvalid", name, err)
		}
	}
}

func TestCompareAndWhy(t *testing.T) {
	a := sample()
	b := sample()
	b.Entries = b.Entries[:3]
	b.Entries[0].ContentHash = "sha256:8f4b00474456a1d8a3b7c9bb3b4f5d1a6e0e3d3f8c9d7e6f5a4b3c2d1e0f9a8b"
	b.Entries[0].SourceRevision = "sha256:8f4b00474456"
	b.Entries[0].ObservedAt = b.Entries[0].ObservedAt.Add(5 * time.Minute)
	b.Entries[1].Ref = "staging"
	b.Entries = append(b.Entries, Entry{Position: 3, URI: "readproof://demo/new", Snapshot: strings.Repeat("a", 40),
		ContentHash: "sha256:" + strings.Repeat("b", 64), Decision: DecisionFetch})
	c := Compare(a, b)
	if c.Changed != 2 || c.Added != 1 || c.Removed != 1 || c.Unchanged != 1 {
		t.Fatalf("counts %+v", c)
	}
	why := c.Changes[0].Why()
	if why != "why: source revision sha256:c8b0bb212e93 → sha256:8f4b00474456; observed 2026-11-29T21:00:00Z → 2026-11-29T21:05:00Z" {
		t.Errorf("why line %q", why)
	}
	if why := c.Changes[1].Why(); !strings.Contains(why, "ref @prod → @staging") || !strings.Contains(why, "content unchanged") {
		t.Errorf("ref change why line %q", why)
	}
}

func TestUnifiedGolden(t *testing.T) {
	a := []byte("line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n")
	b := []byte("line 1\nline two\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\nline 11")
	got := Unified("a/doc", "b/doc", a, b, 3)
	golden(t, "unified.diff", []byte(got))
	if Unified("a", "b", a, a, 3) != "" {
		t.Error("identical inputs produced a diff")
	}
	if got := Unified("a", "b", []byte{0xff, 0}, []byte{0xfe}, 3); got != "Binary content differs (2 → 1 bytes)\n" {
		t.Errorf("binary: %q", got)
	}
}

// TestUnifiedMatchesGit checks the renderer against stock `git diff
// --no-index` on the golden inputs: the same hunks, line for line.
func TestUnifiedMatchesGit(t *testing.T) {
	dir := t.TempDir()
	a := "keep\nold 1\nkeep\nkeep\nkeep\nkeep\nkeep\nkeep\nkeep\nold 2\nkeep\n"
	b := "keep\nnew 1\nkeep\nkeep\nkeep\nkeep\nkeep\nkeep\nkeep\nnew 2\nkeep\nadded\n"
	os.WriteFile(filepath.Join(dir, "a"), []byte(a), 0o644)
	os.WriteFile(filepath.Join(dir, "b"), []byte(b), 0o644)
	out, _ := gitDiff(dir)
	if out == "" {
		t.Skip("git not available")
	}
	ours := Unified("a/a", "b/b", []byte(a), []byte(b), 3)
	// git appends a section heading to hunk headers; we do not
	theirs := regexp.MustCompile(`(?m)^(@@ [^@]+ @@).*$`).ReplaceAllString(out[strings.Index(out, "--- "):], "$1")
	if ours != theirs {
		t.Errorf("ours:\n%s\ngit:\n%s", ours, theirs)
	}
}

// FuzzDecode: no input panics, and an accepted manifest re-encodes to bytes
// that decode to the same manifest.
func FuzzDecode(f *testing.F) {
	good, _ := Encode(sample())
	f.Add(good)
	f.Add([]byte(`{"format":"readproof-manifest/1","run_id":"r","entries":[]}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			return
		}
		enc, err := Encode(m)
		if err != nil {
			t.Fatalf("accepted manifest does not encode: %v", err)
		}
		m2, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-encoded manifest does not decode: %v", err)
		}
		enc2, _ := Encode(m2)
		if !bytes.Equal(enc, enc2) {
			t.Fatal("encoding is not stable")
		}
	})
}

// FuzzUnified: any two texts give a diff without panicking, and applying the
// '+' and ' ' lines of a full-context diff rebuilds the second text.
func FuzzUnified(f *testing.F) {
	f.Add("a\nb\n", "a\nc\n")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		out := Unified("a", "b", []byte(a), []byte(b), 1<<20)
		if a == b || !utf8Valid(a) || !utf8Valid(b) || a == "" || b == "" {
			return
		}
		var rebuilt strings.Builder
		lines := strings.SplitAfter(out, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "@@ ") || l == "" {
				continue
			}
			if strings.HasPrefix(l, "\\ No newline") {
				continue
			}
			if l[0] == '+' || l[0] == ' ' {
				text := l[1:]
				if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\\ No newline") {
					text = strings.TrimSuffix(text, "\n")
				}
				rebuilt.WriteString(text)
			}
		}
		if rebuilt.String() != b {
			t.Fatalf("rebuilt %q, want %q\n%s", rebuilt.String(), b, out)
		}
	})
}

// TestProbeSession: a probed entry's session member survives both
// decoders; a value this readproof does not know makes the manifest
// invalid, as an unknown member does (which is how a readproof that
// predates the member refuses a manifest that has it, instead of checking
// the entry under the older session).
func TestProbeSession(t *testing.T) {
	m := sample()
	m.Entries[2].Probe = &Probe{Bucket: 5986622, Length: 16, DeliveredSize: 147, Session: ProbeSessionContent,
		DeliveredHash: "sha256:e82bef01f1494310489f24e46e457df62ec08fb75efd8cd78c67a1a16948a796"}
	data, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	for name, decode := range map[string]func([]byte) (*Manifest, error){"Decode": Decode, "encoding/json": decodeJSON} {
		got, err := decode(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p := got.Entries[2].Probe; p == nil || *p != *m.Entries[2].Probe {
			t.Fatalf("%s: probe %+v, want %+v", name, p, m.Entries[2].Probe)
		}
	}
	bad := strings.Replace(string(data), `"session": "content"`, `"session": "bound"`, 1)
	if bad == string(data) {
		t.Fatal("the edit did not apply")
	}
	if _, err := Decode([]byte(bad)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `probe session "bound"`) {
		t.Fatalf("Decode of an unknown session form = %v, want ErrInvalid naming it", err)
	}
	// What a reader that predates the member does with it: refuse.
	older := strings.Replace(string(data), `"session": "content"`, `"sessions": "content"`, 1)
	if _, err := Decode([]byte(older)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Decode of a probe with an unknown member = %v, want ErrInvalid", err)
	}
}
