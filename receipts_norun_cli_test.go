package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/receipts"
)

// TestReceiptsListShowAgreeOnV1NoRun: `receipts list` and `receipts show`
// read one chain alike for a version 1 receipt of no run (issued before
// session 24): after a commit written with stock git names it again on
// both its chains without adding it, both report it tampered, naming that
// commit, and neither shows a binding (docs/receipts.md, "Storage": a
// binding says which run of its run id a receipt is of). Before, show
// skipped the check for a receipt of no run and called it valid.
func TestReceiptsListShowAgreeOnV1NoRun(t *testing.T) {
	t.Parallel()
	p := newReceiptsProject(t)
	key, err := receipts.LoadKey(p.key)
	if err != nil {
		t.Fatal(err)
	}
	store, err := gitstore.Open(p.store)
	if err != nil {
		t.Fatal(err)
	}
	r, err := receipts.NewIssuer(key, nil).Seal(receipts.Call{Session: "agent", Tool: "x", Args: receipts.ArgvArgs([]string{"x"}), Result: receipts.BytesResult(nil)})
	if err == nil {
		r.Format, r.Bound = receipts.Version, receipts.Binding{}
		r, err = key.Seal(r)
	}
	if err == nil {
		err = receipts.NewLedger(store).Append(r)
	}
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"--git-dir", p.store}, args...)...)
		cmd.Env = append(p.env, "GIT_AUTHOR_NAME=x", "GIT_AUTHOR_EMAIL=x@localhost", "GIT_COMMITTER_NAME=x", "GIT_COMMITTER_EMAIL=x@localhost")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	for _, ref := range []string{receipts.SessionRef("agent"), receipts.IndexRefPrefix + r.ID[len(receipts.IDPrefix):len(receipts.IDPrefix)+1]} {
		tip := git("rev-parse", ref)
		msg := git("log", "-1", "--format=%B", tip)
		cmd := exec.Command("git", "--git-dir", p.store, "commit-tree", "-p", tip, tip+"^{tree}")
		cmd.Env = append(p.env, "GIT_AUTHOR_NAME=x", "GIT_AUTHOR_EMAIL=x@localhost", "GIT_COMMITTER_NAME=x", "GIT_COMMITTER_EMAIL=x@localhost")
		cmd.Stdin = strings.NewReader(msg + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		git("update-ref", ref, strings.TrimSpace(string(out)), tip)
	}
	const why = "names it on its first line but its tree holds it with its parent's bytes"
	type shown struct {
		V       int             `json:"v"`
		Check   string          `json:"check"`
		Detail  string          `json:"detail"`
		Binding json.RawMessage `json:"binding"`
	}
	var listed []shown
	if err := json.Unmarshal(p.must(t, "receipts", "list", "--json", "agent"), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("receipts list --json: %+v, %v", listed, err)
	}
	out, errb, code := p.run(t, nil, "receipts", "show", "--json", r.ID)
	var show shown
	if err := json.Unmarshal(out, &show); err != nil {
		t.Fatalf("receipts show --json: exit %d, %v\n%s", code, err, errb)
	}
	for what, s := range map[string]shown{"list": listed[0], "show": show} {
		if s.V != 1 || s.Check != "tampered" || !strings.Contains(s.Detail, why) || len(s.Binding) != 0 {
			t.Errorf("receipts %s: v %d, check %s, binding %s (%s); want v 1, tampered: %s, no binding", what, s.V, s.Check, s.Binding, s.Detail, why)
		}
	}
	if code != 3 {
		t.Errorf("receipts show of the tampered receipt exited %d, want 3\n%s", code, errb)
	}
}
