package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// Sharing says who besides the owner may read a store's files. It is kept in
// the store's config as git's own core.sharedRepository, so stock git
// writing into the store (git gc, git push into a bare remote) creates files
// with the same modes.
type Sharing string

const (
	// SharePrivate: only the owner (directories 0700, files 0600, objects
	// 0400), whatever the umask. Stored as core.sharedRepository = 0600. The
	// default for new stores: a store holds the documents agents read.
	SharePrivate Sharing = "private"
	// ShareGroup: the owner and the directory's group may read and write
	// (directories 2770, files 0660, objects 0440), whatever the umask.
	// Stored as core.sharedRepository = group.
	ShareGroup Sharing = "group"
)

// ParseSharing reads the value of `readproof init --shared`: "private" (or
// "") and "group".
func ParseSharing(s string) (Sharing, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "private", "0600", "false":
		return SharePrivate, nil
	case "group", "true", "1":
		return ShareGroup, nil
	}
	return "", errors.New(`unknown sharing "` + s + `": use private (the default) or group`)
}

// configValue is what Init writes as core.sharedRepository.
func (sh Sharing) configValue() string {
	if sh == ShareGroup {
		return "group"
	}
	return "0600"
}

// sharingFromConfig maps git's core.sharedRepository to a Sharing: "group",
// "true", "1", "all", "world", "everybody", "2" and modes granting group
// access share with the group; anything else (unset, "umask", "false",
// "0600") is private. World access is never granted by readproof.
func sharingFromConfig(v string) Sharing {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "group", "true", "1", "all", "world", "everybody", "2":
		return ShareGroup
	}
	if len(v) == 4 && v[0] == '0' && v[2] != '0' {
		return ShareGroup // 0640, 0660, ...
	}
	return SharePrivate
}

// perms are the modes a store's files are created with.
type perms struct{ group bool }

// permsFromConfig is what a repository's core.sharedRepository asks for
// (cfg nil: no config, private).
func permsFromConfig(cfg *gitconfig.Config) perms {
	if cfg == nil {
		return perms{}
	}
	return perms{group: sharingFromConfig(cfg.Section("core").Options.Get("sharedRepository")) == ShareGroup}
}

func (p perms) dir() fs.FileMode {
	if p.group {
		return fs.ModeSetgid | 0o770
	}
	return 0o700
}

// file is the mode of files that are rewritten (refs, packed-refs, config).
func (p perms) file() fs.FileMode {
	if p.group {
		return 0o660
	}
	return 0o600
}

// object is the mode of object files (loose objects, packs, indexes).
func (p perms) object() fs.FileMode {
	if p.group {
		return 0o440
	}
	return 0o400
}

// mkdirAll creates dir and its missing parents with the directory mode,
// setting it explicitly on each directory it creates (the umask may have
// cleared group bits).
func (p perms) mkdirAll(dir string) error {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	var created []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		created = append(created, d)
	}
	if err := os.MkdirAll(dir, p.dir().Perm()); err != nil {
		return err
	}
	if p.group {
		for _, d := range created {
			os.Chmod(d, p.dir())
		}
	}
	return nil
}

// mkdir creates dir with the directory mode, as mkdirAll does, in one
// mkdir call when its parent exists; a directory that exists already is
// fine. Otherwise it is mkdirAll. made reports that this call created dir
// with that one mkdir.
func (p perms) mkdir(dir string) (made bool, err error) {
	err = os.Mkdir(dir, p.dir().Perm())
	switch {
	case err == nil:
		if p.group {
			os.Chmod(dir, p.dir())
		}
		return true, nil
	case errors.Is(err, fs.ErrExist):
		if fi, serr := os.Stat(dir); serr == nil && fi.IsDir() {
			return false, nil
		}
		return false, err
	case errors.Is(err, fs.ErrNotExist):
		return false, p.mkdirAll(dir)
	}
	return false, err
}

// create opens a new file (O_EXCL) with mode, set explicitly so the umask
// cannot change it. The file is the store's to write (openNoPoll).
func (p perms) create(name string, mode fs.FileMode) (*os.File, error) {
	f, err := openNoPoll(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return nil, err
	}
	if p.group {
		if err := f.Chmod(mode); err != nil {
			f.Close()
			os.Remove(name)
			return nil, err
		}
	}
	return f, nil
}
