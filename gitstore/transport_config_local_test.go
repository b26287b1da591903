package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRemoteInRepoConfigAgreesWithGit: whenever RemoteInRepoConfig says
// the repository's own config sets the remote's URL, git agrees (`git
// remote get-url` names it, `git config --get` gives a URL), for config
// files with tricky lines; where it cannot tell it says false, and the
// caller asks git as before. The cases it reads alone are listed (want
// true) so the in-process answer is shown to be taken.
func TestRemoteInRepoConfigAgreesWithGit(t *testing.T) {
	ctx := context.Background()
	_, tr := newTransport(t)
	base := "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
	cases := []struct {
		name, config string
		want         bool
	}{
		{"plain", "[remote \"o\"]\n\turl = /srv/a.git\n\tfetch = +refs/heads/*:refs/remotes/o/*\n", true},
		{"case of section and key", "[Remote \"o\"]\n\tURL = /srv/a.git\n", true},
		{"inline comment", "[remote \"o\"]\n\turl = /srv/a.git ; where\n", true},
		{"comments and blanks", "# c\n\n[remote \"o\"] # c\n  ; c\n\turl=/srv/a.git\n[x \"y\"]\n\tk = v\n", true},
		{"twice, both set", "[remote \"o\"]\n\turl = /srv/a.git\n[remote \"o\"]\n\turl = /srv/b.git\n", true},
		{"no final newline", "[remote \"o\"]\n\turl = /srv/a.git", true},
		{"empty url", "[remote \"o\"]\n\turl =\n", false},
		{"only a comment after =", "[remote \"o\"]\n\turl = ; none\n", false},
		{"second url empty", "[remote \"o\"]\n\turl = /srv/a.git\n\turl = \n", false},
		{"url without value", "[remote \"o\"]\n\turl\n", false},
		{"url commented out", "[remote \"o\"]\n#\turl = /srv/a.git\n", false},
		{"other subsection case", "[remote \"O\"]\n\turl = /srv/a.git\n", false},
		{"dotted subsection", "[remote \"o.x\"]\n\turl = /srv/a.git\n", false},
		{"legacy header", "[remote.o]\n\turl = /srv/a.git\n", false},
		{"header and key on one line", "[remote \"o\"] url = /srv/a.git\n", false},
		{"quoted value", "[remote \"o\"]\n\turl = \"/srv/a b.git\"\n", false},
		{"continuation", "[remote \"o\"]\n\turl = /srv/\\\na.git\n", false},
		{"continued line hides a header", "[x]\n\tk = a\\\n[remote \"o\"]\n\turl = /srv/a.git\n", false},
		{"carriage returns", "[remote \"o\"]\r\n\turl = /srv/a.git\r\n", false},
		{"only fetch", "[remote \"o\"]\n\tfetch = +refs/heads/*:refs/remotes/o/*\n", false},
		{"url in the next section", "[remote \"o\"]\n[y]\n\turl = /srv/a.git\n", false},
		{"include", "[include]\n\tpath = other\n[remote \"o\"]\n\turl = /srv/a.git\n", false},
		{"includeIf", "[includeIf \"gitdir:/\"]\n\tpath = other\n[remote \"o\"]\n\turl = /srv/a.git\n", false},
		{"worktree config", "[extensions]\n\tworktreeConfig = true\n[remote \"o\"]\n\turl = /srv/a.git\n", false},
		{"bad key", "[remote \"o\"]\n\tur_l = x\n\turl = /srv/a.git\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "r.git")
			gitInit(t, dir, "--quiet", "--bare")
			if err := os.WriteFile(filepath.Join(dir, "config"), []byte(base+c.config), 0o644); err != nil {
				t.Fatal(err)
			}
			l := &Transport{dir: dir, git: tr.git}
			got := l.RemoteInRepoConfig("o")
			if got != c.want {
				t.Fatalf("RemoteInRepoConfig = %v, want %v", got, c.want)
			}
			if !got {
				return
			}
			u, err := l.run(ctx, false, "remote", "get-url", "--", "o")
			if err != nil || strings.TrimSpace(string(u)) == "" {
				t.Fatalf("git remote get-url: %q, %v", u, err)
			}
			if u, err := l.RemoteURL(ctx, "o"); err != nil || u == "" {
				t.Fatalf("RemoteURL: %q, %v", u, err)
			}
		})
	}
	t.Run("environment", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "r.git")
		gitInit(t, dir, "--quiet", "--bare")
		if err := os.WriteFile(filepath.Join(dir, "config"), []byte(base+cases[0].config), 0o644); err != nil {
			t.Fatal(err)
		}
		l := &Transport{dir: dir, git: tr.git}
		if !l.RemoteInRepoConfig("o") || l.RemoteInRepoConfig("p") || l.RemoteInRepoConfig("o/x") {
			t.Fatal("plain config misread")
		}
		for _, kv := range [][2]string{{"GIT_CONFIG_COUNT", "1"}, {"GIT_CONFIG_PARAMETERS", "'remote.o.url'=''"}, {"GIT_CONFIG", "/dev/null"}} {
			t.Run(kv[0], func(t *testing.T) {
				t.Setenv(kv[0], kv[1])
				if l.RemoteInRepoConfig("o") {
					t.Fatalf("%s set: the file alone was trusted", kv[0])
				}
			})
		}
		if err := os.WriteFile(filepath.Join(dir, "commondir"), []byte("..\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if l.RemoteInRepoConfig("o") {
			t.Fatal("a repository with commondir: the file alone was trusted")
		}
	})
}
