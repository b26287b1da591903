package evidence

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// merkleVector is one file written by testdata/merkle/generate.py, which
// computes leaves and roots with Python's hashlib, independently of this
// package.
type merkleVector struct {
	Description string `json:"description"`
	Entries     []struct {
		Position    int     `json:"position"`
		URI         string  `json:"uri"`
		ContentHash string  `json:"content_hash"`
		Content     *string `json:"content"`
	} `json:"entries"`
	Leaves []string `json:"leaves"`
	Root   string   `json:"root"`
}

func loadVector(t *testing.T, name string) merkleVector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "merkle", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var v merkleVector
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func TestMerkleVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		n    int
	}{{"zero", 0}, {"one", 1}, {"two", 2}, {"three", 3}, {"thousand", 1000}} {
		t.Run(tc.name, func(t *testing.T) {
			v := loadVector(t, tc.name)
			if len(v.Entries) != tc.n {
				t.Fatalf("vector has %d entries, want %d", len(v.Entries), tc.n)
			}
			var leaves [][32]byte
			for i, e := range v.Entries {
				if e.Content != nil {
					if got := hashOf([]byte(*e.Content)); got != e.ContentHash {
						t.Fatalf("entry %d: content hashes to %s, vector says %s", i, got, e.ContentHash)
					}
				}
				l := Leaf(uint32(e.Position), e.URI, e.ContentHash)
				if v.Leaves != nil && hex.EncodeToString(l[:]) != v.Leaves[i] {
					t.Fatalf("leaf %d = %x, want %s", i, l, v.Leaves[i])
				}
				leaves = append(leaves, l)
			}
			root := Root(leaves)
			if got := hex.EncodeToString(root[:]); got != v.Root {
				t.Fatalf("root = %s, want %s", got, v.Root)
			}
			// Build computes the same root from manifest entries.
			in := Input{ManifestID: "m", RunID: "r"}
			for _, e := range v.Entries {
				in.Entries = append(in.Entries, Entry{Position: e.Position, URI: e.URI, ContentHash: e.ContentHash})
			}
			st, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			if st.Subject[0].Digest["sha256"] != v.Root || st.Predicate.Merkle.Root != v.Root {
				t.Fatalf("Build root = %s / %s, want %s", st.Subject[0].Digest["sha256"], st.Predicate.Merkle.Root, v.Root)
			}
		})
	}
}

func TestPublishedExample(t *testing.T) {
	t.Parallel()
	if got := hashOf([]byte(refundsText)); got != refundsHash {
		t.Fatalf("content hash = %s, want %s", got, refundsHash)
	}
	l := Leaf(0, refundsURI, refundsHash)
	root := Root([][32]byte{l})
	if got := hex.EncodeToString(root[:]); got != publishedRoot {
		t.Fatalf("root = %s, want %s", got, publishedRoot)
	}
	if v := loadVector(t, "one"); v.Root != publishedRoot {
		t.Fatalf("testdata/merkle/one.json root %s is not the published %s", v.Root, publishedRoot)
	}
}

// TestMerkleDuplicateLastNode pins the known weakness of the rule: a list
// and the same list with its last leaf repeated share a root, so a root
// alone never proves how many entries there were.
func TestMerkleDuplicateLastNode(t *testing.T) {
	t.Parallel()
	a, b, c := Leaf(0, "readproof://x/a", refundsHash), Leaf(1, "readproof://x/b", refundsHash), Leaf(2, "readproof://x/c", refundsHash)
	if Root([][32]byte{a, b, c}) != Root([][32]byte{a, b, c, c}) {
		t.Fatal("[a,b,c] and [a,b,c,c] should share a root under the duplicate-last rule")
	}
	if Root([][32]byte{a, b}) == Root([][32]byte{b, a}) {
		t.Fatal("order must change the root")
	}
	// No domain separation: a parent of two leaves is a valid single leaf.
	parent := Root([][32]byte{a, b})
	if Root([][32]byte{parent}) != parent {
		t.Fatal("a one-leaf tree's root is that leaf")
	}
}

func TestLeafSeparators(t *testing.T) {
	t.Parallel()
	// The 0x00 separators keep uri/hash boundaries unambiguous.
	if Leaf(0, "readproof://a/b", "sha256:1") == Leaf(0, "readproof://a/bsha256:1", "") {
		t.Fatal("separator missing between uri and content hash")
	}
	if Leaf(1, "u", "h") == Leaf(256, "u", "h") {
		t.Fatal("position not encoded")
	}
}
