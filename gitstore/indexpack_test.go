package gitstore

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// packObject is an object of a pack a test builds.
type packObject struct {
	t    plumbing.ObjectType
	data []byte
}

func (o packObject) id() plumbing.Hash {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", o.t, len(o.data))
	h.Write(o.data)
	var id plumbing.Hash
	copy(id[:], h.Sum(nil))
	return id
}

// testPack builds a version 2 pack of whole objects.
func testPack(objs ...packObject) []byte {
	var b bytes.Buffer
	hdr := packFileHeader(len(objs))
	b.Write(hdr[:])
	for _, o := range objs {
		b.Write(packHeader(o.t, len(o.data)))
		zw, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
		zw.Write(o.data)
		zw.Close()
	}
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

// gitIndexPack runs `git index-pack --strict` of pack in an empty
// repository, as the copy falls back to it, and returns the index it
// wrote, or its error and message.
func gitIndexPack(t testing.TB, pack []byte) ([]byte, error) {
	t.Helper()
	dir := t.TempDir()
	git(t, "", "init", "-q", "--bare", dir)
	p := filepath.Join(dir, "objects", "pack", "tmp_pack_test")
	if err := os.WriteFile(p, pack, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := GitCommand(t, dir, "-c", "pack.writeReverseIndex=false", "index-pack", "--strict", "-o", p+".idx", p)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s", err, stderr.String())
	}
	return os.ReadFile(p + ".idx")
}

// checkAgainstGit fails when indexPackGo accepts pack and git refuses it,
// or writes another index; it returns why Go left it to git.
func checkAgainstGit(t testing.TB, pack []byte) string {
	t.Helper()
	idx, why := indexPackGo(context.Background(), pack)
	// what a clone's copy keeps for its precheck (CopiedObjects): the same
	// index, and each kept content hashing to its id once all is indexed
	// (nothing kept was overwritten by a later object)
	kidx, kept, kwhy := indexPackKeeping(context.Background(), pack, true)
	if kwhy != why || !bytes.Equal(kidx, idx) {
		t.Fatalf("indexPackKeeping: %q and a %d-byte index, indexPackGo: %q and %d bytes", kwhy, len(kidx), why, len(idx))
	}
	if why != "" {
		return why
	}
	for i, id := range kept.ids {
		if c := kept.contents[i]; objectHash(kept.types[i], c) != id || cap(c) != len(c) {
			t.Fatalf("kept object %s: its content hashes to %s (%d of %d bytes)", id, objectHash(kept.types[i], c), len(c), cap(c))
		}
	}
	want, err := gitIndexPack(t, pack)
	if err != nil {
		t.Fatalf("indexPackGo accepted a pack git index-pack --strict refuses: %v", err)
	}
	if !bytes.Equal(idx, want) {
		t.Fatalf("indexPackGo's index differs from git's (%d and %d bytes)", len(idx), len(want))
	}
	return ""
}

// fastImportRepo makes a bare repository of n readproof-like commits
// (a manifest and documents whose texts share most of their lines, so a
// repack finds deltas) with git fast-import.
func fastImportRepo(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	git(t, "", "init", "-q", "--bare", dir)
	var s strings.Builder
	for i := range n {
		doc := strings.Repeat(fmt.Sprintf("line of the document, shared by every version %d\n", i%3), 40) + fmt.Sprintf("version %d\n", i)
		fmt.Fprintf(&s, "commit refs/heads/main\ncommitter readproof <readproof@localhost> %d +0000\ndata 8\nrun %04d\n", 1700000000+i, i)
		fmt.Fprintf(&s, "M 100644 inline manifest.json\ndata %d\n{\"run\":%d}\n", len(fmt.Sprintf("{\"run\":%d}\n", i)), i)
		fmt.Fprintf(&s, "M 100644 inline content/doc%d.txt\ndata %d\n%s", i%4, len(doc), doc)
		fmt.Fprintf(&s, "M 100755 inline content/bench/run-%d\ndata 2\nx\n\n", i)
	}
	cmd := GitCommand(t, dir, "fast-import", "--quiet")
	cmd.Stdin = strings.NewReader(s.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	return dir
}

// TestIndexPackGoMatchesGit: the index of a pack of whole objects, of one
// with OFS deltas and of one with REF deltas is byte for byte the one
// `git index-pack` writes, and indexPackGo takes all three.
func TestIndexPackGoMatchesGit(t *testing.T) {
	t.Parallel()
	dir := fastImportRepo(t, 24)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"whole objects", []string{"--window=0"}},
		{"ofs deltas", []string{"--delta-base-offset"}},
		{"ref deltas", nil},
	} {
		cmd := GitCommand(t, dir, append([]string{"pack-objects", "--revs", "--all", "--stdout", "-q"}, c.args...)...)
		cmd.Stdin = strings.NewReader("")
		pack, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: pack-objects: %v", c.name, err)
		}
		deltas := countDeltas(t, pack)
		if (c.args == nil || c.args[0] != "--window=0") && deltas == 0 {
			t.Fatalf("%s: the pack has no deltas", c.name)
		}
		if why := checkAgainstGit(t, pack); why != "" {
			t.Fatalf("%s (%d deltas): indexPackGo left the pack to git: %s", c.name, deltas, why)
		}
	}
}

// countDeltas counts the delta entries of pack, as git verify-pack sees it.
func countDeltas(t *testing.T, pack []byte) int {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "p.pack")
	os.WriteFile(p, pack, 0o600)
	git(t, "", "index-pack", p)
	n := 0
	for _, l := range strings.Split(git(t, "", "verify-pack", "-v", p), "\n") {
		if f := strings.Fields(l); len(f) >= 7 && plumbing.IsHash(f[0]) {
			n++
		}
	}
	return n
}

// canonical objects the cases below build on: a blob, a tree naming it,
// a commit of that tree.
func canonicalObjects() (blob, tree, commit packObject) {
	blob = packObject{plumbing.BlobObject, []byte("hello\n")}
	b := blob.id()
	tree = packObject{plumbing.TreeObject, append([]byte("100644 a.txt\x00"), b[:]...)}
	tr := tree.id()
	commit = packObject{plumbing.CommitObject, []byte("tree " + tr.String() + "\nauthor A U Thor <a@example.com> 1700000000 +0100\ncommitter A U Thor <a@example.com> 1700000000 -0130\n\nmessage\n")}
	return
}

// treeOf is a tree of entries ("MODE NAME"), each naming the canonical
// tree when its mode is 40000 and the canonical blob otherwise.
func treeOf(entries ...string) packObject {
	blob, tree, _ := canonicalObjects()
	b, tr := blob.id(), tree.id()
	var data []byte
	for _, e := range entries {
		data = append(data, e...)
		data = append(data, 0)
		if strings.HasPrefix(e, "40000 ") {
			data = append(data, tr[:]...)
		} else {
			data = append(data, b[:]...)
		}
	}
	return packObject{plumbing.TreeObject, data}
}

func commitWith(header string) packObject {
	_, tree, _ := canonicalObjects()
	return packObject{plumbing.CommitObject, []byte(strings.ReplaceAll(header, "TREE", tree.id().String()))}
}

// TestIndexPackGoFallsBack: each object outside the subset leaves the
// pack to git; the canonical pack is taken (so the builder is sound).
func TestIndexPackGoFallsBack(t *testing.T) {
	t.Parallel()
	blob, tree, commit := canonicalObjects()
	if why := checkAgainstGit(t, testPack(blob, tree, commit)); why != "" {
		t.Fatalf("the canonical pack was left to git: %s", why)
	}
	ident := "A U Thor <a@example.com> 1700000000 +0000"
	blobID, treeID := blob.id(), tree.id()
	// why each pack below is left to git (the reason, so a case that
	// falls back for another reason than the one it tests fails)
	wantWhy := map[string]string{
		"tag":                                    "tag",
		"commit with encoding":                   "commit header",
		"commit with gpgsig then encoding":       "commit header",
		"commit with gpgsig unterminated":        "commit header",
		"commit with two gpgsig":                 "commit header",
		"commit without blank line":              "commit header",
		"commit with NUL":                        "commit with a NUL",
		"commit with uppercase id":               "commit tree",
		"commit with two authors":                "commit header",
		"commit without author":                  "commit header",
		"ident without space before email":       "commit ident",
		"ident without name":                     "commit ident",
		"ident with zero-padded date":            "commit ident",
		"ident with a long date":                 "commit ident",
		"ident with bad time zone":               "commit ident",
		"ident with non-ASCII name":              "commit ident",
		"ident with '>' in name":                 "commit ident",
		"commit naming a missing parent":         "missing object",
		"commit naming a blob as its tree":       "object of another type",
		"tree entry .git":                        "tree entry name",
		"tree entry .GIT":                        "tree entry name",
		"tree entry .gitmodules":                 "tree entry name",
		"tree entry .Gitattributes":              "tree entry name",
		"tree entry .mailmap":                    "tree entry name",
		"tree entry git~1":                       "tree entry name",
		"tree entry GI7EBA~1 (.gitmodules)":      "tree entry name",
		"tree entry gi~12345 (.gitmodules)":      "tree entry name",
		"tree entry ~1234567 (.gitmodules)":      "tree entry name",
		"tree entry maba30~1 (.mailmap)":         "tree entry name",
		"tree entry gitmod~1 (.gitmodules)":      "tree entry name",
		"tree entry .git. (NTFS)":                "tree entry name",
		"tree entry .":                           "tree entry name",
		"tree entry ..":                          "tree entry name",
		"tree entry with a space":                "tree entry name",
		"tree entry with a backslash":            "tree entry name",
		"tree entry with a slash":                "tree entry name",
		"tree entry empty name":                  "tree entry name",
		"tree entry non-ASCII":                   "tree entry name",
		"tree entry mode 100664":                 "tree entry mode",
		"tree entry mode 040000":                 "tree entry mode",
		"tree entry symlink":                     "tree entry mode",
		"tree entry gitlink":                     "tree entry mode",
		"tree unsorted":                          "tree order",
		"tree dir after file with a longer name": "tree entry twice",
		"tree entry twice":                       "tree order",
		"tree naming a blob as a tree":           "object of another type",
		"tree naming a tree as a blob":           "object of another type",
		"trailer":                                "pack checksum",
		"version 3":                              "not a version 2 pack",
		"count":                                  "truncated pack",
		"junk at end":                            "data after the last object",
		"object twice":                           "object twice in the pack",
		"zlib checksum":                          "zlib stream",
		"short":                                  "not a version 2 pack",
		"missing blob":                           "missing object",
		"ref delta base":                         "delta base not in the pack",
	}
	cases := []struct {
		name string
		obj  packObject
	}{
		{"tag", packObject{plumbing.TagObject, []byte("object " + commit.id().String() + "\ntype commit\ntag v1\ntagger " + ident + "\n\nv1\n")}},
		{"commit with encoding", commitWith("tree TREE\nauthor " + ident + "\ncommitter " + ident + "\nencoding latin1\n\nm\n")},
		{"commit with gpgsig then encoding", commitWith("tree TREE\nauthor " + ident + "\ncommitter " + ident + "\ngpgsig x\n y\nencoding latin1\n\nm\n")},
		{"commit with gpgsig unterminated", commitWith("tree TREE\nauthor " + ident + "\ncommitter " + ident + "\ngpgsig x\n y")},
		{"commit with two gpgsig", commitWith("tree TREE\nauthor " + ident + "\ncommitter " + ident + "\ngpgsig x\ngpgsig y\n\nm\n")},
		{"commit without blank line", commitWith("tree TREE\nauthor " + ident + "\ncommitter " + ident + "\n")},
		{"commit with NUL", commitWith("tree TREE\nauthor " + ident + "\ncommitter " + ident + "\n\nm\x00\n")},
		{"commit with uppercase id", commitWith("tree " + strings.ToUpper(tree.id().String()) + "\nauthor " + ident + "\ncommitter " + ident + "\n\nm\n")},
		{"commit with two authors", commitWith("tree TREE\nauthor " + ident + "\nauthor " + ident + "\ncommitter " + ident + "\n\nm\n")},
		{"commit without author", commitWith("tree TREE\ncommitter " + ident + "\n\nm\n")},
		{"ident without space before email", commitWith("tree TREE\nauthor A<a@example.com> 1700000000 +0000\ncommitter " + ident + "\n\nm\n")},
		{"ident without name", commitWith("tree TREE\nauthor <a@example.com> 1700000000 +0000\ncommitter " + ident + "\n\nm\n")},
		{"ident with zero-padded date", commitWith("tree TREE\nauthor A <a@example.com> 01700000000 +0000\ncommitter " + ident + "\n\nm\n")},
		{"ident with a long date", commitWith("tree TREE\nauthor A <a@example.com> 99999999999999999999 +0000\ncommitter " + ident + "\n\nm\n")},
		{"ident with bad time zone", commitWith("tree TREE\nauthor A <a@example.com> 1700000000 +000\ncommitter " + ident + "\n\nm\n")},
		{"ident with non-ASCII name", commitWith("tree TREE\nauthor Ä <a@example.com> 1700000000 +0000\ncommitter " + ident + "\n\nm\n")},
		{"ident with '>' in name", commitWith("tree TREE\nauthor A> <a@example.com> 1700000000 +0000\ncommitter " + ident + "\n\nm\n")},
		{"commit naming a missing parent", commitWith("tree TREE\nparent " + strings.Repeat("1", 40) + "\nauthor " + ident + "\ncommitter " + ident + "\n\nm\n")},
		{"commit naming a blob as its tree", commitWith("tree " + blob.id().String() + "\nauthor " + ident + "\ncommitter " + ident + "\n\nm\n")},
		{"tree entry .git", treeOf("100644 .git")},
		{"tree entry .GIT", treeOf("40000 .GIT")},
		{"tree entry .gitmodules", treeOf("100644 .gitmodules")},
		{"tree entry .Gitattributes", treeOf("100644 .Gitattributes")},
		{"tree entry .mailmap", treeOf("100644 .mailmap")},
		{"tree entry git~1", treeOf("100644 git~1")},
		{"tree entry GI7EBA~1 (.gitmodules)", treeOf("100644 GI7EBA~1")},
		{"tree entry gi~12345 (.gitmodules)", treeOf("100644 gi~12345")},
		{"tree entry ~1234567 (.gitmodules)", treeOf("100644 ~1234567")},
		{"tree entry maba30~1 (.mailmap)", treeOf("100644 maba30~1")},
		{"tree entry gitmod~1 (.gitmodules)", treeOf("100644 gitmod~1")},
		{"tree entry .git. (NTFS)", treeOf("100644 .git.")},
		{"tree entry .", treeOf("100644 .")},
		{"tree entry ..", treeOf("100644 ..")},
		{"tree entry with a space", treeOf("100644 a b")},
		{"tree entry with a backslash", treeOf("100644 a\\b")},
		{"tree entry with a slash", treeOf("100644 a/b")},
		{"tree entry empty name", treeOf("100644 ")},
		{"tree entry non-ASCII", treeOf("100644 \xc3\xa4")},
		{"tree entry mode 100664", treeOf("100664 a")},
		{"tree entry mode 040000", treeOf("040000 a")},
		{"tree entry symlink", treeOf("120000 a")},
		{"tree entry gitlink", treeOf("160000 a")},
		{"tree unsorted", treeOf("100644 b", "100644 a")},
		{"tree dir after file with a longer name", treeOf("100644 a", "100644 a.b", "40000 a")},
		{"tree entry twice", treeOf("100644 a", "100644 a")},
		{"tree naming a blob as a tree", packObject{plumbing.TreeObject, append([]byte("40000 a\x00"), blobID[:]...)}},
		{"tree naming a tree as a blob", packObject{plumbing.TreeObject, append([]byte("100644 a\x00"), treeID[:]...)}},
	}
	for _, c := range cases {
		pack := testPack(blob, tree, commit, c.obj)
		if why := checkAgainstGit(t, pack); !strings.HasPrefix(why, wantWhy[c.name]) || why == "" {
			t.Errorf("%s: indexPackGo left the pack to git for %q, want %q", c.name, why, wantWhy[c.name])
		}
	}
	// packs it does not parse
	good := testPack(blob, tree, commit)
	bad := map[string][]byte{
		"trailer":        append(bytes.Clone(good[:len(good)-1]), good[len(good)-1]^1),
		"version 3":      func() []byte { p := bytes.Clone(good); p[7] = 3; return fixTrailer(p) }(),
		"count":          func() []byte { p := bytes.Clone(good); p[11]++; return fixTrailer(p) }(),
		"junk at end":    fixTrailer(append(bytes.Clone(good[:len(good)-20]), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
		"object twice":   testPack(blob, tree, commit, blob),
		"zlib checksum":  func() []byte { p := bytes.Clone(good); p[len(p)-21] ^= 1; return fixTrailer(p) }(),
		"short":          good[:20],
		"missing blob":   testPack(tree, commit),
		"ref delta base": refDeltaPack(),
	}
	for name, p := range bad {
		if why := checkAgainstGit(t, p); !strings.HasPrefix(why, wantWhy[name]) || why == "" {
			t.Errorf("%s: indexPackGo left the pack to git for %q, want %q", name, why, wantWhy[name])
		}
	}
}

// fixTrailer recomputes the checksum at the end of p.
func fixTrailer(p []byte) []byte {
	sum := sha1.Sum(p[:len(p)-20])
	copy(p[len(p)-20:], sum[:])
	return p
}

// refDeltaPack is a pack whose one object is a REF_DELTA against a base
// it does not hold (a thin pack).
func refDeltaPack() []byte {
	blob, _, _ := canonicalObjects()
	var b bytes.Buffer
	hdr := packFileHeader(1)
	b.Write(hdr[:])
	delta := []byte{6, 6, 0x90, 6} // copy 6 bytes from offset 0
	e := packHeader(plumbing.REFDeltaObject, len(delta))
	b.Write(e)
	id := blob.id()
	b.Write(id[:])
	zw := zlib.NewWriter(&b)
	zw.Write(delta)
	zw.Close()
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

// FuzzIndexPackGo builds a pack of the canonical blob, tree and commit and
// one more object of the fuzzed type and content, and fails when
// indexPackGo takes a pack git index-pack --strict refuses, or writes
// another index than git's. Leaving the pack to git is always allowed.
func FuzzIndexPackGo(f *testing.F) {
	blob, tree, commit := canonicalObjects()
	ident := "A U Thor <a@example.com> 1700000000 +0000"
	f.Add(byte(1), []byte("tree "+tree.id().String()+"\nparent "+commit.id().String()+"\nauthor "+ident+"\ncommitter "+ident+"\n\nsecond\n"))
	f.Add(byte(1), []byte("tree "+tree.id().String()+"\nauthor  A <a@example.com> 0 +0000\ncommitter A <> 0 -1200\n\n"))
	f.Add(byte(1), []byte("tree "+tree.id().String()+"\nauthor A <a@example.com> 9999999999 +9999\ncommitter "+ident+"\n\n\x01"))
	f.Add(byte(1), []byte("tree "+tree.id().String()+"\nauthor "+ident+"\ncommitter "+ident+"\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lH\n \n -----END SSH SIGNATURE-----\n\nrun r1\n"))
	f.Add(byte(2), treeOf("100644 a", "100755 b", "40000 c").data)
	tid := tree.id()
	f.Add(byte(2), append([]byte("40000 d\x00"), tid[:]...))
	f.Add(byte(2), treeOf("100644 a-b", "100644 a.b", "100644 a=b", "100644 a@b").data)
	f.Add(byte(2), treeOf("100644 .gitx", "100644 .github").data)
	f.Add(byte(2), treeOf("100644 a~1", "100644 refunds~", "100644 x~12345").data)
	f.Add(byte(2), []byte{})
	f.Add(byte(3), []byte("hello\n"))
	f.Add(byte(4), []byte("object "+commit.id().String()+"\ntype commit\ntag v1\ntagger "+ident+"\n\nv1\n"))
	f.Fuzz(func(t *testing.T, kind byte, data []byte) {
		if kind < 1 || kind > 4 || len(data) > 1<<16 {
			return
		}
		checkAgainstGit(t, testPack(blob, tree, commit, packObject{plumbing.ObjectType(kind), data}))
	})
}

// TestCopyLocalObjectsIndexed: the copy of a source whose objects are in
// the subset is indexed in Go (the index is git's, the clone fscks with
// --strict); one with an object outside it is indexed by git, which
// refuses it as it did the stream.
func TestCopyLocalObjectsIndexed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := fastImportRepo(t, 12)
	// a loose object too: the copy is writeTo's stream
	gitHashObjects(t, src, []string{"loose\n"})
	_, tr := newTransport(t)
	if copied, err := tr.CopyLocalObjects(ctx, src); !copied || err != nil {
		t.Fatalf("copy: %v, %v", copied, err)
	}
	packs, _ := filepath.Glob(filepath.Join(tr.dir, "objects", "pack", "*"))
	if len(packs) != 2 || !strings.HasSuffix(packs[0], ".idx") || !strings.HasSuffix(packs[1], ".pack") {
		t.Fatalf("the copy left %q, want one pack and its index", packs)
	}
	pack, _ := os.ReadFile(packs[1])
	idx, _ := os.ReadFile(packs[0])
	if want, why := indexPackGo(context.Background(), pack); why != "" || !bytes.Equal(idx, want) {
		t.Fatalf("the copy was not indexed in Go (%s)", why)
	}
	git(t, tr.dir, "fsck", "--strict", "--no-dangling")

	// outside the subset: a tree entry git's fsck refuses under --strict
	bad := t.TempDir()
	git(t, "", "init", "-q", "--bare", bad)
	blob, _, _ := canonicalObjects()
	p := filepath.Join(bad, "objects", "pack", "pack-1.pack")
	os.WriteFile(p, testPack(blob, treeOf("100644 .git")), 0o600)
	git(t, "", "index-pack", p)
	_, tr2 := newTransport(t)
	_, err := tr2.CopyLocalObjects(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "hasDotgit") {
		t.Fatalf("copy of a tree naming .git: %v; want git's refusal (hasDotgit)", err)
	}
	if left, _ := filepath.Glob(filepath.Join(tr2.dir, "objects", "pack", "*")); len(left) != 0 {
		t.Fatalf("a refused copy left %q", left)
	}

	// outside the subset and accepted by git: an annotated tag
	tagged := t.TempDir()
	git(t, "", "init", "-q", "--bare", tagged)
	_, tree, commit := canonicalObjects()
	tag := packObject{plumbing.TagObject, []byte("object " + commit.id().String() + "\ntype commit\ntag v1\ntagger A <a@example.com> 1700000000 +0000\n\nv1\n")}
	pack = testPack(blob, tree, commit, tag)
	if _, why := indexPackGo(context.Background(), pack); why == "" {
		t.Fatal("indexPackGo took a tag")
	}
	p = filepath.Join(tagged, "objects", "pack", "pack-1.pack")
	os.WriteFile(p, pack, 0o600)
	git(t, "", "index-pack", p)
	_, tr3 := newTransport(t)
	if copied, err := tr3.CopyLocalObjects(ctx, tagged); !copied || err != nil {
		t.Fatalf("copy of a tag: %v, %v", copied, err)
	}
	sum := pack[len(pack)-20:]
	name := filepath.Join(tr3.dir, "objects", "pack", fmt.Sprintf("pack-%x", sum))
	if left, _ := filepath.Glob(filepath.Join(tr3.dir, "objects", "pack", "*")); len(left) != 2 || left[0] != name+".idx" || left[1] != name+".pack" {
		t.Fatalf("the copy git indexed left %q, want %s.pack and its index", left, name)
	}
	git(t, tr3.dir, "fsck", "--strict", "--no-dangling")
}

// FuzzIndexPackGoBytes patches the bytes of a pack of whole objects and
// OFS and REF deltas (its trailer made right again, or the pack is
// trivially left to git), and fails when indexPackGo takes what git
// index-pack --strict refuses, writes another index, or panics.
func FuzzIndexPackGoBytes(f *testing.F) {
	blob, tree, commit := canonicalObjects()
	base := packObject{plumbing.BlobObject, []byte(strings.Repeat("a line of a document\n", 8))}
	var b bytes.Buffer
	hdr := packFileHeader(6)
	b.Write(hdr[:])
	entry := func(head []byte, data []byte) {
		b.Write(head)
		zw, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
		zw.Write(data)
		zw.Close()
	}
	for _, o := range []packObject{blob, tree, commit} {
		entry(packHeader(o.t, len(o.data)), o.data)
	}
	baseOff := b.Len()
	entry(packHeader(base.t, len(base.data)), base.data)
	// base with its last line replaced: copy all but 21 bytes, insert 4
	n := len(base.data)
	varint := func(b []byte, v int) []byte {
		for v >= 0x80 {
			b = append(b, byte(v)|0x80)
			v >>= 7
		}
		return append(b, byte(v))
	}
	delta := varint(varint(nil, n), n-21+4)
	delta = append(delta, 0x90, byte(n-21), 4, 'e', 'n', 'd', '\n')
	ofs := b.Len()
	back := ofs - baseOff
	entry(append(packHeader(plumbing.OFSDeltaObject, len(delta)), byte(back)), delta) // back < 128
	id := base.id()
	delta2 := bytes.Clone(delta)
	delta2[len(delta2)-4] = 'E' // another object
	entry(append(packHeader(plumbing.REFDeltaObject, len(delta2)), id[:]...), delta2)
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	pack := b.Bytes()
	if _, why := indexPackGo(context.Background(), pack); why != "" {
		f.Fatalf("the fuzz pack is left to git for %q", why)
	}
	f.Add(uint16(0), []byte{})
	f.Add(uint16(len(pack)-30), []byte{1})
	f.Add(uint16(ofs+3), []byte{1})
	f.Add(uint16(12), []byte{0x10})
	f.Add(uint16(baseOff), []byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, off uint16, patch []byte) {
		p := bytes.Clone(pack)
		for i, c := range patch {
			if j := int(off) + i; j < len(p)-20 {
				p[j] ^= c
			}
		}
		checkAgainstGit(t, fixTrailer(p))
	})
}

// TestCopiedObjectsServeReads: the commits, trees and small blobs the Go
// index of a copy hashed are what a reader of the source opened with them
// reads, and its second handles (NewReader) too, once the copy is
// indexed: with the source's packs gone, they still read.
func TestCopiedObjectsServeReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := fastImportRepo(t, 6)
	git(t, src, "repack", "-adq")
	head := OID(git(t, src, "rev-parse", "refs/heads/main"))
	tree := OID(git(t, src, "rev-parse", "refs/heads/main^{tree}"))
	manifest := OID(git(t, src, "rev-parse", "refs/heads/main:manifest.json"))
	want := gitObjects(t, src, []OID{head, tree, manifest})

	_, tr := newTransport(t)
	kept := NewCopiedObjects()
	if copied, err := tr.CopyLocalObjectsKeeping(ctx, src, kept); !copied || err != nil {
		t.Fatalf("copy: %v, %v", copied, err)
	}
	select {
	case <-kept.Indexed():
	default:
		t.Fatal("the copy returned with Indexed open")
	}
	// 6 commits, 6 manifests, 3 trees each, documents and files
	if kept.Len() < 6*5 {
		t.Fatalf("the copy kept %d objects", kept.Len())
	}
	s, ok := OpenLocalSourceWith(src, kept)
	if !ok {
		t.Fatal("the source does not open")
	}
	defer s.Close()
	packs, _ := filepath.Glob(filepath.Join(src, "objects", "pack", "*"))
	for _, p := range packs {
		os.Remove(p)
	}
	h, ok, err := NewReader(s)
	if !ok || err != nil {
		t.Fatalf("NewReader: %v %v", ok, err)
	}
	defer h.Close()
	for _, r := range []Store{s, h} {
		for i, id := range []OID{head, tree, manifest} {
			kind, data, err := r.RawObject(id)
			if err != nil || kind != want[i].Kind || !bytes.Equal(data, want[i].Data) {
				t.Fatalf("%s: %s %q, %v; want the %s the source held", id, kind, data, err, want[i].Kind)
			}
		}
		if _, err := r.Commit(head); err != nil {
			t.Fatal(err)
		}
		if _, err := r.BlobAtMost(manifest, 1<<10); err != nil {
			t.Fatal(err)
		}
	}
	// a copy git indexes keeps nothing
	bad := t.TempDir()
	git(t, "", "init", "-q", "--bare", bad)
	blob, tr0, commit := canonicalObjects()
	tag := packObject{plumbing.TagObject, []byte("object " + commit.id().String() + "\ntype commit\ntag v1\ntagger A <a@example.com> 1700000000 +0000\n\nv1\n")}
	p := filepath.Join(bad, "objects", "pack", "pack-1.pack")
	os.WriteFile(p, testPack(blob, tr0, commit, tag), 0o600)
	git(t, "", "index-pack", p)
	_, tr2 := newTransport(t)
	kept2 := NewCopiedObjects()
	if copied, err := tr2.CopyLocalObjectsKeeping(ctx, bad, kept2); !copied || err != nil || kept2.Len() != 0 {
		t.Fatalf("copy git indexed: %v, %v, kept %d", copied, err, kept2.Len())
	}
}

// TestEncodeIndexLargeOffsets: an index with offsets past 2 GiB (a pack
// too large to build in a test for git index-pack) is byte for byte what
// go-git's encoder, which its tests hold to git's files, writes: the
// large offsets in a table of their own, in the order of the ids.
func TestEncodeIndexLargeOffsets(t *testing.T) {
	t.Parallel()
	var entries []indexEntry
	w := new(idxfile.Writer)
	w.OnHeader(40)
	for i := range 40 {
		e := indexEntry{crc: uint32(i * 7919)}
		e.h = sha1.Sum([]byte{byte(i)})
		e.off = uint64(12 + i*1000)
		if i%3 == 0 {
			e.off += 1<<31 + uint64(i)<<32
		}
		entries = append(entries, e)
		w.Add(e.h, e.off, e.crc)
	}
	packSum := sha1.Sum([]byte("pack"))
	w.OnFooter(plumbing.Hash(packSum))
	idx, err := w.Index()
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if _, err := idxfile.NewEncoder(&want).Encode(idx); err != nil {
		t.Fatal(err)
	}
	if got := encodeIndex(entries, packSum[:]); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("encodeIndex with large offsets differs from go-git's encoder (%d and %d bytes)", len(got), want.Len())
	}
}

// TestIndexPackGoTildeNames: the names a URI clash gives a readproof tree
// ("refunds~", "refunds~1", "policies~2") are in the subset, with git's
// index.
func TestIndexPackGoTildeNames(t *testing.T) {
	t.Parallel()
	blob, tree, commit := canonicalObjects()
	for _, name := range []string{"refunds~", "refunds~1", "policies~2", "a~1", "doc.md~12", "x~"} {
		if why := checkAgainstGit(t, testPack(blob, tree, commit, treeOf("100644 "+name))); why != "" {
			t.Errorf("a tree naming %q was left to git: %s", name, why)
		}
	}
}

// TestIndexPackGoSignedCommit: a commit signed as readproof signs manifests
// (a gpgsig header of continuation lines) is in the subset, with git's
// index; so are a one-line signature and one whose message is empty.
func TestIndexPackGoSignedCommit(t *testing.T) {
	t.Parallel()
	blob, tree, _ := canonicalObjects()
	ident := "readproof <readproof@localhost> 1700000000 +0000"
	sig := "gpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAg\n \n -----END SSH SIGNATURE-----\n"
	for name, text := range map[string]string{
		"armored":    "tree TREE\nauthor " + ident + "\ncommitter " + ident + "\n" + sig + "\nrun r1\n",
		"one line":   "tree TREE\nauthor " + ident + "\ncommitter " + ident + "\ngpgsig x\n\nm\n",
		"no message": "tree TREE\nauthor " + ident + "\ncommitter " + ident + "\n" + sig + "\n",
	} {
		if why := checkAgainstGit(t, testPack(blob, tree, commitWith(text))); why != "" {
			t.Errorf("%s: a signed commit was left to git: %s", name, why)
		}
	}
}
