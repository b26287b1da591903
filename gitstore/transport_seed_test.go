package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestAddRemoteSeedsURLs: what AddRemoteURL keeps of the new remote
// (seedURLs: remoteTaken's `git config` output and the section it wrote)
// is what a `git config` run after it reads (readURLsOf, on a transport
// that read nothing), for configurations where other scopes say something
// of the remote or of its URL: rewrite rules in the local and global
// scopes, a pushurl in the global scope and in the environment (command
// scope, listed before the local section here, after it by git), hidden
// refs; and the fetch and push URLs are then answered without git.
func TestAddRemoteSeedsURLs(t *testing.T) {
	ctx := context.Background()
	_, base := newTransport(t)
	const url = "/srv/a.git"
	fetch := []string{"+refs/heads/readproof/*:refs/readproof-remotes/o/heads/*", "+refs/tags/readproof/*:refs/readproof-remotes/o/tags/*"}
	for _, sc := range []struct {
		name, local, global string
		env                 [][2]string
	}{
		{name: "nothing else"},
		{name: "insteadOf in local", local: "[url \"/srv/rewritten/\"]\n\tinsteadOf = /srv/\n"},
		{name: "rules in global", global: "[url \"/g/\"]\n\tinsteadOf = /srv/a\n\tpushInsteadOf = /srv/\n"},
		{name: "pushurl in global", global: "[remote \"o\"]\n\tpushurl = /srv/p.git\n\ttagOpt = --tags\n"},
		{name: "pushurl in the environment", env: [][2]string{{"remote.o.pushurl", "/srv/e.git"}, {"url./x/.pushInsteadOf", "/srv/e"}}},
		{name: "hidden refs", global: "[transfer]\n\thideRefs = refs/x\n"},
	} {
		t.Run(sc.name, func(t *testing.T) {
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "r.git")
			gitInit(t, dir, "--quiet", "--bare")
			if sc.local != "" {
				f, err := os.OpenFile(filepath.Join(dir, "config"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(sc.local)
				f.Close()
			}
			if sc.global != "" {
				g := filepath.Join(tmp, "global")
				if err := os.WriteFile(g, []byte(sc.global), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Setenv("GIT_CONFIG_GLOBAL", g)
			}
			for i, kv := range sc.env {
				t.Setenv("GIT_CONFIG_COUNT", string(rune('0'+len(sc.env))))
				t.Setenv("GIT_CONFIG_KEY_"+string(rune('0'+i)), kv[0])
				t.Setenv("GIT_CONFIG_VALUE_"+string(rune('0'+i)), kv[1])
			}
			tr := (&Transport{dir: dir, git: base.git}).OneCommand()
			if _, err := tr.AddRemoteURL(ctx, "o", url, fetch); err != nil {
				t.Fatal(err)
			}
			kept, ok := tr.urls["o"]
			if !ok {
				t.Fatal("AddRemoteURL kept nothing of the remote")
			}
			fresh := (&Transport{dir: dir, git: base.git}).readURLsOf(ctx, "o")
			if fresh.answer != urlsKnown {
				t.Fatalf("git config read after the add is not settled (%d): the scenario proves nothing", fresh.answer)
			}
			if !reflect.DeepEqual(kept, fresh) {
				t.Fatalf("kept %+v\nread %+v", kept, fresh)
			}
			tr.git = filepath.Join(tmp, "no-git") // any git process now fails
			if u, err := tr.RemoteFetchURL(ctx, "o"); err != nil || u != fresh.r.fetchURL() {
				t.Fatalf("fetch URL %q (%v), want %q without git", u, err, fresh.r.fetchURL())
			}
			if us, err := tr.PushURLs(ctx, "o"); err != nil || !reflect.DeepEqual(us, fresh.r.pushTo()) {
				t.Fatalf("push URLs %q (%v), want %q without git", us, err, fresh.r.pushTo())
			}
		})
	}
}
