package receipts

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateAndLoadKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "receipts.key")
	if err := CreateKey(path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || st.Size() != KeySize {
		t.Errorf("key file mode %v size %d, want 0600 and %d", st.Mode().Perm(), st.Size(), KeySize)
	}
	before, _ := os.ReadFile(path)
	if err := CreateKey(path); !errors.Is(err, fs.ErrExist) {
		t.Errorf("CreateKey over an existing key = %v, want fs.ErrExist", err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Error("CreateKey overwrote an existing key")
	}
	k1, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := LoadKey(path)
	if k1.ID() != k2.ID() || k1.IsZero() {
		t.Errorf("loading the same key twice gives ids %s and %s", k1.ID(), k2.ID())
	}
	// Another key file gives another id.
	other := filepath.Join(dir, "other.key")
	if err := CreateKey(other); err != nil {
		t.Fatal(err)
	}
	k3, _ := LoadKey(other)
	if k3.ID() == k1.ID() {
		t.Error("two random keys share an id")
	}
	// The key id reveals nothing: it is not a prefix of the file's hex or
	// the MAC key.
	if strings.Contains(string(before), k1.ID()) {
		t.Error("key id appears in the key material")
	}
}

func TestLoadKeyRefusesLooseModes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	if err := CreateKey(path); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660, 0o644, 0o602} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadKey(path)
		if !errors.Is(err, ErrKeyInsecure) || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("mode %04o: LoadKey = %v, want ErrKeyInsecure with a chmod 600 hint", mode, err)
		}
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(path); err != nil {
		t.Errorf("mode 0400: LoadKey = %v", err)
	}
}

func TestLoadKeyRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"short": "abc", "long": strings.Repeat("x", 33), "empty": "", "newline": strings.Repeat("k", 32) + "\n"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadKey(p); !errors.Is(err, ErrKeyFormat) {
			t.Errorf("%s: LoadKey = %v, want ErrKeyFormat", name, err)
		}
	}
	if _, err := LoadKey(dir); !errors.Is(err, ErrKeyFormat) && !errors.Is(err, ErrKeyInsecure) {
		t.Errorf("LoadKey(directory) = %v", err)
	}
	if _, err := LoadKey(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadKey(missing) = %v, want fs.ErrNotExist", err)
	}
}

func TestKeyForbiddenDirectories(t *testing.T) {
	root := t.TempDir()
	store := filepath.Join(root, "repo", ".readproof")
	repo := filepath.Join(root, "repo")
	outside := filepath.Join(root, "home")
	for _, d := range []string{store, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Inside the store, inside the repository, through a symlink into
	// either: refused, and nothing written.
	link := filepath.Join(root, "sneaky")
	if err := os.Symlink(store, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		filepath.Join(store, "k"),
		filepath.Join(repo, "k"),
		filepath.Join(link, "k"),
		filepath.Join(outside, "..", "repo", "k"),
	} {
		err := CreateKey(p, repo, store)
		if !errors.Is(err, ErrKeyPath) {
			t.Errorf("CreateKey(%s) = %v, want ErrKeyPath", p, err)
		}
		if _, serr := os.Lstat(p); serr == nil {
			t.Errorf("CreateKey(%s) wrote a file despite refusing", p)
		}
	}
	// A forbidden directory given through a symlink is resolved too.
	repoLink := filepath.Join(root, "repolink")
	if err := os.Symlink(repo, repoLink); err != nil {
		t.Fatal(err)
	}
	if err := CreateKey(filepath.Join(repo, "k2"), repoLink); !errors.Is(err, ErrKeyPath) {
		t.Errorf("CreateKey into a repo named through a symlink = %v, want ErrKeyPath", err)
	}
	// A sibling whose name shares a prefix is not inside.
	sibling := filepath.Join(root, "repo2")
	if err := os.MkdirAll(sibling, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CreateKey(filepath.Join(sibling, "k"), repo); err != nil {
		t.Errorf("CreateKey in a sibling directory: %v", err)
	}
	good := filepath.Join(outside, "k")
	if err := CreateKey(good, repo, store); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(good, repo, store); err != nil {
		t.Errorf("LoadKey outside: %v", err)
	}
	// LoadKey resolves a symlink that points into a forbidden directory.
	inside := filepath.Join(store, "k")
	if err := os.WriteFile(inside, make([]byte, KeySize), 0o600); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(outside, "alias")
	if err := os.Symlink(inside, alias); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(alias, store); !errors.Is(err, ErrKeyPath) {
		t.Errorf("LoadKey via a symlink into the store = %v, want ErrKeyPath", err)
	}
	if _, err := LoadKey(inside, store); !errors.Is(err, ErrKeyPath) {
		t.Errorf("LoadKey inside the store = %v, want ErrKeyPath", err)
	}
}
