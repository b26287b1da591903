package gitstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// addRemoteWithGit is how AddRemote wrote a remote before it wrote the
// config file itself: the existence check, `git remote add`, and one `git
// config` per refspec. TestAddRemoteSameBytes compares the two.
func addRemoteWithGit(ctx context.Context, t *Transport, name, url string, fetch []string) error {
	if _, err := t.RemoteURL(ctx, name); err == nil {
		return ErrRemoteExists
	}
	if _, err := t.run(ctx, false, "remote", "add", "--no-tags", "--", name, url); err != nil {
		if exitCode(err) == 3 {
			return ErrRemoteExists
		}
		return err
	}
	key := "remote." + name + ".fetch"
	if _, err := t.run(ctx, false, "config", "--unset-all", key); err != nil && exitCode(err) != 5 {
		return err
	}
	for _, spec := range fetch {
		if _, err := t.run(ctx, false, "config", "--add", key, spec); err != nil {
			return err
		}
	}
	return nil
}

// TestAddRemoteSameBytes: the config AddRemote writes is byte for byte the
// one git's commands wrote, for URLs git has to quote or escape, with and
// without refspecs, into a config file with or without a final newline, and
// with the file's permissions kept.
func TestAddRemoteSameBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, tr := newTransport(t)
	specs := []string{"+refs/tags/readproof/runs/*:refs/readproof-remotes/o/runs/*", "+refs/heads/main*:refs/readproof-remotes/o/main*"}
	urls := []string{"/srv/a.git", "git://127.0.0.1:9418/shared.git", "/srv/with space/a#b;c.git", " lead", "trail ",
		`/srv/quote"back\slash`, "/srv/tab\there", "https://user@example.invalid/r.git", "host:path/r.git"}
	// Two bare repositories made once; each case starts them again from
	// the config git init wrote (the commands compared write nothing else).
	dirs := [2]string{}
	var pristine [2][]byte
	for k := range dirs {
		dirs[k] = filepath.Join(t.TempDir(), "r.git")
		gitInit(t, dirs[k], "--quiet", "--bare")
		data, err := os.ReadFile(filepath.Join(dirs[k], "config"))
		if err != nil {
			t.Fatal(err)
		}
		pristine[k] = data
	}
	for i, u := range urls {
		for _, fetch := range [][]string{specs, nil} {
			for _, noNewline := range []bool{false, true} {
				for k := range dirs {
					cfg := filepath.Join(dirs[k], "config")
					data := append([]byte(nil), pristine[k]...)
					if noNewline {
						data = append(data, "[x]\n\ty = 1"...)
					}
					if err := os.WriteFile(cfg, data, 0o640); err != nil {
						t.Fatal(err)
					}
					if err := os.Chmod(cfg, 0o640); err != nil {
						t.Fatal(err)
					}
				}
				old := &Transport{dir: dirs[0], git: tr.git}
				now := &Transport{dir: dirs[1], git: tr.git}
				if err := addRemoteWithGit(ctx, old, "o", u, fetch); err != nil {
					t.Fatalf("url %d: with git: %v", i, err)
				}
				if err := now.AddRemote(ctx, "o", u, fetch); err != nil {
					t.Fatalf("url %d: %v", i, err)
				}
				a, _ := os.ReadFile(filepath.Join(dirs[0], "config"))
				b, _ := os.ReadFile(filepath.Join(dirs[1], "config"))
				if string(a) != string(b) {
					t.Fatalf("url %q, %d refspecs, no final newline %v:\ngit wrote:\n%s\nAddRemote wrote:\n%s", u, len(fetch), noNewline, a, b)
				}
				fa, _ := os.Stat(filepath.Join(dirs[0], "config"))
				fb, _ := os.Stat(filepath.Join(dirs[1], "config"))
				if fa.Mode() != fb.Mode() {
					t.Fatalf("config mode: git %v, AddRemote %v", fa.Mode(), fb.Mode())
				}
				if got := git(t, dirs[1], "config", "--get", "remote.o.url"); got != u {
					t.Fatalf("git reads the URL back as %q, want %q", got, u)
				}
				if _, err := os.Stat(filepath.Join(dirs[1], "config.lock")); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("config.lock left behind: %v", err)
				}
			}
		}
	}
}

// TestAddRemoteTakenSameAnswers: AddRemote refuses a name exactly when the
// git commands refused it: a URL in any scope (here the command scope, from
// the environment), any key of the remote in the repository's own config,
// a legacy remotes/ file; it accepts a name only set up globally without a
// URL. A held config.lock fails the add and changes nothing.
func TestAddRemoteTakenSameAnswers(t *testing.T) {
	ctx := context.Background()
	_, tr := newTransport(t)
	cases := []struct {
		name  string
		setup func(dir string)
		env   [][2]string
		taken bool
	}{
		{"free", func(string) {}, nil, false},
		{"local url", func(d string) { git(t, d, "config", "remote.o.url", "/x") }, nil, true},
		{"local other key", func(d string) { git(t, d, "config", "remote.o.prune", "true") }, nil, true},
		{"other case", func(d string) { git(t, d, "config", "remote.O.url", "/x") }, nil, false},
		{"longer name", func(d string) { git(t, d, "config", "remote.oo.url", "/x") }, nil, false},
		{"dotted prefix", func(d string) { git(t, d, "config", "remote.o.x.url", "/x") }, nil, false},
		{"legacy file", func(d string) {
			os.MkdirAll(filepath.Join(d, "remotes"), 0o755)
			os.WriteFile(filepath.Join(d, "remotes", "o"), []byte("URL: /x\n"), 0o644)
		}, nil, true},
		{"env url", func(string) {}, [][2]string{{"remote.o.url", "/x"}}, true},
		{"env other key", func(string) {}, [][2]string{{"remote.o.prune", "true"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GIT_CONFIG_COUNT", "0")
			for i, kv := range c.env {
				t.Setenv("GIT_CONFIG_COUNT", "1")
				t.Setenv("GIT_CONFIG_KEY_"+string(rune('0'+i)), kv[0])
				t.Setenv("GIT_CONFIG_VALUE_"+string(rune('0'+i)), kv[1])
			}
			dirs := [2]string{}
			for k := range dirs {
				dirs[k] = filepath.Join(t.TempDir(), "r.git")
				gitInit(t, dirs[k], "--quiet", "--bare")
				c.setup(dirs[k])
			}
			old := &Transport{dir: dirs[0], git: tr.git}
			now := &Transport{dir: dirs[1], git: tr.git}
			errOld := addRemoteWithGit(ctx, old, "o", "/y", nil)
			errNew := now.AddRemote(ctx, "o", "/y", nil)
			if errors.Is(errOld, ErrRemoteExists) != c.taken || errors.Is(errNew, ErrRemoteExists) != c.taken {
				t.Fatalf("taken %v: git commands %v, AddRemote %v", c.taken, errOld, errNew)
			}
			if !c.taken && (errOld != nil || errNew != nil) {
				t.Fatalf("git commands %v, AddRemote %v", errOld, errNew)
			}
			a, _ := os.ReadFile(filepath.Join(dirs[0], "config"))
			b, _ := os.ReadFile(filepath.Join(dirs[1], "config"))
			if string(a) != string(b) {
				t.Fatalf("git wrote:\n%s\nAddRemote wrote:\n%s", a, b)
			}
		})
	}
	dir := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, dir, "--quiet", "--bare")
	before, _ := os.ReadFile(filepath.Join(dir, "config"))
	if err := os.WriteFile(filepath.Join(dir, "config.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	now := &Transport{dir: dir, git: tr.git}
	if err := now.AddRemote(ctx, "o", "/y", nil); err == nil {
		t.Fatal("AddRemote wrote past a held config.lock")
	}
	after, _ := os.ReadFile(filepath.Join(dir, "config"))
	if string(before) != string(after) {
		t.Fatalf("config changed under a held lock:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(dir, "config.lock")); err != nil {
		t.Fatalf("the other writer's lock was removed: %v", err)
	}
}
