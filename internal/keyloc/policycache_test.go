package keyloc

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/readproof/readproof/internal/keyfile"
)

// configHome points the user's config directory at a new one and returns
// the policy cache key's path in it.
func configHome(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("HOME", dir)
	return filepath.Join(dir, "readproof", PolicyCacheKeyName)
}

// TestPolicyCacheKeyCreated: the first call makes the key (mode 0600 in a
// 0700 directory); later calls, and calls at the same time, read that one.
func TestPolicyCacheKeyCreated(t *testing.T) {
	path := configHome(t)
	var wg sync.WaitGroup
	keys := make([][]byte, 4)
	for i := range keys {
		wg.Go(func() {
			k, err := PolicyCacheKey()
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for _, k := range keys {
		if len(k) != policyCacheKeySize || !bytes.Equal(k, keys[0]) {
			t.Fatalf("keys differ: %x, %x", k, keys[0])
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	if di, err := os.Stat(filepath.Dir(path)); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("key directory: %v %v", di, err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != hex.EncodeToString(keys[0])+"\n" {
		t.Fatalf("key file holds %q", data)
	}
	again, err := PolicyCacheKey()
	if err != nil || !bytes.Equal(again, keys[0]) {
		t.Fatalf("second call: %x, %v", again, err)
	}
}

// TestPolicyCacheKeyRefused: a key file open to others, one that is not
// a key, a config directory that cannot hold one, and a key inside the
// store give no key, and the file found is left as it was; no error
// quotes the key.
func TestPolicyCacheKeyRefused(t *testing.T) {
	path := configHome(t)
	if _, err := PolicyCacheKey(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	k, err := PolicyCacheKey()
	if k != nil || !errors.Is(err, keyfile.ErrMode) || !errors.Is(err, ErrPolicyCacheKey) {
		t.Fatalf("a key open to others: %x, %v", k, err)
	}
	if strings.Contains(err.Error(), strings.TrimSpace(string(data))) {
		t.Fatalf("the error quotes the key: %v", err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, data) {
		t.Fatal("the refused key file was rewritten")
	}

	for _, bad := range []string{"", "zz" + string(data[2:]), string(data[:64]), string(data) + "\n"} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		k, err := PolicyCacheKey()
		if k != nil || !errors.Is(err, ErrPolicyCacheKey) {
			t.Fatalf("key file %q: %x, %v", bad, k, err)
		}
		if now, _ := os.ReadFile(path); string(now) != bad {
			t.Fatal("a key file that is not a key was rewritten")
		}
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", file)
	if k, err := PolicyCacheKey(); k != nil || err == nil {
		t.Fatalf("a config directory that is a file: %x, %v", k, err)
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "")
	if k, err := PolicyCacheKey(); k != nil || err == nil {
		t.Fatalf("no config directory: %x, %v", k, err)
	}

	store := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(store, "config"))
	if k, err := PolicyCacheKey(store); k != nil || !errors.Is(err, keyfile.ErrLocation) {
		t.Fatalf("a key in the store: %x, %v", k, err)
	}
	if _, err := os.Stat(filepath.Join(store, "config")); err == nil {
		t.Fatal("a key directory was made in the store")
	}
}
