package testproc

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CopyTree copies the directory src to dst, which must not exist yet:
// directories, regular files and symlinks, with their permission bits. A
// fixture repository built once per test process with stock git and copied
// for each test costs no process, where building it again costs one per
// git command.
func CopyTree(src, dst string) error {
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("copy %s: %s exists", src, dst)
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		default:
			return fmt.Errorf("copy %s: %s is not a file, directory or symlink", src, path)
		}
	})
}
