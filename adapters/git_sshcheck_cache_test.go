package adapters

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
)

// TestGitSSHConfigRefusedBeforeCacheDir: a git source over ssh whose host
// ~/.ssh/config sends through a jump host, or gives a Port that is no port
// number, is refused by the check before the fetch, and nothing is made on
// disk: not the mirror's cache directory, nor any directory above it that
// making it would create. The error names the resource, the file and its
// line, and ends in what to change (in its message, as adapters' errors do). (HOME is set for ~/.ssh/config, so the test is not parallel.)
func TestGitSSHConfigRefusedBeforeCacheDir(t *testing.T) {
	for _, c := range []struct {
		name, config, want, hint string
	}{
		{"ProxyJump", "Host git.example.test\n  ProxyJump bastion.example.test\n", "line 2: ProxyJump", "; remove the setting for this host"},
		{"Port", "Host git.example.test\n  Port twenty-two\n", "line 2: Port", "; write the port's number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, ".ssh", "config"), []byte(c.config), 0o600); err != nil {
				t.Fatal(err)
			}
			top := filepath.Join(t.TempDir(), "cache")
			cache := filepath.Join(top, "readproof", "git")
			for _, u := range []string{"ssh://git@git.example.test/docs.git", "git@git.example.test:docs.git"} {
				src, err := openGit(Spec{Type: "git", URL: u, Path: "README"}, Env{CacheDir: cache, Network: NetPolicy{Timeout: 5 * time.Second}})
				if err != nil {
					t.Fatal(err)
				}
				_, err = src.Fetch(context.Background(), Request{URI: "readproof://t/jump"})
				var bad *gitstore.SSHConfigError
				if !errors.As(err, &bad) || !strings.Contains(err.Error(), "readproof://t/jump") || !strings.Contains(err.Error(), filepath.Join(home, ".ssh", "config")) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: fetch error %v; want an SSHConfigError naming the resource, %s and %q", u, err, filepath.Join(home, ".ssh", "config"), c.want)
				}
				if err != nil && !strings.Contains(err.Error(), c.hint) {
					t.Errorf("%s: fetch error %v does not end in the hint %q", u, err, c.hint)
				}
				if _, err := os.Lstat(top); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s: after the refused fetch, %s: %v; want it not made", u, top, err)
				}
			}
		})
	}
}
