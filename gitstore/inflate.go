package gitstore

// A DEFLATE decoder (RFC 1951) for the common case of reading a pack entry:
// the compressed bytes are in memory (the mapped pack) and the size of the
// result is known (the entry's header), so it decodes straight into one
// buffer of that size, refilling a 64-bit bit buffer eight bytes at a time
// and looking codes up in two-level tables, where compress/flate reads one
// byte at a time through an interface and copies through a window.
//
// It is only ever a shortcut: inflateZlibSized accepts a stream only when
// it is complete and decodes to exactly the size asked for, and refuses
// everything compress/flate refuses (over- and under-subscribed codes
// except a single one-bit code, code lengths past the alphabets, the
// reserved symbols, distances before the start), plus some corner cases
// compress/flate would accept. On any refusal the caller decodes with
// compress/zlib as before, so the bytes and the errors returned are the
// same (FuzzInflate compares the two).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"math/bits"
	"strconv"
)

var (
	errInflate = errors.New("inflate: not decodable here")
	// errFull: the stream holds more than dst takes.
	errFull = errors.New("inflate: more output than expected")
)

const (
	litBits  = 10 // bits of the first-level table of literals/lengths
	distBits = 8  // of distances
	// maxFastInflate bounds the sizes decoded here: a corrupt size header
	// must not make us allocate more than compress/zlib's path would
	// reserve up front (readExactly).
	maxFastInflate = 8 << 20
)

// A table entry: bits 0-3 the code length to consume (0: no code), bit 4
// set for a link to a second-level table, bits 8-11 the index width of
// that table, bits 16-31 the symbol or, for a link, the table's offset.
type huffTable struct {
	primary []uint32
	sub     []uint32
	bits    uint        // log2 of len(primary)
	sorted  [288]uint16 // build's symbols in canonical order
}

const (
	entryLink    = 1 << 4
	entryLiteral = 1 << 5 // first-level entries of literals (the lit table)
)

// build makes the decoding tables of a canonical code from its code
// lengths. It refuses what compress/flate's huffmanDecoder.init refuses
// (over-subscribed or incomplete codes, except one code of length 1), and
// an empty code (which compress/flate accepts until a symbol is read).
//
// It costs what a code of a few hundred bytes (a commit, a tree) needs,
// not what the table holds: the symbols are sorted by code length (counting
// sort, runs of unused symbols skipped eight at a time), the codes of each
// length written once at their bit-reversed index below 2^n, and the table
// so far doubled by a copy before the next length, which replicates every
// shorter code up to the 2^primaryBits entries codes indexes with a
// constant mask. A complete code overwrites every entry, so nothing is
// cleared (but for the single one-bit code). Longer codes that share their
// first primaryBits bits are consecutive in that order: each such group
// gets a second-level table as wide as its last (longest) code. counted,
// when not nil, holds how many of lengths are of each length (dynamic
// counts them as it decodes them).
func (h *huffTable) build(lengths []uint8, counted *[16]uint16, primaryBits uint, literals bool) bool {
	var count [16]uint16
	i := 0
	if counted != nil {
		count = *counted
	} else {
		// Runs of unused symbols (most of them in a commit or a tree: no
		// bytes above 127, few control bytes) are skipped eight at a time
		// (aligned); a branch on each symbol's length would be mispredicted.
		for ; i+8 <= len(lengths); i += 8 {
			if binary.LittleEndian.Uint64(lengths[i:]) == 0 {
				continue
			}
			for _, n := range lengths[i : i+8] {
				count[n&15]++
			}
		}
		for _, n := range lengths[i:] {
			count[n&15]++
		}
	}
	count[0] = 0 // unused symbols
	maxLen := 15
	for maxLen > 0 && count[maxLen] == 0 {
		maxLen--
	}
	if maxLen == 0 {
		return false
	}
	// next[n]: the first code of length n; offs[n]: where symbols of
	// length n start in sorted (by length, then symbol: canonical order).
	var next, offs [16]int
	code, off, minLen := 0, 0, 0
	for n := 1; n <= maxLen; n++ {
		code <<= 1
		next[n] = code
		code += int(count[n])
		offs[n] = off
		off += int(count[n])
		if minLen == 0 && count[n] != 0 {
			minLen = n
		}
	}
	if code != 1<<maxLen && !(code == 1 && maxLen == 1) {
		return false
	}
	// Symbols of length 0 land after the others, out of the way.
	offs[0] = off
	place := func(i int, n uint8) {
		h.sorted[offs[n&15]] = uint16(i)
		offs[n&15]++
	}
	for i = 0; i+8 <= len(lengths); i += 8 {
		if binary.LittleEndian.Uint64(lengths[i:]) == 0 {
			continue
		}
		for k, n := range lengths[i : i+8] {
			place(i+k, n)
		}
	}
	for k, n := range lengths[i:] {
		place(i+k, n)
	}
	sorted := h.sorted[:off]
	pb := int(primaryBits)
	h.bits = primaryBits
	if cap(h.primary) < 1<<pb {
		h.primary = make([]uint32, 1<<pb)
	}
	prim := h.primary[:1<<pb]
	h.primary = prim
	if code != 1<<maxLen {
		// The single one-bit code leaves one of the two entries empty.
		clear(prim[:2])
	}
	// Codes no longer than the table, by length: each written once at its
	// (bit-reversed) index below 2^n, then the table so far doubled.
	i = 0
	for n := minLen; n <= pb; n++ {
		if n > minLen {
			copy(prim[1<<(n-1):1<<n], prim[:1<<(n-1)])
		}
		c := next[n]
		for end := i + int(count[n]); i < end; i++ {
			sym := sorted[i]
			e := uint32(sym)<<16 | uint32(n)
			if literals && sym < 256 {
				e |= entryLiteral
			}
			prim[bits.Reverse16(uint16(c))>>(16-n)] = e
			c++
		}
		next[n] = c
	}
	// Longer codes, by groups sharing their first pb bits.
	h.sub = h.sub[:0]
	mask := 1<<pb - 1
	for i < len(sorted) {
		n := int(lengths[sorted[i]])
		prefix := next[n] >> (n - pb)
		// The group's end: scan the codes that follow (their lengths
		// only grow, so the code of each is recomputed from next).
		j, w := i, n-pb
		{
			c := next
			for j < len(sorted) {
				m := int(lengths[sorted[j]])
				if c[m]>>(m-pb) != prefix {
					break
				}
				c[m]++
				w = m - pb
				j++
			}
		}
		off := len(h.sub)
		need := off + 1<<w
		if cap(h.sub) < need {
			ns := make([]uint32, need, max(need, 2*cap(h.sub), 1<<(15-pb)))
			copy(ns, h.sub)
			h.sub = ns
		} else {
			h.sub = h.sub[:need]
		}
		rev0 := int(bits.Reverse16(uint16(next[n])) >> (16 - n))
		prim[rev0&mask] = uint32(off)<<16 | uint32(w)<<8 | entryLink | uint32(pb)
		sub := h.sub[off:need]
		for ; i < j; i++ {
			sym := sorted[i]
			m := int(lengths[sym])
			rev := int(bits.Reverse16(uint16(next[m])) >> (16 - m))
			next[m]++
			rest := m - pb
			e := uint32(sym)<<16 | uint32(rest)
			for k := rev >> pb; k < 1<<w; k += 1 << rest {
				sub[k] = e
			}
		}
	}
	return true
}

// inflater holds the tables between calls.
type inflater struct {
	lit, dist, clen     huffTable
	fixedLit, fixedDist huffTable
	lengths             [286 + 30]uint8
}

var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	clenOrder   = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// inflateZlibSized decodes the zlib stream at the start of src, which must
// decode to exactly size bytes. ok is false for anything it does not
// decode (see the file comment); the zlib checksum is not checked (the
// caller checks the content against its id, as readExactly's caller does).
func (f *inflater) inflateZlibSized(src []byte, size int64) ([]byte, bool) {
	return f.inflateZlibInto(src, size, nil)
}

// inflateZlibInto is inflateZlibSized that decodes into into's memory when
// its capacity holds size bytes. A size over maxFastInflate is decoded here
// too when into holds it: nothing is then allocated from the header (a
// replay's one allocation, made at the sizes its run records, gives each
// blob its place; a large one read elsewhere left its place unused).
func (f *inflater) inflateZlibInto(src []byte, size int64, into []byte) ([]byte, bool) {
	if size < 0 || size > maxFastInflate && size > int64(cap(into)) || len(src) < 2 {
		return nil, false
	}
	if !zlibHeaderOK(src) {
		return nil, false
	}
	dst := sized(into, size)
	if _, _, err := f.inflate(dst, src[2:], false); err != nil {
		return nil, false
	}
	return dst, true
}

// zlibHeaderOK checks a zlib header as compress/zlib does (CM 8, CINFO at
// most 7, FCHECK), and refuses a preset dictionary (git never uses one).
func zlibHeaderOK(src []byte) bool {
	return len(src) >= 2 && src[0]&0x0f == 8 && src[0]>>4 <= 7 && src[1]&0x20 == 0 && (uint16(src[0])<<8|uint16(src[1]))%31 == 0
}

// inflateLoose decodes a loose object file held in raw:
// zlib("<type> <size>\x00" content). It returns the header (without the
// NUL) and the content. With whole, the stream must also end with its
// Adler-32 checksum, correct, and nothing after it. ok is false for
// anything it does not decode, or does not find whole; the caller then
// reads raw with compress/zlib, which says what is wrong.
func (f *inflater) inflateLoose(raw []byte, whole bool) (header, data []byte, ok bool) {
	return f.inflateLooseInto(raw, whole, nil)
}

// inflateLooseInto is inflateLoose that decodes into into's memory when its
// capacity holds the header and the content.
func (f *inflater) inflateLooseInto(raw []byte, whole bool, into []byte) (header, data []byte, ok bool) {
	if !zlibHeaderOK(raw) {
		return nil, nil, false
	}
	src := raw[2:]
	// The header first: the start of the stream, decoded into a small
	// buffer, says how large the object is.
	var head [64]byte
	n, _, err := f.inflate(head[:], src, true)
	if err != nil {
		return nil, nil, false
	}
	hlen := bytes.IndexByte(head[:n], 0)
	if hlen < 0 {
		return nil, nil, false
	}
	_, size, found := bytes.Cut(head[:hlen], []byte(" "))
	sz, perr := strconv.ParseInt(string(size), 10, 64)
	if !found || perr != nil || sz < 0 || sz > maxFastInflate {
		return nil, nil, false
	}
	buf := sized(into, int64(hlen)+1+sz)
	_, used, err := f.inflate(buf, src, false)
	if err != nil {
		return nil, nil, false
	}
	if whole {
		rest := src[used:]
		if len(rest) != 4 || binary.BigEndian.Uint32(rest) != adler32.Checksum(buf) {
			return nil, nil, false
		}
	}
	return buf[:hlen], buf[hlen+1:], true
}

// inflate decodes the raw DEFLATE stream at the start of src into dst,
// which it must fill exactly, and returns the bytes written and the bytes
// of src the stream took (up to the byte its last bit is in). With
// prefix, it stops without error once dst is full, and a stream that ends
// before is no error either: n says how much of dst it filled.
func (f *inflater) inflate(dst, src []byte, prefix bool) (n, used int, err error) {
	var (
		b   uint64 // bit buffer, next bit lowest
		nb  uint   // bits in b
		pos int    // next byte of src to load
		o   int    // bytes written to dst
	)
	// refill makes nb at least 56, past the end of src with zero bytes;
	// pos then counts them too, and the caller checks that no padding was
	// consumed once it is done (and gives up on long runs of it).
	refill := func() bool {
		if pos+8 <= len(src) {
			b |= binary.LittleEndian.Uint64(src[pos:]) << nb
			k := (63 - nb) >> 3
			pos += int(k)
			nb += k * 8
			return true
		}
		for nb <= 56 {
			if pos < len(src) {
				b |= uint64(src[pos]) << nb
			} else if pos > len(src)+8 {
				return false
			}
			pos++
			nb += 8
		}
		return true
	}
	for {
		if nb < 3 && !refill() {
			return o, 0, errInflate
		}
		final := b&1 != 0
		typ := b >> 1 & 3
		b >>= 3
		nb -= 3
		switch typ {
		case 0: // stored
			drop := nb & 7
			b >>= drop
			nb -= drop
			if nb < 32 && !refill() {
				return o, 0, errInflate
			}
			n := int(b & 0xffff)
			if uint16(b>>16) != ^uint16(n) {
				return o, 0, errInflate
			}
			b >>= 32
			nb -= 32
			// Give back the whole bytes still in b, then copy.
			start := pos - int(nb/8)
			if start+n > len(src) {
				return o, 0, errInflate
			}
			if o+n > len(dst) {
				if prefix {
					copy(dst[o:], src[start:])
					return len(dst), 0, nil
				}
				return o, 0, errInflate
			}
			copy(dst[o:], src[start:start+n])
			o += n
			pos = start + n
			b, nb = 0, 0
		case 1, 2:
			lit, dist := &f.fixedLit, &f.fixedDist
			if typ == 1 {
				if !f.fixed() {
					return o, 0, errInflate
				}
			} else {
				if !f.dynamic(&b, &nb, &pos, refill) {
					return o, 0, errInflate
				}
				lit, dist = &f.lit, &f.dist
			}
			var err error
			if o, err = codes(lit, dist, dst, o, src, &b, &nb, &pos); err != nil {
				if prefix && err == errFull {
					return o, 0, nil
				}
				return o, 0, errInflate
			}
		default:
			return o, 0, errInflate
		}
		if final {
			break
		}
	}
	// Bits past the end of src were consumed: the stream was cut short.
	bitsUsed := pos*8 - int(nb)
	if bitsUsed > len(src)*8 || (o != len(dst) && !prefix) {
		return o, 0, errInflate
	}
	return o, (bitsUsed + 7) / 8, nil
}

// fixed sets the tables of the fixed codes (RFC 1951 3.2.6), built once.
// Symbols 286 and 287 and distances 30 and 31 complete the codes but are
// invalid to use: codes refuses them.
func (f *inflater) fixed() bool {
	if f.fixedLit.primary != nil {
		return true
	}
	var l [288]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	var d [32]uint8
	for i := range d {
		d[i] = 5
	}
	return f.fixedLit.build(l[:], nil, litBits, true) && f.fixedDist.build(d[:], nil, distBits, false)
}

// dynamic reads a dynamic block's code lengths and builds its tables.
func (f *inflater) dynamic(bp *uint64, nbp *uint, posp *int, refill func() bool) bool {
	b, nb := *bp, *nbp
	need := func(n uint) bool {
		if nb < n {
			*bp, *nbp = b, nb
			if !refill() {
				return false
			}
			b, nb = *bp, *nbp
		}
		return true
	}
	if !need(14) {
		return false
	}
	nlit := int(b&0x1f) + 257
	ndist := int(b>>5&0x1f) + 1
	nclen := int(b>>10&0xf) + 4
	b >>= 14
	nb -= 14
	if nlit > 286 || ndist > 30 {
		return false
	}
	var cl [19]uint8
	for i := 0; i < nclen; i++ {
		if !need(3) {
			return false
		}
		cl[clenOrder[i]] = uint8(b & 7)
		b >>= 3
		nb -= 3
	}
	if !f.clen.build(cl[:], nil, 7, false) {
		return false
	}
	l := f.lengths[:nlit+ndist]
	// The lengths of each code counted on the way, for build: a run
	// (symbols 16-18) adds once.
	var counts [2][16]uint16
	for i := 0; i < len(l); {
		if !need(7 + 7) {
			return false
		}
		e := f.clen.primary[b&0x7f]
		n := uint(e & 15)
		if n == 0 {
			return false
		}
		b >>= n
		nb -= n
		sym := e >> 16
		if sym < 16 {
			l[i] = uint8(sym)
			side := 0
			if i >= nlit {
				side = 1
			}
			counts[side][sym]++
			i++
			continue
		}
		var rep int
		var v uint8
		switch sym {
		case 16:
			if i == 0 {
				return false
			}
			rep, v = 3+int(b&3), l[i-1]
			b >>= 2
			nb -= 2
		case 17:
			rep = 3 + int(b&7)
			b >>= 3
			nb -= 3
		default:
			rep = 11 + int(b&0x7f)
			b >>= 7
			nb -= 7
		}
		if i+rep > len(l) {
			return false
		}
		switch {
		case i >= nlit:
			counts[1][v&15] += uint16(rep)
		case i+rep <= nlit:
			counts[0][v&15] += uint16(rep)
		default: // across the end of the literal/length code
			counts[0][v&15] += uint16(nlit - i)
			counts[1][v&15] += uint16(i + rep - nlit)
		}
		for range rep {
			l[i] = v
			i++
		}
	}
	*bp, *nbp = b, nb
	if !f.lit.build(l[:nlit], &counts[0], litBits, true) {
		return false
	}
	// No distance codes at all is allowed (a block of literals only); a
	// length code then fails in codes, as in compress/flate.
	for _, n := range l[nlit:] {
		if n != 0 {
			return f.dist.build(l[nlit:], &counts[1], distBits, false)
		}
	}
	f.dist.primary, f.dist.sub = f.dist.primary[:0], f.dist.sub[:0]
	return true
}

// codes decodes the symbols of one block up to its end-of-block code.
func codes(lt, dt *huffTable, dst []byte, o int, src []byte, bp *uint64, nbp *uint, posp *int) (int, error) {
	b, nb, pos := *bp, *nbp, *posp
	lit := (*[1 << litBits]uint32)(lt.primary)
	litSub := lt.sub
	var dist *[1 << distBits]uint32
	if len(dt.primary) != 0 {
		dist = (*[1 << distBits]uint32)(dt.primary)
	}
	distSub := dt.sub
	const litMask = 1<<litBits - 1
	const distMask = 1<<distBits - 1
	for {
		if nb < 48 {
			if pos+8 <= len(src) {
				b |= binary.LittleEndian.Uint64(src[pos:]) << nb
				k := (63 - nb) >> 3
				pos += int(k)
				nb += k * 8
			} else {
				for nb <= 56 {
					if pos < len(src) {
						b |= uint64(src[pos]) << nb
					} else if pos > len(src)+8 {
						return o, errInflate
					}
					pos++
					nb += 8
				}
			}
		}
		// At least 48 bits are in b: up to four literals of the
		// first-level table (at most litBits each) are decoded without
		// checking again.
		e := lit[b&litMask]
		if e&entryLiteral != 0 {
			if uint(o)+4 > uint(len(dst)) {
				// Near the end: one at a time.
				if uint(o) >= uint(len(dst)) {
					return o, errFull
				}
				dst[o] = byte(e >> 16)
				o++
				b >>= e & 15
				nb -= uint(e & 15)
				continue
			}
			d := dst[o : o+4 : o+4]
			d[0] = byte(e >> 16)
			b >>= e & 15
			nb -= uint(e & 15)
			if e = lit[b&litMask]; e&entryLiteral == 0 {
				o++
				continue
			}
			d[1] = byte(e >> 16)
			b >>= e & 15
			nb -= uint(e & 15)
			if e = lit[b&litMask]; e&entryLiteral == 0 {
				o += 2
				continue
			}
			d[2] = byte(e >> 16)
			b >>= e & 15
			nb -= uint(e & 15)
			if e = lit[b&litMask]; e&entryLiteral == 0 {
				o += 3
				continue
			}
			d[3] = byte(e >> 16)
			b >>= e & 15
			nb -= uint(e & 15)
			o += 4
			continue
		}
		if e&entryLink != 0 {
			b >>= litBits
			nb -= litBits
			e = litSub[int(e>>16)+int(b&(1<<(e>>8&15)-1))]
		}
		n := uint(e & 15)
		if n == 0 {
			return o, errInflate
		}
		b >>= n
		nb -= n
		sym := int(e >> 16)
		if sym < 256 {
			if uint(o) >= uint(len(dst)) {
				return o, errFull
			}
			dst[o] = byte(sym)
			o++
			continue
		}
		if sym == 256 {
			*bp, *nbp, *posp = b, nb, pos
			return o, nil
		}
		sym -= 257
		if sym >= 29 {
			return o, errInflate
		}
		length := int(lengthBase[sym]) + int(b&(1<<lengthExtra[sym]-1))
		b >>= lengthExtra[sym]
		nb -= uint(lengthExtra[sym])
		if dist == nil {
			return o, errInflate
		}
		e = dist[b&distMask]
		if e&entryLink != 0 {
			b >>= distBits
			nb -= distBits
			e = distSub[int(e>>16)+int(b&(1<<(e>>8&15)-1))]
		}
		n = uint(e & 15)
		if n == 0 {
			return o, errInflate
		}
		b >>= n
		nb -= n
		ds := int(e >> 16)
		if ds >= 30 {
			return o, errInflate
		}
		d := int(distBase[ds]) + int(b&(1<<distExtra[ds]-1))
		b >>= distExtra[ds]
		nb -= uint(distExtra[ds])
		if d > o {
			return o, errInflate
		}
		if o+length > len(dst) {
			return o, errFull
		}
		if d >= length {
			copy(dst[o:o+length], dst[o-d:])
		} else {
			for i := range length {
				dst[o+i] = dst[o-d+i]
			}
		}
		o += length
	}
}

// sized is n bytes of buf's memory when its capacity holds them, else a
// new buffer of n bytes. What it returns is written over whole by the
// caller (its bytes are not zeroed).
func sized(buf []byte, n int64) []byte {
	if n <= int64(cap(buf)) {
		return buf[:n]
	}
	return make([]byte, n)
}
