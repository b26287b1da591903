package adapters

import (
	"path/filepath"
	"strings"

	"github.com/readproof/readproof/internal/fspath"
)

// CheckRoots reports, without opening the document, whether spec's file
// lies outside the roots env allows: the check a filesystem source's Fetch
// makes before it looks for the file, so `readproof resource add` can refuse
// the path when it is given instead of at the first read. shown names the
// path in the message (a flag such as "--path x" when a flag was the input);
// empty, it is spec.Path. The refusal is the *Error Fetch would return
// (ErrRefused, Rule RuleRoots) for resource uri. Other source types, and a
// spec Check refuses, give nil: Check reports those.
func CheckRoots(uri string, spec Spec, env Env, shown string) error {
	src, err := Open(spec, env)
	if err != nil {
		return nil
	}
	s, ok := src.(*fsSource)
	if !ok {
		return nil
	}
	if shown == "" {
		shown = s.spec.Path
	}
	if err := s.checkRoots(uri, shown); err != nil {
		return err
	}
	// A path that exists is also judged where its links lead, as Fetch
	// judges it; one that does not exist yet is judged by the lexical check.
	if final, err := filepath.EvalSymlinks(s.abs); err == nil {
		if _, _, ok := s.contain(final); !ok {
			return refuse(uri, RuleRoots, "%s resolves to %s, outside the allowed roots (%s); %s", shown, final, strings.Join(s.roots, ", "), hintRoots)
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
		return refuse(uri, RuleRoots, "%s is outside the allowed roots (%s); %s", shown, strings.Join(s.roots, ", "), hintRoots)
	}
	return nil
}
