package gitstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Packing refs: GC moves every loose ref into packed-refs itself, instead
// of letting git gc run `git pack-refs --all --prune`.
//
// git's pack-refs writes packed-refs by renaming packed-refs.lock over it,
// which releases the lock, and only then removes each loose ref it packed
// whose file still holds the value it packed. A ref deleted in between
// (which removes it from packed-refs too) and made again as a loose file
// with the same value was removed with that file: the ref was lost. Here
// packed-refs is written to a temporary file and renamed over packed-refs
// while packed-refs.lock is held, and the lock is held until the loose
// files are gone and their directories synced. Deleting a ref that
// packed-refs holds needs packed-refs.lock (readproof's writers and git's
// alike), so no delete and re-create can come between the packing and the
// removal. Writers take a ref's lock before packed-refs.lock; the packer
// holds packed-refs.lock, so it only tries each ref's lock and leaves a
// ref whose lock is taken loose, which is harmless.

// packRefsStats is what packRefs did.
type packRefsStats struct {
	Packed  int // loose refs written into packed-refs
	Removed int // loose files removed
	Busy    int // loose refs left because their lock was held
	Total   int // refs in packed-refs afterwards
}

// packedRefsTemp is the file packRefs writes packed-refs to before it is
// renamed over packed-refs, holding packed-refs.lock until after the
// rename and the removal of the loose files (Update writes its versions of
// packed-refs to packed-refs.N.lock in the same way). It ends in ".lock"
// so the sweep of a later writer removes one a killed process left.
const packedRefsTemp = "packed-refs.new.lock"

// fullPackedHeader is the header packRefs writes: every record is peeled
// (an annotated tag's record is followed by its "^<oid>" line, any other
// record has none) and the records are sorted, as `git pack-refs` writes.
const fullPackedHeader = packedHeader + " peeled fully-peeled sorted \n"

// looseToPack is a loose ref packRefs packs.
type looseToPack struct {
	name string
	oid  OID
}

// packRefs moves every loose ref under refs/ into packed-refs and removes
// the loose files it packed, holding packed-refs.lock throughout. Left
// loose, as git leaves them: symbolic refs (and symbolic links), broken
// ref files, refs naming a missing object, names git would not accept, and
// the per-worktree refs (refs/bisect/, refs/worktree/, refs/rewritten/).
func (s *repo) packRefs() (packRefsStats, error) {
	return s.packRefsBy(time.Now().Add(s.opts.LockTimeout))
}

// packRefsBy is packRefs waiting for packed-refs.lock until deadline (a
// deadline already past: one try, as automatic maintenance does).
func (s *repo) packRefsBy(deadline time.Time) (packRefsStats, error) {
	var st packRefsStats
	packedPath := filepath.Join(s.path, "packed-refs")
	lock, err := s.lockFile(packedPath, "packed-refs", deadline)
	if err != nil {
		return st, fmt.Errorf("pack refs: %w", err)
	}
	defer lock.release()
	lockedAt := time.Now()
	stillOurs := func() error {
		if time.Since(lockedAt) > s.opts.StaleLockAge/2 && !lock.owned() {
			return fmt.Errorf("pack refs: lock %s was removed as stale by another process: %w: run gc again", lock.path, ErrLocked)
		}
		return nil
	}
	loose, err := s.looseRefsToPack()
	if err != nil {
		return st, fmt.Errorf("pack refs: %w", err)
	}
	p, err := s.loadPacked()
	if err != nil {
		return st, fmt.Errorf("pack refs: %w", err)
	}
	if len(loose) == 0 && (p == nil || bytes.HasPrefix(p.orig, []byte(fullPackedHeader))) {
		return st, nil // nothing to pack, every record peeled
	}
	data, loose, total, err := s.packedWithLoose(p, loose)
	if err != nil {
		return st, fmt.Errorf("pack refs: %w", err)
	}
	st.Packed, st.Total = len(loose), total
	if err := s.writePackedRefs(data, stillOurs); err != nil {
		return st, fmt.Errorf("pack refs: %w", err)
	}
	// Remove the loose files packed-refs now holds, each under its own
	// lock, only tried.
	dirs := map[string]bool{}
	var lost error
	for _, r := range loose {
		if lost = stillOurs(); lost != nil {
			break // the rest stay loose; what was removed is synced
		}
		path := s.refPath(r.name)
		f, err := s.perm.create(path+".lock", s.perm.file())
		if err != nil {
			st.Busy++
			continue
		}
		// flocked (takeLock) until the loose file is removed: broken while
		// this process stopped after its read, the lock would let another
		// writer move the ref, and the removal below would take the new
		// value away
		refLock, ok, err := s.takeLock(path+".lock", f, time.Now())
		if !ok || err != nil {
			st.Busy++
			continue
		}
		oid, target, found, err := s.readLoose(r.name)
		if err == nil && found && target == "" && oid == r.oid && os.Remove(path) == nil {
			st.Removed++
			dirs[filepath.Dir(path)] = true
		}
		refLock.release()
	}
	removeEmptyRefDirs(filepath.Join(s.path, "refs"), dirs)
	if err := s.syncDirs(dirs); err != nil {
		return st, fmt.Errorf("pack refs: sync: %w", err)
	}
	return st, lost
}

// writePackedRefs writes data to packedRefsTemp, syncs it, and renames it
// over packed-refs (after stillOurs), then syncs the directory. The caller
// holds packed-refs.lock.
func (s *repo) writePackedRefs(data []byte, stillOurs func() error) error {
	tmp, err := s.createPackedTemp(packedRefsTemp)
	if err != nil {
		return err
	}
	defer tmp.release()
	if _, err := tmp.f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp.path, err)
	}
	if err := tmp.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.path, err)
	}
	if err := tmp.closeUnflocked(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.path, err)
	}
	if err := stillOurs(); err != nil {
		return err
	}
	if err := renameFile(tmp.path, filepath.Join(s.path, "packed-refs")); err != nil {
		return fmt.Errorf("replace packed-refs: %w", err)
	}
	tmp.renamed()
	if err := syncDir(s.path); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	return nil
}

// perWorktreeRefs are the refs git keeps per work tree and never packs.
var perWorktreeRefs = [...]string{"refs/bisect/", "refs/worktree/", "refs/rewritten/"}

// packRefsAuto is automatic maintenance's packing of the loose refs: it
// packs them, as packRefsBy does, only when refsWorthPacking says there
// are enough of them for the size of packed-refs.
func (s *repo) packRefsAuto() error {
	loose, err := s.looseRefsToPack()
	if err != nil {
		return fmt.Errorf("pack refs: %w", err)
	}
	var packed int64
	if fi, err := os.Stat(filepath.Join(s.path, "packed-refs")); err == nil {
		packed = fi.Size()
	}
	if !refsWorthPacking(len(loose), packed) {
		return nil
	}
	_, err = s.packRefsBy(time.Now())
	return err
}

// refsWorthPacking reports whether loose refs beside a packed-refs file
// of packedSize bytes are worth packing, as git's `pack-refs --auto`
// (2.44 and later) judges it: at least 16 of them, and at least 5 x
// log2(packedSize / 100). Packing rewrites the whole file, so a store of
// 50,000 runs (3.7 MB of packed-refs) packs once every 75 loose refs
// instead of at every maintenance, where it was a 3.7 MB write for the one
// ref a `get` had just moved; a small store still packs every 16.
func refsWorthPacking(loose int, packedSize int64) bool {
	limit := 0
	if packedSize >= 200 {
		limit = 5 * (bits.Len64(uint64(packedSize/100)) - 1) // 5 x floor(log2)
	}
	return loose >= max(16, limit)
}

// looseRefsToPack lists the loose refs packRefs packs, sorted by name.
//
// A ref whose lock file is there is left out (neither packed nor
// removed): a writer is changing it. That one may be a deletion that has
// already renamed packed-refs without the ref and released
// packed-refs.lock (readproof's Update did before session 13) and not yet
// removed the loose file; packing the file it still sees would bring the
// deleted ref back. The writer took the ref's lock before packed-refs.lock
// and removes the lock only after the loose file, so the lock is in the
// listing whenever the file read is still that one.
func (s *repo) looseRefsToPack() ([]looseToPack, error) {
	var names []string
	locked := map[string]bool{}
	root := filepath.Join(s.path, "refs")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if isMissing(err) {
				return nil // removed meanwhile
			}
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil // a symbolic link is left alone, as git leaves a symbolic ref
		}
		rel, err := filepath.Rel(s.path, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if ref, ok := strings.CutSuffix(name, ".lock"); ok {
			locked[ref] = true
			return nil
		}
		if CheckRefName(name) != nil {
			return nil
		}
		for _, pre := range perWorktreeRefs {
			if strings.HasPrefix(name, pre) {
				return nil
			}
		}
		names = append(names, name)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list loose refs: %w", err)
	}
	var out []looseToPack
	for _, name := range names {
		if locked[name] {
			continue
		}
		oid, target, found, err := s.readLoose(name)
		if err != nil || !found || target != "" {
			continue // broken, gone, or symbolic: left as it is
		}
		if ok, err := s.Has(oid); err != nil || !ok {
			continue // its object is missing: left for verify and fsck to report
		}
		out = append(out, looseToPack{name: name, oid: oid})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// packedWithLoose returns packed-refs content with the loose refs written
// in (their values replacing packed ones) and every record peeled: the
// records of p whose peeled state its header vouches for (or that carry a
// peeled line) keep their lines, the others are peeled from their objects.
// A loose ref naming a missing object is dropped from loose (left loose,
// as git leaves it): packed lists the loose refs written. total is the
// number of records.
func (s *repo) packedWithLoose(p *packedRefs, loose []looseToPack) (data []byte, packed []looseToPack, total int, err error) {
	var body []byte
	peeled, fully := false, false
	if p != nil {
		body = p.data[p.body:]
		if bytes.HasPrefix(p.orig, []byte(packedHeader)) {
			eol := bytes.IndexByte(p.orig, '\n')
			if eol < 0 {
				eol = len(p.orig)
			}
			for _, t := range strings.Fields(string(p.orig[len(packedHeader):eol])) {
				peeled = peeled || t == "peeled"
				fully = fully || t == "fully-peeled"
			}
		}
	}
	var b bytes.Buffer
	b.Grow(len(body) + len(loose)*(42+64) + len(fullPackedHeader))
	w := bufio.NewWriter(&b)
	w.WriteString(fullPackedHeader)
	var peelErr error
	put := func(name string, oid OID) bool {
		target, isTag, err := s.peel(oid)
		if err != nil {
			if !errors.Is(err, ErrNotFound) {
				peelErr = fmt.Errorf("ref %s: %w", name, err)
			}
			return false
		}
		w.WriteString(string(oid))
		w.WriteByte(' ')
		w.WriteString(name)
		w.WriteByte('\n')
		if isTag {
			w.WriteByte('^')
			w.WriteString(string(target))
			w.WriteByte('\n')
		}
		total++
		return true
	}
	i := 0
	putLoose := func() {
		if put(loose[i].name, loose[i].oid) {
			packed = append(packed, loose[i])
		}
		i++
	}
	last := ""
	for off := 0; off < len(body) && peelErr == nil; {
		nameB, oid, next, err := p.recordAt(p.body+off, len(p.data))
		if err != nil {
			return nil, nil, 0, err
		}
		next -= p.body
		name := string(nameB)
		for i < len(loose) && loose[i].name < name && peelErr == nil {
			putLoose()
		}
		switch {
		case name == last:
			// a repeated record: the first one counts, as when read
		case i < len(loose) && loose[i].name == name:
			putLoose()
		default:
			rec := body[off:next]
			hasPeel := bytes.Contains(rec, []byte("\n^"))
			if fully || hasPeel || (peeled && strings.HasPrefix(name, "refs/tags/")) {
				w.Write(rec)
				if rec[len(rec)-1] != '\n' {
					w.WriteByte('\n')
				}
				total++
			} else if !put(name, oid) && peelErr == nil {
				// a packed ref naming a missing object stays as it was
				w.WriteString(string(oid) + " " + name + "\n")
				total++
			}
		}
		last = name
		off = next
	}
	for i < len(loose) && peelErr == nil {
		putLoose()
	}
	if peelErr != nil {
		return nil, nil, 0, peelErr
	}
	if err := w.Flush(); err != nil {
		return nil, nil, 0, err
	}
	return b.Bytes(), packed, total, nil
}

// peel returns the object an annotated tag points at, followed through
// tags in turn, and true when oid is one; else false. It fails with
// ErrNotFound when an object is missing.
func (s *repo) peel(oid OID) (OID, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := oid
	for depth := 0; ; depth++ {
		o, data, err := s.readObject(cur)
		if err != nil {
			return "", false, err
		}
		if o.Type() != plumbing.TagObject {
			return cur, cur != oid, nil
		}
		if depth == 64 {
			return "", false, fmt.Errorf("tag %s: more than 64 tags deep: %w", oid, ErrCorrupt)
		}
		rest, ok := bytes.CutPrefix(data, []byte("object "))
		if !ok || len(rest) < 40 || !isHexOID(string(rest[:40])) {
			return "", false, fmt.Errorf("tag %s: no object line: %w", cur, ErrCorrupt)
		}
		cur = OID(rest[:40])
	}
}

// removeEmptyRefDirs removes the directories of dirs that are empty now,
// and their parents in turn, as git does after it removed loose refs,
// keeping refs/ and the directories right below it (refs/heads/,
// refs/tags/). dirs is left holding the directories to sync: those that
// remain, and the parents of those removed.
func removeEmptyRefDirs(refsDir string, dirs map[string]bool) {
	var list []string
	for d := range dirs {
		list = append(list, d)
	}
	// Deepest first, so a parent is tried after its children.
	sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
	keep := func(d string) bool {
		rel, err := filepath.Rel(refsDir, d)
		return err != nil || rel == "." || !strings.Contains(filepath.ToSlash(rel), "/") || strings.HasPrefix(rel, "..")
	}
	for _, d := range list {
		for !keep(d) && dirs[d] {
			if os.Remove(d) != nil {
				break // not empty (or gone): stays to be synced
			}
			delete(dirs, d)
			d = filepath.Dir(d)
			dirs[d] = true
		}
	}
}
