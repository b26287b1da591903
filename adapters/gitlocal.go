package adapters

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A local repository is read by stock git's upload-pack, which does not
// stop at the directory the url names: it tries url/.git, url, url.git/.git
// and url.git in turn, follows a "gitdir:" file at any of them, takes refs
// and objects from the directory a commondir file names, objects from the
// directories objects/info/alternates lists, and follows links inside the
// repository. Each of these can point outside the roots, and each can be
// committed to (or unpacked into) a project whose readproof.toml names it;
// checkGitDirs judges every place git could read before git runs.

// maxGitRedirects bounds the gitdir, commondir and alternates hops
// followed (git follows alternates five deep).
const maxGitRedirects = 5

// gitDirCheck walks what git would read of one local repository.
type gitDirCheck struct {
	fsrc  *fsSource
	roots []string // resolved
	seen  map[string]bool
	// where and what name the first place found outside the roots.
	where, what string
}

// checkGitDirs returns a RuleRoots refusal when git, asked for the
// repository at s.local, could read anything outside the roots.
func (s *gitSource) checkGitDirs(uri, shown string) error {
	fsrc := &fsSource{roots: s.roots}
	c := &gitDirCheck{fsrc: fsrc, roots: fsrc.resolvedRoots(), seen: map[string]bool{}}
	ok := true
	for _, p := range []string{filepath.Join(s.local, ".git"), s.local, s.local + ".git/.git", s.local + ".git"} {
		var used bool
		if used, ok = c.candidate(p); !ok || used {
			break
		}
	}
	if ok {
		return nil
	}
	return refuse(uri, RuleRoots, "git repository %s: git would read %s at %s, outside the allowed roots (%s); %s", shown, c.what, c.where, strings.Join(s.roots, ", "), hintRoots)
}

// outside records p as read outside the roots and returns false.
func (c *gitDirCheck) outside(what, p string) bool {
	c.what, c.where = what, p
	return false
}

// inside reports whether p, with its links resolved, lies inside a root;
// a path that is not there is inside (git reads nothing from it).
func (c *gitDirCheck) inside(what, p string) bool {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return true
		}
		return c.outside(what, p)
	}
	if _, _, ok := c.fsrc.containIn(real, c.roots); !ok {
		return c.outside(what, real)
	}
	return true
}

// candidate judges one of the paths git tries for the repository, in
// git's order: a gitdir file is followed, a directory judged as a git
// directory. used is true when git surely stops at p (a regular file, or a
// directory it surely takes for a repository), so the later candidates
// are not git's; when in doubt they are judged too.
func (c *gitDirCheck) candidate(p string) (used, ok bool) {
	fi, err := os.Stat(p)
	if err != nil {
		return false, true
	}
	if !c.inside("the repository", p) {
		return false, false
	}
	if fi.Mode().IsRegular() {
		// git's read_gitfile: "gitdir: " and the rest of the file, less
		// its trailing line ends.
		b, err := readLimited(p)
		rest, isGitfile := strings.CutPrefix(string(b), "gitdir: ")
		if err != nil || !isGitfile {
			return true, true // git stops here, and refuses it
		}
		rest = strings.TrimRight(rest, "\r\n")
		if !filepath.IsAbs(rest) {
			rest = filepath.Join(filepath.Dir(p), rest)
		}
		return true, c.gitDir("the target of the gitdir file "+p, rest, 1)
	}
	if fi.IsDir() {
		return surelyGitDir(p), c.gitDir("the repository", p, 0)
	}
	return false, true
}

// surelyGitDir reports whether git's is_git_directory surely holds for d:
// a HEAD naming a ref under refs/ or an object id, and searchable objects
// and refs directories (in the directory its commondir names, if any).
// False when in doubt.
func surelyGitDir(d string) bool {
	if fi, err := os.Lstat(filepath.Join(d, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	head, ok := readFirstLine(filepath.Join(d, "HEAD"))
	if !ok {
		return false
	}
	if ref, isRef := strings.CutPrefix(head, "ref:"); isRef {
		if !strings.HasPrefix(strings.TrimSpace(ref), "refs/") {
			return false
		}
	} else if !hexID().MatchString(head) {
		return false
	}
	common := d
	if cd, ok := readTrimmed(filepath.Join(d, "commondir")); ok {
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(d, cd)
		}
		common = cd
	} else if _, err := os.Lstat(filepath.Join(d, "commondir")); err == nil {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		fi, err := os.Stat(filepath.Join(common, sub))
		if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o111 != 0o111 {
			return false
		}
	}
	return true
}

// gitDir judges a git directory: its own files, the commondir it names
// and its objects.
func (c *gitDirCheck) gitDir(what, d string, depth int) bool {
	if depth > maxGitRedirects {
		return c.outside("a chain of more than 5 gitdir or commondir files", d)
	}
	if !c.inside(what, d) {
		return false
	}
	if c.seen[d] {
		return true
	}
	c.seen[d] = true
	for _, name := range []string{"HEAD", "packed-refs", "shallow", "commondir", filepath.Join("info", "grafts")} {
		if !c.inside(name, filepath.Join(d, name)) {
			return false
		}
	}
	if !c.walkLinks(filepath.Join(d, "refs")) {
		return false
	}
	if common, ok := readTrimmed(filepath.Join(d, "commondir")); ok && common != "" {
		if !filepath.IsAbs(common) {
			common = filepath.Join(d, common)
		}
		if !c.gitDir("the directory its commondir file names", common, depth+1) {
			return false
		}
	}
	return c.objects(filepath.Join(d, "objects"), depth)
}

// objects judges an object directory and the alternates it lists.
func (c *gitDirCheck) objects(o string, depth int) bool {
	if depth > maxGitRedirects {
		return c.outside("a chain of more than 5 alternates", o)
	}
	if !c.inside("objects", o) || !c.walkLinks(o) {
		return false
	}
	info := filepath.Join(o, "info", "alternates")
	if !c.inside("objects/info/alternates", info) {
		return false
	}
	b, err := readLimited(info)
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") { // as git splits them, nothing trimmed
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, `"`) {
			u, err := strconv.Unquote(line)
			if err != nil {
				return c.outside("an alternate object directory readproof cannot read", info)
			}
			line = u
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(o, line)
		}
		if !c.objects(line, depth+1) {
			return false
		}
	}
	return true
}

// walkLinks judges every link below dir (git follows them), dir and
// linked directories below it walked where they lead.
func (c *gitDirCheck) walkLinks(dir string) bool {
	walked := map[string]bool{}
	var walk func(dir string) bool
	walk = func(dir string) bool {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || walked[real] {
			return true // inside judged it
		}
		walked[real] = true
		ok := true
		_ = filepath.WalkDir(real, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			if !c.inside("a link", p) {
				ok = false
				return filepath.SkipAll
			}
			if fi, err := os.Stat(p); err == nil && fi.IsDir() && !walk(p) {
				ok = false
				return filepath.SkipAll
			}
			return nil
		})
		return ok
	}
	return walk(dir)
}

// readFirstLine is the first line of the file p, without its line end.
func readFirstLine(p string) (string, bool) {
	b, err := readLimited(p)
	if err != nil {
		return "", false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimRight(line, "\r \t"), true
}

// readTrimmed is the file p less its trailing line ends, as git reads a
// commondir file.
func readTrimmed(p string) (string, bool) {
	b, err := readLimited(p)
	if err != nil {
		return "", false
	}
	return strings.TrimRight(string(b), "\r\n"), true
}

// readLimited reads the first 64 KiB of the regular file p.
func readLimited(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, 64<<10))
}
