package mcpserver

import (
	"bytes"
	"encoding/base64"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzPrepare checks the inline cut: never more than the limit, a prefix
// of the content, valid text on a rune boundary no more than three bytes
// short of the limit, and the marker exactly when something was cut.
func FuzzPrepare(f *testing.F) {
	f.Add("text/plain", []byte("x😀y😀z"), 4)
	f.Add("application/json", []byte(`{"a":"€€€"}`), 7)
	f.Add("image/png", []byte("\x89PNG\r\n"), 3)
	f.Add("", []byte("\xff\xfe\xfd"), 1)
	f.Add("text/markdown; charset=utf-8", []byte("ab€€€€"), 0)
	f.Fuzz(func(t *testing.T, ct string, content []byte, limit int) {
		if limit > 1<<16 || limit < -1 {
			return
		}
		in := prepare(ct, content, "sha256:h", limit)
		if in.Total != int64(len(content)) {
			t.Fatalf("total %d of %d bytes", in.Total, len(content))
		}
		cut := limit > 0 && len(content) > limit
		if in.Cut != cut || in.Complete == cut || (in.Notice != "") != cut {
			t.Fatalf("limit %d, %d bytes: cut %v complete %v notice %q", limit, len(content), in.Cut, in.Complete, in.Notice)
		}
		if cut && in.Shown > int64(limit) {
			t.Fatalf("shown %d > limit %d", in.Shown, limit)
		}
		if in.IsText {
			if !utf8.ValidString(in.Text) {
				t.Fatalf("text is not valid UTF-8")
			}
			body := in.Text
			if cut {
				if !strings.HasSuffix(body, "\n"+in.Notice) {
					t.Fatalf("cut text without the marker")
				}
				body = strings.TrimSuffix(body, "\n"+in.Notice)
				if in.Shown < int64(limit-utf8.UTFMax+1) {
					t.Fatalf("cut %d bytes short of limit %d", int64(limit)-in.Shown, limit)
				}
			}
			if !bytes.HasPrefix(content, []byte(body)) || int64(len(body)) != in.Shown {
				t.Fatalf("text is not the first %d bytes", in.Shown)
			}
		} else if !bytes.HasPrefix(content, in.Blob) || int64(len(in.Blob)) != in.Shown {
			t.Fatalf("blob is not the first %d bytes", in.Shown)
		}
	})
}

// FuzzWindow checks replay windows: the returned bytes are exactly
// content[offset:offset+n], text only when valid, and following next_offset
// from 0 reproduces the content.
func FuzzWindow(f *testing.F) {
	f.Add("text/plain", []byte("ab€€€€€"), int64(0), int64(4))
	f.Add("text/plain", []byte("ab€€€€€"), int64(3), int64(1))
	f.Add("application/octet-stream", []byte("\xff\x00abc"), int64(1), int64(0))
	// max_bytes is any int64 a client sends: offset+max overflowed (and
	// the slice panicked, ending the server) before session 22.
	f.Add("application/octet-stream", []byte("\xff\x00\xfe456789"), int64(5), int64(math.MaxInt64))
	f.Add("text/plain", []byte("0123456789"), int64(5), int64(math.MaxInt64-2))
	f.Fuzz(func(t *testing.T, ct string, content []byte, offset, max int64) {
		if offset < 0 || max < 0 {
			return
		}
		var re ReplayEntry
		window(&re, ct, content, offset, max)
		got := []byte(re.Content)
		if re.Encoding == "base64" {
			var err error
			if got, err = base64.StdEncoding.DecodeString(re.ContentB64); err != nil {
				t.Fatal(err)
			}
		} else if re.Encoding != "text" || !utf8.ValidString(re.Content) {
			t.Fatalf("encoding %q valid %v", re.Encoding, utf8.ValidString(re.Content))
		}
		start := min(offset, int64(len(content)))
		if re.ContentOffset != start || re.ContentBytes != int64(len(got)) || !bytes.Equal(got, content[start:start+int64(len(got))]) {
			t.Fatalf("window at %d: %d bytes do not match", start, len(got))
		}
		if re.Complete != (start+int64(len(got)) == int64(len(content))) {
			t.Fatalf("complete %v", re.Complete)
		}
		if max == 0 {
			return
		}
		// Walk the whole content.
		var all []byte
		off := int64(0)
		for i := 0; ; i++ {
			var w ReplayEntry
			window(&w, ct, content, off, max)
			part := []byte(w.Content)
			if w.Encoding == "base64" {
				part, _ = base64.StdEncoding.DecodeString(w.ContentB64)
			}
			all = append(all, part...)
			if w.Complete {
				break
			}
			if w.NextOffset <= off || i > len(content)+1 {
				t.Fatalf("window at %d does not advance (next %d)", off, w.NextOffset)
			}
			off = w.NextOffset
		}
		if !bytes.Equal(all, content) {
			t.Fatalf("windows do not reproduce the content")
		}
	})
}
