package gitstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/testsize"
)

// remoteFetchURLWithGit is how RemoteFetchURL answered before it read one
// `git config`: `git remote get-url`, else RemoteURL and `git ls-remote
// --get-url`.
func remoteFetchURLWithGit(ctx context.Context, t *Transport, name string) (string, error) {
	if out, err := t.run(ctx, false, "remote", "get-url", "--", name); err == nil {
		if u := strings.TrimRight(string(out), "\n"); u != "" && !strings.Contains(u, "\n") {
			return u, nil
		}
	}
	if _, err := t.RemoteURL(ctx, name); err != nil {
		return "", err
	}
	out, err := t.run(ctx, false, "ls-remote", "--get-url", "--", name)
	if err != nil {
		return "", fmt.Errorf("remote %s: %w", name, err)
	}
	return strings.TrimRight(string(out), "\n"), nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestRemoteURLsSameAsGit: the URLs read from one `git config` are the
// ones git's own commands name (`git remote get-url`, `--push --all`,
// `git ls-remote --get-url`, `git config --get`), with the same errors,
// for configurations that exercise git's rules: the longest insteadOf
// prefix, a tie between rules (the base met first wins, wherever its
// other prefixes are), one rewrite only (no chains), pushInsteadOf against
// pushurl, several urls, rules and remotes in the global scope, in the
// environment and in an included file, and what the single read leaves to
// git (a remote without url, an empty rule, a legacy remotes/ file).
func TestRemoteURLsSameAsGit(t *testing.T) {
	ctx := context.Background()
	_, tr := newTransport(t)
	type scenario struct {
		name          string
		local, global string
		env           [][2]string
		legacy        string // content of remotes/o
		gitConfig     string // content of the file GIT_CONFIG names
		settled       bool   // answered from the one git config
	}
	scenarios := []scenario{
		{name: "plain", local: "[remote \"o\"]\n\turl = /srv/a.git\n", settled: true},
		{name: "longest prefix", local: "[url \"https://github.com/\"]\n\tinsteadOf = gh:\n[url \"ssh://git@github.com/org/\"]\n\tinsteadOf = gh:org/\n[remote \"o\"]\n\turl = gh:org/r.git\n", settled: true},
		{name: "tie: the base met first", local: "[url \"B:\"]\n\tinsteadOf = zz:\n[url \"A:\"]\n\tinsteadOf = x:\n[url \"B:\"]\n\tinsteadOf = x:\n[remote \"o\"]\n\turl = x:r.git\n", settled: true},
		{name: "no chain", local: "[url \"b:\"]\n\tinsteadOf = a:\n[url \"c:\"]\n\tinsteadOf = b:\n[remote \"o\"]\n\turl = a:r.git\n\turl = b:r.git\n", settled: true},
		{name: "pushInsteadOf, one url of two", local: "[url \"ssh://h/\"]\n\tpushInsteadOf = https://h/\n[remote \"o\"]\n\turl = https://h/r.git\n\turl = https://other/r.git\n", settled: true},
		{name: "pushInsteadOf and insteadOf", local: "[url \"ssh://h/\"]\n\tpushInsteadOf = https://h/\n[url \"git://h/\"]\n\tinsteadOf = https://h/\n[remote \"o\"]\n\turl = https://h/r.git\n", settled: true},
		{name: "pushurl beats pushInsteadOf", local: "[url \"ssh://h/\"]\n\tpushInsteadOf = https://h/\n[url \"git://p/\"]\n\tinsteadOf = p:\n[remote \"o\"]\n\turl = https://h/r.git\n\tpushurl = p:r.git\n\tpushurl = /srv/p.git\n", settled: true},
		{name: "several urls", local: "[url \"/srv/\"]\n\tinsteadOf = s:\n[remote \"o\"]\n\turl = s:a.git\n\turl = /srv/b.git\n\tfetch = +refs/heads/*:refs/remotes/o/*\n", settled: true},
		{name: "case and dotted base", local: "[URL \"https://a.b.c/\"]\n\tINSTEADOF = abc:\n[Remote \"o\"]\n\tURL = abc:r.git\n\tPushURL = abc:p.git\n", settled: true},
		{name: "rules in global", local: "[remote \"o\"]\n\turl = gh:r.git\n", global: "[url \"https://github.com/\"]\n\tinsteadOf = gh:\n\tpushInsteadOf = gh:\n", settled: true},
		{name: "url in global and local", local: "[remote \"o\"]\n\turl = /srv/local.git\n", global: "[remote \"o\"]\n\turl = /srv/global.git\n", settled: true},
		{name: "pushurl in global", local: "[remote \"o\"]\n\turl = /srv/a.git\n", global: "[remote \"o\"]\n\tpushurl = /srv/p.git\n", settled: true},
		{name: "remote in global only", global: "[remote \"o\"]\n\turl = /srv/g.git\n", settled: true},
		{name: "remote in the environment", env: [][2]string{{"remote.o.url", "e:r.git"}, {"url./srv/.insteadOf", "e:"}}, settled: true},
		{name: "rules in an included file", local: "[include]\n\tpath = INCLUDED\n[remote \"o\"]\n\turl = i:r.git\n", settled: true},
		{name: "not configured", local: "[remote \"p\"]\n\turl = /srv/p.git\n[remote \"o.x\"]\n\turl = /srv/x.git\n", settled: true},
		{name: "no url", local: "[remote \"o\"]\n\tfetch = +refs/heads/*:refs/remotes/o/*\n"},
		{name: "empty rule", local: "[url \"/srv/\"]\n\tinsteadOf =\n[remote \"o\"]\n\turl = r.git\n"},
		{name: "legacy remotes file", legacy: "URL: /srv/legacy.git\n"},
		{name: "GIT_CONFIG", local: "[remote \"o\"]\n\turl = /srv/a.git\n", gitConfig: "[remote \"o\"]\n\turl = /srv/other.git\n"},
		{name: "legacy remotes file and config", local: "[remote \"o\"]\n\turl = /srv/a.git\n", legacy: "URL: /srv/legacy.git\n"},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "r.git")
			gitInit(t, dir, "--quiet", "--bare")
			included := filepath.Join(tmp, "included")
			if err := os.WriteFile(included, []byte("[url \"/srv/inc/\"]\n\tinsteadOf = i:\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(filepath.Join(dir, "config"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(strings.ReplaceAll(sc.local, "INCLUDED", included))
			f.Close()
			if sc.global != "" {
				g := filepath.Join(tmp, "global")
				if err := os.WriteFile(g, []byte(sc.global), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Setenv("GIT_CONFIG_GLOBAL", g)
			}
			if len(sc.env) > 0 {
				t.Setenv("GIT_CONFIG_COUNT", fmt.Sprint(len(sc.env)))
				for i, kv := range sc.env {
					t.Setenv(fmt.Sprintf("GIT_CONFIG_KEY_%d", i), kv[0])
					t.Setenv(fmt.Sprintf("GIT_CONFIG_VALUE_%d", i), kv[1])
				}
			}
			if sc.gitConfig != "" {
				g := filepath.Join(tmp, "gitconfig")
				if err := os.WriteFile(g, []byte(sc.gitConfig), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Setenv("GIT_CONFIG", g)
			}
			if sc.legacy != "" {
				os.MkdirAll(filepath.Join(dir, "remotes"), 0o755)
				if err := os.WriteFile(filepath.Join(dir, "remotes", "o"), []byte(sc.legacy), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l := &Transport{dir: dir, git: tr.git}
			r, answer := l.readRemoteURLs(ctx, "o")
			if (answer != urlsAskGit) != sc.settled {
				t.Fatalf("answer %d, settled %v", answer, sc.settled)
			}
			ask := func(args ...string) string { // git in the transport's environment
				t.Helper()
				out, err := l.run(ctx, false, args...)
				if err != nil {
					t.Fatalf("git %v: %v", args, err)
				}
				return strings.TrimRight(string(out), "\n")
			}
			if answer == urlsKnown { // the read, against git's own commands
				if want := ask("ls-remote", "--get-url", "--", "o"); r.fetchURL() != want {
					t.Fatalf("fetch URL %q, git ls-remote --get-url %q", r.fetchURL(), want)
				}
				if want := ask("config", "--get", "remote.o.url"); r.lastURL() != want {
					t.Fatalf("last url %q, git config --get %q", r.lastURL(), want)
				}
				if r.inRepo {
					want := strings.Split(ask("remote", "get-url", "--push", "--all", "--", "o"), "\n")
					if !reflect.DeepEqual(r.pushTo(), want) {
						t.Fatalf("push URLs %q, git remote get-url --push --all %q", r.pushTo(), want)
					}
				}
			}
			// the methods, against how they answered before
			got, gotErr := l.RemoteFetchURL(ctx, "o")
			want, wantErr := remoteFetchURLWithGit(ctx, l, "o")
			if got != want || errText(gotErr) != errText(wantErr) {
				t.Fatalf("RemoteFetchURL = %q, %v; before %q, %v", got, gotErr, want, wantErr)
			}
			urls, pushErr := l.PushURLs(ctx, "o")
			wantURLs, wantPushErr := l.pushURLsGit(ctx, "o")
			if !reflect.DeepEqual(urls, wantURLs) || errText(pushErr) != errText(wantPushErr) {
				t.Fatalf("PushURLs = %q, %v; before %q, %v", urls, pushErr, wantURLs, wantPushErr)
			}
			urls, pushErr, err = l.PushTargets(ctx, "o")
			var wantErr2 error
			if wantPushErr != nil {
				_, wantErr2 = l.RemoteURL(ctx, "o")
			}
			if !reflect.DeepEqual(urls, wantURLs) || errText(pushErr) != errText(wantPushErr) || errText(err) != errText(wantErr2) {
				t.Fatalf("PushTargets = %q, %v, %v; before %q, %v, %v", urls, pushErr, err, wantURLs, wantPushErr, wantErr2)
			}
			t.Logf("fetch %q, push %q %v", got, urls, pushErr)
		})
	}
}

// TestRewriteURL pins git's alias_url on its own: the longest prefix, the
// first rule on a tie, the base met first holding all its prefixes.
func TestRewriteURL(t *testing.T) {
	t.Parallel()
	var rules []urlRewrite
	addRewrite(&rules, "B:", "zz:")
	addRewrite(&rules, "A:", "x:")
	addRewrite(&rules, "B:", "x:")
	addRewrite(&rules, "L:", "x:y")
	for _, c := range [][3]string{
		{"x:r", "B:r", "true"}, {"x:yr", "L:r", "true"}, {"zz:q", "B:q", "true"}, {"w:r", "w:r", "false"}, {"x", "x", "false"},
	} {
		got, ok := rewriteURL(c[0], rules)
		if got != c[1] || fmt.Sprint(ok) != c[2] {
			t.Fatalf("rewriteURL(%q) = %q, %v; want %q, %s", c[0], got, ok, c[1], c[2])
		}
	}
}

// TestRemoteURLsRandomSameAsGit: random rule sets over a few prefixes and
// bases that overlap (ties, prefixes of prefixes, a base that is another
// rule's prefix, rules of one base split around others) give the URLs git
// names, wherever the one git config settles them.
func TestRemoteURLsRandomSameAsGit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, tr := newTransport(t)
	dir := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, dir, "--quiet", "--bare")
	initial, err := os.ReadFile(filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	l := &Transport{dir: dir, git: tr.git}
	rng := rand.New(rand.NewPCG(14, uint64(testsize.Pick(t, 1, 2))))
	pick := func(list ...string) string { return list[rng.IntN(len(list))] }
	n := testsize.Pick(t, 25, 300)
	for i := 0; i < n; i++ {
		var b strings.Builder
		b.Write(initial)
		var remote strings.Builder
		for k := rng.IntN(3) + 1; k > 0; k-- {
			fmt.Fprintf(&remote, "\turl = %s\n", pick("a:b/r", "a:r", "b:r", "x:r", "ab:r"))
		}
		for k := rng.IntN(3) - 1; k > 0; k-- {
			fmt.Fprintf(&remote, "\tpushurl = %s\n", pick("a:p", "b:p", "q:p"))
		}
		rules := rng.IntN(6)
		wrote := false
		for k := 0; k < rules; k++ {
			if !wrote && rng.IntN(3) == 0 {
				b.WriteString("[remote \"o\"]\n" + remote.String())
				wrote = true
			}
			fmt.Fprintf(&b, "[url %q]\n\t%s = %s\n", pick("P/", "Q/", "a:", "b:", "ab"), pick("insteadOf", "insteadOf", "pushInsteadOf"), pick("a", "a:", "a:b", "b:", "x", "ab:", "q:"))
		}
		if !wrote {
			b.WriteString("[remote \"o\"]\n" + remote.String())
		}
		if err := os.WriteFile(filepath.Join(dir, "config"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		r, answer := l.readRemoteURLs(ctx, "o")
		if answer != urlsKnown {
			t.Fatalf("config %d not settled:\n%s", i, b.String())
		}
		out, err := l.run(ctx, false, "ls-remote", "--get-url", "--", "o")
		if want := strings.TrimRight(string(out), "\n"); err != nil || r.fetchURL() != want {
			t.Fatalf("config %d:\n%s\nfetch URL %q, git %q (%v)", i, b.String(), r.fetchURL(), want, err)
		}
		out, err = l.run(ctx, false, "remote", "get-url", "--push", "--all", "--", "o")
		if want := strings.Split(strings.TrimRight(string(out), "\n"), "\n"); err != nil || !reflect.DeepEqual(r.pushTo(), want) {
			t.Fatalf("config %d:\n%s\npush URLs %q, git %q (%v)", i, b.String(), r.pushTo(), want, err)
		}
	}
}

// TestCheckRemoteURLHelpers: a remote-helper URL (git's rule: letters,
// digits, '+', '-', '.' then "::") is refused; paths, scp-like addresses
// and scheme URLs that merely hold "::" later are not.
func TestCheckRemoteURLHelpers(t *testing.T) {
	for url, refused := range map[string]bool{
		"ext::sh -c touch% x":   true,
		"fd::0,1":               true,
		"a+b.c-D9::x":           false, // a helper the user installed: git's to decide
		"codecommit::https://h": false,
		"ext::x":                true,
		"fd::3":                 true,
		"-u":                    true,
		"/srv/a::b.git":         false,
		"host:a::b":             false,
		"https://h/x::y":        false,
		"file:///srv/r.git":     false,
		"git@example.com:r.git": false,
		"ssh://h/r.git":         false,
		"relative/dir::x":       false,
		"with space::x":         false,
	} {
		if err := CheckRemoteURL("o", url); (err != nil) != refused {
			t.Errorf("CheckRemoteURL(%q) = %v, want refused %v", url, err, refused)
		}
	}
}
