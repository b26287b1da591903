package gitstore

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The codecs in objcodec.go replace go-git's plumbing/object; these tests
// hold them to it: the same bytes out of the encoders, the same fields and
// the same error texts out of the decoders (fuzzed below).

func goGitObject(t plumbing.ObjectType, data []byte) plumbing.EncodedObject {
	o := &plumbing.MemoryObject{}
	o.SetType(t)
	o.Write(data)
	return o
}

func goGitBytes(t testing.TB, enc func(plumbing.EncodedObject) error) []byte {
	t.Helper()
	o := &plumbing.MemoryObject{}
	if err := enc(o); err != nil {
		t.Fatal(err)
	}
	r, _ := o.Reader()
	var b bytes.Buffer
	b.ReadFrom(r)
	return b.Bytes()
}

func randomHash(r *rand.Rand) plumbing.Hash {
	var h plumbing.Hash
	r.Read(h[:])
	return h
}

func randomSignature(r *rand.Rand) Signature {
	names := []string{"", "A U Thor", " padded ", "x<y", "Zoë"}
	emails := []string{"", "a@example.com", "odd email"}
	whens := []time.Time{
		{},
		time.Unix(0, 0),
		time.Unix(-5, 0).UTC(),
		time.Unix(1700000000, 0).In(time.FixedZone("", 5*3600+30*60)),
		time.Unix(1234567890, 0).In(time.FixedZone("X", -(7*3600 + 15*60))),
		time.Unix(r.Int63n(1<<33), 0).In(time.FixedZone("", (r.Intn(49)-24)*1800)),
	}
	return Signature{Name: names[r.Intn(len(names))], Email: emails[r.Intn(len(emails))], When: whens[r.Intn(len(whens))]}
}

func TestEncodeTreeMatchesGoGit(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 200; n++ {
		var entries []TreeEntry
		var theirs []object.TreeEntry
		for i := r.Intn(6); i > 0; i-- {
			name := fmt.Sprintf("%c%d", "ab.-_"[r.Intn(5)], r.Intn(1000))
			mode, fm := ModeFile, filemode.Regular
			if r.Intn(2) == 0 {
				mode, fm = ModeDir, filemode.Dir
			}
			h := randomHash(r)
			entries = append(entries, TreeEntry{Name: name, Mode: mode, OID: OID(h.String())})
			theirs = append(theirs, object.TreeEntry{Name: name, Mode: fm, Hash: h})
		}
		got, err := encodeTree(entries)
		if err != nil {
			continue // a duplicate name: refused before encoding, as before
		}
		// go-git's encoder wants them sorted, as encodeTree sorts them
		sorted := object.TreeEntrySorter(theirs)
		for i := 1; i < len(sorted); i++ {
			for j := i; j > 0 && sorted.Less(j, j-1); j-- {
				sorted.Swap(j, j-1)
			}
		}
		want := goGitBytes(t, (&object.Tree{Entries: theirs}).Encode)
		if !bytes.Equal(got, want) {
			t.Fatalf("tree %v:\nours    %q\ngo-git's %q", entries, got, want)
		}
	}
}

func TestEncodeCommitMatchesGoGit(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(2))
	sigs := []string{"", "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n", "one line\n", "a\n\nb\n"}
	msgs := []string{"", "m", "subject\n", "subject\n\nbody\n", "\n\nleading blank lines\n", "no newline"}
	encoded := 0
	defer func() {
		if encoded < 50 {
			t.Errorf("only %d of the random commits were valid", encoded)
		}
	}()
	for n := 0; n < 600; n++ {
		c := Commit{Tree: OID(randomHash(r).String()), Author: randomSignature(r), Committer: randomSignature(r),
			Message: msgs[r.Intn(len(msgs))], Signature: sigs[r.Intn(len(sigs))]}
		var parents []plumbing.Hash
		for i := r.Intn(4); i > 0; i-- {
			h := randomHash(r)
			parents = append(parents, h)
			c.Parents = append(c.Parents, OID(h.String()))
		}
		got, err := encodeCommit(c)
		if err != nil {
			continue // an unset or pre-1970 time or an empty name: refused before encoding, as before
		}
		encoded++
		gc := &object.Commit{
			TreeHash: plumbing.NewHash(string(c.Tree)), ParentHashes: parents,
			Author:    object.Signature{Name: c.Author.Name, Email: c.Author.Email, When: c.Author.When},
			Committer: object.Signature{Name: c.Committer.Name, Email: c.Committer.Email, When: c.Committer.When},
			Message:   c.Message, PGPSignature: c.Signature,
		}
		if want := goGitBytes(t, gc.Encode); !bytes.Equal(got, want) {
			t.Fatalf("commit %+v:\nours    %q\ngo-git's %q", c, got, want)
		}
		// and the decoders agree on what was written
		checkCommitDecode(t, got)
		payload, _ := CommitPayload(c)
		gc.PGPSignature = ""
		if want := goGitBytes(t, gc.Encode); !bytes.Equal(payload, want) {
			t.Fatalf("payload %+v:\nours    %q\ngo-git's %q", c, payload, want)
		}
	}
}

func when(t time.Time) string {
	return fmt.Sprintf("%v %d %s", t.IsZero(), t.Unix(), t.Format("-0700 MST"))
}

func codecErrText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func checkCommitDecode(t *testing.T, data []byte) {
	t.Helper()
	got, err := parseCommit(data)
	var gc object.Commit
	werr := gc.Decode(goGitObject(plumbing.CommitObject, data))
	if codecErrText(err) != codecErrText(werr) {
		t.Fatalf("%q: error %v, go-git's %v", data, err, werr)
	}
	if err != nil {
		return
	}
	ours := fmt.Sprintf("tree %s parents %v\nauthor %q %q %s\ncommitter %q %q %s\nmessage %q\nsig %q", got.tree, got.parents,
		got.author.Name, got.author.Email, when(got.author.When), got.committer.Name, got.committer.Email, when(got.committer.When), got.message, got.signature)
	theirs := fmt.Sprintf("tree %s parents %v\nauthor %q %q %s\ncommitter %q %q %s\nmessage %q\nsig %q", gc.TreeHash, gc.ParentHashes,
		gc.Author.Name, gc.Author.Email, when(gc.Author.When), gc.Committer.Name, gc.Committer.Email, when(gc.Committer.When), gc.Message, gc.PGPSignature)
	if ours != theirs {
		t.Fatalf("%q:\nours:\n%s\ngo-git's:\n%s", data, ours, theirs)
	}
}

func checkTreeDecode(t *testing.T, data []byte) {
	t.Helper()
	got, err := parseTreeEntries(data)
	var gt object.Tree
	werr := gt.Decode(goGitObject(plumbing.TreeObject, data))
	if codecErrText(err) != codecErrText(werr) {
		t.Fatalf("%q: error %v, go-git's %v", data, err, werr)
	}
	if err != nil {
		return
	}
	if len(got) != len(gt.Entries) {
		t.Fatalf("%q: %d entries, go-git %d", data, len(got), len(gt.Entries))
	}
	for i, e := range gt.Entries {
		if g := got[i]; g.name != e.Name || filemode.FileMode(g.mode) != e.Mode || g.hash != e.Hash {
			t.Fatalf("%q: entry %d: %+v, go-git's %+v", data, i, g, e)
		}
	}
}

func checkTagDecode(t *testing.T, data []byte) {
	t.Helper()
	got, err := parseTagTarget(data)
	var tag object.Tag
	werr := tag.Decode(goGitObject(plumbing.TagObject, data))
	if codecErrText(err) != codecErrText(werr) {
		t.Fatalf("%q: error %v, go-git's %v", data, err, werr)
	}
	if err == nil && got != tag.Target {
		t.Fatalf("%q: target %s, go-git's %s", data, got, tag.Target)
	}
}

const (
	hexA = "0123456789abcdef0123456789abcdef01234567"
	hexB = "89abcdef0123456789abcdef0123456789abcdef"
)

func commitSeeds() []string {
	return []string{
		"", "\n", "tree " + hexA, "tree " + hexA + "\n", "tree " + strings.ToUpper(hexA) + "\n\nmsg",
		"tree x\n", "parent " + hexA + "\n", "tree " + hexA + "\nparent " + hexB + "\nparent zz\n",
		"tree " + hexA + "\nparent " + hexB + "\nauthor A <a@x> 1700000000 +0200\ncommitter C <c@x> 1700000001 -0130\n\nsubject\n\nbody\n",
		"tree " + hexA + "\ncommitter C <c@x> 1 +0000\nauthor A <a@x> 2 +0000\nparent " + hexB + "\n\nm",
		"tree " + hexA + "\nauthor A <a@x> 1 +0000\nauthor B <b@x> 2 +0000\ncommitter C <c@x> 3 +0000\n\n",
		"tree " + hexA + "\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 3 +0000\ngpgsig -----BEGIN\n line\n \n end\nencoding x\ngpgsig second\n more\n\nm\n",
		"tree " + hexA + "\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 3 +0000\nmergetag object x\n gpgsig no\ngpgsig-sha256 s\n skipped\nx-extra v\n cont\nnovalue\n orphan\ngpgsig\n\n",
		"tree " + hexA + "\n foo\nauthor A <a@x> 1 +0000\n\n",
		"tree " + hexA + "\nauthor  A <a@x>\ncommitter <> x\n\n",
		"tree " + hexA + "\nauthor A a@x> 1\ncommitter A <a@x> 99999999999999999999 +0100\n\n",
		"tree " + hexA + "\nauthor A <a@x> 12 +01x0\ncommitter A <a@x> -12 -0030\n",
		"tree " + hexA + "\nauthor A <a@x> 12 +01",
		"tree " + hexA + "\ngpgsig a\n b",
		"tree " + hexA + "\r\n\r\n",
	}
}

func treeSeeds() []string {
	id := string(bytes.Repeat([]byte{0xab}, 20))
	return []string{
		"", "100644 a\x00" + id, "40000 d\x00" + id + "100755 x\x00" + id, "120000 l\x00" + id + "160000 s\x00" + id,
		"100664 old\x00" + id, "644 odd\x00" + id, "0100644 z\x00" + id, "777777777777 a\x00" + id, "1006a4 a\x00" + id,
		" a\x00" + id, "100644 \x00" + id, "100644 a" + id, "100644 a\x00" + id[:19], "100644", "b\x00a 1\x00" + id,
		"100644 b\x00" + id + "100644 a\x00" + id,
	}
}

func tagSeeds() []string {
	return []string{
		"", "\n", "object " + hexA, "object " + hexA + "\n", "object " + hexA + "\ntype commit", "object " + hexA + "\ntype commit\n",
		"object " + hexA + "\ntype commit\ntag v1", "object " + hexA + "\ntype commit\ntag v1\ntagger T <t@x> 1 +0000\n\nmsg\n",
		"object " + hexA + "\ntype blob\ntag v1\n", "object " + hexA + "\ntype nonsense\ntag v1\n", "object " + hexA + "\ntag v1\n",
		"object " + hexA + "\ntype commit\n\n", "object " + hexA + "\n\n", "type commit\n", "object nothex\n",
		"object " + hexA + "\ntype commit\nname v1\n", "object " + hexA + "\ntype ofs-delta\ntag x\n",
	}
}

func TestParseObjectsMatchGoGit(t *testing.T) {
	t.Parallel()
	for _, s := range commitSeeds() {
		checkCommitDecode(t, []byte(s))
	}
	for _, s := range treeSeeds() {
		checkTreeDecode(t, []byte(s))
	}
	for _, s := range tagSeeds() {
		checkTagDecode(t, []byte(s))
	}
}

func FuzzParseCommitMatchesGoGit(f *testing.F) {
	for _, s := range commitSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkCommitDecode(t, data) })
}

func FuzzParseTreeMatchesGoGit(f *testing.F) {
	for _, s := range treeSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkTreeDecode(t, data) })
}

func FuzzParseTagMatchesGoGit(f *testing.F) {
	for _, s := range tagSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkTagDecode(t, data) })
}
