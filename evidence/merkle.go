package evidence

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
)

// MerkleLeafRule is the leaf construction as the predicate's merkle.leaf
// field spells it.
const MerkleLeafRule = "sha256(position_be_uint32 || 0x00 || uri || 0x00 || content_hash)"

// Leaf returns the Merkle leaf of one manifest entry:
// sha256(uint32be(position) || 0x00 || uri || 0x00 || contentHash), where
// contentHash is the recorded string, "sha256:" prefix included.
func Leaf(position uint32, uri, contentHash string) [32]byte {
	h := sha256.New()
	return leafWith(h, position, uri, contentHash)
}

func leafWith(h hash.Hash, position uint32, uri, contentHash string) [32]byte {
	h.Reset()
	var buf [5]byte
	binary.BigEndian.PutUint32(buf[:4], position)
	h.Write(buf[:5]) // buf[4] is the 0x00 separator
	h.Write([]byte(uri))
	h.Write([]byte{0})
	h.Write([]byte(contentHash))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// Root returns the Merkle root over leaves in position order: sha256 of the
// empty input for no leaves, the leaf itself for one, and otherwise pairs
// hashed level by level as sha256(left || right), the last node of an odd
// level paired with itself.
//
// The rule has no leaf/node domain separation and duplicates the last node,
// so [a,b,c] and [a,b,c,c] share a root: never trust a root without
// recomputing it from the listed entries and checking their count and
// positions (Verify does).
func Root(leaves [][32]byte) [32]byte {
	if len(leaves) == 0 {
		return sha256.Sum256(nil)
	}
	level := make([][32]byte, len(leaves))
	copy(level, leaves)
	h := sha256.New()
	for len(level) > 1 {
		if len(level)%2 == 1 {
			level = append(level, level[len(level)-1])
		}
		next := level[:len(level)/2]
		for i := range next {
			h.Reset()
			h.Write(level[2*i][:])
			h.Write(level[2*i+1][:])
			h.Sum(next[i][:0])
		}
		level = next
	}
	return level[0]
}

// entryLeaves recomputes the leaves of listed entries from their own
// position, uri and content_hash fields.
func entryLeaves(entries []BundleEntry) ([][32]byte, error) {
	leaves := make([][32]byte, len(entries))
	h := sha256.New()
	for i, e := range entries {
		if e.Position < 0 || int64(e.Position) > int64(^uint32(0)) {
			return nil, fmt.Errorf("entry %d: position %d does not fit the uint32 the leaf encodes", i, e.Position)
		}
		leaves[i] = leafWith(h, uint32(e.Position), e.URI, e.ContentHash)
	}
	return leaves, nil
}
