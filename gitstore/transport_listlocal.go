package gitstore

// Listing a remote on this machine without git: `git ls-remote --symref`
// of a local path starts a shell and git-upload-pack besides git itself
// (about 4.6 ms of CPU here, where the `git config` that resolves the URL
// costs 1.6). A push or a pull lists its remote before anything else, so a
// repository on this machine whose listing cannot differ from what
// upload-pack would advertise is read in place: its refs with the files
// ref backend's reader (Refs; or, when every ref file is a plain loose
// ref, in one walk: plainLooseRefs), each checked to name an object the
// repository holds, and HEAD. Whatever could make upload-pack advertise
// something else is left to git: a URL git may rewrite (the caller names
// the URL git resolved), hidden refs (transfer.hideRefs or
// uploadpack.hideRefs in any scope of this repository's configuration, or
// in the remote's own config file), rules on the protocols git may use
// (protocol.allow, protocol.file.allow, GIT_ALLOW_PROTOCOL: git may refuse
// a local path), a config file this reader does not
// take apart simply, a repository another user owns (safe.directory), a
// repository format with extensions, a symbolic HEAD that is not
// "ref: refs/...", or a ref naming a missing object.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/readproof/readproof/internal/hint"
)

// maxLocalConfig bounds the config file listLocal reads itself: a larger
// regular file is left to git.
const maxLocalConfig = 1 << 20

// listLocal lists the repository url names as `git ls-remote --symref`
// would: every ref under refs/ (sorted by name) and the ref HEAD names when
// it exists ("" otherwise, or when HEAD is detached). ok is false when the
// repository is not one listLocal reads (see above): the caller asks git.
// err is set when the repository holds a ref file, HEAD or config that no
// reader should read to its end (a symbolic link to /dev/zero, a FIFO, a
// ref file larger than any ref: git itself reads /dev/zero until memory
// runs out): the listing is refused, naming the file.
func listLocal(url string) (refs []Ref, head string, ok bool, err error) {
	dir, ok := localRepoPath(url)
	if !ok || os.Getenv("GIT_ALLOW_PROTOCOL") != "" {
		return nil, "", false, nil
	}
	fi, err := os.Stat(dir)
	if err != nil || !ownedByMe(fi) {
		return nil, "", false, nil
	}
	for _, name := range []string{"commondir", "reftable"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			return nil, "", false, nil
		}
	}
	if !realDir(filepath.Join(dir, "refs")) {
		return nil, "", false, nil
	}
	cfg := filepath.Join(dir, "config")
	if data, err := readSmallFile(cfg, maxLocalConfig); err == nil {
		if !plainServingConfig(data) {
			return nil, "", false, nil
		}
	} else if errors.Is(err, errNotSmallFile) {
		if fi, serr := os.Stat(cfg); serr == nil && fi.Mode().IsRegular() {
			return nil, "", false, nil // a large config: git reads it
		}
		return nil, "", false, refuseLocal(url, err, fmt.Sprintf("a repository's config must be a regular file of at most %d bytes", maxLocalConfig))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, "", false, nil
	}
	raw, err := readSmallFile(filepath.Join(dir, "HEAD"), maxRefFile)
	if errors.Is(err, errNotSmallFile) {
		return nil, "", false, refuseLocal(url, err, refFileRule())
	}
	if err != nil {
		return nil, "", false, nil
	}
	// the common case first: every ref file a plain loose ref, read in one
	// walk; anything else is looked at as below
	loose, plain := plainLooseRefs(dir)
	if !plain {
		if err := unreadableRefFile(dir); err != nil {
			return nil, "", false, refuseLocal(url, err, refFileRule())
		}
	}
	target := ""
	if rest, ok := strings.CutPrefix(string(raw), "ref: "); ok {
		target = strings.TrimRight(rest, "\n")
		if CheckRefName(target) != nil || !strings.HasPrefix(target, "refs/") {
			return nil, "", false, nil
		}
	} else if !isHexOID(strings.TrimRight(string(raw), "\n")) {
		return nil, "", false, nil
	}
	s, err := OpenWithOptions(dir, Options{})
	if err != nil {
		return nil, "", false, nil
	}
	defer s.Close()
	if plain {
		r, isRepo := s.(*repo)
		if !isRepo || r.path != dir {
			return nil, "", false, nil // not the refs/ walked
		}
		refs, err = r.withPacked("refs/", loose)
	} else {
		refs, err = s.Refs("")
	}
	if err != nil {
		return nil, "", false, nil
	}
	listed := make(map[string]bool, len(refs))
	for _, r := range refs {
		// git leaves out a ref whose object is missing: so is the question
		if has, err := s.Has(r.OID); err != nil || !has {
			return nil, "", false, nil
		}
		if r.Name == target {
			head = target
		}
		listed[r.Name] = true
	}
	if !plain && !everyLooseListed(dir, listed) {
		return nil, "", false, nil
	}
	return refs, head, true, nil
}

// ErrUnreadableRepoFile is listLocal's refusal of a repository on this
// machine one of whose files (a ref, HEAD, its config) no reader should
// read to its end: a device, a FIFO, a huge file. Its hint says so; git
// itself would block on such a file or read it until memory runs out, so
// a hint to try git ls-remote there would hang.
var ErrUnreadableRepoFile = errors.New("a file of the repository is not one to read")

// refFileRule is what listLocal asks of a ref file and HEAD.
func refFileRule() string {
	return fmt.Sprintf("a ref file must be a regular file of at most %d bytes", maxRefFile)
}

// refuseLocal is listLocal's refusal of the repository at url, err naming
// the file and rule what the file must be.
func refuseLocal(url string, err error, rule string) error {
	return hint.With(fmt.Errorf("list refs of %s: %w: %w: %s", RedactURL(url), ErrUnreadableRepoFile, err, rule),
		"delete or replace the file named above in that repository (a ref: git update-ref, git symbolic-ref); git would block on it or read it until memory runs out, so do not list that repository with git ls-remote until it is replaced")
}

// unreadableRefFile returns an error naming the first file under dir's
// refs/ (lock files aside) that, followed through symbolic links, is not a
// regular file of at most maxRefFile bytes: a device, a FIFO, a socket or
// a huge file that git would read to its end (or block on) to list the
// refs. A symbolic link whose text is a ref name is git's old form of a
// symbolic ref and is left alone.
func unreadableRefFile(dir string) error {
	var bad error
	err := filepath.WalkDir(filepath.Join(dir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if link, err := os.Readlink(p); err == nil && strings.HasPrefix(link, "refs/") {
				return nil
			}
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil // a dangling link: git skips it as a broken ref
		}
		if fi.IsDir() {
			return nil
		}
		if bad = notSmallFile(p, fi, maxRefFile); bad != nil {
			return filepath.SkipAll
		}
		return nil
	})
	if bad != nil {
		return bad
	}
	_ = err // a walk error is left to the listing that follows
	return nil
}

// everyLooseListed reports whether every file under dir's refs/ (lock
// files aside) is a ref in listed: Refs leaves out what git may read
// otherwise (a name git's rules and CheckRefName judge apart, a broken or
// symbolic ref), and the listing proves what a remote holds.
func everyLooseListed(dir string, listed map[string]bool) bool {
	all := true
	err := filepath.WalkDir(filepath.Join(dir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || !d.Type().IsRegular() || !listed[filepath.ToSlash(rel)] {
			all = false
			return filepath.SkipAll
		}
		return nil
	})
	return err == nil && all
}

// plainServingConfig reports whether data, a repository's config file,
// holds only simple lines (as simpleConfigURL reads them) and no
// section that changes what upload-pack advertises or how git reads the
// repository: include, includeIf, extensions, uploadpack, transfer.
func plainServingConfig(data []byte) bool {
	if strings.ContainsAny(string(data), "\r\\\x00\"") || strings.HasPrefix(string(data), "\xef\xbb\xbf") {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimLeft(line, " \t")
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return false
			}
			if rest := strings.TrimLeft(line[end+1:], " \t"); rest != "" && rest[0] != '#' && rest[0] != ';' {
				return false
			}
			section, _, _ := strings.Cut(line[1:end], " ")
			if section == "" || strings.Trim(section, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "" {
				return false // the legacy [section.sub] form among others
			}
			switch strings.ToLower(section) {
			case "include", "includeif", "extensions", "uploadpack", "transfer":
				return false
			}
			continue
		}
		key, _, _ := strings.Cut(line, "=")
		if !configKey(strings.TrimRight(key, " \t")) {
			return false
		}
	}
	return true
}

// IsLocalRepo reports whether url names a bare repository on this machine
// (an absolute path or a file:// URL), one LsRemoteHead may read in place
// once the configuration settled that git lists it at url.
func IsLocalRepo(url string) bool {
	_, ok := localRepoPath(url)
	return ok
}
