package adapters_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/adapters/adaptertest"
)

func TestTypesRegistered(t *testing.T) {
	if got := strings.Join(adapters.Types(), ","); got != "filesystem,git,github,http" {
		t.Fatalf("Types() = %s", got)
	}
}

func TestConformanceFilesystem(t *testing.T) {
	adaptertest.Run(t, adaptertest.Harness{New: func(t *testing.T) adaptertest.Fixture {
		return &dirFixture{dir: t.TempDir()}
	}})
}

func TestConformanceHTTP(t *testing.T) {
	t.Run("ETag", func(t *testing.T) {
		adaptertest.Run(t, adaptertest.Harness{New: func(t *testing.T) adaptertest.Fixture { return newDocServer(t, true) }})
	})
	t.Run("LastModified", func(t *testing.T) {
		adaptertest.Run(t, adaptertest.Harness{New: func(t *testing.T) adaptertest.Fixture { return newDocServer(t, false) }})
	})
}

func TestConformanceGitHub(t *testing.T) {
	t.Run("Base64", func(t *testing.T) {
		adaptertest.Run(t, adaptertest.Harness{New: func(t *testing.T) adaptertest.Fixture { return newFakeGitHub(t, 1<<30) }})
	})
	// Every non-empty file comes without content, as GitHub does for files
	// over 1 MB: the adapter reads it again in the raw media type.
	t.Run("Raw", func(t *testing.T) {
		adaptertest.Run(t, adaptertest.Harness{New: func(t *testing.T) adaptertest.Fixture { return newFakeGitHub(t, 0) }})
	})
}

func TestConformanceGit(t *testing.T) {
	t.Parallel()
	t.Run("Path", func(t *testing.T) {
		t.Parallel()
		adaptertest.Run(t, adaptertest.Harness{New: func(t *testing.T) adaptertest.Fixture {
			base := t.TempDir()
			repo := newGitRepo(t, base, "repo")
			return &gitFixture{base: base, repo: repo, url: repo, env: adapters.Env{BaseDir: base, CacheDir: t.TempDir()}}
		}})
	})
	t.Run("FileURL", func(t *testing.T) {
		t.Parallel()
		adaptertest.Run(t, adaptertest.Harness{New: func(t *testing.T) adaptertest.Fixture {
			base := t.TempDir()
			repo := newGitRepo(t, base, "repo")
			return &gitFixture{base: base, repo: repo, url: "file://" + filepath.ToSlash(repo), env: adapters.Env{BaseDir: base, CacheDir: t.TempDir()}}
		}})
	})
	t.Run("Daemon", func(t *testing.T) {
		t.Parallel()
		base := t.TempDir()
		port := startGitDaemon(t, base)
		var n atomic.Int32
		adaptertest.Run(t, adaptertest.Harness{New: func(t *testing.T) adaptertest.Fixture {
			name := fmt.Sprintf("repo%d", n.Add(1))
			repo := newGitRepo(t, base, name)
			url := fmt.Sprintf("git://127.0.0.1:%d/%s", port, name)
			return &gitFixture{base: base, repo: repo, url: url, env: adapters.Env{Network: loopback, CacheDir: t.TempDir()}}
		}})
	})
	t.Run("SmartHTTP", func(t *testing.T) {
		t.Parallel()
		base := t.TempDir()
		srv := startGitHTTP(t, base)
		var n atomic.Int32
		adaptertest.Run(t, adaptertest.Harness{New: func(t *testing.T) adaptertest.Fixture {
			name := fmt.Sprintf("repo%d", n.Add(1))
			repo := newGitRepo(t, base, name)
			return &gitFixture{base: base, repo: repo, url: srv.URL + "/" + name, env: adapters.Env{Network: loopback, CacheDir: t.TempDir()}}
		}})
	})
}
