package share

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/testproc"
)

// localSource is a bare store on a path with runs r1 and r2 pushed to it,
// its objects as the case needs: "pack" (one pack), "packs" (two packs and
// loose objects beside them) or "loose" (every object loose). It returns
// the path and the manifest of r1.
func localSource(t *testing.T, layout string) (string, gitstore.OID, string) {
	t.Helper()
	dir := bareServer(t, t.TempDir(), "shared.git")
	a := newProject(t, map[string]string{"doc": "original bytes of the document\n", "b": "bee\n"})
	m := a.run(t, "r1", "doc")
	addRemote(t, a, "origin", dir)
	mustPush(t, a, "origin")
	switch layout {
	case "pack":
		a.run(t, "r2", "b")
		mustPush(t, a, "origin")
		git(t, dir, "repack", "-a", "-d", "-q")
	case "packs":
		git(t, dir, "repack", "-a", "-d", "-q")
		a.run(t, "r2", "b")
		mustPush(t, a, "origin")
		git(t, dir, "repack", "-q") // the new objects: a second pack
		a.write(t, "docs/b.md", "bee again\n")
		a.run(t, "r3", "b")
		mustPush(t, a, "origin") // loose: a push of few objects is unpacked
		packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
		// (some loose objects are in a pack too: repack without -d)
		if counts := git(t, dir, "count-objects", "-v"); len(packs) != 2 || strings.HasPrefix(counts, "count: 0\n") {
			t.Fatalf("source has %d packs and %s, want 2 packs and loose objects", len(packs), counts)
		}
	case "loose":
		a.run(t, "r2", "b")
		mustPush(t, a, "origin")
		git(t, dir, "repack", "-a", "-d", "-q")
		unpackAll(t, dir)
	}
	return dir, gitstore.OID(m.ID), m.Entries[0].Snapshot
}

// unpackAll turns every pack of dir into loose objects.
func unpackAll(t *testing.T, dir string) {
	t.Helper()
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	for _, p := range packs {
		data, _ := os.ReadFile(p)
		os.Remove(p)
		os.Remove(strings.TrimSuffix(p, ".pack") + ".idx")
		cmd := gitstore.GitCommand(t, dir, "unpack-objects", "-q")
		cmd.Stdin = strings.NewReader(string(data))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("unpack: %v %s", err, out)
		}
	}
}

// TestCloneLocalCopy: a clone from a path takes the source's objects
// without the pack protocol whatever their layout (one pack, several packs
// and loose objects, loose only), into packs of its own with indexes it
// built, and holds every run, verified. Git's progress meter of the copy
// reaches Progress (held while the source is recognized).
func TestCloneLocalCopy(t *testing.T) {
	t.Parallel()
	for _, layout := range []string{"pack", "packs", "loose"} {
		t.Run(layout, func(t *testing.T) {
			t.Parallel()
			dir, _, _ := localSource(t, layout)
			dst := filepath.Join(t.TempDir(), "clone")
			var progress testproc.SyncBuffer
			res, err := Clone(context.Background(), dir, dst, Options{Progress: &progress})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(progress.String(), "Receiving objects") {
				t.Errorf("progress of the clone:\n%s\nwant git's meter of the copy", progress.String())
			}
			if want := len(strings.Split(git(t, dir, "for-each-ref", store.RunsPrefix), "\n")); len(res.NewRuns) != want || res.Verified != want {
				t.Fatalf("cloned %d runs, verified %d, want %d", len(res.NewRuns), res.Verified, want)
			}
			gitstore.Fsck(t, dst)
			// The clone's pack is its own: no index of the source's.
			idx, _ := filepath.Glob(filepath.Join(dst, "objects", "pack", "*.idx"))
			if len(idx) != 1 {
				t.Fatalf("clone has %d pack indexes, want the one it built", len(idx))
			}
			if _, err := os.Stat(filepath.Join(dir, "objects", "pack", filepath.Base(idx[0]))); err == nil && layout != "pack" {
				t.Errorf("the clone's index %s is one of the source's", filepath.Base(idx[0]))
			}
			if got, want := refsExcept(t, dst, RemotesPrefix), refsExcept(t, dir, RemotesPrefix); got != want {
				t.Errorf("refs of the clone:\n%s\nwant the source's:\n%s", got, want)
			}
		})
	}
}

// TestCloneLocalRefusesTampered: a local source whose stored object was
// altered on disk (a loose blob rewritten under its name, a byte of a pack
// flipped) is refused by the copy's checks, and nothing is left at the
// clone's path.
func TestCloneLocalRefusesTampered(t *testing.T) {
	t.Parallel()
	t.Run("loose", func(t *testing.T) {
		t.Parallel()
		dir, _, snapshot := localSource(t, "loose")
		corruptLoose(t, dir, snapshot)
		cloneRefused(t, dir)
	})
	t.Run("pack", func(t *testing.T) {
		t.Parallel()
		dir, _, snapshot := localSource(t, "pack")
		packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
		if len(packs) != 1 {
			t.Fatalf("%d packs, want 1", len(packs))
		}
		// the snapshot's entry: its offset in the pack, from the index
		idx := strings.TrimSuffix(packs[0], ".pack") + ".idx"
		f, err := os.Open(idx)
		if err != nil {
			t.Fatal(err)
		}
		cmd := gitstore.GitCommand(t, "", "show-index")
		cmd.Stdin = f
		lines, err := cmd.Output()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		off := int64(-1)
		for _, l := range strings.Split(string(lines), "\n") {
			if fs := strings.Fields(l); len(fs) >= 2 && fs[1] == snapshot {
				off, _ = strconv.ParseInt(fs[0], 10, 64)
			}
		}
		if off < 0 {
			t.Fatalf("snapshot %s not in the pack's index", snapshot)
		}
		data, err := os.ReadFile(packs[0])
		if err != nil {
			t.Fatal(err)
		}
		data[off+4] ^= 0x40 // in the compressed bytes, past the entry header
		os.Chmod(packs[0], 0o644)
		if err := os.WriteFile(packs[0], data, 0o444); err != nil {
			t.Fatal(err)
		}
		cloneRefused(t, dir)
	})
}

func cloneRefused(t *testing.T, dir string) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "clone")
	_, err := Clone(context.Background(), dir, dst, Options{})
	if err == nil {
		t.Fatal("clone of a tampered source succeeded")
	}
	if !strings.Contains(err.Error(), "copy the objects of") {
		t.Errorf("clone error %q: want the copy's check to refuse it", err)
	}
	if _, serr := os.Stat(dst); !os.IsNotExist(serr) {
		t.Fatalf("a refused clone left %s behind (%v)", dst, serr)
	}
	nothingBeside(t, dst)
}

// nothingBeside fails the test when the directory holding path holds
// anything else (a clone's staging directory left after it failed).
func nothingBeside(t *testing.T, path string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != filepath.Base(path) {
			t.Fatalf("a failed clone into %s left %s beside it", path, e.Name())
		}
	}
}

// TestCloneLocalRefusesNonStore: a project's repository on a path, alone
// or with a store's refs beside its own, is refused from its ref listing;
// the copy of its objects, which starts while the refs are listed (here
// still under way: 2,000 refs to list, a 1 MiB blob to copy), is stopped, shows no
// progress, and nothing is left at the clone's path or beside it (the
// staging directory).
func TestCloneLocalRefusesNonStore(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	proj := projectRemote(t, base, "proj.git")
	big := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{1}).Read(big)
	blob := filepath.Join(t.TempDir(), "big")
	writeFile(t, blob, string(big))
	git(t, proj, "hash-object", "-w", blob) // a loose object the copy deflates
	// and refs enough that the copy's git starts while they are listed
	head := git(t, proj, "rev-parse", "refs/heads/main")
	for i := range 2000 {
		writeFile(t, filepath.Join(proj, "refs", "tags", fmt.Sprintf("v%d", i)), head+"\n")
	}
	mixed, _, _ := localSource(t, "pack")
	for name, dir := range map[string]string{"project": proj, "store-with-a-branch": mixed} {
		t.Run(name, func(t *testing.T) {
			if name == "store-with-a-branch" {
				// the project's objects too, so a copy would have them
				git(t, dir, "fetch", "-q", proj, "refs/heads/main:refs/heads/feature")
			}
			dst := filepath.Join(t.TempDir(), "clone")
			var progress testproc.SyncBuffer
			_, err := Clone(context.Background(), dir, dst, Options{Progress: &progress})
			if !errors.Is(err, ErrNotStore) {
				t.Fatalf("clone of %s: %v, want ErrNotStore", name, err)
			}
			if progress.String() != "" {
				t.Errorf("a refused clone showed progress:\n%s", progress.String())
			}
			if _, serr := os.Stat(dst); !os.IsNotExist(serr) {
				t.Fatalf("a refused clone left %s behind (%v)", dst, serr)
			}
			nothingBeside(t, dst)
		})
	}
}

// TestCloneLocalIndexNotTrusted: a source whose pack index lies (two
// blobs' offsets swapped, so a reader trusting it reads the one for the
// other) is still cloned whole and right: the checks made on the source
// while it is copied read the wrong bytes for an id and do not count, and
// the copy's own index, built from the bytes, is what the clone holds.
func TestCloneLocalIndexNotTrusted(t *testing.T) {
	t.Parallel()
	dir, _, snapshot := localSource(t, "pack")
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.idx"))
	if len(packs) != 1 {
		t.Fatalf("%d pack indexes, want 1", len(packs))
	}
	idx, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.BigEndian.Uint32(idx[8+255*4:]))
	names, offs := 8+1024, 8+1024+n*24
	at := map[string]int{}
	for i := 0; i < n; i++ {
		at[hex.EncodeToString(idx[names+i*20:names+i*20+20])] = i
	}
	i, ok := at[snapshot]
	if !ok {
		t.Fatalf("snapshot %s not in the index", snapshot)
	}
	j := -1
	for id, k := range at {
		if k != i && strings.TrimSpace(git(t, dir, "cat-file", "-t", id)) == "blob" {
			j = k
			break
		}
	}
	if j < 0 {
		t.Fatal("no other blob in the pack")
	}
	a, b := idx[offs+i*4:offs+i*4+4], idx[offs+j*4:offs+j*4+4]
	var tmp [4]byte
	copy(tmp[:], a)
	copy(a, b)
	copy(b, tmp[:])
	os.Chmod(packs[0], 0o644)
	if err := os.WriteFile(packs[0], idx, 0o444); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "clone")
	if _, err := Clone(context.Background(), dir, dst, Options{}); err != nil {
		t.Fatalf("clone of a source with a lying index: %v", err)
	}
	gitstore.Fsck(t, dst)
	s, err := store.Open(dst, nil, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	replayAll(t, s)
}

// TestCloneLocalRewrittenURL: the copy of a local store starts before
// origin is configured; when git's config rewrites the path given
// (url.*.insteadOf) to another store, what that copy took is removed and
// the clone holds the other store's runs and none of the first one's
// objects. Not parallel: it sets the global git config.
func TestCloneLocalRewrittenURL(t *testing.T) {
	cloneLocalRewritten(t, func(given, other, _ string) string {
		return "[url \"" + other + "\"]\n\tinsteadOf = " + given + "\n"
	})
}

// TestCloneLocalRewrittenByConditionalInclude: the rule rewriting the
// path is in a file git includes only once a remote names it
// (includeIf "hasconfig:remote.*.url:..."): before origin is configured
// git's config shows the include, not the rule, and once it is, git
// fetches from the rewritten URL. The copy of the path given must not be
// what the clone holds. Not parallel: it sets the global git config.
func TestCloneLocalRewrittenByConditionalInclude(t *testing.T) {
	if !gitAtLeast(t, 2, 36) {
		t.Skip("git before 2.36 has no includeIf hasconfig:")
	}
	cloneLocalRewritten(t, func(given, other, dir string) string {
		inc := filepath.Join(dir, "rewrite")
		writeFile(t, inc, "[url \""+other+"\"]\n\tinsteadOf = "+given+"\n")
		return "[includeIf \"hasconfig:remote.*.url:" + given + "\"]\n\tpath = " + inc + "\n"
	})
}

// TestCloneLocalRewrittenUnderGITCONFIG: with GIT_CONFIG set, `git
// config` reads that file alone, and git fetch, which ignores it, the
// global rule rewriting the path: the clone holds what git fetches. Not
// parallel: it sets the global git config.
func TestCloneLocalRewrittenUnderGITCONFIG(t *testing.T) {
	cloneLocalRewritten(t, func(given, other, dir string) string {
		only := filepath.Join(dir, "only")
		writeFile(t, only, "[core]\n\tquotePath = false\n")
		t.Setenv("GIT_CONFIG", only)
		return "[url \"" + other + "\"]\n\tinsteadOf = " + given + "\n"
	})
}

// gitAtLeast reports whether git's version is at least major.minor.
func gitAtLeast(t *testing.T, major, minor int) bool {
	v := strings.TrimPrefix(git(t, "", "version"), "git version ")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	return err1 == nil && err2 == nil && (ma > major || ma == major && mi >= minor)
}

// cloneLocalRewritten clones a local store whose path git's global config
// (globalConfig's text) rewrites to another store, and checks that the
// clone holds the other store's runs and none of the first one's objects.
func cloneLocalRewritten(t *testing.T, globalConfig func(given, other, dir string) string) {
	given, givenManifest, _ := localSource(t, "pack")
	git(t, given, "config", "readproof.store", "1") // copied while recognized
	if !gitstore.IsLocalStore(given) {
		t.Fatalf("%s is not taken for a store", given)
	}
	other := bareServer(t, t.TempDir(), "other.git")
	b := newProject(t, map[string]string{"x": "other bytes\n"})
	b.run(t, "x1", "x")
	addRemote(t, b, "origin", other)
	mustPush(t, b, "origin")
	// the copy of given shows "Receiving objects: ...(k/n)", n its objects
	inPack := func(dir string) string {
		out := git(t, dir, "count-objects", "-v")
		_, rest, _ := strings.Cut(out, "in-pack: ")
		n, _, _ := strings.Cut(rest, "\n")
		return n
	}
	givenObjects := inPack(given)
	if givenObjects == inPack(other) {
		t.Fatalf("both stores hold %s objects: the progress of either copy would pass for the other's", givenObjects)
	}
	cfgDir := t.TempDir()
	cfg := filepath.Join(cfgDir, "global")
	writeFile(t, cfg, globalConfig(given, other, cfgDir))
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	dst := filepath.Join(t.TempDir(), "clone")
	var progress testproc.SyncBuffer
	res, err := Clone(context.Background(), given, dst, Options{Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NewRuns) != 1 || res.NewRuns[0].RunID != "x1" {
		t.Fatalf("cloned %+v, want x1 of the store the URL is rewritten to", res.NewRuns)
	}
	if p := progress.String(); strings.Contains(p, "/"+givenObjects+")") {
		t.Errorf("the clone showed the progress of the copy of %s (%s objects) it dropped:\n%s", given, givenObjects, p)
	}
	if got, want := refsExcept(t, dst, RemotesPrefix), refsExcept(t, other, RemotesPrefix); got != want {
		t.Errorf("refs of the clone:\n%s\nwant those of %s:\n%s", got, other, want)
	}
	if err := gitstore.GitCommand(t, dst, "cat-file", "-e", string(givenManifest)).Run(); err == nil {
		t.Errorf("the clone holds %s, a manifest of %s, which git's config rewrites away", givenManifest, given)
	}
	ents, err := os.ReadDir(filepath.Join(dst, "objects", "pack"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "pack-") {
			t.Errorf("the clone holds objects/pack/%s, left by the copy of %s", e.Name(), given)
		}
	}
	gitstore.Fsck(t, dst)
}

// TestCloneLocalRefusedByConfig: the copy of a local store starts before
// origin is configured (session 19); when git's configuration already
// names a remote origin, AddRemoteURL refuses it, and the copy started is
// stopped with nothing of it shown or left. Not parallel: it sets the
// global git config.
func TestCloneLocalRefusedByConfig(t *testing.T) {
	given, _, _ := localSource(t, "pack")
	git(t, given, "config", "readproof.store", "1") // copied at once
	cfg := filepath.Join(t.TempDir(), "global")
	writeFile(t, cfg, "[remote \"origin\"]\n\turl = /elsewhere.git\n")
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	dst := filepath.Join(t.TempDir(), "clone")
	var progress testproc.SyncBuffer
	_, err := Clone(context.Background(), given, dst, Options{Progress: &progress})
	if !errors.Is(err, gitstore.ErrRemoteExists) {
		t.Fatalf("clone with origin configured globally: %v, want ErrRemoteExists", err)
	}
	if progress.String() != "" {
		t.Errorf("a refused clone showed progress:\n%s", progress.String())
	}
	if _, serr := os.Stat(dst); !os.IsNotExist(serr) {
		t.Fatalf("a refused clone left %s behind (%v)", dst, serr)
	}
	nothingBeside(t, dst)
}

// cancelOn is a progress writer that cancels a context when the progress
// shows want (and keeps what it was given).
type cancelOn struct {
	testproc.SyncBuffer
	want   string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	n, err := c.SyncBuffer.Write(p)
	if strings.Contains(c.SyncBuffer.String(), c.want) {
		c.cancel()
	}
	return n, err
}

// TestCloneInterruptedWhileVerifying: a clone interrupted (Ctrl-C cancels
// its context) once its copy is done, while its runs are verified, stops
// there: it reports the interruption and leaves nothing at its path or
// beside it, instead of finishing and publishing the store.
func TestCloneInterruptedWhileVerifying(t *testing.T) {
	t.Parallel()
	dir, _, _ := localSource(t, "pack")
	dst := filepath.Join(t.TempDir(), "clone")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := &cancelOn{want: "Verifying manifests", cancel: cancel}
	_, err := Clone(ctx, dir, dst, Options{Progress: progress})
	if !strings.Contains(progress.String(), "Verifying manifests") {
		t.Fatalf("progress of the clone:\n%s\nwant its verification", progress.String())
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a clone interrupted while verifying: %v; want context.Canceled", err)
	}
	if _, serr := os.Stat(dst); !os.IsNotExist(serr) {
		t.Fatalf("an interrupted clone left %s behind (%v)", dst, serr)
	}
	nothingBeside(t, dst)
}
