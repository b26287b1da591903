package storecheck_test

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/manifest"
)

// TestManifestOverLimitBroken: a manifest.json whose object states a size
// over manifest.MaxBytes is reported broken by its size, before its
// content is read (the loose object here holds the true few hundred bytes
// under a header that claims one byte over the limit: reading it would
// report it corrupt instead).
func TestManifestOverLimitBroken(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	c, err := p.s.Git().Commit(mustManifest(t, p, "run-a"))
	if err != nil {
		t.Fatal(err)
	}
	blob, err := gitstore.FileAt(p.s.Git(), c.Tree, "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := p.s.Git().Blob(blob)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	fmt.Fprintf(zw, "blob %d\x00", manifest.MaxBytes+1)
	zw.Write(body)
	zw.Close()
	path := p.looseObject(t, string(blob))
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	rep := p.check(t, storecheck.Options{})
	got := find(rep, storecheck.Broken, string(blob), "manifest.json blob is larger than readproof writes it", "67108865 bytes, more than the 67108864 allowed")
	if len(got) != 1 || got[0].Run != "run-a" {
		t.Fatalf("want one broken problem naming the manifest's size, got:\n%s", problems(rep))
	}
}
