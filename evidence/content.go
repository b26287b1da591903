package evidence

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/readproof/readproof/gitstore/gitobj"
	"github.com/readproof/readproof/internal/text"
)

// checkContents runs the content[i] check of every entry with embedded
// content and returns the checks in entry order. The entries are split
// over the machine's cores (decoding base64 and two hashes per entry is
// most of an offline verify); each check is computed exactly as one at a
// time would be.
func checkContents(entries []BundleEntry) []Check {
	out := make([]Check, len(entries))
	const block = 16
	workers := min(runtime.GOMAXPROCS(0), (len(entries)+block-1)/block)
	var next atomic.Int64
	work := func() {
		c := contentChecker{sha1: sha1.New()}
		for {
			from := int(next.Add(block)) - block
			if from >= len(entries) {
				return
			}
			for i := from; i < min(from+block, len(entries)); i++ {
				if entries[i].hasContent() {
					out[i] = c.check(i, &entries[i])
				}
			}
		}
	}
	if workers <= 1 {
		work()
	} else {
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				work()
			}()
		}
		wg.Wait()
	}
	n := 0
	for i := range entries {
		if entries[i].hasContent() {
			out[n] = out[i]
			n++
		}
	}
	return out[:n]
}

// contentChecker holds one worker's buffers.
type contentChecker struct {
	buf, dst []byte
	sha1     hash.Hash
}

// check is the content[i] check of entry e: its content_b64 decodes, hashes
// to content_hash, has bytes bytes, and when snapshot_id is a git object
// id, is that blob.
func (c *contentChecker) check(i int, e *BundleEntry) Check {
	if len(e.b64) > 0 {
		return c.checkB64(i, e, e.b64)
	}
	c.buf = append(c.buf[:0], e.ContentB64...)
	return c.checkB64(i, e, c.buf)
}

// checkB64 is check with the text of e's content_b64 at hand in b64.
func (c *contentChecker) checkB64(i int, e *BundleEntry, b64 []byte) Check {
	name := "content[" + strconv.Itoa(i) + "]"
	uri := text.Printable(e.URI)
	content, ok := c.decodeB64(b64)
	if !ok {
		return Check{Name: name, Detail: uri + ": content_b64 is not base64"}
	}
	sum := sha256.Sum256(content)
	var got [7 + 64]byte
	copy(got[:], "sha256:")
	hex.Encode(got[7:], sum[:])
	switch {
	case string(got[:]) != e.ContentHash:
		return Check{Name: name, Detail: uri + ": embedded content hashes to " + abbrevHash(string(got[:])) + ", entry records " + abbrevHash(e.ContentHash)}
	case e.Bytes != int64(len(content)):
		return Check{Name: name, Detail: uri + ": embedded content is " + strconv.Itoa(len(content)) + " bytes, entry records " + strconv.FormatInt(e.Bytes, 10)}
	case gitobj.IsObjectID(e.SnapshotID):
		if blob := c.blobID(content); blob != e.SnapshotID {
			return Check{Name: name, Detail: uri + ": embedded content is git blob " + blob[:12] + ", entry records snapshot " + e.SnapshotID[:12]}
		}
	}
	return Check{Name: name, OK: true, Detail: uri + ": " + abbrevHash(e.ContentHash)}
}

// decodeB64 is decodeB64 of src into c.dst.
func (c *contentChecker) decodeB64(src []byte) ([]byte, bool) {
	if n := maxDecodedLen(len(src)); cap(c.dst) < n {
		c.dst = make([]byte, n)
	}
	n, ok := decodeB64To(c.dst[:cap(c.dst)], src)
	return c.dst[:n], ok
}

// blobID is the id git gives a blob holding b, with the worker's hash.
func (c *contentChecker) blobID(b []byte) string {
	h := c.sha1
	h.Reset()
	var hdr [32]byte
	h.Write(strconv.AppendInt(append(hdr[:0], "blob "...), int64(len(b)), 10))
	h.Write([]byte{0})
	h.Write(b)
	var sum [sha1.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}
