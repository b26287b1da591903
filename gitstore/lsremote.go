package gitstore

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// maxLsRemoteLine bounds the line lsRemoteParser holds while it waits for
// its end. git sends each ref of a listing in one pkt-line (at most 65,520
// bytes), so no line git ls-remote prints comes near it; a longer one is
// refused as a line git does not write, and nothing more is kept of it.
const maxLsRemoteLine = 1 << 20

// lsRemoteBlock is how many refs lsRemoteParser collects in one slice
// before it starts the next: the listing is joined into one slice of the
// right size at the end, instead of being copied each time append grows it
// (by a quarter at a time, once it is large: at 10^6 refs every ref
// would be copied about four times).
const lsRemoteBlock = 4096

// lsRemoteParser parses `git ls-remote --symref` output as git writes it
// (an io.Writer, and an io.ReaderFrom for os/exec's copy): each complete
// line is parsed when it arrives, while git is still listing, and only a
// line not yet ended is held. The refs name substrings of one string per
// read (64 KiB of output), not of a copy of the whole output.
//
// It answers as the parse of the whole output before session 27 did (the
// oracle of FuzzLsRemoteParser, parseLsRemoteHeadWhole): the first line
// that is not a ref, a peeled or HEAD line or a "ref: " line is the error,
// and after it nothing more is parsed (the output is still read to its
// end, so that git finishes and its own error, if any, comes first).
type lsRemoteParser struct {
	pending []byte // a line not yet ended, and room for ReadFrom to read into
	max     int    // the longest line held (maxLsRemoteLine)
	full    [][]Ref
	refs    []Ref // the block being filled
	n       int   // refs in full
	head    string
	err     error
}

func newLsRemoteParser() *lsRemoteParser { return &lsRemoteParser{max: maxLsRemoteLine} }

// Write parses the lines b completes.
func (p *lsRemoteParser) Write(b []byte) (int, error) {
	from := len(p.pending)
	p.pending = append(p.pending, b...)
	p.take(from)
	return len(b), nil
}

// ReadFrom reads r to its end into the pending line's buffer, parsing the
// lines each read completes: os/exec copies git's output through it with
// no intermediate buffer.
func (p *lsRemoteParser) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for {
		if cap(p.pending)-len(p.pending) < 4<<10 {
			grown := make([]byte, len(p.pending), max(64<<10, 2*len(p.pending)))
			copy(grown, p.pending)
			p.pending = grown
		}
		from := len(p.pending)
		n, err := r.Read(p.pending[from:cap(p.pending)])
		p.pending = p.pending[:from+n]
		total += int64(n)
		if n > 0 {
			p.take(from)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// take parses the complete lines of pending, whose bytes from from on have
// not been searched for a line's end, and keeps the rest.
func (p *lsRemoteParser) take(from int) {
	i := bytes.LastIndexByte(p.pending[from:], '\n')
	if i < 0 {
		if len(p.pending) > p.max {
			p.fail(p.pending)
			p.pending = p.pending[:0]
		}
		return
	}
	end := from + i + 1
	if p.err == nil {
		p.lines(string(p.pending[:end]))
	}
	p.pending = p.pending[:copy(p.pending, p.pending[end:])]
}

// finish parses the last line when the output did not end one and returns
// the refs in the order listed (nil when none), HEAD's target and the
// first line's error.
func (p *lsRemoteParser) finish() ([]Ref, string, error) {
	if len(p.pending) > 0 && p.err == nil {
		p.lines(string(p.pending))
	}
	p.pending = nil
	if p.err != nil {
		return nil, "", p.err
	}
	if len(p.full) == 0 {
		return p.refs, p.head, nil
	}
	out := make([]Ref, 0, p.n+len(p.refs))
	for _, b := range p.full {
		out = append(out, b...)
	}
	return append(out, p.refs...), p.head, nil
}

func (p *lsRemoteParser) fail(line []byte) {
	if p.err == nil {
		p.err = fmt.Errorf("unexpected ls-remote line %q", truncate(line))
	}
}

// lines parses text, whole lines of git's output: one pass over it, each
// line cut once at its tab.
func (p *lsRemoteParser) lines(text string) {
	for rest := text; rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if len(line) > p.max {
			p.fail([]byte(line)) // as take refuses it while it waits for its end
			return
		}
		if r, ok := strings.CutPrefix(line, "ref: "); ok {
			target, name, _ := strings.Cut(r, "\t")
			if name == "HEAD" && CheckRefName(target) == nil {
				p.head = target
			}
			continue
		}
		oid, name, ok := strings.Cut(line, "\t")
		if ok && (name == "HEAD" || strings.HasSuffix(name, "^{}")) || line == "" {
			continue
		}
		if !ok || !isHexOID(oid) || CheckRefName(name) != nil {
			p.fail([]byte(line))
			return
		}
		if len(p.refs) == cap(p.refs) && cap(p.refs) >= lsRemoteBlock {
			// a small listing grows one slice; a large one a block at a time
			p.full = append(p.full, p.refs)
			p.n += len(p.refs)
			p.refs = make([]Ref, 0, lsRemoteBlock)
		}
		p.refs = append(p.refs, Ref{Name: name, OID: OID(oid)})
	}
}
