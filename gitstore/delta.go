package gitstore

// A delta encoder for the packs automatic maintenance writes: the output is
// git's delta format (gitformat-pack.txt, "Deltified representation"; read
// by applyDelta), found the way git's diff-delta.c finds it. The source is
// indexed once by the fingerprints of its 16-byte blocks (each block at a
// multiple of 16), and the target is scanned with a rolling fingerprint of
// the 16 bytes at every position: a block of the source with the same
// fingerprint and the same bytes starts a match, which is extended forward
// as far as both agree and backward over the literal bytes not yet
// written. Matches become copy instructions, the bytes between them insert
// instructions. So a version of a document edited in one place costs the
// edit and a few instructions, as with git.

import "encoding/binary"

const (
	deltaWindow = 16      // bytes a fingerprint covers
	deltaChain  = 64      // blocks kept per fingerprint bucket (git's HASH_LIMIT)
	maxCopy     = 0x10000 // bytes one copy instruction takes at most
	maxInsert   = 0x7f    // bytes one insert instruction takes at most
	// deltaMul is the rolling fingerprint's multiplier (odd, so no byte is
	// lost from the low bits), deltaMul16 its 16th power (mod 2^32), which
	// takes the byte leaving the window out.
	deltaMul = 0x01000193
)

var deltaMul16 = func() uint32 {
	p := uint32(1)
	for i := 0; i < deltaWindow; i++ {
		p *= deltaMul
	}
	return p
}()

// fingerprint is the rolling fingerprint of the deltaWindow bytes of b.
func fingerprint(b []byte) uint32 {
	var h uint32
	for _, c := range b[:deltaWindow] {
		h = h*deltaMul + uint32(c)
	}
	return h
}

// deltaIndex is a source indexed for deltaTo: for each bucket of
// fingerprints, the source offsets of its blocks, first block first.
type deltaIndex struct {
	src   []byte
	shift uint32   // a fingerprint's bucket: (fp * 0x9e3779b1) >> shift
	start []int32  // bucket b's blocks are offs[start[b]:start[b+1]]
	offs  []int32  // a block's offset in the source
	fps   []uint32 // and its fingerprint, compared before any byte is
}

func (x *deltaIndex) bucket(fp uint32) uint32 { return (fp * 0x9e3779b1) >> x.shift }

// newDeltaIndex indexes src. A source shorter than one block, or of 2 GiB
// or more, gets an index that matches nothing.
func newDeltaIndex(src []byte) *deltaIndex {
	x := &deltaIndex{src: src}
	blocks := len(src) / deltaWindow
	if blocks == 0 || len(src) >= 1<<31 {
		return x
	}
	bits := uint32(4)
	for 1<<bits < blocks/2 && bits < 24 {
		bits++
	}
	x.shift = 32 - bits
	nb := 1 << bits
	fps := make([]uint32, blocks)
	// A run of identical blocks keeps only its first (dup marks the rest):
	// a match found there extends over the rest.
	dup := make([]bool, blocks)
	count := make([]int32, nb)
	for i := range fps {
		fps[i] = fingerprint(src[i*deltaWindow:])
		if i > 0 && fps[i] == fps[i-1] && string(src[(i-1)*deltaWindow:i*deltaWindow]) == string(src[i*deltaWindow:(i+1)*deltaWindow]) {
			dup[i] = true
			continue
		}
		if b := x.bucket(fps[i]); count[b] < deltaChain {
			count[b]++
		}
	}
	x.start = make([]int32, nb+1)
	total := int32(0)
	for b := 0; b < nb; b++ {
		x.start[b] = total
		total += count[b]
	}
	x.start[nb] = total
	x.offs = make([]int32, total)
	x.fps = make([]uint32, total)
	fill := make([]int32, nb)
	copy(fill, x.start[:nb])
	for i, fp := range fps {
		if dup[i] {
			continue
		}
		if b := x.bucket(fp); fill[b] < x.start[b+1] {
			x.offs[fill[b]] = int32(i * deltaWindow)
			x.fps[fill[b]] = fp
			fill[b]++
		}
	}
	return x
}

// deltaTo appends to dst the delta that makes tgt from the indexed source
// and returns it, or nil when it would be longer than maxSize bytes
// (maxSize 0: no bound).
func (x *deltaIndex) deltaTo(dst, tgt []byte, maxSize int) []byte {
	src := x.src
	out := binary.AppendUvarint(dst[:0], uint64(len(src)))
	out = binary.AppendUvarint(out, uint64(len(tgt)))
	if maxSize <= 0 {
		maxSize = int(^uint(0) >> 1)
	}
	lit := 0 // tgt[lit:pos] is not written yet
	pos := 0
	if x.offs != nil && len(tgt) >= deltaWindow {
		fp := fingerprint(tgt)
		start, offs, fps := x.start, x.offs, x.fps
		for {
			moff, msize := 0, 0
			b := x.bucket(fp)
			for k := start[b]; k < start[b+1]; k++ {
				if fps[k] != fp {
					continue
				}
				o := offs[k]
				if n := commonPrefix(src[o:], tgt[pos:]); n > msize {
					moff, msize = int(o), n
					if n >= maxCopy {
						break
					}
				}
			}
			if msize < deltaWindow {
				// no match here: this byte is literal
				if pos+deltaWindow >= len(tgt) {
					break
				}
				fp = fp*deltaMul + uint32(tgt[pos+deltaWindow]) - uint32(tgt[pos])*deltaMul16
				pos++
				if len(out)+pos-lit > maxSize {
					return nil
				}
				continue
			}
			// take back the literal bytes the match also covers
			for pos > lit && moff > 0 && src[moff-1] == tgt[pos-1] {
				moff--
				pos--
				msize++
			}
			out = appendInserts(out, tgt[lit:pos])
			for n := msize; n > 0; {
				c := min(n, maxCopy)
				out = appendCopy(out, moff, c)
				moff += c
				n -= c
			}
			pos += msize
			lit = pos
			if len(out) > maxSize {
				return nil
			}
			if pos+deltaWindow > len(tgt) {
				break
			}
			fp = fingerprint(tgt[pos:])
		}
	}
	out = appendInserts(out, tgt[lit:])
	if len(out) > maxSize {
		return nil
	}
	return out
}

// commonPrefix is how many bytes a and b agree on from the start.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && binary.LittleEndian.Uint64(a[i:]) == binary.LittleEndian.Uint64(b[i:]) {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// appendInserts appends insert instructions for lit (at most maxInsert
// bytes each).
func appendInserts(out, lit []byte) []byte {
	for len(lit) > 0 {
		n := min(len(lit), maxInsert)
		out = append(out, byte(n))
		out = append(out, lit[:n]...)
		lit = lit[n:]
	}
	return out
}

// appendCopy appends a copy instruction of n (1..maxCopy) bytes from
// offset off of the source: the offset's and size's non-zero bytes, each
// flagged in the opcode (a size of maxCopy is written as none).
func appendCopy(out []byte, off, n int) []byte {
	at := len(out)
	op := byte(0x80)
	out = append(out, 0)
	for i := 0; i < 4; i++ {
		if b := byte(off >> (8 * i)); b != 0 {
			op |= 1 << i
			out = append(out, b)
		}
	}
	if n != maxCopy {
		for i := 0; i < 3; i++ {
			if b := byte(n >> (8 * i)); b != 0 {
				op |= 0x10 << i
				out = append(out, b)
			}
		}
	}
	out[at] = op
	return out
}
