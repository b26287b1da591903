package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
)

// TestCallerRecorded: a handle with a caller records it in the manifests it
// commits (run commit and run --id) and the tag moves it makes; a handle
// without one records nothing, so existing records keep their bytes.
func TestCallerRecorded(t *testing.T) {
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": "v1\n", "policies/cached.md": "c\n"})
	ctx := context.Background()
	u, _ := identity.ParseURI("readproof://demo/policies/refunds")

	m, _, err := f.s.RunOnce(ctx, "anon", []string{u.String()})
	if err != nil {
		t.Fatal(err)
	}
	if m.Caller != "" {
		t.Fatalf("caller %q without one set", m.Caller)
	}
	f.s.SetCaller("agent-7")
	if err := f.s.StartRun("r1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Mount(ctx, "r1", u.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.CommitRun("r1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.s.RunOnce(ctx, "r2", []string{u.String()}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SetTag(u, "prod", ""); err != nil {
		t.Fatal(err)
	}
	f.reopen(t, Options{})
	for _, id := range []string{"r1", "r2"} {
		got, err := f.s.Manifest(id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Caller != "agent-7" {
			t.Errorf("manifest of %s: caller %q", id, got.Caller)
		}
	}
	if got, _ := f.s.Manifest("anon"); got.Caller != "" {
		t.Errorf("anonymous run: caller %q", got.Caller)
	}
	if _, err := f.s.DeleteTag(u, "prod"); err != nil {
		t.Fatal(err)
	}
	h, err := f.s.TagHistory(u, "prod")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0].Caller != "" || h[1].Caller != "agent-7" {
		t.Fatalf("tag history callers: %+v", h)
	}
}

// TestRunBelongsToItsCaller: a run started by one caller takes mounts, its
// commit and its abort from no other caller, refused before anything is
// fetched or written, so its manifest's one caller is the caller of every
// entry. The store's own user (no caller: the command line) may act on any
// run, and a run it commits names the caller that started it.
func TestRunBelongsToItsCaller(t *testing.T) {
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": "v1\n", "policies/cached.md": "c\n"})
	ctx := context.Background()
	u, _ := identity.ParseURI("readproof://demo/policies/refunds")
	c, _ := identity.ParseURI("readproof://demo/policies/cached")

	f.s.SetCaller("alice")
	if err := f.s.StartRun("r1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Mount(ctx, "r1", u.String()); err != nil {
		t.Fatal(err)
	}
	f.s.SetCaller("bob")
	before, _ := f.s.git.Refs("refs/")
	if _, err := f.s.Mount(ctx, "r1", c.String()); !errors.Is(err, ErrRunCaller) || !strings.Contains(err.Error(), `started by caller "alice"`) {
		t.Fatalf("mount into alice's run as bob: %v; want ErrRunCaller naming alice", err)
	}
	if _, err := f.s.MountMany(ctx, "r1", []string{c.String()}, nil); !errors.Is(err, ErrRunCaller) {
		t.Fatalf("mount of many into alice's run as bob: %v; want ErrRunCaller", err)
	}
	if _, err := f.s.CommitRun("r1"); !errors.Is(err, ErrRunCaller) {
		t.Fatalf("commit of alice's run as bob: %v; want ErrRunCaller", err)
	}
	if _, err := f.s.AbortRun("r1"); !errors.Is(err, ErrRunCaller) {
		t.Fatalf("abort of alice's run as bob: %v; want ErrRunCaller", err)
	}
	if after, _ := f.s.git.Refs("refs/"); !slices.Equal(before, after) {
		t.Fatalf("bob's refused calls moved refs:\n%v\n%v", before, after)
	}
	// the store's own user mounts and commits: the manifest names alice
	f.s.SetCaller("")
	if _, err := f.s.Mount(ctx, "r1", c.String()); err != nil {
		t.Fatal(err)
	}
	m, err := f.s.CommitRun("r1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Caller != "alice" || len(m.Entries) != 2 {
		t.Fatalf("manifest caller %q, %d entries; want alice's run of 2", m.Caller, len(m.Entries))
	}
	// a run started without a caller is no caller's to join
	if err := f.s.StartRun("r2"); err != nil {
		t.Fatal(err)
	}
	f.s.SetCaller("alice")
	if _, err := f.s.Mount(ctx, "r2", u.String()); !errors.Is(err, ErrRunCaller) || !strings.Contains(err.Error(), "without a caller") {
		t.Fatalf("mount into a run started without a caller, as alice: %v", err)
	}
	// the store's own user clears a caller's run
	f.s.SetCaller("carol")
	if err := f.s.StartRun("r3"); err != nil {
		t.Fatal(err)
	}
	f.s.SetCaller("")
	if _, err := f.s.AbortRun("r3"); err != nil {
		t.Fatalf("abort of carol's run without a caller: %v", err)
	}
}

// An open run whose run.json names a caller that is no caller's name (a
// newline, a path) does not decode (verify's open-run check says so) and
// is not committed.
func TestOpenRunBadCallerRefused(t *testing.T) {
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": "v1\n", "policies/cached.md": "c\n"})
	c := openRunNaming(t, f, `"alice\nforged: yes"`)
	if _, err := f.s.OpenRunAt(c); err == nil || !strings.Contains(err.Error(), "run.json: invalid name: caller name") {
		t.Fatalf("open run naming a bad caller read as %v; want a refusal naming the caller", err)
	}
	if _, err := f.s.CommitRun("bad"); err == nil || !strings.Contains(err.Error(), "caller name") {
		t.Fatalf("commit of an open run naming a bad caller: %v; want a refusal naming the caller", err)
	}
	if _, err := f.s.Manifest("bad"); err == nil {
		t.Fatal("a manifest was written")
	}
}

// An open run whose run.json names an invalid caller (edited by hand, or
// written by another tool) is still the store's own user's to abort: it is
// refused for commit and mount, and abort is the way to clear it.
func TestOpenRunBadCallerAborted(t *testing.T) {
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": "v1\n"})
	for _, caller := range []string{`"alice\nforged: yes"`, `5`, `"../x"`} {
		openRunNaming(t, f, caller)
		f.s.SetCaller("alice")
		if _, err := f.s.AbortRun("bad"); err == nil {
			t.Fatalf("caller %s: abort by caller alice of a run naming an invalid caller taken", caller)
		}
		f.s.SetCaller("")
		if _, err := f.s.AbortRun("bad"); err != nil {
			t.Fatalf("caller %s: abort of an open run naming an invalid caller: %v", caller, err)
		}
		if open, _ := f.s.ref(openRef("bad")); open != "" {
			t.Fatalf("caller %s: the run is still open", caller)
		}
		// listed as aborted, so that gc drops it in time
		if a, err := f.s.AbortedRuns(); err != nil || len(a) != 1 || a[0].RunID != "bad" {
			t.Fatalf("caller %s: aborted runs %+v, %v; want run bad", caller, a, err)
		}
		// clear the aborted ref for the next round
		refs, _ := f.s.git.Refs(AbortedPrefix)
		for _, r := range refs {
			if err := f.s.git.Update(gitstore.RefUpdate{Name: r.Name, Old: r.OID, New: ""}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The refusal of a run whose run.json names an invalid caller is the
// store's state, not the command's usage: it does not wrap
// identity.ErrInvalid (the command line's exit 2 and "see --help"), and its
// hint is the way out, the run's abort.
func TestOpenRunBadCallerHint(t *testing.T) {
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": "v1\n"})
	openRunNaming(t, f, `"a b"`)
	u, _ := identity.ParseURI("readproof://demo/policies/refunds")
	_, merr := f.s.Mount(context.Background(), "bad", u.String())
	_, cerr := f.s.CommitRun("bad")
	for what, err := range map[string]error{"mount": merr, "commit": cerr} {
		if err == nil || errors.Is(err, identity.ErrInvalid) || !strings.Contains(hint.Of(err), "readproof run abort bad") {
			t.Errorf("%s of a run whose run.json names caller \"a b\": %v (hint %q); want a refusal that is not a usage error, hinting at the abort", what, err, hint.Of(err))
		}
	}
}

// A caller starting a run under the id of another caller's open run is
// refused (ErrRunOpen) with a hint it can follow: not to mount into the
// run and commit it, which would be refused, but to take another id.
func TestStartRunOfAnotherCallersId(t *testing.T) {
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": "v1\n"})
	f.s.SetCaller("alice")
	if err := f.s.StartRun("r1"); err != nil {
		t.Fatal(err)
	}
	err := f.s.StartRun("r1")
	if !errors.Is(err, ErrRunOpen) || !strings.Contains(hint.Of(err), "readproof run commit r1") {
		t.Fatalf("alice starting her own open run again: %v (hint %q); want ErrRunOpen hinting at its commit", err, hint.Of(err))
	}
	for _, caller := range []string{"bob", ""} {
		f.s.SetCaller(caller)
		if caller == "" {
			// the store's own user may act on any run: the usual hint
			err := f.s.StartRun("r1")
			if !errors.Is(err, ErrRunOpen) || !strings.Contains(hint.Of(err), "readproof run commit r1") {
				t.Fatalf("the store's user starting alice's open run: %v (hint %q)", err, hint.Of(err))
			}
			continue
		}
		err := f.s.StartRun("r1")
		if !errors.Is(err, ErrRunOpen) || strings.Contains(hint.Of(err), "run commit") || !strings.Contains(hint.Of(err), "another id") {
			t.Fatalf("bob starting alice's open run r1: %v (hint %q); want ErrRunOpen hinting at another id", err, hint.Of(err))
		}
	}
}

// A run whose run.json names no caller was started from the command line,
// over stdio, or by a readproof before runs recorded their caller (a
// token's run open across the upgrade): the refusal of a caller's mount
// says all three, and that an operator can still finish the run.
func TestRunWithoutCallerRefusal(t *testing.T) {
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": "v1\n"})
	if err := f.s.StartRun("old"); err != nil {
		t.Fatal(err)
	}
	f.s.SetCaller("alice")
	u, _ := identity.ParseURI("readproof://demo/policies/refunds")
	_, err := f.s.Mount(context.Background(), "old", u.String())
	if !errors.Is(err, ErrRunCaller) || !strings.Contains(err.Error(), "before runs recorded their caller") || !strings.Contains(hint.Of(err), "an operator can commit or abort it from the command line") {
		t.Fatalf("alice's mount into a run without a caller: %v (hint %q); want a refusal naming a run started before callers were recorded, and the operator's way out", err, hint.Of(err))
	}
}

// openRunNaming writes an open run "bad" whose run.json names caller, the
// JSON text of the caller field (a value a hand or another tool wrote),
// and returns its commit.
func openRunNaming(t *testing.T, f *fixture, caller string) gitstore.OID {
	t.Helper()
	blob, err := f.s.git.PutBlob([]byte(`{"run_id": "bad", "started_at": "2026-12-05T00:00:00Z", "caller": ` + caller + `}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := f.s.git.PutTree([]gitstore.TreeEntry{{Name: "run.json", Mode: gitstore.ModeFile, OID: blob}})
	if err != nil {
		t.Fatal(err)
	}
	sig := f.s.signature(f.s.now())
	c, err := f.s.git.PutCommit(gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: "start run bad\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.git.Update(gitstore.RefUpdate{Name: openRef("bad"), New: c}); err != nil {
		t.Fatal(err)
	}
	return c
}
