package gitstore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/hint"
)

func newTransport(t *testing.T) (Store, *Transport) {
	t.Helper()
	// TestMain set these for the whole test process.
	if os.Getenv("GIT_CONFIG_NOSYSTEM") != "1" || os.Getenv("GIT_CONFIG_GLOBAL") == "" {
		t.Fatal("GIT_CONFIG_NOSYSTEM and GIT_CONFIG_GLOBAL are not set: run the tests through TestMain")
	}
	s := NewTestStore(t)
	tr, err := NewTransport(s.Path(), TransportOptions{})
	if err != nil {
		t.Skip(err)
	}
	return s, tr
}

func TestTransportRemotes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, tr := newTransport(t)
	if list, err := tr.Remotes(ctx); err != nil || len(list) != 0 {
		t.Fatalf("no remotes yet: %v %v", list, err)
	}
	spec := "+refs/heads/*:refs/mirror/o/*"
	if err := tr.AddRemote(ctx, "o", "/srv/a.git", []string{spec}); err != nil {
		t.Fatal(err)
	}
	if err := tr.AddRemote(ctx, "o", "/srv/b.git", nil); !errors.Is(err, ErrRemoteExists) {
		t.Fatalf("second add: %v", err)
	}
	for _, bad := range []string{"-x", "", "a\nb"} {
		if err := tr.AddRemote(ctx, "p", bad, nil); err == nil {
			t.Errorf("URL %q accepted", bad)
		}
	}
	if got := git(t, s.Path(), "config", "--get-all", "remote.o.fetch"); got != spec {
		t.Fatalf("fetch refspecs = %q", got)
	}
	if got := git(t, s.Path(), "config", "--get", "remote.o.tagOpt"); got != "--no-tags" {
		t.Fatalf("tagOpt = %q", got)
	}
	if u, err := tr.RemoteURL(ctx, "o"); err != nil || u != "/srv/a.git" {
		t.Fatalf("RemoteURL = %q, %v", u, err)
	}
	git(t, s.Path(), "config", "remote.o.pushurl", "gh:push.git")
	git(t, s.Path(), "config", "url.ssh://git@example.invalid/.insteadOf", "gh:")
	if urls, err := tr.PushURLs(ctx, "o"); err != nil || len(urls) != 1 || urls[0] != "ssh://git@example.invalid/push.git" {
		t.Fatalf("PushURLs = %v, %v", urls, err)
	}
	if _, err := tr.RemoteURL(ctx, "zz"); !errors.Is(err, ErrNoRemote) {
		t.Fatalf("unknown remote: %v", err)
	}
	if _, err := tr.PushURLs(ctx, "zz"); !errors.Is(err, ErrNoRemote) {
		t.Fatalf("push URLs of an unknown remote: %v", err)
	}
	if err := tr.RemoveRemote(ctx, "o"); err != nil {
		t.Fatal(err)
	}
	if err := tr.RemoveRemote(ctx, "o"); !errors.Is(err, ErrNoRemote) {
		t.Fatalf("second remove: %v", err)
	}
}

// TestTransportPushAtomic: one refused ref refuses the whole push, and a
// forced refspec is never sent.
func TestTransportPushAtomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, tr := newTransport(t)
	remote := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, remote, "--quiet", "--bare")
	a := mkCommit(t, s, "a")
	b := mkCommit(t, s, "b")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Push(ctx, remote, []string{string(a) + ":refs/tags/t"}); err != nil {
		t.Fatal(err)
	}
	st, err := tr.Push(ctx, remote, []string{string(b) + ":refs/heads/new", string(b) + ":refs/tags/t"})
	if !errors.Is(err, ErrRejected) {
		t.Fatalf("push over an existing tag: %v", err)
	}
	rejected := 0
	for _, x := range st {
		if x.Rejected() {
			rejected++
		}
	}
	if rejected == 0 {
		t.Fatalf("statuses %+v name no rejection", st)
	}
	if out := git(t, remote, "for-each-ref", "--format=%(refname)"); out != "refs/tags/t" {
		t.Fatalf("an atomic push that failed changed refs: %q", out)
	}
	if _, err := tr.Push(ctx, remote, []string{"+" + string(b) + ":refs/tags/t"}); err == nil || errors.Is(err, ErrRejected) {
		t.Fatalf("forced refspec: %v", err)
	}
	refs, err := tr.LsRemote(ctx, remote, "refs/tags/")
	if err != nil || len(refs) != 1 || refs[0].OID != a {
		t.Fatalf("LsRemote = %+v, %v", refs, err)
	}
}

func TestTransportHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, tr := newTransport(t)
	a := mkCommit(t, s, "a")
	b := mkCommit(t, s, "b", a)
	c := mkCommit(t, s, "c", a)
	m := mkCommit(t, s, "m", b, c)
	if err := s.Sync(); err != nil { // make the objects visible to stock git
		t.Fatal(err)
	}
	for _, tc := range []struct {
		x, y OID
		want bool
	}{{a, m, true}, {b, m, true}, {m, b, false}, {b, c, false}, {a, a, true}} {
		if got, err := tr.IsAncestor(ctx, tc.x, tc.y); err != nil || got != tc.want {
			t.Errorf("IsAncestor(%s, %s) = %v, %v", tc.x[:7], tc.y[:7], got, err)
		}
	}
	list, err := tr.RevList(ctx, []OID{m}, []OID{b})
	if err != nil {
		t.Fatal(err)
	}
	got := map[OID][]OID{}
	for _, x := range list {
		got[x.ID] = x.Parents
	}
	if len(got) != 2 || len(got[m]) != 2 || len(got[c]) != 1 || got[c][0] != a {
		t.Fatalf("RevList(m ^b) = %+v", list)
	}
	if _, err := tr.IsAncestor(ctx, "nothex", m); err == nil {
		t.Fatal("a bad id was accepted")
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://user:tok@example.com/r.git": "https://[REDACTED]@example.com/r.git",
		"https://example.com/r.git":          "https://example.com/r.git",
		"ssh://git@host/r.git":               "ssh://git@host/r.git",
		"ssh://git:pw@host/r.git":            "ssh://[REDACTED]@host/r.git",
		"https://ghp_token@example.com/r":    "https://[REDACTED]@example.com/r",
		"/srv/r.git":                         "/srv/r.git",
		"git@host:r.git":                     "git@host:r.git",
		// one slash: git takes it for host:path, the password is still
		// the user's
		"https:/user:tok@example.com/r.git": "https:/[REDACTED]@example.com/r.git",
		"HTTPS:/ghp_token@example.com/r":    "HTTPS:/[REDACTED]@example.com/r",
		"ssh:/git@host/r.git":               "ssh:/git@host/r.git",
		"git1:/srv/x.git":                   "git1:/srv/x.git",
		"C:/Users/me/r.git":                 "C:/Users/me/r.git",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	msg := "fatal: unable to access 'https://u:p4ss@h/x/': 403\nAuthorization: Bearer abc.def"
	if got := RedactText(msg); strings.Contains(got, "p4ss") || strings.Contains(got, "abc.def") {
		t.Fatalf("RedactText left a secret: %q", got)
	}
}

// TestCheckRemoteNameRedacts: a URL given where a remote name belongs is
// refused without showing its password or token, with a hint to add it as a
// remote.
func TestCheckRemoteNameRedacts(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"https://u:s3cr3t@host/r.git", "https://s3cr3t@host/r.git", "ssh://git:s3cr3t@host/r.git"} {
		err := CheckRemoteName(name)
		if err == nil {
			t.Fatalf("CheckRemoteName(%q) = nil", name)
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("CheckRemoteName(%q) shows the secret: %v", name, err)
		}
		if h := hint.Of(err); !strings.Contains(h, "remote add NAME URL") {
			t.Errorf("CheckRemoteName(%q): hint %q, want one naming `remote add`", name, h)
		}
	}
	if err := CheckRemoteName("bad name"); err == nil || hint.Of(err) == "" {
		t.Errorf("CheckRemoteName(bad name) = %v, want an error with a hint", err)
	}
	if err := CheckRemoteName("origin"); err != nil {
		t.Errorf("CheckRemoteName(origin) = %v", err)
	}
}

// TestCheckRemoteNameShape pins the documented shape
// [A-Za-z0-9][A-Za-z0-9._-]{0,63} at its edges: the length is checked apart
// from the pattern, so 64 characters pass and 65 do not.
func TestCheckRemoteNameShape(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"o": true, "origin": true, "a.b_c-d": true, "9x": true,
		"a" + strings.Repeat("b", 63): true, "a" + strings.Repeat("b", 64): false,
		"": false, "-x": false, ".x": false, "_x": false, "a b": false, "a/b": false, "é": false,
		"a..b": false, "x.": false, "x.lock": false,
	} {
		if err := CheckRemoteName(name); (err == nil) != ok {
			t.Errorf("CheckRemoteName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

// TestTransportIgnoresReplaceRefs: the git that readproof runs judges the
// objects as stored, never the replacements a refs/replace/ ref (planted
// in a store, or in a guarded remote by someone with write access to it)
// would show: the guard's ancestry checks and pull's history walks must not
// see a history that is not there.
func TestTransportIgnoresReplaceRefs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, tr := newTransport(t)
	a := mkCommit(t, s, "a")
	c := mkCommit(t, s, "c")    // no parent
	d := mkCommit(t, s, "d", a) // what a replacement of c would show
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", s.Path(), "update-ref", "refs/replace/"+string(c), string(d)).CombinedOutput()
	if err != nil {
		t.Fatalf("git update-ref: %v: %s", err, out)
	}
	if got, err := tr.IsAncestor(ctx, a, c); err != nil || got {
		t.Errorf("IsAncestor(a, c) = %v, %v with c replaced by a child of a; want false: c has no parent", got, err)
	}
	list, err := tr.RevList(ctx, []OID{c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != c || len(list[0].Parents) != 0 {
		t.Errorf("RevList(c) = %+v, want c alone, without parents", list)
	}
}

// TestTransportIgnoresGrafts: info/grafts (deprecated, but git 2.39 still
// reads it) rewrites parents as a replace ref does; the git readproof runs
// must judge the history as stored.
func TestTransportIgnoresGrafts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, tr := newTransport(t)
	a := mkCommit(t, s, "a")
	c := mkCommit(t, s, "c") // no parent
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.Path(), "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Path(), "info", "grafts"), []byte(string(c)+" "+string(a)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := tr.IsAncestor(ctx, a, c); err != nil || got {
		t.Errorf("IsAncestor(a, c) = %v, %v with info/grafts giving c the parent a; want false: c has no parent", got, err)
	}
	list, err := tr.RevList(ctx, []OID{c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != c || len(list[0].Parents) != 0 {
		t.Errorf("RevList(c) = %+v with info/grafts giving c the parent a, want c alone, without parents", list)
	}
}
