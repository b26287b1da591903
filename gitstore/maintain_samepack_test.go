package gitstore

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/testsize"
)

// A pass whose only readable small pack is one an earlier pass wrote (the
// other small packs damaged, or more than the pass's budget) writes that
// pack again, byte for byte, under the same name: it must not then remove
// it as a small pack it packed. Before, the pass removed its own new pack,
// and with it every object of the earlier writes: the ref named commits
// that no pack held.
func TestPassKeepsPackItRewrote(t *testing.T) {
	t.Parallel()
	for _, loose := range []bool{false, true} {
		t.Run(map[bool]string{false: "pack alone", true: "its objects loose too"}[loose], func(t *testing.T) {
			t.Parallel()
			passKeepsPackItRewrote(t, loose)
		})
	}
}

// passKeepsPackItRewrote: with loose, every object of the earlier pass's
// pack is also a loose file, which the pass packs with it: the same
// objects, the same pack.
func passKeepsPackItRewrote(t *testing.T, loose bool) {
	s, dir := passOnlyByTest(t)
	var commits []OID
	for i := 0; i < 2; i++ {
		commits = append(commits, smallWrite(t, s, i))
	}
	if !s.maintain(context.Background()) {
		t.Fatal("maintenance did not run")
	}
	packed := packNames(t, dir) // the pass's pack, of 6 objects: a small one
	if len(packed) != 1 {
		t.Fatalf("packs after the first pass: %v", packed)
	}
	if loose {
		out := GitCommand(t, dir, "show-index")
		idx, err := os.Open(packed[0][:len(packed[0])-len(".pack")] + ".idx")
		if err != nil {
			t.Fatal(err)
		}
		out.Stdin = idx
		list, err := out.Output()
		idx.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
			id := strings.Fields(line)[1]
			kind := strings.TrimSpace(git(t, dir, "cat-file", "-t", id))
			data, err := GitCommand(t, dir, "cat-file", kind, id).Output()
			if err != nil {
				t.Fatal(err)
			}
			path := loosePath(s, OID(id))
			os.MkdirAll(filepath.Dir(path), 0o755)
			raw := zlibOf(t, append([]byte(kind+" "+strconv.Itoa(len(data))+"\x00"), data...), 1)
			if err := os.WriteFile(path, raw, 0o444); err != nil {
				t.Fatal(err)
			}
		}
	}
	// one more small pack, whose blob is damaged (stored uncompressed)
	commits = append(commits, smallWrite(t, s, 2))
	var victim string
	for _, p := range packNames(t, dir) {
		if slices.Contains(packed, p) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(b, []byte("write 2 of"))
		if i < 0 {
			t.Fatalf("the third write's blob is not in %s", p)
		}
		b[i] ^= 1
		os.Chmod(p, 0o644)
		if err := os.WriteFile(p, b, 0o444); err != nil {
			t.Fatal(err)
		}
		victim = p
	}
	if victim == "" {
		t.Fatal("the third write made no pack")
	}
	if !s.maintain(context.Background()) {
		t.Fatal("maintenance did not run")
	}
	if !fileExists(packed[0]) || !fileExists(packed[0][:len(packed[0])-len(".pack")]+".idx") {
		t.Errorf("the pass removed the pack it had just written again (%s); packs left: %v",
			filepath.Base(packed[0]), packNames(t, dir))
	}
	s.Close()
	r := reopen(t, dir)
	for _, c := range commits[:2] {
		if _, err := r.Commit(c); err != nil {
			t.Errorf("commit %s after the pass: %v", c, err)
		}
	}
}

// The same with nothing damaged: two writes of a 40 MB document each,
// gathered by a pass into one small pack of 6 objects and 80 MB, which
// the next pass reads first (the fewest objects) and alone (past the
// pass's budget, maintainBudget), then writes again under its name.
// Before, that pass removed it and the two commits with it (git fsck:
// "missing commit"). READPROOF_LONG_TESTS=1 runs it (160 MB held).
func TestPassKeepsLargePackItRewrote(t *testing.T) {
	if !testsize.Long() {
		t.Skip("holds 160 MB; READPROOF_LONG_TESTS=1 runs it")
	}
	s, dir := passOnlyByTest(t)
	rng := rand.New(rand.NewSource(1))
	write := func(files [][]byte) OID {
		t.Helper()
		var es []TreeEntry
		for j, f := range files {
			b, err := s.PutBlob(f)
			if err != nil {
				t.Fatal(err)
			}
			es = append(es, TreeEntry{Name: fmt.Sprintf("f%d", j), Mode: ModeFile, OID: b})
		}
		tree, err := s.PutTree(es)
		if err != nil {
			t.Fatal(err)
		}
		tip, _ := s.Ref("refs/heads/main")
		var parents []OID
		if tip != "" {
			parents = []OID{tip}
		}
		c, err := s.PutCommit(Commit{Tree: tree, Parents: parents, Author: testSig(), Committer: testSig(), Message: "a write\n"})
		if err != nil {
			t.Fatal(err)
		}
		mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", Old: tip, New: c})
		return c
	}
	var big []OID
	for i := 0; i < 2; i++ {
		doc := make([]byte, 40<<20)
		rng.Read(doc) // no delta, no compression
		big = append(big, write([][]byte{doc}))
	}
	if !s.maintain(context.Background()) {
		t.Fatal("maintenance did not run")
	}
	for i := 0; i < 2; i++ {
		var small [][]byte
		for j := 0; j < 10; j++ {
			small = append(small, []byte(fmt.Sprintf("small %d %d", i, j)))
		}
		write(small)
	}
	if !s.maintain(context.Background()) {
		t.Fatal("maintenance did not run")
	}
	s.Close()
	r := reopen(t, dir)
	for _, c := range big {
		if _, err := r.Commit(c); err != nil {
			t.Errorf("commit %s after the pass: %v", c, err)
		}
	}
	Fsck(t, dir)
}
