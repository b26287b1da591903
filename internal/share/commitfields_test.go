package share

import (
	"fmt"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
)

// TestCommitFieldsSameAsCommit: commitFields gives the tree, the parents and
// the message g.Commit decodes, and g.Commit's error, for commits git
// writes and for raw commits the fast parse must leave to the decoder
// (written with `git hash-object --literally`): signatures, continuation
// lines, stray spaces, a second tree or parent header, no blank line,
// uppercase ids, CRLF; and for a blob and a missing object.
func TestCommitFieldsSameAsCommit(t *testing.T) {
	t.Parallel()
	needGit(t)
	g := gitstore.NewTestStore(t)
	blob, err := g.PutBlob([]byte("x\n"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := g.PutTree([]gitstore.TreeEntry{{Name: "f", Mode: gitstore.ModeFile, OID: blob}})
	if err != nil {
		t.Fatal(err)
	}
	sig := gitstore.Signature{Name: "a", Email: "a@example.invalid", When: time.Unix(1700000000, 0).UTC()}
	var ids []gitstore.OID
	put := func(c gitstore.Commit) gitstore.OID {
		t.Helper()
		c.Author, c.Committer = sig, sig
		id, err := g.PutCommit(c)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		return id
	}
	p1 := put(gitstore.Commit{Tree: tree, Message: "root\n"})
	p2 := put(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{p1}, Message: "record run r1\n\nmanifest: 1\n"})
	put(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{p1, p2}, Message: "merge journals\n"})
	put(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{p2}, Message: "signed\n",
		Signature: "-----BEGIN PGP SIGNATURE-----\n\nparent " + string(p1) + "\n-----END PGP SIGNATURE-----\n"})
	put(gitstore.Commit{Tree: tree, Message: ""})
	put(gitstore.Commit{Tree: tree, Message: "a\n\n\nb\n\n"})
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	who := "author a <a@example.invalid> 1700000000 +0000\ncommitter a <a@example.invalid> 1700000000 +0000\n"
	raws := []string{
		"tree " + string(tree) + "\n" + who + "\nplain\n",
		"tree " + string(tree) + "\nparent " + string(p1) + "\n" + who + "encoding ISO-8859-1\n\nwith encoding\n",
		"tree " + string(tree) + "\n" + who + "mergetag object " + string(p1) + "\n type commit\n parent " + string(p2) + "\n\nmergetag\n",
		"tree " + string(tree) + "\n" + who + "gpgsig -----BEGIN-----\n \n -----END-----\n\nsig with a blank continuation\n",
		"tree " + string(tree) + "\n" + who + "parent " + string(p1) + "\n\nparent after the author\n",
		"tree " + string(tree) + "\n" + who + "tree " + string(p1) + "\n\nsecond tree\n",
		"tree " + string(tree) + "\n" + who + "   \n\nspaces line\n",
		"tree " + string(tree) + "\n" + who + " parent " + string(p2) + "\n\nindented parent\n",
		"tree " + string(tree) + "\n" + who + "no blank line",
		"tree " + strings.ToUpper(string(tree)) + "\n" + who + "\nupper tree\n",
		"tree " + string(tree) + "\nparent " + strings.ToUpper(string(p1)) + "\n" + who + "\nupper parent\n",
		"tree " + string(tree) + "\r\n" + who + "\r\ncrlf\r\n",
		"tree " + string(tree) + " \n" + who + "\ntrailing space\n",
		" tree " + string(tree) + "\n" + who + "\nleading space\n",
		"parent " + string(p1) + "\ntree " + string(tree) + "\n" + who + "\nparent first\n",
		"tree\n" + who + "\nbare tree\n",
		"tree " + string(tree) + "\n" + who + "\n",
	}
	for _, raw := range raws {
		cmd := exec.Command("git", "--git-dir", g.Path(), "hash-object", "-t", "commit", "-w", "--literally", "--stdin")
		cmd.Stdin = strings.NewReader(raw)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("hash-object: %v", err)
		}
		ids = append(ids, gitstore.OID(strings.TrimSpace(string(out))))
	}
	ids = append(ids, blob, tree, gitstore.OID(strings.Repeat("ab", 20)))
	fast := 0
	for i, id := range ids {
		got, gotErr := commitFields(g, id)
		want, wantErr := g.Commit(id)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("object %d %s: error %v, g.Commit %v", i, id, gotErr, wantErr)
		}
		if gotErr != nil {
			continue
		}
		if got.Tree != want.Tree || !reflect.DeepEqual(got.Parents, want.Parents) || got.Message != want.Message {
			t.Fatalf("object %d %s: commitFields %q %v %q; g.Commit %q %v %q", i, id, got.Tree, got.Parents, got.Message, want.Tree, want.Parents, want.Message)
		}
		if _, raw, err := g.RawObject(id); err == nil {
			if _, ok := parseCanonicalCommit(raw); ok {
				fast++
			}
		}
	}
	if fast < 8 {
		t.Fatalf("only %d commits took the fast parse", fast)
	}
}
