//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRemoteHugeTagMoveMemory (Linux, as TestRemoteHugeObjectMemory): a
// remote whose tag chain ends in a move to 40 MiB of zeros (40 KiB on
// disk) under the real document's content hash is refused by pull and
// clone by the blob's hash, and neither holds the blob whole: the
// snapshot is hashed as a stream. Before session 24 both read it whole to
// hash it (a tag move records no size to refuse it by).
func TestRemoteHugeTagMoveMemory(t *testing.T) {
	t.Parallel()
	requireGit(t)
	dir, uris := project(t, 1, 64)
	mustRP(t, dir, "run", "--id", "r1", uris[0])
	mustRP(t, dir, "tag", "set", uris[0], "prod")
	src := filepath.Join(dir, ".readproof")
	pulled := filepath.Join(t.TempDir(), "pulled")
	mustRP(t, dir, "clone", src, pulled)

	const size = 40 << 20
	git := func(stdin string, args ...string) string {
		cmd := exec.Command("git", append([]string{"--git-dir", src}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	zeros := filepath.Join(t.TempDir(), "zeros")
	if err := os.WriteFile(zeros, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(zeros, size); err != nil {
		t.Fatal(err)
	}
	blob := git("", "hash-object", "-w", "--", zeros)
	ref := git("", "for-each-ref", "--format=%(refname)", "refs/heads/readproof/tags/")
	if ref == "" || strings.Contains(ref, "\n") {
		t.Fatalf("want one tag chain, got %q", ref)
	}
	tip := git("", "rev-parse", ref)
	var tj map[string]any
	if err := json.Unmarshal([]byte(git("", "cat-file", "blob", tip+":tag.json")), &tj); err != nil {
		t.Fatal(err)
	}
	tj["snapshot"] = blob // the content hash stays the real document's
	data, _ := json.MarshalIndent(tj, "", "  ")
	tjBlob := git(string(data)+"\n", "hash-object", "-w", "--stdin")
	tree := git("100644 blob "+blob+"\tcontent\n100644 blob "+tjBlob+"\ttag.json\n", "mktree")
	move := git("", "-c", "user.name=x", "-c", "user.email=x@example.com", "commit-tree", "-p", tip, "-m", "tag", tree)
	git("", "update-ref", ref, move, tip)

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"pull", []string{"--store", pulled, "pull"}},
		{"clone", []string{"clone", src, filepath.Join(t.TempDir(), "cloned")}},
	} {
		code, out, stderr := runPeakRSS(dir, tc.args)
		if code != 3 || !strings.Contains(stderr, "snapshot "+blob+" hashes to") {
			t.Fatalf("%s exited %d, want 3 with the move refused by its hash\n%s%s", tc.name, code, out, stderr)
		}
		peak := peakOf(t, tc.name, stderr)
		t.Logf("%s: peak RSS %d MiB", tc.name, peak>>20)
		if peak > size*3/4 {
			t.Errorf("%s peaked at %d MiB with a tag move to %d MiB on the remote: the snapshot was held whole", tc.name, peak>>20, size>>20)
		}
	}
}
