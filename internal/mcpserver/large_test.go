package mcpserver_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/testsize"
)

const mib = 1 << 20

// bigText is exactly n bytes of valid UTF-8 (n = 2 mod 3, over 1 MiB)
// whose 1 MiB mark falls inside a three-byte rune, so the cut must step
// back to a rune boundary.
func bigText(n int) string {
	s := "ab" + strings.Repeat("€", (n-2)/3)
	if len(s) != n {
		panic(len(s))
	}
	return s
}

func contentHash(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestLargeDocumentTruncatedAndReplayedWhole(t *testing.T) {
	t.Parallel()
	// Issue 8 acceptance 4 names a 5 MiB document: READPROOF_LONG_TESTS=1
	// runs that; by default 1 MiB and 64 KiB, over the 1 MiB cut by as
	// much as the assertions need (a cut inside a rune, a replay of every
	// byte, a first, a middle and a last window of half a MiB), at about
	// half the CPU of the 2 MiB it was.
	full := bigText(testsize.Pick(t, mib+64<<10, 5*mib))
	total := int64(len(full))
	hash := contentHash([]byte(full))
	// the blob: over the 1 MiB cut by 123 bytes, by 1 MiB and 123 bytes
	// with READPROOF_LONG_TESTS=1
	bin := make([]byte, testsize.Pick(t, 1, 2)*mib+123)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range bin {
		bin[i] = byte(rng.Uint32())
	}
	bin[0], bin[1] = 0xff, 0xfe // never valid UTF-8
	p := newProject(t, `version = 1

[defaults]
max_bytes = "20MiB"

[[resource]]
uri = "readproof://big/handbook"
content_type = "text/plain"
source = { type = "filesystem", path = "handbook.txt" }

[[resource]]
uri = "readproof://big/blob"
source = { type = "filesystem", path = "blob.bin" }
`, map[string]string{"handbook.txt": full, "blob.bin": string(bin)})
	s := p.serve(t)

	// The 1 MiB cut: on a rune boundary, below the limit, never mid-rune.
	cut := mib
	for !utf8.RuneStart(full[cut]) {
		cut--
	}
	if cut == mib {
		t.Fatal("test document: the cut must fall inside a rune")
	}
	marker := mcpserver.Marker(int64(cut), total, hash)
	mustContain(t, "marker", marker, fmt.Sprintf("content truncated — %d of %d bytes shown", cut, total), hash,
		"use readproof_replay with include_content or readproof_evidence_export with with_content to obtain all of it.")

	// resources/read
	c := s.read(t, "readproof://big/handbook")
	if c.Text != full[:cut]+"\n"+marker {
		t.Errorf("resources/read: %d bytes of text, want the first %d bytes and the marker; tail %q", len(c.Text), cut, c.Text[len(c.Text)-300:])
	}
	if c.Meta["truncated"] != true || c.Meta["total_bytes"] != float64(total) || c.Meta["shown_bytes"] != float64(cut) ||
		c.Meta["bytes"] != float64(total) || c.Meta["content_hash"] != hash || c.Meta["truncation_notice"] != marker {
		t.Errorf("resources/read _meta %s", jsonOf(c.Meta))
	}

	// readproof_resolve
	res := s.call(t, "readproof_resolve", map[string]any{"uri": "readproof://big/handbook"})
	checkShape(t, "resolve", res)
	d := obj(t, res.StructuredContent)
	if str(t, d, "content") != full[:cut]+"\n"+marker || d["truncated"] != true || num(t, d, "total_bytes") != total || num(t, d, "shown_bytes") != int64(cut) {
		t.Errorf("resolve: truncated %v total %v shown %v", d["truncated"], d["total_bytes"], d["shown_bytes"])
	}
	if res.Meta["truncated"] != true || res.Meta["total_bytes"] != float64(total) {
		t.Errorf("resolve result _meta %s", jsonOf(res.Meta))
	}
	mustContain(t, "resolve text", text(res), "Truncated", "readproof_replay with include_content")

	// Binary: a blob cut at exactly 1 MiB, the marker in _meta.
	b := s.read(t, "readproof://big/blob")
	if !bytes.Equal(b.Blob, bin[:mib]) || b.Text != "" || b.Meta["truncated"] != true || b.Meta["total_bytes"] != float64(len(bin)) {
		t.Errorf("blob read: %d bytes, _meta %v", len(b.Blob), b.Meta["truncated"])
	}
	mustContain(t, "blob notice", fmt.Sprint(b.Meta["truncation_notice"]), fmt.Sprintf("%d of %d bytes shown", mib, len(bin)), contentHash(bin))

	// A run over both; the mount is cut the same way.
	s.ok(t, "readproof_run_start", map[string]any{"run_id": "big"})
	m := s.ok(t, "readproof_run_mount", map[string]any{"run_id": "big", "uri": "readproof://big/handbook"})
	if m["truncated"] != true || num(t, m, "shown_bytes") != int64(cut) || !strings.HasSuffix(str(t, m, "content"), marker) {
		t.Errorf("mount: truncated %v shown %v", m["truncated"], m["shown_bytes"])
	}
	mb := s.ok(t, "readproof_run_mount", map[string]any{"run_id": "big", "uri": "readproof://big/blob"})
	if str(t, mb, "encoding") != "base64" || mb["truncated"] != true || num(t, mb, "shown_bytes") != mib {
		t.Errorf("binary mount: encoding %v truncated %v", mb["encoding"], mb["truncated"])
	}
	s.ok(t, "readproof_run_commit", map[string]any{"run_id": "big"})

	// Replay through the tool returns every byte.
	rp := s.ok(t, "readproof_replay", map[string]any{"target": "big", "include_content": true})
	entries := list(t, rp["entries"])
	e0, e1 := obj(t, entries[0]), obj(t, entries[1])
	if str(t, e0, "content") != full || e0["complete"] != true || num(t, e0, "content_bytes") != total || rp["all_match"] != true || rp["truncated"] != false {
		t.Errorf("replay: %d bytes of content, complete %v", len(fmt.Sprint(e0["content"])), e0["complete"])
	}
	got, err := base64.StdEncoding.DecodeString(str(t, e1, "content_b64"))
	if err != nil || !bytes.Equal(got, bin) {
		t.Errorf("replay of the binary entry: %d bytes, %v", len(got), err)
	}

	// Or in windows, for clients that limit result sizes: every window is
	// valid text ending on a rune boundary, and they add up to the bytes.
	const window = mib / 2
	var joined strings.Builder
	offset, windows := int64(0), 0
	for {
		w := s.ok(t, "readproof_replay", map[string]any{"target": "big", "include_content": true, "position": 0, "offset": offset, "max_bytes": window})
		we := obj(t, list(t, w["entries"])[0])
		chunk := str(t, we, "content")
		if str(t, we, "encoding") != "text" || !utf8.ValidString(chunk) || len(chunk) > window || offsetOf(we) != offset {
			t.Fatalf("window at %d: encoding %v, %d bytes", offset, we["encoding"], len(chunk))
		}
		if w["truncated"] != true {
			t.Errorf("a window result must say it is truncated")
		}
		if e1w := obj(t, list(t, w["entries"])[1]); e1w["content"] != nil || e1w["content_b64"] != nil {
			t.Errorf("position 0 selected, yet entry 1 carries content")
		}
		joined.WriteString(chunk)
		windows++
		if we["complete"] == true {
			break
		}
		offset = num(t, we, "next_offset")
		if windows > int(total/window)+2 {
			t.Fatal("windows do not end")
		}
	}
	if joined.String() != full || windows != int(total/window)+1 {
		t.Errorf("windows: %d of them, %d bytes joined, equal %v", windows, joined.Len(), joined.String() == full)
	}
}

func TestRuneCutNeverSplitsRunes(t *testing.T) {
	t.Parallel()
	// Every limit around a four-byte rune keeps the text valid and as long
	// as possible.
	doc := []byte("x😀y😀z")
	for limit := 1; limit < len(doc); limit++ {
		in := mcpserver.Prepare("text/plain", doc, "sha256:x", limit)
		shown := in.Text[:in.Shown]
		if !utf8.ValidString(shown) || int(in.Shown) > limit || int(in.Shown) < limit-3 {
			t.Errorf("limit %d: shown %q (%d bytes)", limit, shown, in.Shown)
		}
	}
}

// offsetOf reads content_offset, which is omitted when 0.
func offsetOf(e map[string]any) int64 {
	v, _ := e["content_offset"].(float64)
	return int64(v)
}
