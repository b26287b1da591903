package gitstore

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBrokenRefsPackedNames: a packed-refs record whose name git's rules
// refuse (a control character, "..", a component ending in ".lock") is
// reported by BrokenRefs, as a loose ref file of that name is: git ignores
// it ("ignoring ref with broken name"), so a store check that did not say
// so would call the store ok while git sees a ref fewer.
func TestBrokenRefsPackedNames(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	c := mkCommit(t, s, "one")
	bad := []string{"refs/heads/x\x01y", "refs/heads/a..b", "refs/tags/t.lock/u"}
	body := "# pack-refs with: peeled fully-peeled sorted \n" +
		string(c) + " refs/heads/a..b\n" +
		string(c) + " refs/heads/main\n" +
		string(c) + " refs/heads/x\x01y\n" +
		string(c) + " refs/tags/t.lock/u\n"
	if err := os.WriteFile(filepath.Join(s.Path(), "packed-refs"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	broken, err := BrokenRefs(s, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, b := range broken {
		got[b.Name] = true
		if b.Err == nil || !b.Packed {
			t.Errorf("broken ref %q: reason %v, packed %v; want a reason, packed", b.Name, b.Err, b.Packed)
		}
	}
	for _, n := range bad {
		if !got[n] {
			t.Errorf("BrokenRefs = %v: %q, a packed ref git ignores, is not reported", broken, n)
		}
	}
	if got["refs/heads/main"] || len(broken) != len(bad) {
		t.Errorf("BrokenRefs = %v, want exactly %q", broken, bad)
	}
	// a prefix limits the report as it limits the loose files
	heads, err := BrokenRefs(s, "refs/tags/")
	if err != nil {
		t.Fatal(err)
	}
	if len(heads) != 1 || heads[0].Name != "refs/tags/t.lock/u" {
		t.Errorf("BrokenRefs(refs/tags/) = %v, want refs/tags/t.lock/u alone", heads)
	}
}
