package gitstore

import (
	"bytes"
	"compress/zlib"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

func TestInitLayout(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	path := filepath.Join(parent, "store")
	s, err := Init(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Path() != path {
		t.Errorf("Path() = %s, want %s", s.Path(), path)
	}
	head, err := os.ReadFile(filepath.Join(path, "HEAD"))
	if err != nil || string(head) != "ref: refs/heads/main\n" {
		t.Errorf("HEAD = %q, %v", head, err)
	}
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if fi, err := os.Stat(filepath.Join(path, d)); err != nil || !fi.IsDir() {
			t.Errorf("%s missing: %v", d, err)
		}
	}
	for key, want := range map[string]string{
		"core.bare": "true", "core.repositoryformatversion": "0", "readproof.store": "1",
	} {
		if got := git(t, path, "config", "--get", key); got != want {
			t.Errorf("git config %s = %q, want %q", key, got, want)
		}
	}
	if got := git(t, path, "rev-parse", "--is-bare-repository"); got != "true" {
		t.Errorf("is-bare-repository = %q", got)
	}
	if got := git(t, path, "symbolic-ref", "HEAD"); got != "refs/heads/main" {
		t.Errorf("symbolic-ref HEAD = %q", got)
	}
	if !IsStore(path) {
		t.Error("IsStore = false for a new store")
	}
	if leftovers, _ := filepath.Glob(filepath.Join(parent, ".store.init-*")); len(leftovers) > 0 {
		t.Errorf("temporary directories left: %v", leftovers)
	}
	Fsck(t, path)

	if _, err := Init(path); !errors.Is(err, ErrExists) {
		t.Errorf("second Init: %v, want ErrExists", err)
	}
}

func TestInitRefusesNonStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	os.Mkdir(full, 0o777)
	os.WriteFile(filepath.Join(full, "notes.txt"), []byte("mine"), 0o666)
	_, err := Init(full)
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("Init on a non-empty directory: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(full, "notes.txt")); string(data) != "mine" {
		t.Error("Init touched an existing file")
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o666)
	if _, err := Init(file); err == nil {
		t.Error("Init on a file succeeded")
	}
	// A plain git repository is not a readproof store: Init refuses it, Open takes it.
	plain := filepath.Join(dir, "plain.git")
	gitInit(t, plain, "--bare", "-q")
	if IsStore(plain) {
		t.Error("IsStore = true for a plain repository")
	}
	if _, err := Init(plain); err == nil {
		t.Error("Init on a plain repository succeeded")
	}
	// An empty directory is fine.
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o777)
	s, err := Init(empty)
	if err != nil {
		t.Fatalf("Init on an empty directory: %v", err)
	}
	s.Close()
	if !IsStore(empty) {
		t.Error("IsStore = false after Init on an empty directory")
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []string{dir, filepath.Join(dir, "missing")} {
		if _, err := Open(p); !errors.Is(err, ErrNotStore) {
			t.Errorf("Open(%s) = %v, want ErrNotStore", p, err)
		}
		if IsStore(p) {
			t.Errorf("IsStore(%s) = true", p)
		}
	}
	// A non-bare repository, opened by its work tree.
	work := filepath.Join(dir, "work")
	gitInit(t, work, "-q")
	s, err := Open(work)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Path() != filepath.Join(work, ".git") {
		t.Errorf("Path() = %s", s.Path())
	}
	id, err := s.PutBlob([]byte("in a work tree\n"))
	if err != nil {
		t.Fatal(err)
	}
	mustSync(t, s)
	if got := git(t, s.Path(), "cat-file", "blob", string(id)); got != "in a work tree" {
		t.Errorf("git cat-file = %q", got)
	}
	// SHA-256 repositories are refused with a reason.
	sha256 := filepath.Join(dir, "sha256.git")
	gitInit(t, sha256, "-q", "--bare", "--object-format=sha256")
	if _, err := Open(sha256); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("Open(sha256 repo) = %v", err)
	}
}

func TestObjectRoundTrip(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	blobs := map[string][]byte{"empty": {}, "text": []byte("hello\n"), "binary": {0, 1, 2, 255, 0, '\n'}, "big": big}
	ids := map[string]OID{}
	for name, data := range blobs {
		id, err := s.PutBlob(data)
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = id
		got, err := s.Blob(id)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("Blob(%s) = %d bytes, %v", name, len(got), err)
		}
		if kind, raw, err := s.RawObject(id); err != nil || kind != "blob" || !bytes.Equal(raw, data) {
			t.Fatalf("RawObject(%s) = %q, %v", name, kind, err)
		}
		mustSync(t, s)
		if out := gitRaw(t, s.Path(), "cat-file", "blob", string(id)); !bytes.Equal(out, data) {
			t.Fatalf("git cat-file blob %s differs", name)
		}
	}
	if ids["empty"] != "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391" {
		t.Errorf("empty blob id = %s", ids["empty"])
	}

	sub, err := s.PutTree([]TreeEntry{{Name: "big.bin", Mode: ModeFile, OID: ids["big"]}})
	if err != nil {
		t.Fatal(err)
	}
	entries := []TreeEntry{
		{Name: "z.txt", Mode: ModeFile, OID: ids["text"]},
		{Name: "dir", Mode: ModeDir, OID: sub},
		{Name: "empty", Mode: ModeFile, OID: ids["empty"]},
		{Name: "bin", Mode: ModeFile, OID: ids["binary"]},
	}
	tree, err := s.PutTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Tree(tree)
	if err != nil {
		t.Fatal(err)
	}
	want := []TreeEntry{entries[3], entries[1], entries[2], entries[0]}
	if len(got) != len(want) {
		t.Fatalf("Tree = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Tree entry %d = %v, want %v", i, got[i], want[i])
		}
	}
	mustSync(t, s)
	lsTree := git(t, s.Path(), "ls-tree", string(tree))
	wantLs := "100644 blob " + string(ids["binary"]) + "\tbin\n" +
		"040000 tree " + string(sub) + "\tdir\n" +
		"100644 blob " + string(ids["empty"]) + "\tempty\n" +
		"100644 blob " + string(ids["text"]) + "\tz.txt"
	if lsTree != wantLs {
		t.Errorf("git ls-tree:\n%s\nwant:\n%s", lsTree, wantLs)
	}

	root, err := s.PutCommit(Commit{Tree: tree, Author: testSig(), Committer: testSig(), Message: "root\n\nbody line\n"})
	if err != nil {
		t.Fatal(err)
	}
	other := mkCommit(t, s, "other")
	merge := Commit{
		Tree:      tree,
		Parents:   []OID{root, other},
		Author:    Signature{Name: "A U Thor", Email: "a@example.invalid", When: time.Unix(1700000000, 0).In(time.FixedZone("", -5*3600-30*60))},
		Committer: testSig(),
		Message:   "merge without trailing newline",
	}
	mid, err := s.PutCommit(merge)
	if err != nil {
		t.Fatal(err)
	}
	back, err := s.Commit(mid)
	if err != nil {
		t.Fatal(err)
	}
	if back.Tree != merge.Tree || len(back.Parents) != 2 || back.Parents[0] != root || back.Parents[1] != other ||
		back.Message != merge.Message || back.Author.Name != merge.Author.Name || back.Author.Email != merge.Author.Email ||
		!back.Author.When.Equal(merge.Author.When) || back.Signature != "" {
		t.Errorf("Commit round trip:\n got %+v\nwant %+v", back, merge)
	}
	if _, off := back.Author.When.Zone(); off != -(5*3600 + 30*60) {
		t.Errorf("author zone offset = %d", off)
	}
	mustSync(t, s)
	pretty := git(t, s.Path(), "cat-file", "-p", string(mid))
	wantPretty := "tree " + string(tree) + "\nparent " + string(root) + "\nparent " + string(other) +
		"\nauthor A U Thor <a@example.invalid> 1700000000 -0530\ncommitter Read Proof <rp@example.invalid> " +
		"1741057567 +0200\n\nmerge without trailing newline"
	if pretty != wantPretty {
		t.Errorf("git cat-file -p:\n%s\nwant:\n%s", pretty, wantPretty)
	}
	payload, err := CommitPayload(merge)
	if err != nil {
		t.Fatal(err)
	}
	if kind, raw, err := s.RawObject(mid); err != nil || kind != "commit" || !bytes.Equal(raw, payload) {
		t.Errorf("RawObject(commit) = %q, %q, %v", kind, raw, err)
	}
	if kind, _, err := s.RawObject(tree); err != nil || kind != "tree" {
		t.Errorf("RawObject(tree) kind = %q, %v", kind, err)
	}
	for _, id := range []OID{root, other, mid, tree, sub} {
		if typ := git(t, s.Path(), "cat-file", "-t", string(id)); typ == "" {
			t.Errorf("git cat-file -t %s is empty", id)
		}
	}

	// An annotated tag written by git reads back as kind "tag".
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: mid})
	git(t, s.Path(), "tag", "-a", "-m", "a tag", "v1", string(mid))
	tagID := git(t, s.Path(), "rev-parse", "refs/tags/v1")
	kind, raw, err := s.RawObject(OID(tagID))
	if err != nil || kind != "tag" || !bytes.Equal(raw, gitRaw(t, s.Path(), "cat-file", "tag", tagID)) {
		t.Errorf("RawObject(tag) = %q, %v", kind, err)
	}

	// Wrong kinds and unknown ids.
	if _, err := s.Blob(tree); !errors.Is(err, ErrNotFound) {
		t.Errorf("Blob(tree) = %v", err)
	}
	if _, err := s.Tree(mid); !errors.Is(err, ErrNotFound) {
		t.Errorf("Tree(commit) = %v", err)
	}
	if _, err := s.Commit(ids["text"]); !errors.Is(err, ErrNotFound) {
		t.Errorf("Commit(blob) = %v", err)
	}
	missing := OID(strings.Repeat("ab", 20))
	if _, err := s.Blob(missing); !errors.Is(err, ErrNotFound) {
		t.Errorf("Blob(missing) = %v", err)
	}
	if ok, err := s.Has(missing); ok || err != nil {
		t.Errorf("Has(missing) = %v, %v", ok, err)
	}
	if ok, err := s.Has(mid); !ok || err != nil {
		t.Errorf("Has(commit) = %v, %v", ok, err)
	}
	for _, bad := range []OID{"", "abc", OID(strings.Repeat("AB", 20)), zeroOID} {
		if _, err := s.Blob(bad); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Blob(%q) = %v, want a syntax error", bad, err)
		}
	}
	Fsck(t, s.Path())
}

func TestPutBlobSkipsExisting(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	id, err := s.PutBlob([]byte("once"))
	if err != nil {
		t.Fatal(err)
	}
	mustSync(t, s)
	file := filepath.Join(s.Path(), "objects", string(id[:2]), string(id[2:]))
	before, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if id2, err := s.PutBlob([]byte("once")); err != nil || id2 != id {
		t.Fatalf("second PutBlob = %s, %v", id2, err)
	}
	mustSync(t, s)
	if after, err := os.Stat(file); err != nil || !os.SameFile(before, after) {
		t.Error("PutBlob rewrote an existing loose object")
	}
	// Packed objects are not written again either.
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: mkCommit(t, s, "packed")})
	packedBlob, _ := s.PutBlob([]byte("packed"))
	git(t, s.Path(), "gc", "--prune=now", "--quiet")
	pf := filepath.Join(s.Path(), "objects", string(packedBlob[:2]), string(packedBlob[2:]))
	if exists(pf) {
		t.Fatal("git gc left the loose object")
	}
	time.Sleep(packCheckEvery) // the pack list is re-read at most this often
	if _, err := s.PutBlob([]byte("packed")); err != nil {
		t.Fatal(err)
	}
	if exists(pf) {
		t.Error("PutBlob wrote a loose copy of a packed object")
	}
}

func TestReadAfterGitGC(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	c1 := mkCommit(t, s, "one")
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: c1})
	// Load go-git's pack index before git repacks.
	if ok, _ := s.Has(OID(strings.Repeat("cd", 20))); ok {
		t.Fatal("impossible object exists")
	}
	git(t, s.Path(), "gc", "--prune=now", "--quiet")
	c2 := mkCommit(t, s, "two", c1)
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", Old: c1, New: c2})
	git(t, s.Path(), "repack", "-a", "-d", "-q") // replaces the first pack
	git(t, s.Path(), "prune", "--expire=now")
	for _, id := range []OID{c1, c2} {
		c, err := s.Commit(id)
		if err != nil {
			t.Fatalf("Commit(%s) after gc: %v", id, err)
		}
		tr, err := s.Tree(c.Tree)
		if err != nil || len(tr) != 1 {
			t.Fatalf("Tree after gc: %v, %v", tr, err)
		}
		if _, err := s.Blob(tr[0].OID); err != nil {
			t.Fatalf("Blob after gc: %v", err)
		}
	}
	Fsck(t, s.Path())
}

func TestTamperedObject(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	id, _ := s.PutBlob([]byte("the real content\n"))
	mustSync(t, s)
	file := filepath.Join(s.Path(), "objects", string(id[:2]), string(id[2:]))
	os.Chmod(file, 0o644)
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte("blob 17\x00the fake content\n"))
	w.Close()
	if err := os.WriteFile(file, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Blob(id); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Blob(tampered) = %v, want ErrCorrupt", err)
	}
	id2, _ := s.PutBlob([]byte("second"))
	mustSync(t, s)
	file2 := filepath.Join(s.Path(), "objects", string(id2[:2]), string(id2[2:]))
	os.Chmod(file2, 0o644)
	os.WriteFile(file2, []byte("not zlib at all"), 0o644)
	if _, err := s.Blob(id2); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Blob(garbage) = %v, want ErrCorrupt", err)
	}
}

func TestTreeOrderMatchesGit(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	blob, _ := s.PutBlob([]byte("x"))
	empty, err := s.PutTree(nil)
	if err != nil || empty != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Fatalf("empty tree = %s, %v", empty, err)
	}
	names := []struct {
		name string
		mode Mode
	}{{"a", ModeDir}, {"a-b", ModeFile}, {"a.b", ModeFile}, {"a0", ModeDir}, {"ab", ModeFile}, {"A", ModeFile}, {"b", ModeDir}, {"b.txt", ModeFile}, {"é", ModeFile}}
	var entries []TreeEntry
	var mktree strings.Builder
	for _, n := range names {
		e := TreeEntry{Name: n.name, Mode: n.mode, OID: blob}
		kind := "blob"
		if n.mode == ModeDir {
			e.OID = empty
			kind = "tree"
		}
		entries = append(entries, e)
		mktree.WriteString(modeString(n.mode) + " " + kind + " " + string(e.OID) + "\t" + n.name + "\n")
	}
	id, err := s.PutTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	mustSync(t, s)
	cmd := GitCommand(t, s.Path(), "mktree")
	cmd.Stdin = strings.NewReader(mktree.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git mktree: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != string(id) {
		t.Errorf("PutTree = %s, git mktree = %s", id, got)
	}
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: mkTreeCommit(t, s, id)})
	Fsck(t, s.Path())
}

func modeString(m Mode) string {
	if m == ModeDir {
		return "040000"
	}
	return "100644"
}

func mkTreeCommit(t testing.TB, s Store, tree OID) OID {
	t.Helper()
	c, err := s.PutCommit(Commit{Tree: tree, Author: testSig(), Committer: testSig(), Message: "tree\n"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTreeNameValidation(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	blob, _ := s.PutBlob([]byte("x"))
	bad := []string{"", ".", "..", ".git", ".GIT", ".Git", ".gitmodules", ".GitModules", "a/b", "/", "a\x00b",
		".git.", ".git ", "git~1", "GITMOD~1", ".g\u200cit", "\ufeff.git", `x\.git`, `.git\x`}
	for _, name := range bad {
		if _, err := s.PutTree([]TreeEntry{{Name: name, Mode: ModeFile, OID: blob}}); err == nil {
			t.Errorf("PutTree accepted name %q", name)
		}
		if CheckTreeName(name) == nil {
			t.Errorf("CheckTreeName(%q) = nil", name)
		}
	}
	good := []string{"a", ".gitignore", "git", ".github", "a b", "ü", "...x", "x..", ".gitx", "git~", "readproof+docs+a.md"}
	var entries []TreeEntry
	for _, name := range good {
		entries = append(entries, TreeEntry{Name: name, Mode: ModeFile, OID: blob})
	}
	tree, err := s.PutTree(entries)
	if err != nil {
		t.Fatalf("PutTree(good names): %v", err)
	}
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: mkTreeCommit(t, s, tree)})
	Fsck(t, s.Path())

	for _, m := range []Mode{0o100755, 0o120000, 0o160000, 0} {
		if _, err := s.PutTree([]TreeEntry{{Name: "m", Mode: m, OID: blob}}); err == nil {
			t.Errorf("PutTree accepted mode %o", m)
		}
	}
	dup := []TreeEntry{{Name: "d", Mode: ModeFile, OID: blob}, {Name: "d", Mode: ModeDir, OID: tree}}
	if _, err := s.PutTree(dup); err == nil {
		t.Error("PutTree accepted a duplicate name")
	}
	if _, err := s.PutTree([]TreeEntry{{Name: "x", Mode: ModeFile, OID: "nothex"}}); err == nil {
		t.Error("PutTree accepted a bad id")
	}
}

func TestCommitValidation(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	tree, _ := s.PutTree(nil)
	good := Commit{Tree: tree, Author: testSig(), Committer: testSig(), Message: "m\n"}
	cases := map[string]func(c *Commit){
		"name with <":      func(c *Commit) { c.Author.Name = "a<b" },
		"email with >":     func(c *Commit) { c.Committer.Email = "a>b" },
		"name with \\n":    func(c *Commit) { c.Author.Name = "a\nb" },
		"unset time":       func(c *Commit) { c.Author.When = time.Time{} },
		"time before 1970": func(c *Commit) { c.Committer.When = time.Unix(-1, 0) },
		"bad tree":         func(c *Commit) { c.Tree = "x" },
		"bad parent":       func(c *Commit) { c.Parents = []OID{"y"} },
		"NUL in message":   func(c *Commit) { c.Message = "a\x00b" },
	}
	for name, mutate := range cases {
		c := good
		mutate(&c)
		if _, err := s.PutCommit(c); err == nil {
			t.Errorf("%s: PutCommit accepted it", name)
		}
		if _, err := CommitPayload(c); err == nil {
			t.Errorf("%s: CommitPayload accepted it", name)
		}
	}
	if _, err := s.PutCommit(good); err != nil {
		t.Errorf("good commit: %v", err)
	}
}

// TestSignedCommit signs a commit with an SSH key the way git does and has
// stock git verify it.
func TestSignedCommit(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	c := Commit{Tree: func() OID { id, _ := s.PutTree(nil); return id }(), Author: testSig(), Committer: testSig(), Message: "signed\n\nwith an ssh key\n"}
	payload, err := CommitPayload(c)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := sshsig.Sign(bytes.NewReader(payload), signer, sshsig.HashSHA512, "git")
	if err != nil {
		t.Fatal(err)
	}
	c.Signature = string(sshsig.Armor(sig))
	id, err := s.PutCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := s.Commit(id)
	if err != nil {
		t.Fatal(err)
	}
	if back.Signature != c.Signature {
		t.Errorf("Signature not preserved:\n got %q\nwant %q", back.Signature, c.Signature)
	}
	again, err := CommitPayload(back)
	if err != nil || !bytes.Equal(again, payload) {
		t.Errorf("CommitPayload(read back) differs: %v", err)
	}
	mustSync(t, s)
	raw := gitRaw(t, s.Path(), "cat-file", "commit", string(id))
	if got := stripGpgsig(raw); !bytes.Equal(got, payload) {
		t.Errorf("git cat-file commit minus gpgsig:\n%q\nwant:\n%q", got, payload)
	}
	if !bytes.Contains(raw, []byte("\ngpgsig -----BEGIN SSH SIGNATURE-----\n ")) {
		t.Errorf("no gpgsig header in:\n%s", raw)
	}

	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	os.WriteFile(allowed, []byte("rp@example.invalid "+string(ssh.MarshalAuthorizedKey(signer.PublicKey()))), 0o644)
	verify := func(commit OID) error {
		cmd := GitCommand(t, s.Path(), "-c", "gpg.format=ssh", "-c", "gpg.ssh.allowedSignersFile="+allowed, "verify-commit", string(commit))
		out, err := cmd.CombinedOutput()
		if err != nil {
			return errors.New(string(out))
		}
		return nil
	}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed: git cannot verify ssh signatures")
	}
	if err := verify(id); err != nil {
		t.Errorf("git verify-commit: %v", err)
	}
	// The same signature on another payload must not verify.
	forged := c
	forged.Message = "forged\n"
	fid, _ := s.PutCommit(forged)
	if err := verify(fid); err == nil {
		t.Error("git verify-commit accepted a signature over another payload")
	}
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: id}, RefUpdate{Name: "refs/heads/forged", New: fid})
	Fsck(t, s.Path())
}

// stripGpgsig removes the gpgsig header and its continuation lines.
func stripGpgsig(raw []byte) []byte {
	head, body, _ := bytes.Cut(raw, []byte("\n\n"))
	var out []byte
	inSig := false
	for _, line := range bytes.Split(head, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("gpgsig ")) {
			inSig = true
			continue
		}
		if inSig && bytes.HasPrefix(line, []byte(" ")) {
			continue
		}
		inSig = false
		out = append(out, line...)
		out = append(out, '\n')
	}
	out = append(out, '\n')
	return append(out, body...)
}

// mustSync writes buffered objects so stock git can see them.
func mustSync(t testing.TB, s Store) {
	t.Helper()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
}

// TestBatchWritesOnePack checks that many objects written before a Sync
// become one pack that stock git accepts, and that a few become loose
// objects; reads see both before and after the flush.
func TestBatchWritesOnePack(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	var ids []OID
	for i := 0; i < 300; i++ {
		data := bytes.Repeat([]byte{byte(i)}, 100+i*37)
		id, err := s.PutBlob(data)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.Blob(id); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read of a buffered blob: %v", err)
		}
		ids = append(ids, id)
	}
	entries := []TreeEntry{}
	for i, id := range ids {
		entries = append(entries, TreeEntry{Name: fmt.Sprintf("f%03d", i), Mode: ModeFile, OID: id})
	}
	tree, err := s.PutTree(entries)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.PutCommit(Commit{Tree: tree, Author: testSig(), Committer: testSig(), Message: "batch\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(RefUpdate{Name: "refs/heads/batch", New: c}); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("%d packs, want 1", len(packs))
	}
	idx := strings.TrimSuffix(packs[0], ".pack") + ".idx"
	out, err := GitCommand(t, s.Path(), "verify-pack", "-v", idx).CombinedOutput()
	if err != nil {
		t.Fatalf("git verify-pack: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), " blob "); n != 300 {
		t.Fatalf("verify-pack lists %d blobs, want 300", n)
	}
	Fsck(t, s.Path())
	fromGit := gitObjects(t, s.Path(), ids)
	for i, id := range ids {
		want := bytes.Repeat([]byte{byte(i)}, 100+i*37)
		if got := fromGit[i]; got.Kind != "blob" || !bytes.Equal(got.Data, want) {
			t.Fatalf("git cat-file of packed blob %d differs", i)
		}
		if got, err := s.Blob(id); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read back of packed blob %d: %v", i, err)
		}
	}
	// a few objects stay loose
	small, _ := s.PutBlob([]byte("small"))
	mustSync(t, s)
	if _, err := os.Stat(filepath.Join(s.Path(), "objects", string(small[:2]), string(small[2:]))); err != nil {
		t.Fatalf("a single object was not written loose: %v", err)
	}
}
