package adapters

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"

	"github.com/readproof/readproof/internal/fspath"
)

// CheckRoots reports, without opening the document, whether spec's file (or
// local git repository) lies outside the roots env allows: the check Fetch
// makes before it looks for it, so `readproof resource add` can refuse the
// path when it is given instead of at the first read. flag, when a
// command-line flag gave the path ("--path", "--url"), is named before the
// path in the message. The refusal is the *Error Fetch would return
// (ErrRefused, Rule RuleRoots) for resource uri. A git source is checked when
// its url is a local path or file:// URL; other source types, and a spec
// Check refuses, give nil: Check reports those. A file there already is
// also refused when Fetch would refuse it for its hard links.
func CheckRoots(uri string, spec Spec, env Env, flag string) error {
	src, err := Open(spec, env)
	if err != nil {
		return nil
	}
	if g, ok := src.(*gitSource); ok {
		return g.checkRoots(uri, withFlag(flag, g.shown))
	}
	s, ok := src.(*fsSource)
	if !ok {
		return nil
	}
	shown := withFlag(flag, s.spec.Path)
	if err := s.checkRoots(uri, shown); err != nil {
		return err
	}
	// A path that exists is also judged where its links lead, as Fetch
	// judges it; one that does not exist yet is judged by the lexical check.
	if final, err := filepath.EvalSymlinks(s.abs); err == nil {
		if _, _, ok := s.contain(final); !ok {
			return refuse(uri, RuleRoots, "%s resolves to %s, outside the allowed roots (%s); %s", shown, final, strings.Join(s.roots, ", "), hintRoots)
		}
		// a directory is never a document (Fetch refuses it the same
		// way); a file that does not exist yet may come
		fi, err := os.Stat(final)
		if err == nil && fi.IsDir() {
			return refuse(uri, RuleRegular, "%s is a directory, not a regular file; point %s at a file", shown, cmp.Or(flag, "path"))
		}
		// a file with more than one name, refused as Fetch refuses it
		if err == nil && fi.Mode().IsRegular() {
			if err := s.checkLinks(uri, shown, fi); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRoots is the first check of Fetch: the path, with the links in the
// part of it that exists resolved, lands inside a root. It answers the same
// whether or not a file is there, so a refusal does not tell which files
// exist. shown names the path in the message.
func (s *fsSource) checkRoots(uri, shown string) error {
	landed, err := fspath.Resolve(s.abs)
	if err != nil {
		return refuse(uri, RuleRoots, "%s cannot be placed inside the allowed roots (%s); %s", shown, strings.Join(s.roots, ", "), hintRoots)
	}
	if _, _, ok := s.containLexically(landed); !ok {
		return s.outsideRoots(uri, shown)
	}
	return nil
}

// outsideRoots is checkRoots' refusal of a path that lands outside the roots.
func (s *fsSource) outsideRoots(uri, shown string) error {
	return refuse(uri, RuleRoots, "%s is outside the allowed roots (%s); %s", shown, strings.Join(s.roots, ", "), hintRoots)
}

// checkRoots is the roots check of a local git source's Fetch, made without
// the repository: where the path lands, and where its links lead when it
// exists. shown names the url in the message.
func (g *gitSource) checkRoots(uri, shown string) error {
	if g.kind != gitLocal {
		return nil
	}
	fsrc := &fsSource{roots: g.roots}
	landed, err := fspath.Resolve(g.local)
	if err != nil {
		return refuse(uri, RuleRoots, "git repository %s cannot be placed inside the allowed roots (%s); %s", shown, strings.Join(g.roots, ", "), hintRoots)
	}
	if _, _, ok := fsrc.containLexically(landed); !ok {
		return refuse(uri, RuleRoots, "git repository %s is outside the allowed roots (%s); %s", shown, strings.Join(g.roots, ", "), hintRoots)
	}
	if final, err := filepath.EvalSymlinks(g.local); err == nil {
		if _, _, ok := fsrc.contain(final); !ok {
			return refuse(uri, RuleRoots, "git repository %s resolves to %s, outside the allowed roots (%s); %s", shown, final, strings.Join(g.roots, ", "), hintRoots)
		}
		return g.checkGitDirs(uri, shown)
	}
	return nil
}

// withFlag is path as a message names it: after the flag that gave it, if any.
func withFlag(flag, path string) string {
	if flag == "" {
		return path
	}
	return flag + " " + path
}
