package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ---- encoding objects ----

// treeSortName is the key git sorts tree entries by: directories compare as
// if their name ended in "/".
func treeSortName(name string, mode Mode) string {
	if mode == ModeDir {
		return name + "/"
	}
	return name
}

// encodeTree checks, sorts and encodes entries as a tree object's content.
func encodeTree(entries []TreeEntry) ([]byte, error) {
	es := make([]object.TreeEntry, len(entries))
	seen := make(map[string]struct{}, len(entries))
	for i, e := range entries {
		if err := CheckTreeName(e.Name); err != nil {
			return nil, fmt.Errorf("put tree: %w", err)
		}
		if _, dup := seen[e.Name]; dup {
			return nil, fmt.Errorf("put tree: entry %q appears twice: tree entry names must be unique", e.Name)
		}
		seen[e.Name] = struct{}{}
		var fm filemode.FileMode
		switch e.Mode {
		case ModeFile:
			fm = filemode.Regular
		case ModeDir:
			fm = filemode.Dir
		default:
			return nil, fmt.Errorf("put tree: entry %q has mode %o: use ModeFile or ModeDir", e.Name, uint32(e.Mode))
		}
		h, err := parseOID(e.OID)
		if err != nil {
			return nil, fmt.Errorf("put tree: entry %q: %w", e.Name, err)
		}
		es[i] = object.TreeEntry{Name: e.Name, Mode: fm, Hash: h}
	}
	sort.Slice(es, func(i, j int) bool {
		return treeSortName(es[i].Name, Mode(es[i].Mode)) < treeSortName(es[j].Name, Mode(es[j].Mode))
	})
	mo := &encodedContent{}
	mo.b.Grow(len(es) * 56) // mode, a short name, the id
	if err := (&object.Tree{Entries: es}).Encode(mo); err != nil {
		return nil, fmt.Errorf("put tree: %w", err)
	}
	return objectBytes(mo)
}

func objectBytes(mo *encodedContent) ([]byte, error) { return mo.b.Bytes(), nil }

// encodedContent is the object go-git's encoders write into: their output
// is the content itself, with no copy out of a plumbing.MemoryObject
// (whose reader, copied into a buffer of the object's size, made every tree
// and commit allocate twice its size).
type encodedContent struct {
	t plumbing.ObjectType
	b bytes.Buffer
}

func (o *encodedContent) Hash() plumbing.Hash           { return plumbing.ZeroHash }
func (o *encodedContent) Type() plumbing.ObjectType     { return o.t }
func (o *encodedContent) SetType(t plumbing.ObjectType) { o.t = t }
func (o *encodedContent) Size() int64                   { return int64(o.b.Len()) }
func (o *encodedContent) SetSize(int64)                 {}
func (o *encodedContent) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.b.Bytes())), nil
}
func (o *encodedContent) Writer() (io.WriteCloser, error) { return nopWriteCloser{&o.b}, nil }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// encodeCommit checks c and returns the content of its commit object.
func encodeCommit(c Commit) ([]byte, error) {
	tree, err := parseOID(c.Tree)
	if err != nil {
		return nil, fmt.Errorf("put commit: tree: %w", err)
	}
	parents := make([]plumbing.Hash, len(c.Parents))
	for i, p := range c.Parents {
		if parents[i], err = parseOID(p); err != nil {
			return nil, fmt.Errorf("put commit: parent %d: %w", i+1, err)
		}
	}
	if err := checkIdent("author", c.Author); err != nil {
		return nil, fmt.Errorf("put commit: %w", err)
	}
	if err := checkIdent("committer", c.Committer); err != nil {
		return nil, fmt.Errorf("put commit: %w", err)
	}
	if strings.IndexByte(c.Message, 0) >= 0 {
		return nil, errors.New("put commit: message contains NUL: remove it")
	}
	if c.Signature != "" && (strings.IndexByte(c.Signature, 0) >= 0 || strings.Contains(c.Signature, "\r") || !strings.HasSuffix(c.Signature, "\n")) {
		return nil, errors.New("put commit: signature contains NUL or CR, or does not end with a newline: pass the armored signature exactly as the signer produced it")
	}
	gc := &object.Commit{
		TreeHash:     tree,
		ParentHashes: parents,
		Author:       object.Signature{Name: c.Author.Name, Email: c.Author.Email, When: c.Author.When},
		Committer:    object.Signature{Name: c.Committer.Name, Email: c.Committer.Email, When: c.Committer.When},
		Message:      c.Message,
		PGPSignature: c.Signature,
	}
	mo := &encodedContent{}
	if err := gc.Encode(mo); err != nil {
		return nil, fmt.Errorf("put commit: %w", err)
	}
	return objectBytes(mo)
}

// CommitPayload returns the content of c's commit object without any
// signature header: the bytes a commit signature covers and what
// `git verify-commit` checks. c.Signature is ignored.
func CommitPayload(c Commit) ([]byte, error) {
	c.Signature = ""
	return encodeCommit(c)
}
