package adapters

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/readproof/readproof/internal/fspath"
)

func init() { Register("filesystem", openFilesystem) }

// fsSource reads one local file, confined to the policy file's roots.
type fsSource struct {
	spec  Spec
	abs   string   // the declared path made absolute
	roots []string // absolute, cleaned, not yet symlink-resolved
	max   int64
	// slowOnly turns openBelowRoot off (tests compare the two paths).
	slowOnly bool
}

func openFilesystem(spec Spec, env Env) (Source, error) {
	if spec.Path == "" {
		return broken(fail("", ErrConfig, nil, "filesystem source has no path; write source = { type = \"filesystem\", path = \"docs/file.md\" }"))
	}
	if strings.ContainsRune(spec.Path, 0) {
		return broken(fail("", ErrConfig, nil, "filesystem path %q contains a NUL byte; fix path in readproof.toml", spec.Path))
	}
	base := env.BaseDir
	if base == "" {
		wd, err := os.Getwd()
		if err != nil {
			return broken(fail("", ErrConfig, err, "filesystem source %s: no base directory: %v", spec.Path, err))
		}
		base = wd
	}
	base, err := filepath.Abs(base)
	if err != nil {
		return broken(fail("", ErrConfig, err, "filesystem source %s: base directory %s: %v", spec.Path, env.BaseDir, err))
	}
	s := &fsSource{spec: spec, max: env.MaxBytesOrDefault()}
	s.abs = filepath.Clean(filepath.FromSlash(spec.Path))
	if !filepath.IsAbs(s.abs) {
		s.abs = filepath.Join(base, s.abs)
	}
	roots := env.Roots
	if len(roots) == 0 {
		roots = []string{base}
	}
	for _, r := range roots {
		r = filepath.Clean(r)
		if !filepath.IsAbs(r) {
			r = filepath.Join(base, r)
		}
		s.roots = append(s.roots, r)
	}
	return s, nil
}

func (s *fsSource) Fetch(ctx context.Context, req Request) (Result, error) {
	uri := req.URI
	if err := checkCtx(ctx, uri, "reading "+s.spec.Path); err != nil {
		return Result{}, err
	}
	// The answer for a path outside the roots is the same whether a file is
	// there or not: links are resolved in the part of the path that exists,
	// and a path that lands outside every root is refused with checkRoots'
	// refusal, before anything is opened.
	//
	// Resolve every symlink, then check containment on the result: a link
	// that points outside the roots is refused, one that stays inside is
	// followed. When the whole path resolves, that one resolution is also
	// where checkRoots finds it lands (fspath.Resolve of an existing path is
	// its EvalSymlinks; TestFetchResolvesOnce), and the roots are resolved
	// once for both checks: a document costs half the lstat calls.
	//
	// Most documents need none of that: openBelowRoot opens a regular file
	// that lies lexically under a declared root, through that root, when
	// its last component is no link; the walk that resolves the root's own
	// links is the kernel's, and only the path below the root is checked.
	// Anything else (a link at the end, a link that leaves the root, a
	// missing file, a root that does not open) gets the full checks below,
	// which give every refusal and error.
	if !s.slowOnly {
		if f, fi, ok := s.openBelowRoot(); ok {
			defer f.Close()
			return s.read(ctx, uri, f, fi, s.abs, req.Buffer)
		}
	}
	roots := s.resolvedRoots()
	// A link loop fails here and in checkRoots at the first stat, not
	// after 255 links, each a walk of the path (fspath.EvalSymlinks).
	final, err := fspath.EvalSymlinks(s.abs)
	if err == nil {
		if _, _, ok := s.containLexicallyIn(final, roots); !ok {
			return Result{}, s.outsideRoots(uri, s.spec.Path)
		}
	} else if cerr := s.checkRoots(uri, s.spec.Path); cerr != nil {
		return Result{}, cerr
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return Result{}, fail(uri, ErrNotFound, err, "no file at %s (%s); check path in readproof.toml", s.spec.Path, s.abs)
		}
		return Result{}, fail(uri, nil, err, "cannot resolve %s: %v", s.spec.Path, err)
	}
	root, rel, ok := s.containIn(final, roots)
	if !ok {
		return Result{}, refuse(uri, RuleRoots, "%s resolves to %s, outside the allowed roots (%s); %s", s.spec.Path, final, strings.Join(s.roots, ", "), hintRoots)
	}
	// Open beneath the root, so a path component swapped for a link after
	// the check still cannot leave it, and without blocking on a FIFO.
	r, err := os.OpenRoot(root)
	if err != nil {
		return Result{}, fail(uri, nil, err, "cannot open root %s: %v", root, err)
	}
	defer r.Close()
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Result{}, fail(uri, ErrNotFound, err, "no file at %s (%s); check path in readproof.toml", s.spec.Path, final)
		}
		// A socket does not open (ENXIO): say what it is, as read does
		// for a FIFO or a device that opens.
		if st, serr := r.Lstat(rel); serr == nil && !st.Mode().IsRegular() {
			return Result{}, refuse(uri, RuleRegular, "%s is %s, not a regular file; point path at a file", s.spec.Path, fspath.DescribeMode(st.Mode()))
		}
		return Result{}, fail(uri, nil, err, "cannot open %s: %v; check the file's permissions", s.spec.Path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Result{}, fail(uri, nil, err, "cannot stat %s: %v", s.spec.Path, err)
	}
	return s.read(ctx, uri, f, st, final, req.Buffer)
}

// openBelowRoot opens the document through the first declared root that
// holds its path lexically, when the path ends in a regular file that is
// not a link: lstat of the path, then os.OpenRoot of the root and OpenFile
// of the rest beneath it. os.Root follows a link on the way only while it
// stays inside the root and refuses absolute ones, so the file opened is
// the one the full checks would open (inside the root, its links resolved)
// and its name ends as the path does. The file must be the one lstat saw
// (os.SameFile), so a last component swapped for a link meanwhile is not
// read here. ok is false, with nothing left open, whenever any of that
// does not hold: Fetch then makes the full checks.
func (s *fsSource) openBelowRoot() (f *os.File, fi fs.FileInfo, ok bool) {
	for _, r := range s.roots {
		rel, err := filepath.Rel(r, s.abs)
		if err != nil || rel == "." || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		seen, err := os.Lstat(s.abs)
		if err != nil || !seen.Mode().IsRegular() {
			return nil, nil, false
		}
		root, err := os.OpenRoot(r)
		if err != nil {
			return nil, nil, false
		}
		f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		root.Close()
		if err != nil {
			return nil, nil, false
		}
		st, err := f.Stat()
		if err != nil || !os.SameFile(seen, st) {
			f.Close()
			return nil, nil, false
		}
		return f, st, true
	}
	return nil, nil, false
}

// read is the end of Fetch: the document open as f (st its Stat), final
// the path whose name gives its content type.
func (s *fsSource) read(ctx context.Context, uri string, f *os.File, st fs.FileInfo, final string, buf []byte) (Result, error) {
	if !st.Mode().IsRegular() {
		return Result{}, refuse(uri, RuleRegular, "%s is %s, not a regular file; point path at a file", s.spec.Path, fspath.DescribeMode(st.Mode()))
	}
	// A hard link is a second name of the same file, and nothing in a
	// name tells where the others are: a link inside the roots to a file
	// outside them (a key in ~/.ssh, made by whoever can write in the
	// root, an agent among them) reads that file as if it were inside. A
	// document with more than one name is refused; real document trees
	// rarely have one (docs/README-sources.md, Files, gives the count).
	// The hint's commands name the file by its declared path made
	// absolute (the same on both ways in, TestFetchBelowRootSameAsFullChecks), quoted, so
	// that they act on it from any directory, whatever its name holds;
	// and they come after a look at the other names, since one may be
	// the file outside the roots that the copy would then let in.
	if err := s.checkLinks(uri, s.spec.Path, st); err != nil {
		return Result{}, err
	}
	if st.Size() > s.max {
		return Result{}, fail(uri, ErrTooLarge, nil, "%s is %d bytes, over the %d-byte limit; %s", s.spec.Path, st.Size(), s.max, hintMaxBytes)
	}
	content, err := readSizedInto(buf, f, st.Size(), s.max)
	if err != nil {
		return Result{}, fail(uri, nil, err, "reading %s: %v", s.spec.Path, err)
	}
	if int64(len(content)) > s.max {
		return Result{}, fail(uri, ErrTooLarge, nil, "%s grew past the %d-byte limit while being read; %s", s.spec.Path, s.max, hintMaxBytes)
	}
	if err := checkCtx(ctx, uri, "reading "+s.spec.Path); err != nil {
		return Result{}, err
	}
	return Result{
		Content:     content,
		ContentType: contentType(final, content),
		Revision:    shortHash(content),
		Provenance:  map[string]string{"source_type": "filesystem", "path": s.spec.Path},
	}, nil
}

// checkLinks refuses the document whose Stat is st when it has more than
// one name (read's comment says why); shown names it in the message.
// CheckRoots makes the same check when the resource is added.
func (s *fsSource) checkLinks(uri, shown string, st fs.FileInfo) error {
	n, ok := linkCount(st)
	if !ok || n <= 1 {
		return nil
	}
	q, qn := shellWord(s.abs), shellWord(s.abs+".new")
	return refuse(uri, RuleRoots, "%s has %d names (hard links), and readproof cannot tell whether one lies outside the allowed roots; if every name is a file you mean to record (find / -xdev -samefile %s lists them), give the document a name of its own: cp %s %s && mv %s %s", shown, n, q, q, qn, qn, q)
}

// resolvedRoots returns each root with its links resolved, "" where that
// fails.
func (s *fsSource) resolvedRoots() []string {
	out := make([]string, len(s.roots))
	for i, r := range s.roots {
		if resolved, err := filepath.EvalSymlinks(r); err == nil {
			out[i] = resolved
		}
	}
	return out
}

// contain returns the root holding final and final's path relative to it.
func (s *fsSource) contain(final string) (root, rel string, ok bool) {
	return s.containIn(final, s.resolvedRoots())
}

// containIn is contain with the roots already resolved (resolvedRoots).
func (s *fsSource) containIn(final string, roots []string) (root, rel string, ok bool) {
	for _, resolved := range roots {
		if resolved == "" {
			continue
		}
		rel, err := filepath.Rel(resolved, final)
		if err != nil || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		return resolved, rel, true
	}
	return "", "", false
}

// containLexically is contain for a path that does not exist: it compares
// the cleaned path with the roots as declared and as resolved.
func (s *fsSource) containLexically(p string) (root, rel string, ok bool) {
	return s.containLexicallyIn(p, s.resolvedRoots())
}

// containLexicallyIn is containLexically with the roots already resolved
// (resolvedRoots).
func (s *fsSource) containLexicallyIn(p string, roots []string) (root, rel string, ok bool) {
	p = filepath.Clean(p)
	for i, r := range s.roots {
		cands := []string{r}
		if roots[i] != "" {
			cands = append(cands, roots[i])
		}
		for _, c := range cands {
			rel, err := filepath.Rel(c, p)
			if err == nil && !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return c, rel, true
			}
		}
	}
	return "", "", false
}

// readSizedInto reads r, whose size was size when it was checked, up to
// max+1 bytes: into buf when it has the room (Request.Buffer), else into
// one new buffer of the expected size (io.ReadAll would grow it by
// doubling, allocating about twice the document); still correct when the
// file grew or shrank meanwhile.
func readSizedInto(buf []byte, r io.Reader, size, max int64) ([]byte, error) {
	if size < 0 || size > max {
		size = max
	}
	r = io.LimitReader(r, max+1)
	if int64(cap(buf)) >= size+1 {
		buf = buf[:0]
	} else {
		buf = make([]byte, 0, size+1) // +1: the end is seen without growing
	}
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// shellWord quotes s as one word for a POSIX shell (in single quotes, a
// quote in s closed, escaped and reopened), for a command a hint gives.
func shellWord(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
