// Package adaptertest is the conformance suite every source adapter passes.
// It depends on package adapters only, and is imported by tests only.
//
// An adapter's test builds a Harness: New returns a fresh Fixture (an empty
// source of its kind: a directory, an HTTP server, a repository) whose Set and
// Delete change the one document at the source, and whose Source opens an
// adapters.Source reading it with a given size limit. Run then checks, one
// subtest each: first read, unchanged re-read (same revision and bytes, or a
// not-modified answer), changed re-read (new revision), empty document, not
// found (ErrNotFound), too large (ErrTooLarge, with the limit itself still
// accepted), binary content byte-exact with its content type, and a cancelled
// context (an error wrapping context.Canceled, promptly). Every error must
// name the resource URI.
//
// Example:
//
//	adaptertest.Run(t, adaptertest.Harness{New: func(t *testing.T) adaptertest.Fixture { return newDirFixture(t) }})
package adaptertest

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/adapters"
)

// URI is the resource name the suite fetches under.
const URI = "readproof://conformance/doc"

// Fixture is one source holding (or not) one document.
type Fixture interface {
	// Set makes content the document's bytes at the source.
	Set(t *testing.T, content []byte)
	// Delete removes the document from the source.
	Delete(t *testing.T)
	// Source opens a Source for the document, limited to maxBytes.
	Source(t *testing.T, maxBytes int64) adapters.Source
}

// Harness tells Run how to make fixtures.
type Harness struct {
	// New returns a fresh fixture with no document yet.
	New func(t *testing.T) Fixture
	// BinaryContentType is the content type expected for the binary
	// document; empty means what http.DetectContentType says of its bytes
	// (a document name without an extension gives that).
	BinaryContentType string
}

// DefaultMaxBytes is the limit the suite opens sources with, except in the
// size test.
const DefaultMaxBytes = 1 << 20

// Run runs the conformance suite.
func Run(t *testing.T, h Harness) {
	t.Run("FirstRead", func(t *testing.T) { firstRead(t, h) })
	t.Run("UnchangedReRead", func(t *testing.T) { unchanged(t, h) })
	t.Run("ChangedReRead", func(t *testing.T) { changed(t, h) })
	t.Run("EmptyDocument", func(t *testing.T) { empty(t, h) })
	t.Run("NotFound", func(t *testing.T) { notFound(t, h) })
	t.Run("TooLarge", func(t *testing.T) { tooLarge(t, h) })
	t.Run("Binary", func(t *testing.T) { binary(t, h) })
	t.Run("Cancelled", func(t *testing.T) { cancelled(t, h) })
}

var (
	docA = []byte("Products can be refunded within 30 days.\n")
	docB = []byte("Products can be refunded within 14 days.\n")
)

// BinaryDoc is the binary document: a PNG signature, every byte value,
// CR LF pairs and invalid UTF-8, so any re-encoding shows.
func BinaryDoc() []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for i := 0; i < 256; i++ {
		b = append(b, byte(i))
	}
	b = append(b, "\r\n\r\n\xff\xfe\xc3\x28 \x00\x00\r"...)
	for i := 255; i >= 0; i-- {
		b = append(b, byte(i), byte(i*7))
	}
	return b
}

func fetch(t *testing.T, src adapters.Source, prev *adapters.Previous) (adapters.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return src.Fetch(ctx, adapters.Request{URI: URI, Previous: prev})
}

func mustFetch(t *testing.T, src adapters.Source, prev *adapters.Previous) adapters.Result {
	t.Helper()
	r, err := fetch(t, src, prev)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	return r
}

func previous(r adapters.Result) *adapters.Previous {
	return &adapters.Previous{Revision: r.Revision, ETag: r.ETag, LastModified: r.LastModified}
}

// checkResult checks what every successful, modified read must carry.
func checkResult(t *testing.T, r adapters.Result, want []byte) {
	t.Helper()
	if r.NotModified {
		t.Fatalf("NotModified on a read that must return content")
	}
	if !bytes.Equal(r.Content, want) {
		t.Fatalf("content = %q, want %q", clip(r.Content), clip(want))
	}
	if r.Revision == "" {
		t.Errorf("empty Revision")
	}
	if r.ContentType == "" {
		t.Errorf("empty ContentType")
	}
	if r.Provenance["source_type"] == "" {
		t.Errorf("provenance %v has no source_type", r.Provenance)
	}
}

// checkErr checks that err matches target and names the resource.
func checkErr(t *testing.T, err, target error) {
	t.Helper()
	if err == nil {
		t.Fatalf("Fetch succeeded, want an error matching %v", target)
	}
	if target != nil && !errors.Is(err, target) {
		t.Fatalf("error %q does not match %v", err, target)
	}
	if !strings.Contains(err.Error(), URI) {
		t.Errorf("error %q does not name the resource %s", err, URI)
	}
}

func clip(b []byte) []byte {
	if len(b) > 80 {
		return append(b[:80:80], "..."...)
	}
	return b
}

func firstRead(t *testing.T, h Harness) {
	f := h.New(t)
	f.Set(t, docA)
	r := mustFetch(t, f.Source(t, DefaultMaxBytes), nil)
	checkResult(t, r, docA)
}

func unchanged(t *testing.T, h Harness) {
	f := h.New(t)
	f.Set(t, docA)
	src := f.Source(t, DefaultMaxBytes)
	r1 := mustFetch(t, src, nil)
	checkResult(t, r1, docA)

	// Unconditional: the same bytes and the same revision.
	r2 := mustFetch(t, src, nil)
	checkResult(t, r2, docA)
	if r2.Revision != r1.Revision {
		t.Errorf("unchanged document: revision %q, then %q", r1.Revision, r2.Revision)
	}

	// Conditional, from a freshly opened source: either "not modified" with
	// the same revision, or the same bytes and revision again.
	r3 := mustFetch(t, f.Source(t, DefaultMaxBytes), previous(r1))
	if r3.NotModified {
		if len(r3.Content) != 0 {
			t.Errorf("NotModified result carries %d bytes", len(r3.Content))
		}
		if r3.Revision != r1.Revision {
			t.Errorf("NotModified revision %q, want %q", r3.Revision, r1.Revision)
		}
		return
	}
	checkResult(t, r3, docA)
	if r3.Revision != r1.Revision {
		t.Errorf("unchanged document, conditional read: revision %q, then %q", r1.Revision, r3.Revision)
	}
}

func changed(t *testing.T, h Harness) {
	f := h.New(t)
	f.Set(t, docA)
	src := f.Source(t, DefaultMaxBytes)
	r1 := mustFetch(t, src, nil)
	checkResult(t, r1, docA)
	f.Set(t, docB)
	r2 := mustFetch(t, src, previous(r1))
	checkResult(t, r2, docB)
	if r2.Revision == r1.Revision {
		t.Errorf("changed document kept revision %q", r1.Revision)
	}
	// And back: the bytes follow the source again.
	f.Set(t, docA)
	r3 := mustFetch(t, src, previous(r2))
	checkResult(t, r3, docA)
	if r3.Revision == r2.Revision {
		t.Errorf("changed document kept revision %q", r2.Revision)
	}
}

func empty(t *testing.T, h Harness) {
	f := h.New(t)
	f.Set(t, nil)
	r, err := fetch(t, f.Source(t, DefaultMaxBytes), nil)
	if err != nil {
		t.Fatalf("Fetch of an empty document: %v", err)
	}
	if len(r.Content) != 0 || r.NotModified || r.Revision == "" {
		t.Errorf("empty document: %d bytes, NotModified %v, revision %q", len(r.Content), r.NotModified, r.Revision)
	}
}

func notFound(t *testing.T, h Harness) {
	f := h.New(t)
	f.Set(t, docA)
	src := f.Source(t, DefaultMaxBytes)
	r1 := mustFetch(t, src, nil)
	f.Delete(t)
	r, err := fetch(t, src, previous(r1))
	checkErr(t, err, adapters.ErrNotFound)
	if len(r.Content) != 0 || r.Revision != "" {
		t.Errorf("failed fetch returned content or a revision: %+v", r)
	}
	if errors.Is(err, adapters.ErrTooLarge) || errors.Is(err, adapters.ErrRefused) {
		t.Errorf("not-found error %q also matches another sentinel", err)
	}
}

func tooLarge(t *testing.T, h Harness) {
	const limit = 64
	f := h.New(t)
	src := f.Source(t, limit)
	atLimit := bytes.Repeat([]byte("a"), limit)
	f.Set(t, atLimit)
	r := mustFetch(t, src, nil)
	checkResult(t, r, atLimit)

	f.Set(t, bytes.Repeat([]byte("b"), limit+1))
	r, err := fetch(t, src, nil)
	checkErr(t, err, adapters.ErrTooLarge)
	if len(r.Content) != 0 {
		t.Errorf("too-large fetch returned %d bytes", len(r.Content))
	}

	f.Set(t, bytes.Repeat([]byte("c"), 256<<10))
	_, err = fetch(t, src, nil)
	checkErr(t, err, adapters.ErrTooLarge)
}

func binary(t *testing.T, h Harness) {
	f := h.New(t)
	doc := BinaryDoc()
	f.Set(t, doc)
	r := mustFetch(t, f.Source(t, DefaultMaxBytes), nil)
	checkResult(t, r, doc)
	want := h.BinaryContentType
	if want == "" {
		want = http.DetectContentType(doc)
	}
	if r.ContentType != want {
		t.Errorf("binary content type %q, want %q", r.ContentType, want)
	}
}

func cancelled(t *testing.T, h Harness) {
	f := h.New(t)
	f.Set(t, docA)
	src := f.Source(t, DefaultMaxBytes)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan struct{})
	var (
		r   adapters.Result
		err error
	)
	go func() {
		defer close(done)
		r, err = src.Fetch(ctx, adapters.Request{URI: URI})
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Fetch with a cancelled context did not return within 5s")
	}
	checkErr(t, err, context.Canceled)
	if len(r.Content) != 0 {
		t.Errorf("cancelled fetch returned %d bytes", len(r.Content))
	}
}
