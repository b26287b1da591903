package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// CheckRefName reports whether name is a full ref name git accepts
// (`git check-ref-format`) under refs/: no "..", control characters, space,
// '~', '^', ':', '?', '*', '[' or '\', no component that starts with '.' or
// ends with ".lock", no "@{", no empty component, and no trailing '/' or '.'.
func CheckRefName(name string) error {
	if !strings.HasPrefix(name, "refs/") {
		return fmt.Errorf("ref name %q does not start with refs/: use a full ref name such as refs/heads/main", name)
	}
	bad := func(why string) error {
		return fmt.Errorf("ref name %q %s: choose a name git check-ref-format accepts", name, why)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !refNameOdd(c) {
			continue // most bytes: one test, not four (a listing checks 10^5 names)
		}
		switch {
		case c < 0x20 || c == 0x7f:
			return bad("contains a control character")
		case c == ' ':
			return bad("contains a space")
		case strings.IndexByte(`~^:?*[\`, c) >= 0:
			return bad(fmt.Sprintf("contains %q", c))
		}
	}
	switch {
	case strings.Contains(name, ".."):
		return bad(`contains ".."`)
	case strings.Contains(name, "@{"):
		return bad(`contains "@{"`)
	case strings.HasSuffix(name, "/"):
		return bad("ends with '/'")
	case strings.HasSuffix(name, "."):
		return bad("ends with '.'")
	}
	for rest := name; rest != ""; {
		comp := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			comp, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		switch {
		case comp == "":
			return bad("has an empty component")
		case comp[0] == '.':
			return bad("has a component starting with '.'")
		case strings.HasSuffix(comp, ".lock"):
			return bad(`has a component ending with ".lock"`)
		}
	}
	return nil
}

// The bytes below 0x80 that CheckRefName refuses, one bit each: control
// characters, space, '~', '^', ':', '?', '*', '[', '\\' and DEL.
const (
	refOddLow  uint64 = 1<<0x20 - 1 | 1<<' ' | 1<<':' | 1<<'?' | 1<<'*'
	refOddHigh uint64 = 1<<('~'-64) | 1<<('^'-64) | 1<<('['-64) | 1<<('\\'-64) | 1<<(0x7f-64)
)

// refNameOdd reports whether CheckRefName refuses the byte c wherever it
// stands.
func refNameOdd(c byte) bool {
	if c < 64 {
		return refOddLow>>c&1 != 0
	}
	return c < 128 && refOddHigh>>(c-64)&1 != 0
}

// parseLooseRef parses the content of a loose ref file: an object id
// followed by optional white space, or "ref: <name>" for a symbolic ref.
func parseLooseRef(data []byte) (oid OID, target string, err error) {
	if rest, ok := bytes.CutPrefix(data, []byte("ref:")); ok {
		target = string(bytes.TrimSpace(rest))
		if err := CheckRefName(target); err != nil {
			return "", "", fmt.Errorf("symbolic ref: %w", err)
		}
		return "", target, nil
	}
	if len(data) < 40 {
		return "", "", fmt.Errorf("content %q is not an object id", truncate(data))
	}
	hex := strings.ToLower(string(data[:40]))
	if !isHexOID(hex) || hex == zeroOID {
		return "", "", fmt.Errorf("content %q is not an object id", truncate(data))
	}
	if len(data) > 40 {
		switch data[40] {
		case ' ', '\t', '\n', '\r':
		default:
			return "", "", fmt.Errorf("content %q is not an object id", truncate(data))
		}
	}
	return OID(hex), "", nil
}

func truncate(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

// isMissing reports errors that mean "no loose ref file here": the file or a
// parent is missing, a parent is a file, or the path is a directory.
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR)
}

// refPath is the loose file of a ref.
func (s *repo) refPath(name string) string {
	return filepath.Join(s.path, filepath.FromSlash(name))
}

// readLoose reads a loose ref. found is false when there is no loose file.
func (s *repo) readLoose(name string) (oid OID, target string, found bool, err error) {
	oid, target, found, _, err = s.readLooseMiss(name)
	return oid, target, found, err
}

// readLooseMiss is readLoose that also says, when there is no loose file,
// whether that is because nothing is at the path (or a parent is a file)
// rather than because a directory is there (or the read failed so).
func (s *repo) readLooseMiss(name string) (oid OID, target string, found, nothing bool, err error) {
	data, err := readSmallFile(s.refPath(name), maxRefFile)
	if err != nil {
		if errors.Is(err, errNotSmallFile) {
			return "", "", false, false, fmt.Errorf("ref %s: %w: delete or replace the file with git update-ref", name, err)
		}
		if isMissing(err) {
			return "", "", false, errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR), nil
		}
		return "", "", false, false, fmt.Errorf("read ref %s: %w", name, err)
	}
	oid, target, err = parseLooseRef(data)
	if err != nil {
		return "", "", false, false, fmt.Errorf("ref %s: broken loose ref file %s: %w: %w: delete the file or set the ref with git update-ref",
			name, s.refPath(name), ErrCorrupt, err)
	}
	return oid, target, true, false, nil
}

// Ref returns the value of a ref (loose, then packed-refs). It also accepts
// "HEAD". A symbolic ref is followed once.
func (s *repo) Ref(name string) (OID, error) {
	if name != "HEAD" {
		if err := CheckRefName(name); err != nil {
			return "", err
		}
	}
	oid, target, found, err := s.readLoose(name)
	if err != nil {
		return "", err
	}
	if found && target == "" {
		return oid, nil
	}
	if found {
		oid, t2, found, err := s.readLoose(target)
		if err != nil {
			return "", err
		}
		if t2 != "" {
			return "", fmt.Errorf("ref %s: points to symbolic ref %s, which points to %s: chains of symbolic refs are not followed", name, target, t2)
		}
		if found {
			return oid, nil
		}
		name = target
	}
	if name == "HEAD" {
		return "", fmt.Errorf("ref %s: %w", name, ErrNotFound)
	}
	p, err := s.loadPacked()
	if err != nil {
		return "", err
	}
	oid, ok, err := p.find(name)
	if err != nil {
		return "", fmt.Errorf("ref %s: %w", name, err)
	}
	if ok {
		return oid, nil
	}
	return "", fmt.Errorf("ref %s: %w", name, ErrNotFound)
}

// Refs lists the refs whose names start with prefix ("" means every ref
// under refs/), loose refs winning over packed ones, sorted by name. Lock
// files and broken loose refs are skipped, as git does.
func (s *repo) Refs(prefix string) ([]Ref, error) {
	if prefix == "" {
		prefix = "refs/"
	}
	if !strings.HasPrefix(prefix, "refs/") {
		return nil, fmt.Errorf("list refs %q: prefix does not start with refs/: use a prefix such as refs/heads/", prefix)
	}
	found := make(map[string]OID)
	// Loose refs first, then packed-refs: git pack-refs writes packed-refs
	// before it deletes loose files, so this order never misses a ref.
	dir := prefix[:strings.LastIndexByte(prefix, '/')+1]
	root := s.refPath(dir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && isMissing(err) {
				return filepath.SkipAll
			}
			if isMissing(err) {
				return nil // removed while we walked
			}
			return err
		}
		rel, rerr := filepath.Rel(s.path, p)
		if rerr != nil {
			return rerr
		}
		name := filepath.ToSlash(rel)
		if d.IsDir() {
			if p != root && !strings.HasPrefix(name+"/", prefix) && !strings.HasPrefix(prefix, name+"/") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(name, prefix) || strings.HasSuffix(name, ".lock") || CheckRefName(name) != nil {
			return nil
		}
		oid, target, ok, lerr := s.readLoose(name)
		if lerr != nil || !ok {
			return nil // broken or vanished: git ignores it too
		}
		if target != "" {
			v, rerr := s.Ref(target)
			if rerr != nil {
				return nil // dangling symbolic ref
			}
			oid = v
		}
		found[name] = oid
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list refs %s: %w", prefix, err)
	}
	return s.withPacked(prefix, found)
}

// withPacked is Refs of prefix once its loose refs are found: the refs of
// packed-refs under prefix that found does not hold, merged with found,
// sorted by name.
func (s *repo) withPacked(prefix string, found map[string]OID) ([]Ref, error) {
	p, err := s.loadPacked()
	if err != nil {
		return nil, err
	}
	// packed-refs is read in its (sorted) order into a slice, and the few
	// loose refs merged in: a map and a sort of every ref under prefix
	// cost a pull at 10^5 runs a third of its own CPU.
	var packed []Ref
	inOrder := true
	// the names and ids are substrings of copies of the file 64 KiB at a
	// time (chunk, the bytes of p.data from chunkAt on): a string a ref was
	// 10^5 allocations for the run refs alone. The slice is made the size
	// of the prefix's lines: grown by append, its copies were a sixth of a
	// pull's own CPU at 10^5 runs.
	var chunk string
	chunkAt, spanEnd := 0, 0
	err = p.scanLinesAt(prefix, func(off int, line []byte) bool {
		if packed == nil {
			var lines int
			spanEnd, lines = p.spanHint(prefix, off)
			packed = make([]Ref, 0, max(lines, 1))
		}
		name := line[41:]
		if len(found) > 0 {
			if _, ok := found[string(name)]; ok {
				return true
			}
		}
		if n := len(packed); n > 0 && packed[n-1].Name >= string(name) {
			inOrder = false
		}
		end := off + len(line)
		if off < chunkAt || end > chunkAt+len(chunk) {
			chunkAt = off
			chunk = string(p.data[off:max(end, min(off+64<<10, spanEnd))])
		}
		rec := chunk[off-chunkAt : end-chunkAt]
		packed = append(packed, Ref{Name: rec[41:], OID: OID(rec[:40])})
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("list refs %s: %w", prefix, err)
	}
	if !inOrder {
		// a file that says it is sorted and is not, or repeats a name:
		// sorted here, the first line of a name counting
		sort.SliceStable(packed, func(i, j int) bool { return packed[i].Name < packed[j].Name })
		packed = slices.CompactFunc(packed, func(a, b Ref) bool { return a.Name == b.Name })
	}
	if len(found) == 0 {
		return packed, nil
	}
	loose := make([]Ref, 0, len(found))
	for name, oid := range found {
		loose = append(loose, Ref{Name: name, OID: oid})
	}
	sort.Slice(loose, func(i, j int) bool { return loose[i].Name < loose[j].Name })
	if len(packed) == 0 {
		return loose, nil
	}
	out := make([]Ref, 0, len(packed)+len(loose))
	i, j := 0, 0
	for i < len(packed) && j < len(loose) {
		if packed[i].Name < loose[j].Name {
			out = append(out, packed[i])
			i++
		} else {
			out = append(out, loose[j])
			j++
		}
	}
	out = append(out, packed[i:]...)
	return append(out, loose[j:]...), nil
}

// ---- packed-refs ----

// packedRefs is a packed-refs file held in memory. Lookups binary-search
// the bytes, as git does: records are "<oid> <name>" lines sorted by name,
// each optionally followed by a "^<oid>" line (the peeled value of an
// annotated tag). A file whose header does not promise "sorted" is sorted
// once when loaded.
type packedRefs struct {
	fi   os.FileInfo // identity of the file this was read from
	path string      // the file's path, for errors ("" when not read from one)
	orig []byte      // the file as read
	data []byte      // sorted records: orig itself, or a sorted copy
	body int         // offset of the first record in data
}

const packedHeader = "# pack-refs with:"

// parsePackedRefs prepares packed-refs content for lookups. A sorted file
// is not scanned: malformed records surface when a lookup reaches them.
func parsePackedRefs(orig []byte) (*packedRefs, error) {
	p := &packedRefs{orig: orig, data: orig}
	sorted := false
	if bytes.HasPrefix(orig, []byte(packedHeader)) {
		eol := bytes.IndexByte(orig, '\n')
		p.body = eol + 1
		if eol < 0 {
			eol, p.body = len(orig), len(orig)
		}
		for _, trait := range strings.Fields(string(orig[len(packedHeader):eol])) {
			sorted = sorted || trait == "sorted"
		}
	}
	if n := len(orig); n > p.body && orig[n-1] != '\n' {
		// git ends every line with a newline, and refuses a file whose
		// last line has none ("unterminated line in packed-refs"): a file
		// cut short, whose last record may read as another ref's
		last := bytes.LastIndexByte(orig, '\n') + 1
		return nil, &packedRefsError{line: 1 + bytes.Count(orig, []byte("\n")),
			err: fmt.Errorf("unterminated line %q: the file was cut short", truncate(orig[last:]))}
	}
	if !sorted {
		data, err := sortPackedRecords(orig[p.body:], 1+bytes.Count(orig[:p.body], []byte("\n")))
		if err != nil {
			return nil, err
		}
		p.data, p.body = data, 0
	}
	return p, nil
}

// sortPackedRecords checks every line of an unsorted packed-refs body, whose
// first line is line first of the file, and returns its records (with their
// peeled lines) sorted by name.
func sortPackedRecords(body []byte, first int) ([]byte, error) {
	type rec struct {
		name  []byte
		lines []byte
	}
	var recs []rec
	for off, lineNo := 0, first; off < len(body); lineNo++ {
		end := bytes.IndexByte(body[off:], '\n')
		next := off + end + 1
		if end < 0 {
			end = len(body) - off
			next = len(body)
		}
		line := body[off : off+end]
		switch {
		case len(line) > 0 && line[0] == '^':
			if len(recs) == 0 || !validPeeled(line) || bytes.Contains(recs[len(recs)-1].lines, []byte("\n^")) {
				return nil, &packedRefsError{line: lineNo, err: fmt.Errorf("bad peeled line %q", truncate(line))}
			}
			r := &recs[len(recs)-1]
			r.lines = append(append(r.lines, line...), '\n')
		default:
			name, _, err := parsePackedLine(line)
			if err != nil {
				return nil, &packedRefsError{line: lineNo, err: err}
			}
			recs = append(recs, rec{name: name, lines: append(append([]byte(nil), line...), '\n')})
		}
		off = next
	}
	sort.SliceStable(recs, func(i, j int) bool { return bytes.Compare(recs[i].name, recs[j].name) < 0 })
	out := make([]byte, 0, len(body)+len(recs))
	for _, r := range recs {
		out = append(out, r.lines...)
	}
	return out, nil
}

func validPeeled(line []byte) bool {
	return len(line) == 41 && isHexOIDBytes(line[1:])
}

// isHexOIDBytes is isHexOID of bytes, without a string of them: every
// line of packed-refs a listing reads is checked, and converting 40 bytes
// to a string allocates (a listing of 10^5 refs made as many strings only
// to check them).
func isHexOIDBytes(b []byte) bool { return gitobj.IsObjectID(b) }

// packedRefsError is a line of packed-refs that is not a record git writes.
// git itself refuses such a file ("unexpected line in packed-refs"), so
// neither git pack-refs nor git gc repairs it: the hint says to edit it.
type packedRefsError struct {
	path string // "packed-refs" when not read from a named file
	line int
	err  error
}

func (e *packedRefsError) Error() string {
	return fmt.Sprintf("%s line %d: %v", e.file(), e.line, e.err)
}

func (e *packedRefsError) Unwrap() []error { return []error{ErrCorrupt, e.err} }

func (e *packedRefsError) Hint() string {
	return fmt.Sprintf("correct or delete line %d of %s (a record is `<40-hex id> <ref name>`, a peeled line `^<40-hex id>` after an annotated tag's; git refuses the file as it is, so git pack-refs cannot rewrite it), then run `readproof verify`; a ref whose line is deleted comes back from a clone (readproof pull) or a backup", e.line, e.file())
}

func (e *packedRefsError) file() string {
	if e.path == "" {
		return "packed-refs"
	}
	return e.path
}

// parsePackedLine parses one "<oid> <name>" line.
func parsePackedLine(line []byte) (name []byte, oid OID, err error) {
	if err := checkPackedLine(line); err != nil {
		return nil, "", err
	}
	return line[41:], OID(line[:40]), nil
}

// checkPackedLine checks one "<oid> <name>" line, copying nothing: a
// listing of 10^5 refs checks every line, and a lookup's binary search
// the lines it visits.
func checkPackedLine(line []byte) error {
	if len(line) < 42 || line[40] != ' ' || !isHexOIDBytes(line[:40]) {
		return fmt.Errorf("bad ref line %q", truncate(line))
	}
	for _, c := range line[41:] {
		if c == ' ' || c == '\t' || c == '\r' || c == 0 {
			return fmt.Errorf("bad ref name %q", truncate(line[41:]))
		}
	}
	return nil
}

// recordAt parses the record starting at off (< hi) and returns where the
// next record starts.
func (p *packedRefs) recordAt(off, hi int) (name []byte, oid OID, next int, err error) {
	line, next, err := p.lineAt(off, hi)
	if err != nil {
		return nil, "", 0, err
	}
	return line[41:], OID(line[:40]), next, nil
}

// lineAt is recordAt without copies: the record's "<oid> <name>" line,
// checked, and where the next record starts.
func (p *packedRefs) lineAt(off, hi int) (line []byte, next int, err error) {
	eol := bytes.IndexByte(p.data[off:hi], '\n')
	next = off + eol + 1
	if eol < 0 {
		eol, next = hi-off, hi
	}
	line = p.data[off : off+eol]
	if err := checkPackedLine(line); err != nil {
		// Only a sorted file reaches here with a bad line (an unsorted one
		// is checked whole when read), so data is the file as read.
		return nil, 0, &packedRefsError{path: p.path, line: 1 + bytes.Count(p.data[:off], []byte("\n")), err: err}
	}
	if next < hi && p.data[next] == '^' {
		end := hi
		if e := bytes.IndexByte(p.data[next:hi], '\n'); e >= 0 {
			end = next + e
		}
		// checked as sortPackedRecords checks an unsorted file's: git
		// refuses the file ("unexpected line in packed-refs")
		if peeled := p.data[next:end]; !validPeeled(peeled) {
			return nil, 0, &packedRefsError{path: p.path, line: 1 + bytes.Count(p.data[:next], []byte("\n")), err: fmt.Errorf("bad peeled line %q", truncate(peeled))}
		}
		next = min(end+1, hi)
	}
	return line, next, nil
}

// lowerBound returns the offset of the first record whose name is not less
// than name (len(data) if none): a binary search over the bytes.
func (p *packedRefs) lowerBound(name string) (int, error) {
	lo, hi := p.body, len(p.data)
	for lo < hi {
		mid := lo + (hi-lo)/2
		// Back up to the start of the record holding mid; a peeled line
		// belongs to the record before it.
		rec := mid
		for rec > lo && (p.data[rec-1] != '\n' || p.data[rec] == '^') {
			rec--
		}
		line, next, err := p.lineAt(rec, hi)
		if err != nil {
			return 0, err
		}
		if string(line[41:]) < name {
			lo = next
		} else {
			hi = rec
		}
	}
	return lo, nil
}

// find returns the value of name in packed-refs. p may be nil.
func (p *packedRefs) find(name string) (OID, bool, error) {
	if p == nil {
		return "", false, nil
	}
	off, err := p.lowerBound(name)
	if err != nil || off >= len(p.data) {
		return "", false, err
	}
	n, oid, _, err := p.recordAt(off, len(p.data))
	if err != nil || string(n) != name {
		return "", false, err
	}
	return oid, true, nil
}

// scanPrefix calls fn for every packed ref starting with prefix, in order,
// until fn returns false. p may be nil.
func (p *packedRefs) scanPrefix(prefix string, fn func(name []byte, oid OID) bool) error {
	return p.scanLines(prefix, func(line []byte) bool { return fn(line[41:], OID(line[:40])) })
}

// scanLines is scanPrefix that hands fn each record's "<oid> <name>" line
// (checked) instead of a copy of the id.
func (p *packedRefs) scanLines(prefix string, fn func(line []byte) bool) error {
	return p.scanLinesAt(prefix, func(_ int, line []byte) bool { return fn(line) })
}

// scanLinesAt is scanLines that also says where in p.data each line starts.
func (p *packedRefs) scanLinesAt(prefix string, fn func(off int, line []byte) bool) error {
	if p == nil {
		return nil
	}
	off, err := p.lowerBound(prefix)
	if err != nil {
		return err
	}
	for off < len(p.data) {
		line, next, err := p.lineAt(off, len(p.data))
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(line[41:], []byte(prefix)) || !fn(off, line) {
			return nil
		}
		off = next
	}
	return nil
}

// spanHint returns the end of the bytes from lo on that hold the records
// whose names start with prefix (the lower bound of the first name after
// all of them), and how many lines they are: what a listing of prefix
// allocates for, found by a binary search and a count of newlines, so
// that neither its slice nor its copies of the file grow by steps. It
// reads nothing a lookup would not, and any error gives no hint (lo, 0):
// the scan reports what it meets.
func (p *packedRefs) spanHint(prefix string, lo int) (hi, lines int) {
	next := []byte(prefix)
	for len(next) > 0 && next[len(next)-1] == 0xff {
		next = next[:len(next)-1]
	}
	if len(next) == 0 {
		return len(p.data), bytes.Count(p.data[lo:], []byte("\n"))
	}
	next[len(next)-1]++
	hi, err := p.lowerBound(string(next))
	if err != nil || hi < lo {
		return lo, 0
	}
	return hi, bytes.Count(p.data[lo:hi], []byte("\n"))
}

// hasPrefix reports whether some packed ref starts with prefix.
func (p *packedRefs) hasPrefix(prefix string) (bool, error) {
	hit := false
	err := p.scanPrefix(prefix, func([]byte, OID) bool { hit = true; return false })
	return hit, err
}

// without returns the file's content with the records named in drop (and
// their peeled lines) removed, every other line kept as it was.
func (p *packedRefs) without(drop map[string]bool) []byte {
	out := make([]byte, 0, len(p.orig))
	skipping := false
	for off := 0; off < len(p.orig); {
		end := bytes.IndexByte(p.orig[off:], '\n')
		next := off + end + 1
		if end < 0 {
			next = len(p.orig)
			end = next - off
		}
		line := p.orig[off : off+end]
		switch {
		case len(line) > 0 && line[0] == '^':
		case len(line) > 0 && line[0] == '#':
			skipping = false
		default:
			skipping = len(line) > 41 && drop[string(line[41:])]
		}
		if !skipping {
			out = append(out, line...)
			out = append(out, '\n')
		}
		off = next
	}
	return out
}

// loadPacked returns the parsed packed-refs file, or nil when there is none.
// The parse is cached and reused while the file's identity, size and
// modification time stay the same (git replaces the file by rename).
func (s *repo) loadPacked() (*packedRefs, error) {
	name := filepath.Join(s.path, "packed-refs")
	fi, err := os.Stat(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if p := s.packed; p != nil && sameFileVersion(p.fi, fi) {
		return p, nil
	}
	f, err := openRead(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	// Mapped, not read: a lookup touches only the pages its binary search
	// visits, so a store with many packed refs opens as fast as an empty one.
	data, release, err := mapFile(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("read packed-refs: %w", err)
	}
	p, err := parsePackedRefs(data)
	if err != nil {
		release()
		if pe := (*packedRefsError)(nil); errors.As(err, &pe) {
			pe.path = name
		}
		return nil, err
	}
	// Unmapped once nothing uses this version any more (no slice of it
	// outlives p: names and ids are copied out).
	runtime.AddCleanup(p, func(release func()) { release() }, release)
	p.fi, p.path = fi, name
	s.packed = p
	return p, nil
}

func sameFileVersion(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// merged returns packed-refs content with sets written (their new values)
// and the records named in drop removed, every other record (with its
// peeled line) kept as it was, in name order. sets are sorted by name and
// name no ref under refs/tags/. p may be nil (no packed-refs file yet).
//
// The header keeps the file's traits but "fully-peeled", which would claim
// that a set ref naming an annotated tag has no peeled value; "peeled"
// speaks only of refs/tags/, which are never set here. The result is
// always "sorted".
func (p *packedRefs) merged(sets []*refTx, drop map[string]bool) ([]byte, error) {
	traits := []string{"peeled", "sorted"}
	var body []byte
	if p != nil {
		traits = traits[:0]
		if bytes.HasPrefix(p.orig, []byte(packedHeader)) {
			eol := bytes.IndexByte(p.orig, '\n')
			if eol < 0 {
				eol = len(p.orig)
			}
			for _, t := range strings.Fields(string(p.orig[len(packedHeader):eol])) {
				if t != "fully-peeled" && t != "sorted" {
					traits = append(traits, t)
				}
			}
		}
		traits = append(traits, "sorted")
		body = p.data[p.body:]
	}
	out := make([]byte, 0, len(body)+len(sets)*(42+len("refs/heads/readproof/resources/")+32)+64)
	out = append(out, packedHeader...)
	for _, t := range traits {
		out = append(out, ' ')
		out = append(out, t...)
	}
	out = append(out, " \n"...)
	put := func(t *refTx) {
		out = append(out, t.New...)
		out = append(out, ' ')
		out = append(out, t.Name...)
		out = append(out, '\n')
	}
	i := 0
	for off := 0; off < len(body); {
		name, _, next, err := p.recordAt(p.body+off, len(p.data))
		if err != nil {
			return nil, err
		}
		next -= p.body
		for i < len(sets) && sets[i].Name < string(name) {
			put(sets[i])
			i++
		}
		switch {
		case i < len(sets) && sets[i].Name == string(name):
			put(sets[i]) // replaces the record and its peeled line
			i++
		case drop[string(name)]:
		default:
			out = append(out, body[off:next]...)
			if out[len(out)-1] != '\n' {
				out = append(out, '\n')
			}
		}
		off = next
	}
	for ; i < len(sets); i++ {
		put(sets[i])
	}
	return out, nil
}
