package gitstore

// Codecs for tree, commit and tag objects: the bytes go-git's
// plumbing/object wrote and the fields it read, byte for byte and error
// for error (objcodec_test.go checks both against go-git, and fuzzes the
// decoders against it). gitstore used that package for these codecs only,
// and it links go-git's diff, revision and OpenPGP code (with its elliptic
// curve tables built at every process start) into every binary that links
// gitstore.

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// The decoders' errors, with go-git's texts.
var (
	errMalformedTree   = errors.New("malformed tree")
	errMalformedCommit = errors.New("malformed commit")
	errMalformedTag    = errors.New("malformed tag")
)

// treeEnt is one entry of a tree object as stored: mode bits as git writes
// them (canonical on decode), name, id.
type treeEnt struct {
	mode uint32
	name string
	hash plumbing.Hash
}

// appendTreeEntries appends the content of a tree object holding es (in
// the order given: the caller sorts) to b.
func appendTreeEntries(b []byte, es []treeEnt) []byte {
	for _, e := range es {
		b = strconv.AppendUint(b, uint64(e.mode), 8)
		b = append(b, ' ')
		b = append(b, e.name...)
		b = append(b, 0)
		b = append(b, e.hash[:]...)
	}
	return b
}

// parseTreeEntries reads a tree object's content. Modes come back
// canonical (a directory, a regular or executable file, a symbolic link or
// a submodule), as go-git's decoder gave them.
func parseTreeEntries(data []byte) ([]treeEnt, error) {
	var out []treeEnt
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("%w: missing mode terminator", errMalformedTree)
		}
		m, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("%w: malformed mode", errMalformedTree)
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 {
			return nil, fmt.Errorf("%w: missing filename terminator", errMalformedTree)
		}
		if nul == 0 {
			return nil, fmt.Errorf("%w: empty filename", errMalformedTree)
		}
		name := string(data[:nul])
		data = data[nul+1:]
		var h plumbing.Hash
		if len(data) < len(h) {
			return nil, fmt.Errorf("%w: truncated object id", errMalformedTree)
		}
		copy(h[:], data)
		data = data[len(h):]
		out = append(out, treeEnt{mode: canonicalMode(uint32(m)), name: name, hash: h})
	}
	return out, nil
}

// canonicalMode is the mode git means by m.
func canonicalMode(m uint32) uint32 {
	switch m & 0o170000 {
	case 0o040000:
		return 0o040000
	case 0o100000:
		if m&0o111 != 0 {
			return 0o100755
		}
		return 0o100644
	case 0o120000:
		return 0o120000
	}
	return 0o160000
}

// commitFields are the parts of a commit object gitstore writes and reads.
type commitFields struct {
	tree      plumbing.Hash
	parents   []plumbing.Hash
	author    Signature
	committer Signature
	message   string
	signature string // the gpgsig header's value, continuation lines joined
}

// appendCommit appends the content of the commit object c to b: tree,
// parents, author, committer, the gpgsig header when there is a
// signature, a blank line and the message.
func appendCommit(b []byte, c *commitFields) []byte {
	b = append(b, "tree "...)
	b = hex.AppendEncode(b, c.tree[:])
	b = append(b, '\n')
	for _, p := range c.parents {
		b = append(b, "parent "...)
		b = hex.AppendEncode(b, p[:])
		b = append(b, '\n')
	}
	b = append(b, "author "...)
	b = appendSignature(b, c.author)
	b = append(b, "\ncommitter "...)
	b = appendSignature(b, c.committer)
	if c.signature != "" {
		b = append(b, "\ngpgsig "...)
		b = append(b, strings.ReplaceAll(strings.TrimSuffix(c.signature, "\n"), "\n", "\n ")...)
	}
	b = append(b, "\n\n"...)
	return append(b, c.message...)
}

// appendSignature appends "Name <email> SECONDS ±HHMM"; a time before
// 1970 is written as 0, as go-git did.
func appendSignature(b []byte, s Signature) []byte {
	b = append(b, s.Name...)
	b = append(b, " <"...)
	b = append(b, s.Email...)
	b = append(b, "> "...)
	b = strconv.AppendInt(b, max(s.When.Unix(), 0), 10)
	b = append(b, ' ')
	return s.When.AppendFormat(b, "-0700")
}

// parseSignature reads "Name <email> SECONDS ±HHMM" leniently, as git and
// go-git do: what cannot be read stays zero.
func parseSignature(b []byte) Signature {
	var s Signature
	open, close := bytes.LastIndexByte(b, '<'), bytes.LastIndexByte(b, '>')
	if open < 0 || close < 0 || close < open {
		return s
	}
	s.Name = string(bytes.Trim(b[:open], " "))
	s.Email = string(b[open+1 : close])
	if close+2 >= len(b) {
		return s
	}
	b = b[close+2:]
	space := bytes.IndexByte(b, ' ')
	if space < 0 {
		space = len(b)
	}
	ts, err := strconv.ParseInt(string(b[:space]), 10, 64)
	if err != nil {
		return s
	}
	s.When = time.Unix(ts, 0).In(time.UTC)
	tz := space + 1
	if tz >= len(b) || tz+5 > len(b) {
		return s
	}
	zone := string(b[tz : tz+5])
	hours, err1 := strconv.ParseInt(zone[:3], 10, 64)
	mins, err2 := strconv.ParseInt(zone[3:], 10, 64)
	if err1 != nil || err2 != nil {
		return s
	}
	if hours < 0 {
		mins = -mins
	}
	s.When = s.When.In(time.FixedZone("", int(hours*3600+mins*60)))
	return s
}

// lines splits an object's content into lines, each with its "\n" (the
// last one may lack it).
type lines struct{ rest []byte }

func (l *lines) next() []byte {
	if len(l.rest) == 0 {
		return nil
	}
	n := bytes.IndexByte(l.rest, '\n') + 1
	if n == 0 {
		n = len(l.rest)
	}
	line := l.rest[:n]
	l.rest = l.rest[n:]
	return line
}

// header splits a header line into its key and its value (no newline); a
// line without a space is all key.
func header(line []byte) (string, []byte) {
	line = bytes.TrimRight(line, "\n")
	k, v, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return string(line), nil
	}
	return string(k), v
}

func isBlank(line []byte) bool { return len(line) == 1 && line[0] == '\n' }

// hexHash reads a header's object id as go-git did (40 hex digits, either
// case).
func hexHash(v []byte, malformed error, what string) (plumbing.Hash, error) {
	var h plumbing.Hash
	if len(v) != 2*len(h) {
		return h, fmt.Errorf("%w: bad %s hash", malformed, what)
	}
	if _, err := hex.Decode(h[:], v); err != nil {
		return plumbing.Hash{}, fmt.Errorf("%w: bad %s hash", malformed, what)
	}
	return h, nil
}

// parseCommit reads a commit object's content as go-git's decoder did (it
// follows git's commit.c): "tree" first; then the contiguous "parent"
// lines; "author" only right after them and "committer" only right after
// that (else ignored); every "gpgsig" header, continuation lines included
// (one leading space dropped), joined into the signature; every other
// header and its continuation lines skipped; after the first blank line,
// the message, verbatim.
func parseCommit(data []byte) (commitFields, error) {
	var c commitFields
	l := lines{rest: data}
	line := l.next()
	if len(line) == 0 || isBlank(line) {
		return c, fmt.Errorf("%w: missing tree header", errMalformedCommit)
	}
	k, v := header(line)
	if k != "tree" {
		return c, fmt.Errorf("%w: tree header must be first", errMalformedCommit)
	}
	var err error
	if c.tree, err = hexHash(v, errMalformedCommit, "tree"); err != nil {
		return c, err
	}
	// step: 0 parents, 1 author, 2 committer, 3 other headers.
	step, inSig := 0, false
	for {
		line = l.next()
		if len(line) == 0 {
			return c, nil
		}
		if isBlank(line) {
			c.message = string(l.rest)
			return c, nil
		}
		if step == 3 && line[0] == ' ' {
			// a continuation line of the header before; go-git's extra
			// headers without a value would take it as a header of its
			// own, whose key ("") is none of those read here
			if inSig {
				c.signature += string(line[1:])
			}
			continue
		}
		k, v := header(line)
		switch {
		case step == 0 && k == "parent":
			h, err := hexHash(v, errMalformedCommit, "parent")
			if err != nil {
				return c, err
			}
			c.parents = append(c.parents, h)
			continue
		case step <= 1 && k == "author":
			c.author, step = parseSignature(v), 2
			continue
		case step <= 2 && k == "committer":
			c.committer, step = parseSignature(v), 3
			inSig = false
			continue
		}
		step = 3
		inSig = k == "gpgsig"
		if inSig {
			c.signature += string(v) + "\n"
		}
	}
}

// parseTagTarget reads the object a tag object points at, with go-git's
// checks of its first three headers: "object" (an id), "type" (an object
// type) and "tag", in that order.
func parseTagTarget(data []byte) (plumbing.Hash, error) {
	l := lines{rest: data}
	var target plumbing.Hash
	for i, want := range []string{"object", "type", "tag"} {
		line := l.next()
		if len(line) == 0 || isBlank(line) {
			return plumbing.ZeroHash, fmt.Errorf("%w: missing %s header", errMalformedTag, want)
		}
		k, v := header(line)
		if k != want {
			if i == 0 {
				return plumbing.ZeroHash, fmt.Errorf("%w: object header must be first", errMalformedTag)
			}
			return plumbing.ZeroHash, fmt.Errorf("%w: %s header must follow %s", errMalformedTag, want, []string{"object", "type"}[i-1])
		}
		switch want {
		case "object":
			h, err := hexHash(v, errMalformedTag, "object")
			if err != nil {
				return plumbing.ZeroHash, err
			}
			target = h
		case "type":
			if _, err := plumbing.ParseObjectType(string(v)); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		if line[len(line)-1] != '\n' {
			return target, nil // the content ends on this line: go-git stopped here
		}
	}
	return target, nil
}
