package gitstore

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
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
	es := make([]treeEnt, len(entries))
	seen := make(map[string]struct{}, len(entries))
	for i, e := range entries {
		if err := CheckTreeName(e.Name); err != nil {
			return nil, fmt.Errorf("put tree: %w", err)
		}
		if _, dup := seen[e.Name]; dup {
			return nil, fmt.Errorf("put tree: entry %q appears twice: tree entry names must be unique", e.Name)
		}
		seen[e.Name] = struct{}{}
		switch e.Mode {
		case ModeFile, ModeDir:
		default:
			return nil, fmt.Errorf("put tree: entry %q has mode %o: use ModeFile or ModeDir", e.Name, uint32(e.Mode))
		}
		h, err := parseOID(e.OID)
		if err != nil {
			return nil, fmt.Errorf("put tree: entry %q: %w", e.Name, err)
		}
		es[i] = treeEnt{mode: uint32(e.Mode), name: e.Name, hash: h}
	}
	sort.Slice(es, func(i, j int) bool {
		return treeSortName(es[i].name, Mode(es[i].mode)) < treeSortName(es[j].name, Mode(es[j].mode))
	})
	// mode, a short name, the id
	return appendTreeEntries(make([]byte, 0, len(es)*56), es), nil
}

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
	return appendCommit(nil, &commitFields{
		tree:      tree,
		parents:   parents,
		author:    c.Author,
		committer: c.Committer,
		message:   c.Message,
		signature: c.Signature,
	}), nil
}

// CommitPayload returns the content of c's commit object without any
// signature header: the bytes a commit signature covers and what
// `git verify-commit` checks. c.Signature is ignored.
func CommitPayload(c Commit) ([]byte, error) {
	c.Signature = ""
	return encodeCommit(c)
}
