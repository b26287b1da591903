package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// BrokenRef is a loose ref file under refs/ whose name git refuses or whose
// content is not an object id (or a valid symbolic ref), or a packed-refs
// record whose name git refuses. Git ignores them; a whole store check
// reports them.
type BrokenRef struct {
	Name string
	Err  error
	// Packed says the ref is a packed-refs record, not a loose file.
	Packed bool
}

// BrokenRefs lists the loose ref files under prefix ("" means refs/) that
// do not parse, and the packed records under prefix whose names git
// refuses. Lock files are ignored.
func BrokenRefs(s Reader, prefix string) ([]BrokenRef, error) {
	r, ok := s.(*repo)
	if !ok {
		return nil, fmt.Errorf("broken refs: %T is not a repository opened by gitstore", s)
	}
	if prefix == "" {
		prefix = "refs/"
	}
	if !strings.HasPrefix(prefix, "refs/") {
		return nil, fmt.Errorf("broken refs %q: prefix does not start with refs/: use a prefix such as refs/heads/", prefix)
	}
	dir := prefix[:strings.LastIndexByte(prefix, '/')+1]
	root := r.refPath(dir)
	var out []BrokenRef
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if isMissing(err) {
				if p == root {
					return filepath.SkipAll
				}
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, rerr := filepath.Rel(r.path, p)
		if rerr != nil {
			return rerr
		}
		name := filepath.ToSlash(rel)
		if !strings.HasPrefix(name, prefix) || strings.HasSuffix(name, ".lock") {
			return nil
		}
		if cerr := CheckRefName(name); cerr != nil {
			out = append(out, BrokenRef{Name: name, Err: cerr})
			return nil
		}
		data, rerr := os.ReadFile(p)
		if rerr != nil {
			if isMissing(rerr) {
				return nil
			}
			return fmt.Errorf("read ref %s: %w", name, rerr)
		}
		if _, _, perr := parseLooseRef(data); perr != nil {
			out = append(out, BrokenRef{Name: name, Err: perr})
		}
		return nil
	})
	if err != nil && !errors.Is(err, filepath.SkipAll) {
		return nil, fmt.Errorf("list refs %s: %w", prefix, err)
	}
	// A packed record whose name git's rules refuse is ignored by git as
	// such a loose file is ("ignoring ref with broken name"); the listings
	// do not check every packed name (a cost per ref at 10^5 runs), so the
	// whole store check does.
	p, err := r.loadPacked()
	if err != nil {
		return nil, err
	}
	if p != nil {
		err = p.scanPrefix(prefix, func(name []byte, _ OID) bool {
			if cerr := CheckRefName(string(name)); cerr != nil {
				out = append(out, BrokenRef{Name: string(name), Err: cerr, Packed: true})
			}
			return true
		})
		if err != nil {
			return nil, fmt.Errorf("list refs %s: %w", prefix, err)
		}
	}
	return out, nil
}
