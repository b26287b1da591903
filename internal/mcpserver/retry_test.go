package mcpserver_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/readproof/readproof/identity"
)

// TestRetriedTagSetRecordsOneMove: an agent host that retries
// readproof_tag_set after a timeout (or two clients that set the same tag
// at once) gets the same answer, and the tag's history one move: a set to
// the observation the tag already points at changes nothing. Each retry
// used to record another "move" from the snapshot to itself, so `readproof
// tag revert` then went back to where the tag already was.
func TestRetriedTagSetRecordsOneMove(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	s.ok(t, "readproof_resolve", map[string]any{"uri": refundsURI})
	first := s.ok(t, "readproof_tag_set", map[string]any{"uri": refundsURI, "tag": "prod"})
	again := s.ok(t, "readproof_tag_set", map[string]any{"uri": refundsURI + "@prod"})
	for _, k := range []string{"snapshot", "set_at", "previous_snapshot"} {
		if first[k] != again[k] {
			t.Errorf("retried tag_set: %s %v, first call %v", k, again[k], first[k])
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.ok(t, "readproof_tag_set", map[string]any{"uri": refundsURI, "tag": "both"})
		}()
	}
	wg.Wait()
	st, err := p.opener()()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u, err := identity.ParseURI(refundsURI)
	if err != nil {
		t.Fatal(err)
	}
	for tag, sets := range map[string]int{"prod": 2, "both": 4} {
		hist, err := st.TagHistory(u, tag)
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != 1 {
			t.Errorf("%s set %d times to the same snapshot: %d moves in its history, want 1", tag, sets, len(hist))
		}
	}
}

// TestRetriedTagDeleteSaysDeleted: a retried readproof_tag_delete is a
// clear conflict: the tag was already deleted, when, and where its moves
// are. It used to be "unknown tag", as for a tag that never existed, so
// an agent whose first call timed out could not tell it had succeeded.
func TestRetriedTagDeleteSaysDeleted(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	s.ok(t, "readproof_resolve", map[string]any{"uri": refundsURI})
	s.ok(t, "readproof_tag_set", map[string]any{"uri": refundsURI, "tag": "old"})
	del := s.ok(t, "readproof_tag_delete", map[string]any{"uri": refundsURI + "@old"})
	again := s.fail(t, "readproof_tag_delete", map[string]any{"uri": refundsURI + "@old"})
	mustContain(t, "retried tag_delete", again, "@old", "already deleted at "+str(t, del, "set_at")[:19], "tag history", "hint:")
	// A tag that never existed is still unknown.
	mustContain(t, "tag_delete of a tag never set", s.fail(t, "readproof_tag_delete", map[string]any{"uri": refundsURI + "@never"}), "unknown tag")
}

// TestRetriedRunCommitNamesTheManifest: a retried readproof_run_commit (the
// first answer lost to a timeout) is a conflict that names the manifest the
// first call made and the tool that shows it, so the agent can cite it. The
// hint used to say only to start a new run with another id: redo the work.
func TestRetriedRunCommitNamesTheManifest(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	s.ok(t, "readproof_run_start", map[string]any{"run_id": "r1"})
	s.ok(t, "readproof_run_mount", map[string]any{"run_id": "r1", "uri": refundsURI})
	id := str(t, s.ok(t, "readproof_run_commit", map[string]any{"run_id": "r1"}), "manifest_id")
	again := s.fail(t, "readproof_run_commit", map[string]any{"run_id": "r1"})
	mustContain(t, "retried run_commit", again, "already committed as manifest "+id, "hint:", "the tool readproof_manifest ("+id+")")
	if strings.Count(p.cli(t, "manifest", "r1"), "refunds") != 1 {
		t.Errorf("the retried commit changed the manifest")
	}
}

// TestRetriedMountWithPosition: readproof_run_mount with position (the
// entries mounted so far) is safe to retry: a retry whose first call was
// recorded gets that entry back and records nothing; concurrent retries
// record one; another document at that position, or a position past the
// next, is a conflict naming what to pass. Without position a retried
// mount appended the document again, at the next position, and the
// manifest listed it twice.
func TestRetriedMountWithPosition(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	s.ok(t, "readproof_resolve", map[string]any{"uri": refundsURI})
	s.ok(t, "readproof_tag_set", map[string]any{"uri": refundsURI, "tag": "prod"})
	s.ok(t, "readproof_run_start", map[string]any{"run_id": "m"})
	first := s.ok(t, "readproof_run_mount", map[string]any{"run_id": "m", "uri": refundsURI, "position": 0})
	again := s.ok(t, "readproof_run_mount", map[string]any{"run_id": "m", "uri": refundsURI, "position": 0})
	for _, k := range []string{"position", "snapshot", "content_hash", "content", "observed_at"} {
		if first[k] != again[k] {
			t.Errorf("retried mount: %s %v, first call %v", k, again[k], first[k])
		}
	}
	mustContain(t, "another document at position 0", s.fail(t, "readproof_run_mount", map[string]any{"run_id": "m", "uri": refundsURI + "@prod", "position": 0}),
		"position 0 of run m holds "+refundsURI+",", "hint:", "position 1")
	mustContain(t, "a gap", s.fail(t, "readproof_run_mount", map[string]any{"run_id": "m", "uri": refundsURI, "position": 3}),
		"run m has 1 entry", "hint:", "position 1")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := s.call(t, "readproof_run_mount", map[string]any{"run_id": "m", "uri": refundsURI + "@prod", "position": 1})
			if res.IsError {
				// lost the race to a twin: a retry gets the twin's entry
				mustContain(t, "concurrent mount", text(res), "taken", "retry")
				res = s.call(t, "readproof_run_mount", map[string]any{"run_id": "m", "uri": refundsURI + "@prod", "position": 1})
			}
			if res.IsError || num(t, res.StructuredContent.(map[string]any), "position") != 1 {
				t.Errorf("concurrent mounts at position 1: %s", text(res))
			}
		}()
	}
	wg.Wait()
	if n := num(t, s.ok(t, "readproof_run_commit", map[string]any{"run_id": "m"}), "entries"); n != 2 {
		t.Errorf("after a retried mount and 4 concurrent ones at position 1: %d entries, want 2", n)
	}
}
