package gitstore

import (
	"fmt"
	"strings"
)

// FileAt returns the blob at a slash-separated path inside tree root, or an
// error wrapping ErrNotFound when the path is absent or names a directory.
func FileAt(s Reader, root OID, path string) (OID, error) {
	cur := root
	parts := strings.Split(path, "/")
	for i, p := range parts {
		entries, err := s.Tree(cur)
		if err != nil {
			return "", err
		}
		found := false
		for _, e := range entries {
			if e.Name == p {
				if (i == len(parts)-1) != (e.Mode == ModeFile) {
					return "", fmt.Errorf("%s: %w", path, ErrNotFound)
				}
				cur, found = e.OID, true
				break
			}
		}
		if !found {
			return "", fmt.Errorf("%s: %w", path, ErrNotFound)
		}
	}
	return cur, nil
}
