package probe_test

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/probe"
)

func TestKeyFileCreateLoad(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "project", ".readproof")
	if err := os.MkdirAll(store, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config", "readproof", "probe.key")
	if err := probe.CreateKeyFile(path, store); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %04o, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("created directory mode %04o, want 0700", di.Mode().Perm())
	}
	text, _ := os.ReadFile(path)
	if !regexp.MustCompile(`^[0-9a-f]{64}\n$`).Match(text) {
		t.Fatalf("key file format %q", text)
	}
	master, err := probe.LoadKeyFile(path, store)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(master) != strings.TrimSpace(string(text)) {
		t.Fatal("loaded key differs from the file")
	}
	k1, err := probe.LoadKeys(path, store)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := probe.DeriveKeys(master)
	s1, _ := k1.Sentinel("s", 1, 16)
	s2, _ := k2.Sentinel("s", 1, 16)
	if s1 != s2 {
		t.Fatal("LoadKeys differs from DeriveKeys(LoadKeyFile)")
	}

	// A second create refuses to overwrite.
	if err := probe.CreateKeyFile(path); !errors.Is(err, probe.ErrKeyExists) {
		t.Fatalf("second create: %v", err)
	}
	// Rotation replaces the key; old sentinels stop verifying.
	if err := probe.RotateKeyFile(path, store); err != nil {
		t.Fatal(err)
	}
	k3, err := probe.LoadKeys(path, store)
	if err != nil {
		t.Fatal(err)
	}
	s3, _ := k3.Sentinel("s", 1, 16)
	if s3 == s1 {
		t.Fatal("rotation kept the key")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("rotated key mode %04o", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".probe-key-*")); len(left) != 0 {
		t.Errorf("rotation left temporary files: %v", left)
	}
}

func TestKeyFileRefusals(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "proj", ".readproof")
	os.MkdirAll(store, 0o755)
	good := filepath.Join(dir, "keys", "probe.key")
	if err := probe.CreateKeyFile(good); err != nil {
		t.Fatal(err)
	}
	secret, _ := os.ReadFile(good)
	hexKey := strings.TrimSpace(string(secret))

	t.Run("inside the store", func(t *testing.T) {
		p := filepath.Join(store, "probe.key")
		if err := probe.CreateKeyFile(p, store); !errors.Is(err, probe.ErrKeyLocation) {
			t.Fatalf("create: %v", err)
		}
		if _, err := os.Stat(p); err == nil {
			t.Fatal("a refused key file was written")
		}
		os.WriteFile(p, secret, 0o600)
		if _, err := probe.LoadKeyFile(p, store); !errors.Is(err, probe.ErrKeyLocation) {
			t.Fatalf("load: %v", err)
		}
		if err := probe.RotateKeyFile(p, store); !errors.Is(err, probe.ErrKeyLocation) {
			t.Fatalf("rotate: %v", err)
		}
	})
	t.Run("symlink into the store", func(t *testing.T) {
		inside := filepath.Join(store, "hidden.key")
		os.WriteFile(inside, secret, 0o600)
		link := filepath.Join(dir, "link.key")
		if err := os.Symlink(inside, link); err != nil {
			t.Skip(err)
		}
		if _, err := probe.LoadKeyFile(link, store); !errors.Is(err, probe.ErrKeyLocation) {
			t.Fatalf("load through a link: %v", err)
		}
		linkDir := filepath.Join(dir, "storelink")
		os.Symlink(store, linkDir)
		if err := probe.CreateKeyFile(filepath.Join(linkDir, "sub", "k.key"), store); !errors.Is(err, probe.ErrKeyLocation) {
			t.Fatalf("create through a linked directory: %v", err)
		}
	})
	t.Run("inside a git work tree", func(t *testing.T) {
		repo := filepath.Join(dir, "work")
		os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
		if err := probe.CreateKeyFile(filepath.Join(repo, "deep", "er", "probe.key")); !errors.Is(err, probe.ErrKeyLocation) {
			t.Fatalf("create: %v", err)
		}
	})
	t.Run("inside a bare repository", func(t *testing.T) {
		bare := filepath.Join(dir, "bare.git")
		os.MkdirAll(filepath.Join(bare, "objects"), 0o755)
		os.MkdirAll(filepath.Join(bare, "refs"), 0o755)
		os.WriteFile(filepath.Join(bare, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		if err := probe.CreateKeyFile(filepath.Join(bare, "probe.key")); !errors.Is(err, probe.ErrKeyLocation) {
			t.Fatalf("create: %v", err)
		}
	})
	t.Run("readable by others", func(t *testing.T) {
		p := filepath.Join(dir, "open.key")
		os.WriteFile(p, secret, 0o644)
		os.Chmod(p, 0o644)
		_, err := probe.LoadKeyFile(p)
		if !errors.Is(err, probe.ErrKeyFile) || !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("load: %v", err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		if _, err := probe.LoadKeyFile(filepath.Join(dir, "nope.key")); !errors.Is(err, probe.ErrKeyFile) {
			t.Fatalf("load: %v", err)
		}
	})
	t.Run("a directory", func(t *testing.T) {
		p := filepath.Join(dir, "adir")
		os.Mkdir(p, 0o700)
		if _, err := probe.LoadKeyFile(p); !errors.Is(err, probe.ErrKeyFile) {
			t.Fatalf("load: %v", err)
		}
	})
	formats := map[string]string{
		"short":        hexKey[:62] + "\n",
		"long":         hexKey + "00\n",
		"not hex":      "zz" + hexKey[2:] + "\n",
		"raw bytes":    string(make([]byte, 32)),
		"all zero":     strings.Repeat("0", 64) + "\n",
		"two newlines": hexKey + "\n\n",
		"spaces":       " " + hexKey + "\n",
		"empty":        "",
	}
	for name, content := range formats {
		t.Run("format "+name, func(t *testing.T) {
			p := filepath.Join(dir, "f.key")
			os.Remove(p)
			os.WriteFile(p, []byte(content), 0o600)
			_, err := probe.LoadKeyFile(p)
			if !errors.Is(err, probe.ErrKeyFile) {
				t.Fatalf("load: %v", err)
			}
			if strings.Contains(err.Error(), hexKey[2:20]) {
				t.Fatalf("error leaks key material: %v", err)
			}
		})
	}
	for name, content := range map[string]string{"no newline": hexKey, "crlf": hexKey + "\r\n", "upper case": strings.ToUpper(hexKey) + "\n"} {
		t.Run("accepted "+name, func(t *testing.T) {
			p := filepath.Join(dir, "g.key")
			os.Remove(p)
			os.WriteFile(p, []byte(content), 0o600)
			m, err := probe.LoadKeyFile(p)
			if err != nil || hex.EncodeToString(m) != hexKey {
				t.Fatalf("load: %v", err)
			}
		})
	}
}

func TestKeysRedacted(t *testing.T) {
	k := testKeys(t, "redact")
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
		got := sprintf(verb, k)
		if got != "probe.Keys{redacted}" {
			t.Errorf("%s prints %q", verb, got)
		}
	}
	if _, err := probe.DeriveKeys(make([]byte, 31)); !errors.Is(err, probe.ErrKeySize) {
		t.Errorf("31-byte master: %v", err)
	}
	if _, err := probe.DeriveKeys(make([]byte, 33)); !errors.Is(err, probe.ErrKeySize) {
		t.Errorf("33-byte master: %v", err)
	}
	r1, err := probe.NewRandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := probe.NewRandomKeys()
	a, _ := r1.Sentinel("s", 5, 16)
	b, _ := r2.Sentinel("s", 5, 16)
	if a == b {
		t.Error("two random keys agree")
	}
	if _, err := k.Sentinel("s", -1, 16); !errors.Is(err, probe.ErrBucket) {
		t.Errorf("negative bucket: %v", err)
	}
	if _, err := k.Sentinel("s", 1, 15); !errors.Is(err, probe.ErrLength) {
		t.Errorf("length 15: %v", err)
	}
	if _, err := (probe.Keys{}).Sentinel("s", 1, 16); err == nil {
		t.Error("zero keys minted a sentinel")
	}
}

func TestBucket(t *testing.T) {
	cases := []struct {
		t    time.Time
		want int64
	}{
		{time.Unix(0, 0), 0},
		{time.Unix(299, 999999999), 0},
		{time.Unix(300, 0), 1},
		{time.Unix(1789477777, 0), 5964925},
		{time.Unix(-1, 500000000), -1},
		{time.Unix(-300, 0), -1},
		{time.Unix(-301, 0), -2},
	}
	for _, c := range cases {
		if got := probe.Bucket(c.t); got != c.want {
			t.Errorf("Bucket(%v) = %d, want %d", c.t.Unix(), got, c.want)
		}
	}
	if !probe.BucketStart(5964925).Equal(time.Unix(5964925*300, 0)) {
		t.Error("BucketStart")
	}
}
