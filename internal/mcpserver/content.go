package mcpserver

import (
	"encoding/base64"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"
)

// InlineLimit is the most document bytes one result carries inline
// (resources/read, readproof_resolve, readproof_run_mount, unified diffs).
// Past it, text is cut on a rune boundary and Marker is appended.
const InlineLimit = 1 << 20

// textTypes are the media types delivered as text, besides text/*,
// application/*+json and application/*+xml.
var textTypes = map[string]bool{
	"application/json":       true,
	"application/jsonl":      true,
	"application/x-ndjson":   true,
	"application/xml":        true,
	"application/yaml":       true,
	"application/x-yaml":     true,
	"application/toml":       true,
	"application/javascript": true,
	"application/x-sh":       true,
}

// unknownTypes say nothing about the bytes; valid UTF-8 under them is text.
var unknownTypes = map[string]bool{
	"":                         true,
	"application/octet-stream": true,
	"application/unknown":      true,
	"binary/octet-stream":      true,
}

// IsText reports whether content of this media type is delivered as text:
// text-like types (text/*, JSON, XML, YAML and their +json/+xml variants)
// and unknown types, in both cases only when the bytes are valid UTF-8 (a
// JSON string cannot carry anything else without changing the bytes).
// Everything else is delivered as a base64 blob.
func IsText(contentType string, content []byte) bool {
	if !utf8.Valid(content) {
		return false
	}
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		media = strings.ToLower(strings.TrimSpace(contentType))
		if i := strings.IndexByte(media, ';'); i >= 0 {
			media = strings.TrimSpace(media[:i])
		}
	}
	switch {
	case strings.HasPrefix(media, "text/"), textTypes[media], unknownTypes[media]:
		return true
	case strings.HasPrefix(media, "application/") && (strings.HasSuffix(media, "+json") || strings.HasSuffix(media, "+xml") || strings.HasSuffix(media, "+yaml")):
		return true
	}
	return false
}

// Marker is the line appended to text cut at InlineLimit. It names the
// content hash of the complete bytes and how to obtain all of them.
func Marker(shown, total int64, contentHash string) string {
	return fmt.Sprintf("[readproof: content truncated — %d of %d bytes shown. The full content is unchanged and content-addressed as %s; "+
		"use readproof_replay with include_content or readproof_evidence_export with with_content to obtain all of it.]", shown, total, contentHash)
}

// inline is a document prepared for a result: text or base64, cut to a
// limit.
type inline struct {
	Text     string // set when the content is text
	Blob     []byte // set when it is not (possibly cut)
	IsText   bool
	Shown    int64 // bytes of the original content included
	Total    int64
	Cut      bool
	Notice   string // the marker, when cut
	Complete bool   // Shown == Total
}

// prepare cuts content at limit bytes (limit <= 0 means no limit): on a
// rune boundary for text, with the marker appended to the text; at the byte
// limit for blobs, with the marker only in Notice.
func prepare(contentType string, content []byte, contentHash string, limit int) inline {
	in := inline{IsText: IsText(contentType, content), Total: int64(len(content))}
	body := content
	if limit > 0 && len(content) > limit {
		n := limit
		if in.IsText {
			n = runeCut(content, limit)
		}
		body = content[:n]
		in.Cut = true
	}
	in.Shown = int64(len(body))
	in.Complete = !in.Cut
	if in.Cut {
		in.Notice = Marker(in.Shown, in.Total, contentHash)
	}
	if in.IsText {
		in.Text = string(body)
		if in.Cut {
			in.Text += "\n" + in.Notice
		}
	} else {
		in.Blob = body
	}
	return in
}

// runeCut returns the largest n <= limit such that content[:n] ends on a
// rune boundary of valid UTF-8 content.
func runeCut(content []byte, limit int) int {
	if limit >= len(content) {
		return len(content)
	}
	n := limit
	// Step back over continuation bytes to the start of the rune that
	// straddles the limit; at most utf8.UTFMax-1 steps.
	for n > 0 && n > limit-utf8.UTFMax && !utf8.RuneStart(content[n]) {
		n--
	}
	return n
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
