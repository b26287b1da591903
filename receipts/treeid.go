package receipts

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// treeContent returns the content git gives the tree object holding
// entries, which are in git's order: for each entry its mode in octal, a
// space, its name, a NUL and the 20 bytes of its id. ok is false when an
// entry's id is not an object id.
//
// A tree read from a store whose bytes git would not write so (a mode
// spelt with a leading zero, entries out of order) gets another content,
// and so another id, here than its own: a caller comparing the ids of
// trees it computes with ids it reads only ever misses, never matches
// wrongly.
func treeContent(entries []gitobj.TreeEntry) ([]byte, bool) {
	size := 0
	for _, e := range entries {
		size += entryLen(e)
	}
	content := make([]byte, 0, size)
	for _, e := range entries {
		var ok bool
		if content, ok = appendEntry(content, e); !ok {
			return nil, false
		}
	}
	return content, true
}

// appendEntry appends e as a tree object holds it; ok false when its id
// is not an object id.
func appendEntry(b []byte, e gitobj.TreeEntry) ([]byte, bool) {
	if !gitobj.IsObjectID(e.OID) {
		return b, false
	}
	b = strconv.AppendUint(b, uint64(e.Mode), 8)
	b = append(b, ' ')
	b = append(b, e.Name...)
	b = append(b, 0)
	b, err := hex.AppendDecode(b, []byte(e.OID)) // 40 lower-case digits: no error
	return b, err == nil
}

// entryLen is the length of e in a tree object.
func entryLen(e gitobj.TreeEntry) int {
	n := 1
	for m := uint32(e.Mode) >> 3; m != 0; m >>= 3 {
		n++
	}
	return n + 1 + len(e.Name) + 1 + sha1.Size
}

// contentID is the id of the tree object whose content is content: the
// SHA-1 of "tree SIZE", a NUL, and the content.
func contentID(content []byte) gitobj.OID {
	return piecesID(content)
}

// piecesID is contentID of the content that is the pieces one after the
// other, which it does not join.
func piecesID(pieces ...[]byte) gitobj.OID {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	var head [24]byte
	h := sha1.New()
	h.Write(append(strconv.AppendInt(append(head[:0], "tree "...), int64(n), 10), 0))
	for _, p := range pieces {
		h.Write(p)
	}
	var sum [sha1.Size]byte
	return gitobj.OID(hex.EncodeToString(h.Sum(sum[:0])))
}

// treeID is the id of the tree object holding entries (treeContent).
func treeID(entries []gitobj.TreeEntry) (gitobj.OID, bool) {
	content, ok := treeContent(entries)
	if !ok {
		return "", false
	}
	return contentID(content), true
}
