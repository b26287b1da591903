package share

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/internal/testsize"
	"github.com/readproof/readproof/manifest"
)

// forge records, through the object API and without readproof's checks, a
// run "forged" whose manifest lies in the way kind says, or a resource tip
// whose observation lies ("observation"; "observation-below": the lie is
// under a good tip, an observation with the tree of the old tip), or a tag
// move to other bytes under a good tip ("tag-below"), with a journal entry
// for it; or ("huge") a true manifest padded with whitespace to one byte
// over manifest.MaxBytes.
func forge(t *testing.T, p *project, kind string) {
	t.Helper()
	g := p.s.Git()
	real := p.run(t, "honest", "doc")
	sig := gitstore.Signature{Name: "readproof", Email: "readproof@localhost", When: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	other, err := g.PutBlob([]byte("bytes nobody recorded\n"))
	if err != nil {
		t.Fatal(err)
	}
	if kind == "tag-below" { // a move to other bytes under a good tip
		ref := store.TagsPrefix + "demo/doc/prod"
		tip, err := g.Ref(ref)
		if err != nil {
			t.Fatal(err)
		}
		c, err := g.Commit(tip)
		if err != nil {
			t.Fatal(err)
		}
		tj, err := gitstore.FileAt(g, c.Tree, "tag.json")
		if err != nil {
			t.Fatal(err)
		}
		tree, err := g.PutTree([]gitstore.TreeEntry{{Name: "content", Mode: gitstore.ModeFile, OID: other}, {Name: "tag.json", Mode: gitstore.ModeFile, OID: tj}})
		if err != nil {
			t.Fatal(err)
		}
		id, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{tip}, Author: sig, Committer: sig, Message: c.Message})
		if err != nil {
			t.Fatal(err)
		}
		if id, err = g.PutCommit(gitstore.Commit{Tree: c.Tree, Parents: []gitstore.OID{id}, Author: sig, Committer: sig, Message: c.Message}); err != nil {
			t.Fatal(err)
		}
		if err := g.Update(gitstore.RefUpdate{Name: ref, Old: tip, New: id}); err != nil {
			t.Fatal(err)
		}
		return
	}
	if kind == "observation" || kind == "observation-below" {
		ref := store.ResourcesPrefix + "demo/doc"
		tip, err := g.Ref(ref)
		if err != nil {
			t.Fatal(err)
		}
		o, c, err := observationAt(g, tip)
		if err != nil {
			t.Fatal(err)
		}
		o.Snapshot = string(other) // content hash still that of the old bytes
		data, _ := json.MarshalIndent(o, "", "  ")
		ob, _ := g.PutBlob(append(data, '\n'))
		tree, err := g.PutTree([]gitstore.TreeEntry{{Name: "content", Mode: gitstore.ModeFile, OID: other}, {Name: "observation.json", Mode: gitstore.ModeFile, OID: ob}})
		if err != nil {
			t.Fatal(err)
		}
		id, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{tip}, Author: sig, Committer: sig, Message: "observe\n"})
		if err != nil {
			t.Fatal(err)
		}
		if kind == "observation-below" {
			if id, err = g.PutCommit(gitstore.Commit{Tree: c.Tree, Parents: []gitstore.OID{id}, Author: sig, Committer: sig, Message: "observe\n"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.Update(gitstore.RefUpdate{Name: ref, Old: tip, New: id}); err != nil {
			t.Fatal(err)
		}
		return
	}
	m := *real
	m.RunID = "forged"
	m.Entries = append([]manifest.Entry(nil), real.Entries...)
	files := map[string]gitstore.OID{}
	for _, e := range m.Entries {
		files[e.File] = gitstore.OID(e.Snapshot)
	}
	switch kind {
	case "hash": // the entry records a hash its blob does not have
		m.Entries[0].ContentHash = contentHash([]byte("something else\n"))
	case "blob": // the entry names other bytes, keeping the old hash
		m.Entries[0].Snapshot = string(other)
		files[m.Entries[0].File] = other
	case "tree": // the tree's file is not the entry's snapshot
		files[m.Entries[0].File] = other
	case "huge": // a true manifest padded with whitespace past manifest.MaxBytes
	default:
		t.Fatalf("unknown forgery %q", kind)
	}
	data, err := manifest.Encode(&m)
	if err != nil {
		t.Fatal(err)
	}
	unpaddedData := data
	if kind == "huge" {
		data = append(data, bytes.Repeat([]byte{' '}, manifest.MaxBytes+1-len(data))...)
	}
	mb, _ := g.PutBlob(data)
	// content/demo/doc
	leaf, _ := g.PutTree([]gitstore.TreeEntry{{Name: "doc", Mode: gitstore.ModeFile, OID: files["content/demo/doc"]}})
	demo, _ := g.PutTree([]gitstore.TreeEntry{{Name: "demo", Mode: gitstore.ModeDir, OID: leaf}})
	tree, err := g.PutTree([]gitstore.TreeEntry{{Name: "content", Mode: gitstore.ModeDir, OID: demo}, {Name: "manifest.json", Mode: gitstore.ModeFile, OID: mb}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := g.PutCommit(gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: manifest.Message(&m)})
	if err != nil {
		t.Fatal(err)
	}
	tip, _ := g.Ref(store.JournalRef)
	j, err := recordOnJournal(unpadded{g, mb, unpaddedData}, tip, "forged", id, sig.When)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: store.RunsPrefix + "forged", New: id}, gitstore.RefUpdate{Name: store.JournalRef, Old: tip, New: j}); err != nil {
		t.Fatal(err)
	}
}

// unpadded is a store whose BlobAtMost gives blob id's bytes as data, so
// that forge can record on the journal a manifest readproof refuses to
// read (its bytes without the padding).
type unpadded struct {
	gitstore.Store
	id   gitstore.OID
	data []byte
}

func (u unpadded) BlobAtMost(id gitstore.OID, max int64) ([]byte, error) {
	if id == u.id {
		return u.data, nil
	}
	return u.Store.BlobAtMost(id, max)
}

// TestPullRefusesUnverified: a pull of data that does not verify is refused
// before anything is adopted: no local ref changes (the tracking refs may
// hold what was fetched), and a clone of it leaves nothing behind.
func TestPullRefusesUnverified(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Every kind starts from the same exchange between mallory and alice,
	// made once here and copied (server and both projects) for each.
	shared := bareServer(t, t.TempDir(), "shared.git")
	mallory0 := newProject(t, map[string]string{"doc": "the real text\n"})
	addRemote(t, mallory0, "origin", shared)
	mallory0.run(t, "first", "doc")
	mallory0.tag(t, "doc", "prod")
	mustPush(t, mallory0, "origin")
	alice0 := newProject(t, map[string]string{"other": "alice's doc\n"})
	alice0.run(t, "mine", "other")
	addRemote(t, alice0, "origin", shared)
	mustPull(t, alice0, "origin")
	mustPush(t, alice0, "origin")
	mustPull(t, mallory0, "origin")
	kinds := []string{"hash", "blob", "tree", "observation", "observation-below", "tag-below"}
	if testsize.Long() {
		kinds = append(kinds, "huge") // 64 MiB through git push, fetch and two clones: 4 s of CPU
	}
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "shared.git")
			if err := testproc.CopyTree(shared, dir); err != nil {
				t.Fatal(err)
			}
			mallory := mallory0.copyProject(t, shared, dir)
			alice := alice0.copyProject(t, shared, dir)

			forge(t, mallory, kind)
			if kind == "huge" {
				// mallory's own readproof refuses to read it: git pushes it
				git(t, mallory.path(), "push", "--quiet", dir, store.RunsPrefix+"forged", store.JournalRef)
			} else {
				mustPush(t, mallory, "origin") // push does not judge; pull does
			}

			before := refsExcept(t, alice.path(), "refs/nothing-excluded/")
			_, err := Pull(ctx, alice.s, "origin", Options{})
			if !errors.Is(err, ErrUnverified) {
				t.Fatalf("pull of forged data: %v, want ErrUnverified", err)
			}
			t.Logf("refused: %v", err)
			if kind == "huge" && !regexp.MustCompile(`manifest [0-9a-f]{40}: manifest.json: object [0-9a-f]{40}: 67108865 bytes, more than the 67108864 allowed`).MatchString(err.Error()) {
				t.Fatalf("refusal does not name the manifest and its size: %v", err)
			}
			if !strings.Contains(err.Error(), "nothing was adopted") {
				t.Fatalf("error does not say nothing was adopted: %v", err)
			}
			if after := refsExcept(t, alice.path(), "refs/nothing-excluded/"); after != before {
				t.Fatalf("refs changed by a refused pull:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			// Refused again on retry, however often.
			if _, err := Pull(ctx, alice.s, "origin", Options{}); !errors.Is(err, ErrUnverified) {
				t.Fatalf("second pull: %v", err)
			}
			replayAll(t, alice.s)
			gitstore.Fsck(t, alice.path())

			// into a missing directory, and into an empty one the user
			// made: it stays as it was
			dst := filepath.Join(t.TempDir(), "clone")
			if _, err := Clone(ctx, dir, dst, Options{}); !errors.Is(err, ErrUnverified) {
				t.Fatalf("clone of forged data: %v", err)
			}
			if _, err := os.Stat(dst); !os.IsNotExist(err) {
				t.Fatalf("a refused clone left %s behind (%v)", dst, err)
			}
			nothingBeside(t, dst)
			if err := os.Mkdir(dst, 0o750); err != nil {
				t.Fatal(err)
			}
			if _, err := Clone(ctx, dir, dst, Options{}); !errors.Is(err, ErrUnverified) {
				t.Fatalf("clone of forged data into an empty directory: %v", err)
			}
			if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o750 {
				t.Fatalf("a refused clone into an empty directory left %v (%v), want the directory as it was (750)", fi.Mode(), err)
			} else if entries, _ := os.ReadDir(dst); len(entries) != 0 {
				t.Fatalf("a refused clone left %d entries in %s", len(entries), dst)
			}
			nothingBeside(t, dst)
		})
	}
}

// TestPullRefusesCorruptObject: a remote whose stored blob was altered on
// disk cannot even be fetched (git checks every object id), and nothing is
// adopted.
func TestPullRefusesCorruptObject(t *testing.T) {
	t.Parallel()
	dir := bareServer(t, t.TempDir(), "shared.git")
	a := newProject(t, map[string]string{"doc": "original bytes of the document\n"})
	m := a.run(t, "r", "doc")
	addRemote(t, a, "origin", dir)
	mustPush(t, a, "origin")
	// Unpack the server's objects so one blob can be altered in place.
	git(t, dir, "repack", "-a", "-d", "-q")
	unpackAll(t, dir)
	corruptLoose(t, dir, m.Entries[0].Snapshot)

	b := newProject(t, map[string]string{"x": "x\n"})
	addRemote(t, b, "origin", dir)
	before := allRefs(t, b.path())
	if _, err := Pull(context.Background(), b.s, "origin", Options{}); err == nil {
		t.Fatal("pull of a corrupt object succeeded")
	}
	if after := allRefs(t, b.path()); after != before {
		t.Fatalf("refs changed:\n%s\n%s", before, after)
	}
	gitstore.Fsck(t, b.path())
}

// TestManifestTooLargeRefusedUnread: a manifest.json one byte over
// manifest.MaxBytes (a true manifest padded with whitespace, as a forged
// remote would send it) is refused by the pull's check (checkManifest),
// the store's reader (Manifest) and the journal view, each naming the
// manifest and its size, without its 64 MiB being inflated: the check
// allocates far less than the manifest's size.
func TestManifestTooLargeRefusedUnread(t *testing.T) {
	p := newProject(t, map[string]string{"doc": "the real text\n"})
	forge(t, p, "huge")
	g := p.s.Git()
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	id, err := g.Ref(store.RunsPrefix + "forged")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`manifest [0-9a-f]{40}: manifest.json: object [0-9a-f]{40}: 67108865 bytes, more than the 67108864 allowed`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = checkManifest(g, id)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, gitstore.ErrTooLarge) || !want.MatchString(err.Error()) {
		t.Fatalf("checkManifest: %v, want ErrTooLarge naming the manifest and its size", err)
	}
	if spent := after.TotalAlloc - before.TotalAlloc; spent > 8<<20 {
		t.Fatalf("checkManifest allocated %d bytes to refuse a manifest by its size", spent)
	}
	if _, err := p.s.Manifest("forged"); !errors.Is(err, gitstore.ErrTooLarge) || !want.MatchString(err.Error()) {
		t.Fatalf("Manifest: %v, want ErrTooLarge naming the manifest and its size", err)
	}
}

// TestRecordTooLargeRefusedUnread: an observation.json (as a remote could
// pad one, JSON with its whitespace) over store.MaxRecordBytes is refused by
// its size before its content is inflated, by the check a pull makes and by
// the store's own reader.
func TestRecordTooLargeRefusedUnread(t *testing.T) {
	t.Parallel()
	p := newProject(t, map[string]string{"doc": "the real text\n"})
	p.run(t, "first", "doc")
	g := p.s.Git()
	ref := store.ResourcesPrefix + "demo/doc"
	tip, err := g.Ref(ref)
	if err != nil {
		t.Fatal(err)
	}
	o, c, err := observationAt(g, tip)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(o)
	padded := append(data, bytes.Repeat([]byte(" "), store.MaxRecordBytes+1-len(data))...)
	id := withObservation(t, g, c, []gitstore.OID{tip}, padded)
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`observation [0-9a-f]{40}: object [0-9a-f]{40}: 16777217 bytes, more than the 16777216 allowed`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = checkObservation(g, id, "readproof://demo/doc", verifiedSet{})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, gitstore.ErrTooLarge) || !want.MatchString(err.Error()) {
		t.Fatalf("checkObservation: %v, want ErrTooLarge naming the observation and its size", err)
	}
	if spent := after.TotalAlloc - before.TotalAlloc; spent > 4<<20 {
		t.Fatalf("checkObservation allocated %d bytes to refuse a record by its size", spent)
	}
	if err := g.Update(gitstore.RefUpdate{Name: ref, Old: tip, New: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.History(uri(t, "doc")); !errors.Is(err, gitstore.ErrTooLarge) {
		t.Fatalf("the store's reader of the chain (History): %v, want ErrTooLarge", err)
	}
}
