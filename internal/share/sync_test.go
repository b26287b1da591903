package share

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/internal/testsize"
)

// servers returns, for each way of reaching a repository, a function that
// creates a fresh bare repository and returns its URL. Each kind starts its
// server lazily on first use, so parallel subtests may share the map as
// long as each kind is used by one subtest at a time.
func servers(t *testing.T) map[string]func(name string) (url, dir string) {
	base := t.TempDir()
	var d *daemon
	var httpURL string
	return map[string]func(string) (string, string){
		"path": func(name string) (string, string) {
			dir := bareServer(t, base, name)
			return dir, dir
		},
		"file": func(name string) (string, string) {
			dir := bareServer(t, base, name)
			return (&url.URL{Scheme: "file", Path: dir}).String(), dir
		},
		"daemon": func(name string) (string, string) {
			dir := bareServer(t, base, name)
			if d == nil {
				d = startDaemon(t, base)
			}
			return d.url(name), dir
		},
		"http": func(name string) (string, string) {
			dir := bareServer(t, base, name)
			if httpURL == "" {
				httpURL = startHTTP(t, base)
			}
			return httpURL + "/" + name, dir
		},
	}
}

func mustPush(t testing.TB, p *project, remote string) *PushResult {
	t.Helper()
	res, err := Push(context.Background(), p.s, remote, Options{})
	if err != nil {
		t.Fatalf("push from %s: %v (hint: %s)", p.dir, err, hint.Of(err))
	}
	return res
}

func mustPull(t testing.TB, p *project, remote string) *PullResult {
	t.Helper()
	res, err := Pull(context.Background(), p.s, remote, Options{})
	if err != nil {
		t.Fatalf("pull into %s: %v (hint: %s)", p.dir, err, hint.Of(err))
	}
	return res
}

func addRemote(t testing.TB, p *project, name, u string) {
	t.Helper()
	if err := AddRemote(context.Background(), p.s, name, u); err != nil {
		t.Fatal(err)
	}
}

// TestExchange: two stores record different runs, push and pull both ways
// through each kind of server, and end with the union; every run replays on
// both, and stock git fsck is clean everywhere. Then a tag moved on one side
// fast-forwards on the other, and open and aborted runs stay local: through
// a path and git daemon by default, through all four with
// READPROOF_LONG_TESTS=1.
func TestExchange(t *testing.T) {
	t.Parallel()
	srv := servers(t)
	for _, kind := range []string{"path", "file", "daemon", "http"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			u, dir := srv[kind]("shared-" + kind + ".git")
			a := newProject(t, map[string]string{"policy": "refunds within 30 days\n", "faq": "faq v1\n"})
			b := newProject(t, map[string]string{"runbook": "drain, then deploy\n"})
			a.run(t, "a-1", "policy", "faq")
			a.tag(t, "policy", "prod")
			a.run(t, "a-2", "policy@prod", "faq")
			b.run(t, "b-1", "runbook")
			addRemote(t, a, "origin", u)
			addRemote(t, b, "origin", u)

			pr := mustPush(t, a, "origin")
			if len(pr.Runs) != 2 || pr.UpToDate {
				t.Fatalf("first push: %+v", pr)
			}
			// b recorded its own journal: pushing before pulling is refused
			// and changes nothing on the server.
			before := allRefs(t, dir)
			_, err := Push(context.Background(), b.s, "origin", Options{})
			if after := allRefs(t, dir); after != before {
				t.Fatalf("a refused push changed the server:\n%s\n%s", before, after)
			}
			if !errors.Is(err, ErrRejected) || !strings.Contains(hint.Of(err), "pull first") {
				t.Fatalf("push of a diverged journal: got %v (hint %q), want ErrRejected with a pull-first hint", err, hint.Of(err))
			}
			res := mustPull(t, b, "origin")
			if len(res.NewRuns) != 2 || res.Journal != "merged" || res.Verified != 2 {
				t.Fatalf("pull into b: %+v", res)
			}
			mustPush(t, b, "origin")
			res = mustPull(t, a, "origin")
			if len(res.NewRuns) != 1 || res.NewRuns[0].RunID != "b-1" || res.Journal != "fast-forward" {
				t.Fatalf("pull into a: %+v", res)
			}
			if pr := mustPush(t, a, "origin"); !pr.UpToDate {
				t.Fatalf("push after a full exchange: %+v, want up to date", pr)
			}
			if res := mustPull(t, b, "origin"); !res.UpToDate {
				t.Fatalf("pull after a full exchange: %+v, want up to date", res)
			}

			ra, rb := runs(t, a.s), runs(t, b.s)
			if len(ra) != 3 || !maps.Equal(ra, rb) {
				t.Fatalf("runs differ after exchange:\na: %v\nb: %v", ra, rb)
			}
			replayAll(t, a.s)
			replayAll(t, b.s)
			for _, p := range []*project{a, b} {
				onMain := fromMain(t, p.path())
				for id, m := range ra {
					if !onMain[m] {
						t.Errorf("manifest %s of run %s is not reachable from main in %s", m, id, p.path())
					}
				}
			}
			// The rest (a tag moved on one side, open and aborted runs) asks
			// nothing of the server the exchange above did not: by default it
			// runs through a path and git daemon, READPROOF_LONG_TESTS=1 runs
			// it through all four.
			if !testsize.Long() && (kind == "file" || kind == "http") {
				for _, p := range []string{a.path(), b.path(), dir} {
					gitstore.Fsck(t, p)
				}
				return
			}
			// b reads the tag it pulled, and a tag moved on one side only
			// fast-forwards on the other.
			if st, err := b.s.Tag(uri(t, "policy"), "prod"); err != nil || st.Snapshot == "" {
				t.Fatalf("b: policy@prod after pull: %v %v", st, err)
			}
			a.write(t, "policy", "refunds within 14 days\n")
			a.run(t, "a-3", "policy")
			moved := a.tag(t, "policy", "prod")
			mustPush(t, a, "origin")
			res = mustPull(t, b, "origin")
			if len(res.Tags) != 1 || len(res.TagConflicts) != 0 {
				t.Fatalf("one-sided tag move: %+v", res)
			}
			if st, _ := b.s.Tag(uri(t, "policy"), "prod"); st == nil || st.Snapshot != moved.Snapshot {
				t.Fatalf("b: policy@prod = %+v, want snapshot %s", st, moved.Snapshot)
			}
			for _, p := range []string{a.path(), b.path(), dir} {
				gitstore.Fsck(t, p)
			}
			// Open runs stay local.
			if err := a.s.StartRun("wip"); err != nil {
				t.Fatal(err)
			}
			mustPush(t, a, "origin")
			if out := git(t, dir, "for-each-ref", "refs/heads/readproof/open/"); out != "" {
				t.Fatalf("an open run was pushed: %s", out)
			}
			// So do aborted ones (issue 15: run abort), and a pull does
			// not take them from a remote that has them.
			if _, err := a.s.AbortRun("wip"); err != nil {
				t.Fatal(err)
			}
			mustPush(t, a, "origin")
			if out := git(t, dir, "for-each-ref", store.AbortedPrefix); out != "" {
				t.Fatalf("an aborted run was pushed: %s", out)
			}
			aborted := git(t, a.path(), "for-each-ref", "--format=%(refname) %(objectname)", store.AbortedPrefix)
			if f := strings.Fields(aborted); len(f) != 2 {
				t.Fatalf("a's aborted run: %q", aborted)
			} else {
				git(t, dir, "fetch", "--quiet", a.path(), f[0]+":"+f[0])
			}
			mustPull(t, b, "origin")
			if out := git(t, b.path(), "for-each-ref", store.AbortedPrefix); out != "" {
				t.Fatalf("pull took an aborted run: %s", out)
			}
		})
	}
}

// TestSameRunIDConflict: the same run id committed with different manifests
// on two stores: both are kept on both sides, the conflict names both
// manifest ids, every manifest stays reachable from main, and renaming one
// settles it everywhere.
func TestSameRunIDConflict(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := bareServer(t, base, "shared.git")
	a := newProject(t, map[string]string{"doc": "a's version\n"})
	b := newProject(t, map[string]string{"doc": "b's version\n"})
	ma := a.run(t, "nightly", "doc")
	mb := b.run(t, "nightly", "doc")
	addRemote(t, a, "origin", dir)
	addRemote(t, b, "origin", dir)
	mustPush(t, a, "origin")

	res := mustPull(t, b, "origin")
	want := []RunConflict{{RunID: "nightly", Local: mb.ID, Others: []string{ma.ID}}}
	if fmt.Sprint(res.RunConflicts) != fmt.Sprint(want) {
		t.Fatalf("pull into b: conflicts %+v, want %+v", res.RunConflicts, want)
	}
	if got := runs(t, b.s)["nightly"]; got != mb.ID {
		t.Fatalf("b's nightly = %s, want its own %s", got, mb.ID)
	}
	if !reachableFromMain(t, b.path(), ma.ID) || !reachableFromMain(t, b.path(), mb.ID) {
		t.Fatal("b: both manifests must be reachable from main")
	}
	// Conflict refs are never shared (issue 12.7): b's run stays local, and
	// so does b's journal, which records it, until b renames it.
	pr := mustPush(t, b, "origin")
	if fmt.Sprint(pr.Conflicts) != fmt.Sprint([]RunRef{{RunID: "nightly", Manifest: mb.ID}}) {
		t.Fatalf("push from b: conflicts %+v", pr.Conflicts)
	}
	if len(pr.Warnings) != 1 || !strings.Contains(pr.Warnings[0], "refs/heads/main not pushed") {
		t.Fatalf("push from b: warnings %q", pr.Warnings)
	}
	if refs := git(t, dir, "for-each-ref", "refs/tags/readproof/conflicts/"); refs != "" {
		t.Fatalf("server holds conflict refs: %s", refs)
	}
	if got := git(t, dir, "rev-parse", "refs/tags/readproof/runs/nightly"); got != ma.ID {
		t.Fatalf("server: nightly moved to %s; the first push must stay", got)
	}
	if reachableFromMain(t, dir, mb.ID) {
		t.Fatal("server: the journal records b's clashing run before its rename")
	}
	if res = mustPull(t, a, "origin"); len(res.RunConflicts) != 0 {
		t.Fatalf("pull into a: conflicts %+v, want none", res.RunConflicts)
	}
	// A journal that records the clash anyway (pushed with plain git) makes
	// every copy keep the other manifest as a local conflict ref.
	git(t, b.path(), "push", "--quiet", dir, "refs/heads/main:refs/heads/main")
	res = mustPull(t, a, "origin")
	want = []RunConflict{{RunID: "nightly", Local: ma.ID, Others: []string{mb.ID}}}
	if fmt.Sprint(res.RunConflicts) != fmt.Sprint(want) {
		t.Fatalf("pull into a: conflicts %+v, want %+v", res.RunConflicts, want)
	}
	if got := git(t, a.path(), "rev-parse", store.ConflictRunsPrefix+"nightly/"+mb.ID); got != mb.ID {
		t.Fatalf("a: conflict ref from the journal = %q", got)
	}
	if !reachableFromMain(t, a.path(), mb.ID) {
		t.Fatal("a: b's manifest must arrive with the journal")
	}
	c0 := filepath.Join(t.TempDir(), "c0")
	cres, err := Clone(context.Background(), dir, c0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(cres.RunConflicts) != fmt.Sprint(want) {
		t.Fatalf("clone: conflicts %+v, want %+v", cres.RunConflicts, want)
	}
	// Both manifests replay from each store.
	for _, p := range []*project{a, b} {
		for _, m := range []string{ma.ID, mb.ID} {
			if _, err := p.s.Replay(m); err != nil {
				t.Fatalf("replay %s in %s: %v", m, p.dir, err)
			}
		}
	}

	// b renames its own run; the other manifest takes the name, and b's
	// conflict ref is gone where it was created.
	rn, err := RenameRun(b.s, "nightly", "nightly-b", "", b.clock())
	if err != nil {
		t.Fatal(err)
	}
	if rn.Manifest != mb.ID || rn.Promoted != ma.ID {
		t.Fatalf("rename: %+v", rn)
	}
	if r := runs(t, b.s); r["nightly-b"] != mb.ID || r["nightly"] != ma.ID {
		t.Fatalf("b's runs after rename: %v", r)
	}
	if refs := git(t, b.path(), "for-each-ref", store.ConflictRunsPrefix); refs != "" {
		t.Fatalf("b keeps settled conflict refs: %s", refs)
	}
	if pr := mustPush(t, b, "origin"); len(pr.Conflicts) != 0 || len(pr.Runs) != 1 {
		t.Fatalf("push after rename: %+v", pr)
	}
	res = mustPull(t, a, "origin")
	if r := runs(t, a.s); r["nightly-b"] != mb.ID || r["nightly"] != ma.ID || len(res.RunConflicts) != 0 {
		t.Fatalf("a's runs: %v, conflicts %+v", r, res.RunConflicts)
	}
	if refs := git(t, a.path(), "for-each-ref", store.ConflictRunsPrefix); refs != "" {
		t.Fatalf("a keeps a settled conflict ref: %s", refs)
	}
	for _, p := range []*project{a, b} {
		if rep, _ := Conflicts(p.s); !rep.Empty() {
			t.Fatalf("%s: %+v", p.dir, rep)
		}
	}

	// A remote written by an older version holds a conflict ref: a pull
	// ignores it (it is nobody's record), and the clone does not copy it.
	git(t, dir, "update-ref", store.ConflictRunsPrefix+"nightly/"+mb.ID, mb.ID)
	if res := mustPull(t, a, "origin"); len(res.RunConflicts) != 0 {
		t.Fatalf("legacy conflict ref adopted: %+v", res.RunConflicts)
	}
	if refs := git(t, a.path(), "for-each-ref", "refs/tags/readproof/conflicts/"); refs != "" {
		t.Fatalf("a adopted a legacy conflict ref: %s", refs)
	}
	c := filepath.Join(t.TempDir(), "c")
	if _, err := Clone(context.Background(), dir, c, Options{}); err != nil {
		t.Fatal(err)
	}
	if refs := git(t, c, "for-each-ref", "refs/tags/readproof/conflicts/"); refs != "" {
		t.Fatalf("the clone copied a legacy conflict ref: %s", refs)
	}
	gitstore.Fsck(t, a.path())
	gitstore.Fsck(t, b.path())
}

// TestRenameRunConflictManifest renames the other side's manifest instead:
// the local run keeps its name.
func TestRenameRunConflictManifest(t *testing.T) {
	t.Parallel()
	_, _, b, ma, mb := runIDConflict(t)
	if _, err := RenameRun(b.s, "x", "x", "", b.clock()); err == nil {
		t.Fatal("rename to the same id succeeded")
	}
	if _, err := RenameRun(b.s, "x", "y", strings.Repeat("ab", 20), b.clock()); !errors.Is(err, ErrNoConflict) {
		t.Fatalf("rename with an unknown manifest: %v", err)
	}
	if _, err := RenameRun(b.s, "x", "x-from-a", ma.ID, b.clock()); err != nil {
		t.Fatal(err)
	}
	if r := runs(t, b.s); r["x"] != mb.ID || r["x-from-a"] != ma.ID {
		t.Fatalf("b's runs: %v", r)
	}
	if rep, _ := Conflicts(b.s); !rep.Empty() {
		t.Fatalf("b: %+v", rep)
	}
	// Renaming onto an id that names another manifest is refused.
	b.run(t, "z", "doc")
	if _, err := RenameRun(b.s, "x", "z", "", b.clock()); !errors.Is(err, ErrRunExists) {
		t.Fatalf("rename onto an existing run: %v", err)
	}
}

// TestTagConflict: a tag moved on both sides is reported, the local value
// stays, the remote value is kept and inspectable, push leaves the tag out,
// and resolving it either way converges both stores.
func TestTagConflict(t *testing.T) {
	t.Parallel()
	// Both cases start from a and b having moved prod apart, a's move
	// pushed: made once and copied (server and both projects).
	dir0 := bareServer(t, t.TempDir(), "shared.git")
	a0 := newProject(t, map[string]string{"doc": "v1\n"})
	addRemote(t, a0, "origin", dir0)
	a0.run(t, "base", "doc")
	a0.tag(t, "doc", "prod")
	mustPush(t, a0, "origin")
	b0 := newProject(t, map[string]string{"doc": "v1\n"})
	addRemote(t, b0, "origin", dir0)
	mustPull(t, b0, "origin")

	a0.write(t, "doc", "v2 from a\n")
	a0.run(t, "a-2", "doc")
	ta := a0.tag(t, "doc", "prod")
	mustPush(t, a0, "origin")
	b0.write(t, "doc", "v2 from b\n")
	b0.run(t, "b-2", "doc")
	tb := b0.tag(t, "doc", "prod")
	for _, take := range []string{TakeRemote, TakeLocal} {
		t.Run(take, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "shared.git")
			if err := testproc.CopyTree(dir0, dir); err != nil {
				t.Fatal(err)
			}
			a := a0.copyProject(t, dir0, dir)
			b := b0.copyProject(t, dir0, dir)

			res := mustPull(t, b, "origin")
			if len(res.TagConflicts) != 1 {
				t.Fatalf("pull: tag conflicts %+v", res.TagConflicts)
			}
			tc := res.TagConflicts[0]
			if tc.URI != "readproof://demo/doc" || tc.Tag != "prod" || tc.Local.Snapshot != tb.Snapshot || tc.Remote.Snapshot != ta.Snapshot {
				t.Fatalf("conflict: %+v local %+v remote %+v", tc, tc.Local, tc.Remote)
			}
			if st, _ := b.s.Tag(uri(t, "doc"), "prod"); st.Snapshot != tb.Snapshot {
				t.Fatalf("the local value must stay: %s", st.Snapshot)
			}
			rep, err := Conflicts(b.s)
			if err != nil || len(rep.Tags) != 1 || rep.Tags[0].Remote.Snapshot != ta.Snapshot {
				t.Fatalf("Conflicts: %+v %v", rep, err)
			}
			hist, err := ConflictTagHistory(b.s, uri(t, "doc"), "prod")
			if err != nil || len(hist) != 2 || hist[0].Snapshot != ta.Snapshot {
				t.Fatalf("remote history: %+v %v", hist, err)
			}
			// A second pull reports nothing new and changes nothing.
			if res := mustPull(t, b, "origin"); len(res.TagConflicts) != 0 || !res.UpToDate {
				t.Fatalf("second pull: %+v", res)
			}
			// Push sends everything else and leaves the tag out.
			pr := mustPush(t, b, "origin")
			if len(pr.Skipped) != 1 || pr.Skipped[0] != "readproof://demo/doc@prod" {
				t.Fatalf("push with a tag conflict: %+v", pr)
			}
			if got := git(t, dir, "rev-parse", "refs/heads/readproof/tags/demo/doc/prod"); got != ta.Commit {
				t.Fatalf("server tag moved to %s", got)
			}

			resolved, err := ResolveTag(b.s, uri(t, "doc"), "prod", take, b.clock())
			if err != nil {
				t.Fatal(err)
			}
			wantSnap := ta.Snapshot
			if take == TakeLocal {
				wantSnap = tb.Snapshot
			}
			if resolved.Snapshot != wantSnap {
				t.Fatalf("resolved to %s, want %s", resolved.Snapshot, wantSnap)
			}
			if _, err := ResolveTag(b.s, uri(t, "doc"), "prod", take, b.clock()); !errors.Is(err, ErrNoConflict) {
				t.Fatalf("second resolve: %v", err)
			}
			h, err := b.s.TagHistory(uri(t, "doc"), "prod")
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, m := range h {
				seen[m.Commit] = true
			}
			if !seen[ta.Commit] || !seen[tb.Commit] || h[0].Snapshot != wantSnap {
				t.Fatalf("tag history after resolve lacks a side: %+v", h)
			}
			// the move ResolveTag returns is named as the history names
			// it from the commit it wrote: the one vocabulary, the store's
			if resolved.Action != store.ActionResolve || h[0].Action != resolved.Action || h[0].Commit != resolved.Commit {
				t.Fatalf("resolved move's action %q, history's %q (commit %s, history's %s): want both %q", resolved.Action, h[0].Action, resolved.Commit, h[0].Commit, store.ActionResolve)
			}
			if pr := mustPush(t, b, "origin"); len(pr.Skipped) != 0 {
				t.Fatalf("push after resolve: %+v", pr)
			}
			res = mustPull(t, a, "origin")
			if len(res.TagConflicts) != 0 {
				t.Fatalf("a got a conflict after b resolved: %+v", res.TagConflicts)
			}
			for _, p := range []*project{a, b} {
				st, err := p.s.Tag(uri(t, "doc"), "prod")
				if err != nil || st.Snapshot != wantSnap {
					t.Fatalf("%s: prod = %+v %v, want %s", p.dir, st, err, wantSnap)
				}
				if rep, _ := Conflicts(p.s); !rep.Empty() {
					t.Fatalf("%s: conflicts left: %+v", p.dir, rep)
				}
				replayAll(t, p.s)
				gitstore.Fsck(t, p.path())
			}
		})
	}
}

// TestResourceMerge: a resource observed on both sides gets a merge commit
// whose current observation is the newest one, and history lists every
// observation of both sides once.
func TestResourceMerge(t *testing.T) {
	t.Parallel()
	dir := bareServer(t, t.TempDir(), "shared.git")
	a := newProject(t, map[string]string{"doc": "v1\n"})
	addRemote(t, a, "origin", dir)
	a.run(t, "one", "doc")
	mustPush(t, a, "origin")
	b := newProject(t, map[string]string{"doc": "v1\n"})
	b.now = a.now.Add(10 * 60e9) // b's clock is ten minutes ahead
	addRemote(t, b, "origin", dir)
	mustPull(t, b, "origin")
	a.write(t, "doc", "older change on a\n")
	a.run(t, "two", "doc")
	b.write(t, "doc", "newer change on b\n")
	mb := b.run(t, "three", "doc")
	mustPush(t, a, "origin")
	res := mustPull(t, b, "origin")
	if len(res.Merged) != 1 || res.Merged[0] != "readproof://demo/doc" {
		t.Fatalf("pull: %+v", res)
	}
	mustPush(t, b, "origin")
	res = mustPull(t, a, "origin")
	if len(res.Resources) != 1 || len(res.Merged) != 0 {
		t.Fatalf("pull into a: %+v", res)
	}
	for _, p := range []*project{a, b} {
		in, err := p.s.Inspect("readproof://demo/doc")
		if err != nil {
			t.Fatal(err)
		}
		if in.Current.Snapshot != mb.Entries[0].Snapshot {
			t.Fatalf("%s: current = %s, want b's newer %s", p.dir, in.Current.Snapshot, mb.Entries[0].Snapshot)
		}
		h, err := p.s.History(uri(t, "doc"))
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, s := range h {
			total += s.Observations
		}
		if len(h) != 3 || total != 3 {
			t.Fatalf("%s: history %d snapshots, %d observations; want 3 and 3 (a merge is no observation): %+v", p.dir, len(h), total, h)
		}
	}
	tip := git(t, a.path(), "rev-parse", "refs/heads/readproof/resources/demo/doc")
	if parents := strings.Fields(git(t, a.path(), "rev-list", "--parents", "-n1", tip)); len(parents) != 3 {
		t.Fatalf("resource tip %s is not a merge: %v", tip, parents)
	}
}

// TestRemotes: remotes live in the store's git config.
func TestRemotes(t *testing.T) {
	ctx := context.Background()
	a := newProject(t, map[string]string{"doc": "x\n"})
	addRemote(t, a, "origin", "/srv/shared.git")
	// a password is refused (it would be kept in the config); a lone
	// user part, which may be a token, is kept and never shown
	if err := AddRemote(ctx, a.s, "backup", "https://user:s3cret@example.invalid/r.git"); err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(hint.Of(err), "s3cret") {
		t.Fatalf("a URL with a password: %v (hint: %s)", err, hint.Of(err))
	}
	addRemote(t, a, "backup", "https://s3cret@example.invalid/r.git")
	addRemote(t, a, "scp", "git@example.invalid:team/r.git")
	t.Chdir(a.dir)
	addRemote(t, a, "rel", "../x/r.git")
	if err := AddRemote(ctx, a.s, "origin", "/elsewhere"); !errors.Is(err, ErrRemoteExists) {
		t.Fatalf("duplicate add: %v", err)
	}
	for _, bad := range []string{"", "-x", "a b", "a/b", "..", "x.lock"} {
		if err := AddRemote(ctx, a.s, bad, "/x"); err == nil {
			t.Errorf("remote name %q accepted", bad)
		}
	}
	if err := AddRemote(ctx, a.s, "dash", "--upload-pack=evil"); err == nil {
		t.Error("an option-looking URL was accepted")
	}
	list, err := ListRemotes(ctx, a.s)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"backup": "https://s3cret@example.invalid/r.git", "origin": "/srv/shared.git",
		"rel": filepath.Join(filepath.Dir(a.dir), "x", "r.git"), "scp": "git@example.invalid:team/r.git"}
	if len(list) != 4 || list[0].Name != "backup" {
		t.Fatalf("list: %+v", list)
	}
	for _, r := range list {
		if want[r.Name] != r.URL {
			t.Errorf("remote %s: URL %q, want %q", r.Name, r.URL, want[r.Name])
		}
	}
	if d := list[0].DisplayURL(); strings.Contains(d, "s3cret") || !strings.Contains(d, "example.invalid") {
		t.Fatalf("display URL %q", d)
	}
	out := git(t, a.path(), "remote", "-v")
	if !strings.Contains(out, "origin\t/srv/shared.git (fetch)") {
		t.Fatalf("git remote -v:\n%s", out)
	}
	// Errors never carry the password.
	_, err = Pull(ctx, a.s, "backup", Options{})
	if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(hint.Of(err), "s3cret") {
		t.Fatalf("pull from an unreachable remote: %v", err)
	}
	if err := RemoveRemote(ctx, a.s, "backup"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveRemote(ctx, a.s, "backup"); !errors.Is(err, ErrNoRemote) {
		t.Fatalf("second remove: %v", err)
	}
	if _, err := Pull(ctx, a.s, "nowhere", Options{}); !errors.Is(err, ErrNoRemote) || !strings.Contains(hint.Of(err), "remote add") {
		t.Fatalf("pull from an unknown remote: %v", err)
	}
}

// TestRemoveRemoteDropsTracking: removing a remote drops its tracking refs
// and nothing it adopted.
func TestRemoveRemoteDropsTracking(t *testing.T) {
	t.Parallel()
	dir := bareServer(t, t.TempDir(), "shared.git")
	a := newProject(t, map[string]string{"doc": "x\n"})
	a.run(t, "r1", "doc")
	addRemote(t, a, "origin", dir)
	mustPush(t, a, "origin")
	b := newProject(t, map[string]string{"doc": "y\n"})
	addRemote(t, b, "origin", dir)
	mustPull(t, b, "origin")
	if err := RemoveRemote(context.Background(), b.s, "origin"); err != nil {
		t.Fatal(err)
	}
	if out := git(t, b.path(), "for-each-ref", RemotesPrefix); out != "" {
		t.Fatalf("tracking refs left: %s", out)
	}
	if _, ok := runs(t, b.s)["r1"]; !ok {
		t.Fatal("removing the remote lost an adopted run")
	}
}

// TestPushManyRefs exercises the glob refspecs a large push uses, and the
// explicit ones it falls back to when a run id is in conflict or a tag is
// skipped.
func TestPushManyRefs(t *testing.T) {
	t.Parallel()
	dir := bareServer(t, t.TempDir(), "shared.git")
	docs := map[string]string{}
	var names []string
	for i := 0; i < 20; i++ {
		n := fmt.Sprintf("d%02d", i)
		docs[n] = "document " + n + "\n"
		names = append(names, n)
	}
	a := newProject(t, docs)
	b := newProject(t, map[string]string{"d00": "b's own d00\n"})
	addRemote(t, a, "origin", dir)
	addRemote(t, b, "origin", dir)
	for i := 0; i < 20; i++ {
		a.run(t, fmt.Sprintf("a-%02d", i), names[i])
		a.tag(t, names[i], "prod")
	}
	pr := mustPush(t, a, "origin")
	if len(pr.Runs) != 20 || pr.Refs != 20+20+20+1 {
		t.Fatalf("push: %d runs, %d refs", len(pr.Runs), pr.Refs)
	}
	if n := len(strings.Fields(git(t, dir, "for-each-ref", "--format=%(refname)", "refs/tags/readproof/runs/"))); n != 20 {
		t.Fatalf("server has %d runs", n)
	}
	if n := len(strings.Fields(git(t, dir, "for-each-ref", "--format=%(refname)", "refs/heads/readproof/tags/"))); n != 20 {
		t.Fatalf("server has %d tags", n)
	}
	// b: 20 runs of its own, one with an id a used.
	for i := 0; i < 19; i++ {
		b.run(t, fmt.Sprintf("b-%02d", i), "d00")
	}
	mb := b.run(t, "a-00", "d00")
	res := mustPull(t, b, "origin")
	if len(res.NewRuns) != 19 || len(res.RunConflicts) != 1 {
		t.Fatalf("pull: %d new runs, conflicts %+v", len(res.NewRuns), res.RunConflicts)
	}
	pr = mustPush(t, b, "origin")
	if len(pr.Runs) != 19 || len(pr.Conflicts) != 1 || pr.Conflicts[0].Manifest != mb.ID {
		t.Fatalf("push with a conflict: %+v", pr)
	}
	if refs := git(t, dir, "for-each-ref", store.ConflictRunsPrefix); refs != "" {
		t.Fatalf("server holds conflict refs: %s", refs)
	}
	// More runs later: a-00 still differs on the remote, and the push must
	// not send b's a-00 as a run.
	for i := 19; i < 40; i++ {
		b.run(t, fmt.Sprintf("b-%02d", i), "d00")
	}
	if pr := mustPush(t, b, "origin"); len(pr.Runs) != 21 || len(pr.Conflicts) != 1 {
		t.Fatalf("second push: %d runs, conflicts %+v", len(pr.Runs), pr.Conflicts)
	}
	mustPull(t, a, "origin")
	ra, rb := runs(t, a.s), runs(t, b.s)
	if rb["a-00"] != mb.ID || ra["a-00"] == mb.ID {
		t.Fatalf("each store keeps its own a-00: a %s, b %s", ra["a-00"], rb["a-00"])
	}
	delete(ra, "a-00")
	delete(rb, "a-00")
	if len(ra) != 59 || !maps.Equal(ra, rb) {
		t.Fatalf("runs: a %d, b %d", len(ra), len(rb))
	}
	replayAll(t, a.s)
	replayAll(t, b.s)
	gitstore.Fsck(t, dir)
}

// TestHookEnvironment: run from a git hook, readproof inherits GIT_DIR and
// friends pointing at the project repository; sharing still works on the
// store and leaves that repository alone.
func TestHookEnvironment(t *testing.T) {
	dir := bareServer(t, t.TempDir(), "shared.git")
	project := t.TempDir()
	git(t, "", "init", "--quiet", project)
	a := newProject(t, map[string]string{"doc": "x\n"})
	a.run(t, "r1", "doc")
	t.Setenv("GIT_DIR", filepath.Join(project, ".git"))
	t.Setenv("GIT_WORK_TREE", project)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(project, ".git", "index"))
	t.Setenv("GIT_OBJECT_DIRECTORY", filepath.Join(project, ".git", "objects"))
	addRemote(t, a, "origin", dir)
	mustPush(t, a, "origin")
	if got := runs(t, a.s)["r1"]; git(t, dir, "rev-parse", "refs/tags/readproof/runs/r1") != got {
		t.Fatal("the push did not reach the server")
	}
	b := newProject(t, map[string]string{"other": "y\n"})
	addRemote(t, b, "origin", dir)
	mustPull(t, b, "origin")
	replayAll(t, b.s)
	if out := git(t, filepath.Join(project, ".git"), "count-objects"); !strings.HasPrefix(out, "0 objects") {
		t.Fatalf("objects were written into the project repository: %s", out)
	}
	cfg, err := os.ReadFile(filepath.Join(project, ".git", "config"))
	if err != nil || strings.Contains(string(cfg), "remote") {
		t.Fatalf("the project repository was changed: %s %v", cfg, err)
	}
}

// TestAllRefsSameAsGit: the test helper allRefs lists what git
// for-each-ref lists, for stores and servers with loose and packed refs,
// a symbolic ref and a lock file left behind.
func TestAllRefsSameAsGit(t *testing.T) {
	t.Parallel()
	dir := bareServer(t, t.TempDir(), "shared.git")
	a := newProject(t, map[string]string{"doc": "v1\n"})
	addRemote(t, a, "origin", dir)
	a.run(t, "r1", "doc")
	a.tag(t, "doc", "prod")
	mustPush(t, a, "origin")
	b := newProject(t, map[string]string{"other": "o\n"})
	addRemote(t, b, "origin", dir)
	mustPull(t, b, "origin")
	b.run(t, "r2", "other")
	compare := func(step string) {
		t.Helper()
		for _, d := range []string{a.path(), b.path(), dir} {
			if got, want := allRefs(t, d), gitAllRefs(t, d); got != want {
				t.Fatalf("%s, %s:\nallRefs:\n%s\ngit for-each-ref:\n%s", step, d, got, want)
			}
		}
	}
	compare("loose")
	git(t, dir, "pack-refs", "--all")
	git(t, b.path(), "pack-refs", "--all")
	git(t, b.path(), "update-ref", store.RunsPrefix+"loose-after-pack", git(t, b.path(), "rev-parse", store.RunsPrefix+"r2"))
	// a loose ref over a packed one of the same name wins
	git(t, b.path(), "update-ref", store.RunsPrefix+"r2", git(t, b.path(), "rev-parse", store.RunsPrefix+"r1"))
	compare("packed")
	git(t, dir, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
	writeFile(t, filepath.Join(dir, "refs", "heads", "main.lock"), "")
	compare("symbolic and lock")
}
