package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/text"
)

// refTx is one ref of an Update.
//
// It points at its update in the caller's slice and at the repository's
// path rather than holding copies: 48 bytes a ref instead of 96 (an Update
// of a 10,000-document run's refs held them all until it was done).
type refTx struct {
	*RefUpdate
	root     *string // the git directory (path)
	lock     *heldLock
	cur      OID  // current value
	loose    bool // a loose file exists
	inPacked bool // packed-refs has the ref
	// packed: the new value goes into packed-refs instead of a loose file
	// (see planPacked); no lock file of its own is taken.
	packed bool
	// absent: chosen for packed-refs and found to have no loose file
	// (markPackedAbsent).
	absent bool
}

// path is the ref's loose file (repo.refPath), made when it is needed
// rather than held: an Update of 10,000 refs held 1.1 MB of paths.
func (t *refTx) path() string { return filepath.Join(*t.root, filepath.FromSlash(t.Name)) }

// nameDir and base split the ref's name (checked by CheckRefName: it has
// a slash, and no empty or dot-dot component) at its last slash:
// filepath.Dir and filepath.Base of path(), without making the path (an
// Update of 10,000 refs made 3.8 MB of paths to group them by directory).
func (t *refTx) nameDir() string { return t.Name[:strings.LastIndexByte(t.Name, '/')] }
func (t *refTx) base() string    { return t.Name[strings.LastIndexByte(t.Name, '/')+1:] }

// refDirs groups refs by the directory of their loose files, in the order
// the directories first appear; dir gives a group's directory (a path).
type refDirs struct {
	root  string
	names []string // each group's nameDir
	refs  map[string][]*refTx
}

func (g *refDirs) add(t *refTx) {
	if g.refs == nil {
		g.refs = map[string][]*refTx{}
	}
	d := t.nameDir()
	if g.refs[d] == nil {
		g.names = append(g.names, d)
	}
	g.refs[d] = append(g.refs[d], t)
}

func (g *refDirs) dir(name string) string { return filepath.Join(g.root, filepath.FromSlash(name)) }

// txn is one Update in progress. Its steps run in order: newTxn checks the
// request, checkTargets the objects, lock takes the locks, compare checks
// the old values, stage writes the new ones into the locks, makeDurable
// syncs them, publish renames them into place; release undoes what is left.
type txn struct {
	s       *repo
	refs    []*refTx // sorted by name: the order locks are taken in
	given   []*refTx // the same, in the caller's order: the order of the renames
	deletes bool     // some update deletes a ref

	packedPath  string
	packedLock  *heldLock // taken when deletes
	packed      *packedRefs
	packedWrite bool // some ref is written into packed-refs
	// packedSteps are the versions of packed-refs publish renames into
	// place, in order (stage); empty when packed-refs does not change.
	packedSteps []packedStep
	lockedAt    time.Time
}

// packedStep is one version of packed-refs: the changes of the refs that
// have one there (packedChange) listed up to tx.given[at], renamed into
// place just before that ref's loose file moves. Each version is written
// to a file of its own (packed-refs.N.lock), not into packed-refs.lock:
// renaming the lock over packed-refs would release it before the loose
// files of the refs the transaction deletes are removed, and a git
// pack-refs taking it in that moment would pack such a file, bringing its
// deleted ref back (git's own deletions keep the lock until then too). The
// lock is removed when the transaction ends (release).
type packedStep struct {
	at   int
	file *heldLock
}

// Writing many refs as loose files costs a lock file each, and creating a
// file is the expensive part (about a quarter of a millisecond here): a run
// of a thousand new documents moves a thousand resource refs. An Update
// that sets at least packedMin refs therefore writes the ones that have no
// loose file straight into packed-refs, under the packed-refs lock alone,
// as git's own pack-refs does (but for a few listed after a ref written
// loose: keepPackedTogether); refs that have a loose file are still
// written loose, under their own lock.
//
// That is safe against other writers because every Update that writes a
// ref which has no loose file also holds the packed-refs lock from its
// compare to its rename (lockPackedIfNeeded): two writers of such a ref are
// serialized by that lock, and the packed writer checks, under it, that no
// loose file has appeared. A ref with a loose file is only ever written by
// a holder of its own lock, as before. readproof gc's packRefs holds the
// packed-refs lock while it packs and removes loose files, and only tries
// a ref's lock; stock git pack-refs takes the packed-refs lock too, and
// removes loose files only by value. (Only
// readproof writes the refs records live in; git fetch writes tracking
// refs of its own.)
const (
	packedMin = 32
	// packedPerRef bounds the rewrite: packed-refs is rewritten whole, so
	// it is used only while the file is at most this many bytes per ref
	// set (a lock file costs about as much as writing 64 KiB).
	packedPerRef = 64 << 10
)

// errReplan is returned inside Update when a ref chosen for packed-refs
// got a loose file before the packed-refs lock was taken: the transaction
// is planned again, that ref now loose.
var errReplan = errors.New("a ref chosen for packed-refs got a loose file")

// Update applies updates as one compare-and-swap transaction with git's
// lock-file protocol; see Store.Update.
func (s *repo) Update(updates ...RefUpdate) error {
	if len(updates) == 0 {
		return nil
	}
	s.mu.Lock()
	closed := s.closed
	checkOwner := !s.ownerChecked && s.opts.Warn != nil && !s.perm.group
	s.ownerChecked = true
	s.mu.Unlock()
	if closed {
		return errClosed
	}
	if checkOwner {
		if err := foreignOwner(s.path); err != nil {
			s.opts.Warn(err)
		}
	}
	tx, err := s.newTxn(updates)
	if err != nil {
		return err
	}
	// Buffered objects are written before any lock is taken; a few loose
	// ones are made durable with the lock files, many before the locks.
	if err := s.flushForUpdate(); err != nil {
		return unpublished(fmt.Errorf("update refs: %w", err))
	}
	if err := tx.checkTargets(); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err := tx.apply()
		if !errors.Is(err, errReplan) || attempt >= 8 {
			if errors.Is(err, errReplan) {
				err = fmt.Errorf("update refs: %w: %w: retry the update", err, ErrLocked)
			}
			return err
		}
		if tx, err = s.newTxn(updates); err != nil {
			return err
		}
	}
}

// deferSyncMax is how many loose objects an Update leaves unsynced until
// its lock files are written (flushForUpdate).
const deferSyncMax = 32

// flushForUpdate writes the buffered objects. Objects must be durable
// before a ref names them, and the new ref values before they are renamed
// into place: two waits for the device when made one after the other. A
// few loose objects (at most deferSyncMax) are therefore left pending, and
// makeDurable syncs them together with the lock files, in one batch; more,
// or a pack, are synced here, before any lock is taken, so that the locks
// are not held while a large write is flushed. Either way every object is
// durable before any ref is renamed.
func (s *repo) flushForUpdate() error {
	s.syncMu.Lock() // see takePending
	defer s.syncMu.Unlock()
	if err := s.lockFlushed(); err != nil {
		return err
	}
	few := len(s.pending) <= deferSyncMax
	for _, rel := range s.pending {
		if strings.HasPrefix(rel, "objects/pack/") && !slices.Contains(s.smallPacks, rel) {
			few = false
			break
		}
	}
	s.smallPacks = s.smallPacks[:0]
	if few {
		s.mu.Unlock()
		return nil
	}
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	return s.syncPending(pending)
}

// apply runs the transaction from its locks on.
func (tx *txn) apply() error {
	s := tx.s
	defer tx.release()
	tx.planPacked()
	// Until publish, a failure changed no ref (unpublished).
	if err := tx.lock(); err != nil {
		return unpublished(err)
	}
	if err := tx.compare(); err != nil {
		return err
	}
	files, err := tx.stage()
	if err != nil {
		return unpublished(err)
	}
	if err := tx.makeDurable(files); err != nil {
		return unpublished(err)
	}
	if err := tx.publish(); err != nil {
		return err
	}
	tx.release()
	tx.warnLeftLocks()
	// Objects and refs are in place: pack loose objects if they piled up
	// (maintain.go).
	s.maybeMaintain()
	return nil
}

// unpublished gives err, a failure of a transaction before any ref moved,
// a hint when it has none: a full disk the one objects give (diskError), a
// store this user may not write (or a read-only file system) one that says
// so, another failed system call (an I/O error) one that says nothing was
// recorded.
func unpublished(err error) error {
	err = diskError(err)
	var errno syscall.Errno
	switch {
	case hint.Of(err) != "" || !errors.As(err, &errno):
		return err
	case errors.Is(err, fs.ErrPermission):
		return hint.With(err, "this user may not write to the store (permission denied): no ref was changed, so nothing was recorded; fix the permissions of the path named above (ls -ld shows its owner and mode), or run readproof as the store's owner")
	case errors.Is(err, syscall.EFBIG):
		return hint.With(err, "no ref was changed, so nothing was recorded; "+WriteLimitRemedy(err, "the store")+", then retry")
	case errors.Is(err, syscall.EROFS):
		return hint.With(err, "the store is on a read-only file system: no ref was changed, so nothing was recorded; remount it read-write, or use a copy of the store (readproof clone) elsewhere")
	}
	return hint.With(err, "the file system failed (dmesg may say why): no ref was changed, so nothing was recorded; repair it, then retry")
}

// newTxn validates the updates: ref names, object ids, one update per ref.
func (s *repo) newTxn(updates []RefUpdate) (*txn, error) {
	tx := &txn{s: s, refs: make([]*refTx, len(updates)), packedPath: filepath.Join(s.path, "packed-refs")}
	for i, u := range updates {
		if err := CheckRefName(u.Name); err != nil {
			return nil, fmt.Errorf("update refs: %w", err)
		}
		if u.Old != "" {
			if err := checkOID(u.Old); err != nil {
				return nil, fmt.Errorf("update %s: old value: %w", u.Name, err)
			}
		}
		if u.New != "" {
			if err := checkOID(u.New); err != nil {
				return nil, fmt.Errorf("update %s: new value: %w", u.Name, err)
			}
		} else {
			tx.deletes = true
		}
		tx.refs[i] = &refTx{RefUpdate: &updates[i], root: &s.path}
	}
	tx.given = append([]*refTx(nil), tx.refs...)
	sort.Slice(tx.refs, func(i, j int) bool { return tx.refs[i].Name < tx.refs[j].Name })
	for i := 1; i < len(tx.refs); i++ {
		if tx.refs[i].Name == tx.refs[i-1].Name {
			return nil, fmt.Errorf("update refs: %s appears twice: give each ref one update", tx.refs[i].Name)
		}
	}
	return tx, nil
}

// checkTargets refuses a ref that would name an object that does not exist.
func (tx *txn) checkTargets() error {
	s := tx.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(tx.refs) >= 8 {
		// Many targets (a batch, whose objects are mostly in the pack it
		// just wrote): list the packs now, so has() finds them in the
		// mapped indexes before it looks for loose files.
		s.st.scan()
	}
	// An object named by several refs is looked up for each (has is a
	// search of the mapped pack indexes, or one lstat): a set of the ids
	// checked cost 0.8 MB at 10,000 refs, most of them distinct.
	for _, t := range tx.refs {
		if t.New == "" {
			continue
		}
		ok, err := s.has(t.New)
		if err == nil && !ok {
			err = fmt.Errorf("object %s: %w: write the object before pointing a ref at it", t.New, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("update %s: %w", t.Name, err)
		}
	}
	return nil
}

// planPacked chooses the refs written into packed-refs: in an Update that
// sets at least packedMin refs, each one set that has no loose file (and is
// not under refs/tags/, whose packed entries would need peeled lines for
// annotated tags), while packed-refs is small enough to rewrite. A loose
// file that appears after this look is caught by compare.
func (tx *txn) planPacked() {
	sets := 0
	for _, t := range tx.refs {
		if t.New != "" {
			sets++
		}
	}
	if sets < packedMin {
		return
	}
	if fi, err := os.Stat(tx.packedPath); err == nil && fi.Size() > int64(sets)*packedPerRef {
		return
	}
	dirs := refDirs{root: tx.s.path}
	for _, t := range tx.refs {
		if t.New == "" || strings.HasPrefix(t.Name, "refs/tags/") {
			continue
		}
		dirs.add(t)
	}
	for _, d := range dirs.names {
		for _, t := range missingLoose(dirs.dir(d), dirs.refs[d]) {
			t.packed = true
		}
	}
	tx.keepPackedTogether()
}

// keepPackedTogether writes loose again the refs planPacked chose that
// would cost packed-refs an extra version for a few refs. A ref's change
// is visible no earlier than those of the refs listed before it (publish),
// so packed-refs is written once for each group of refs chosen for it that
// a ref written loose separates from the refs listed before: after git gc,
// a run of many new documents lists its resource refs, the run's ref
// (under refs/tags/, always loose), then the journal, which only
// packed-refs holds, and writing the journal there made packed-refs be
// written twice. The refs chosen ahead of the first ref written loose stay
// (the one version a transaction writes anyway); a later group stays only
// when it holds packedMin refs or more, else its refs are written loose,
// a lock file each. Which refs are written loose is known here only for
// refs that are set (a deleted ref's change lives in packed-refs when the
// file holds it, found under the lock): publish writes one more version
// wherever a deletion needs it.
func (tx *txn) keepPackedTogether() {
	var group []*refTx
	looseSeen := false
	end := func() {
		if looseSeen && len(group) < packedMin {
			for _, t := range group {
				t.packed = false
			}
		}
		group = group[:0]
	}
	for _, t := range tx.given {
		switch {
		case t.packed:
			group = append(group, t)
		case t.New != "":
			end()
			looseSeen = true
		}
	}
	end()
	for _, t := range tx.refs {
		if t.packed {
			tx.packedWrite = true
			break
		}
	}
}

// listAtLeast is how many refs of one Update in one directory make
// planPacked list the directory instead of looking for each ref's file.
const listAtLeast = 16

// missingLoose returns the refs of refs (all in directory dir) that have no
// loose file: the lstat of its path fails as missing. From listAtLeast refs
// on, dir is listed once instead, which answers the same for a directory
// that can be listed (one that is missing, or whose parent is a file, holds
// no file); one that cannot be listed gets the lstats.
func missingLoose(dir string, refs []*refTx) []*refTx {
	if out, ok := unlisted(dir, refs); ok {
		return out
	}
	var out []*refTx
	for _, t := range refs {
		if _, err := os.Lstat(t.path()); err != nil && isMissing(err) {
			out = append(out, t)
		}
	}
	return out
}

// unlisted is missingLoose's listing: the refs of refs absent from dir's
// listing, and true, when there are at least listAtLeast of them and dir
// could be listed (or is missing).
func unlisted(dir string, refs []*refTx) ([]*refTx, bool) {
	if len(refs) < listAtLeast {
		return nil, false
	}
	names, err := readDirNames(dir)
	if err != nil && !isMissing(err) {
		return nil, false
	}
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[n] = true
	}
	var out []*refTx
	for _, t := range refs {
		if !have[t.base()] {
			out = append(out, t)
		}
	}
	return out, true
}

// lock takes every loose-written ref's lock in name order, then packed-refs
// (git's order) when the transaction deletes a ref, writes into
// packed-refs, or writes a ref that has no loose file.
func (tx *txn) lock() error {
	deadline := time.Now().Add(tx.s.opts.LockTimeout)
	needPacked := tx.deletes || tx.packedWrite
	for _, t := range tx.refs {
		if t.packed {
			continue
		}
		var err error
		if t.lock, err = tx.s.lockFile(t.path(), t.Name, deadline); err != nil {
			return err
		}
		// With its lock held nobody else can give the ref a loose file. A
		// ref without one may be written into packed-refs by another
		// Update, which holds the packed-refs lock: take it too, so the
		// two are serialized.
		if !needPacked && t.New != "" {
			if _, err := os.Lstat(t.path()); err != nil && isMissing(err) {
				needPacked = true
			}
		}
	}
	tx.lockedAt = time.Now()
	if needPacked {
		// Always for deletes, like git: a concurrent pack-refs could
		// otherwise pack a ref we are about to delete.
		var err error
		if tx.packedLock, err = tx.s.lockFile(tx.packedPath, "packed-refs", deadline); err != nil {
			return err
		}
	}
	return nil
}

// release removes every lock (and version of packed-refs) that is still
// held.
func (tx *txn) release() {
	for _, t := range tx.refs {
		t.lock.release()
	}
	for _, step := range tx.packedSteps {
		step.file.release()
	}
	tx.packedLock.release()
}

// warnLeftLocks tells Options.Warn of each lock file of the transaction
// that could not be removed once its refs had moved: the transaction is
// done, but until the file goes, the next writer of that ref waits for it
// to turn stale.
func (tx *txn) warnLeftLocks() {
	warn := tx.s.opts.Warn
	if warn == nil {
		return
	}
	locks := []*heldLock{tx.packedLock}
	for _, t := range tx.refs {
		locks = append(locks, t.lock)
	}
	for _, step := range tx.packedSteps {
		locks = append(locks, step.file)
	}
	for _, l := range locks {
		if l == nil || l.left == nil {
			continue
		}
		cause := l.left
		var pe *fs.PathError
		if errors.As(cause, &pe) {
			cause = pe.Err // the path is named once
		}
		warn(hint.With(fmt.Errorf("update refs: the refs moved, but the lock file %s could not be removed: %w", l.path, cause),
			fmt.Sprintf("what the command did is recorded; the next writer waits for that lock until it is %s old (stale): once no readproof or git process writes to the store, remove it: rm %s", tx.s.opts.StaleLockAge, text.ShellArg(l.path))))
	}
}

// compare reads each ref's current value (loose, else packed) and checks it
// against the expected old value, and git's directory/file rule for new refs.
func (tx *txn) compare() error {
	s := tx.s
	packed, err := s.loadPacked()
	if err != nil {
		return fmt.Errorf("update refs: %w", err)
	}
	tx.packed = packed
	tx.markPackedAbsent()
	for _, t := range tx.refs {
		var oid OID
		var target string
		var found, nothing bool
		if t.absent {
			nothing = true
		} else if oid, target, found, nothing, err = s.readLooseMiss(t.Name); err != nil {
			return fmt.Errorf("update %s: %w", t.Name, err)
		}
		if target != "" {
			return fmt.Errorf("update %s: it is a symbolic ref to %s: update %s instead", t.Name, target, target)
		}
		t.loose = found
		if t.packed && found {
			// A loose file appeared since planPacked looked: a conflict if
			// it moved the ref, else plan again with the ref loose.
			if oid != t.Old {
				return fmt.Errorf("update refs: %w", &ConflictError{Ref: t.Name, Expected: t.Old, Actual: oid})
			}
			return fmt.Errorf("update %s: %w", t.Name, errReplan)
		}
		pv, inPacked, err := packed.find(t.Name)
		if err != nil {
			return fmt.Errorf("update %s: %w", t.Name, err)
		}
		t.inPacked = inPacked
		t.cur = oid
		if !found {
			t.cur = pv
		}
		if t.cur != t.Old {
			return fmt.Errorf("update refs: %w", &ConflictError{Ref: t.Name, Expected: t.Old, Actual: t.cur})
		}
		if t.cur == "" && t.New != "" {
			// When the read found nothing at the path, no directory is
			// there either: checkDirFile need not look.
			path := ""
			if !nothing {
				path = t.path()
			}
			if err := s.checkDirFile(t.Name, path, packed, !nothing); err != nil {
				return err
			}
		}
	}
	if tx.packedWrite {
		return tx.checkPackedNames()
	}
	return nil
}

// markPackedAbsent marks the refs chosen for packed-refs that have no
// loose file (refTx.absent), found by listing each directory that holds at least listAtLeast of
// them (unlisted, as missingLoose does) instead of reading each ref; the others are read as
// before. Called with the packed-refs lock held, under which no loose file
// can appear for a ref that has none (see packedMin), so the listing tells
// what the reads would.
func (tx *txn) markPackedAbsent() {
	if !tx.packedWrite {
		return
	}
	dirs := refDirs{root: tx.s.path}
	for _, t := range tx.refs {
		if t.packed {
			dirs.add(t)
		}
	}
	for _, d := range dirs.names {
		out, _ := unlisted(dirs.dir(d), dirs.refs[d])
		for _, t := range out {
			t.absent = true
		}
	}
}

// checkPackedNames applies git's directory/file rule where no lock file
// does it for us: a ref created into packed-refs may not sit below a loose
// ref file, and no ref created (into packed-refs or loose: the refs of a
// group keepPackedTogether wrote loose sit beside packed ones) may be a
// parent of another ref created in the same Update.
func (tx *txn) checkPackedNames() error {
	checked := map[string]bool{}
	for i, t := range tx.refs {
		if t.New == "" || t.cur != "" {
			continue
		}
		// Its children sort from t.Name+"/" on, not always right after it:
		// "a-x" and "a.x" sort between "a" and "a/b".
		for j := i + 1; j < len(tx.refs) && lessJoined(tx.refs[j].Name, t.Name, '0'); j++ {
			if tx.refs[j].New != "" && isChild(tx.refs[j].Name, t.Name) {
				return dirFileConflict(tx.refs[j].Name)
			}
		}
		if !t.packed {
			continue
		}
		for j := strings.LastIndexByte(t.Name, '/'); j > len("refs"); j = strings.LastIndexByte(t.Name[:j], '/') {
			parent := t.Name[:j]
			if checked[parent] {
				break // this parent and the ones above it were checked
			}
			checked[parent] = true
			if fi, err := os.Lstat(tx.s.refPath(parent)); err == nil && !fi.IsDir() {
				return dirFileConflict(t.Name)
			}
		}
	}
	return nil
}

// lessJoined reports whether a < b+string(c), without making b+string(c)
// (checkPackedNames made two names a ref, 1.2 MB at 10,000 refs).
func lessJoined(a, b string, c byte) bool {
	if len(a) <= len(b) {
		return a < b[:len(a)] || a == b[:len(a)] // a prefix of b is shorter than b+c
	}
	if a[:len(b)] != b {
		return a[:len(b)] < b
	}
	return a[len(b)] < c
}

// isChild reports whether a is below b: strings.HasPrefix(a, b+"/").
func isChild(a, b string) bool {
	return len(a) > len(b) && a[len(b)] == '/' && a[:len(b)] == b
}

// packedChange reports whether t's change lives in packed-refs: a new
// value written into it, or a deletion of a ref it holds.
func packedChange(t *refTx) bool {
	if t.New == "" {
		return t.inPacked
	}
	return t.packed && t.New != t.cur
}

// looseMove reports whether t's loose file changes: a new value renamed
// over it, or its removal.
func looseMove(t *refTx) bool {
	if t.New == "" {
		return t.loose
	}
	return !t.packed && t.New != t.cur
}

// stage writes the new values into the ref locks, and the versions of
// packed-refs into theirs (planSteps). It returns the files to make
// durable.
func (tx *txn) stage() ([]*os.File, error) {
	var files []*os.File
	for _, t := range tx.refs {
		if t.New == "" || t.New == t.cur || t.packed {
			continue
		}
		if _, err := t.lock.f.WriteString(string(t.New) + "\n"); err != nil {
			return nil, fmt.Errorf("update %s: %w", t.Name, err) // err names the lock file
		}
		files = append(files, t.lock.f)
	}
	if tx.packedLock == nil {
		return files, nil
	}
	tx.planSteps()
	var upto map[*refTx]bool // the refs the version being written covers
	if len(tx.packedSteps) > 1 {
		upto = make(map[*refTx]bool, len(tx.given))
	}
	next := 0 // the next ref of tx.given upto lacks
	for k := range tx.packedSteps {
		step := &tx.packedSteps[k]
		if k < len(tx.packedSteps)-1 {
			for ; next <= step.at; next++ {
				upto[tx.given[next]] = true
			}
		} else {
			upto = nil // every ref: nothing changes packed-refs later
		}
		var err error
		if step.file, err = tx.s.createPackedTemp(fmt.Sprintf("packed-refs.%d.lock", k+1)); err != nil {
			return nil, fmt.Errorf("update refs: %w", err)
		}
		data, err := tx.packedVersion(upto)
		if err != nil {
			return nil, fmt.Errorf("update refs: %w", err)
		}
		if _, err := step.file.f.Write(data); err != nil {
			return nil, fmt.Errorf("update refs: write %s: %w", step.file.path, err)
		}
		files = append(files, step.file.f)
	}
	return files, nil
}

// planSteps lists the versions of packed-refs (tx.packedSteps) that keep
// every change visible no earlier than the changes of the refs listed
// before it: one for each group of refs whose change lives in packed-refs
// that a loose move ends, renamed into place where the group's last ref is
// listed (before that ref's own loose file is removed: a deleted ref never
// shows its old packed value), so before the loose move that follows it.
// A transaction whose changes in packed-refs no loose move separates
// writes one version, as before.
func (tx *txn) planSteps() {
	tx.packedSteps = tx.packedSteps[:0]
	last := -1 // the last ref of the open group
	for i, t := range tx.given {
		if packedChange(t) {
			last = i
		}
		if last >= 0 && looseMove(t) {
			tx.packedSteps = append(tx.packedSteps, packedStep{at: last})
			last = -1
		}
	}
	if last >= 0 {
		tx.packedSteps = append(tx.packedSteps, packedStep{at: last})
	}
}

// packedVersion is packed-refs with the changes of the refs in upto made
// (every ref's when upto is nil).
func (tx *txn) packedVersion(upto map[*refTx]bool) ([]byte, error) {
	var sets []*refTx // sorted by name, as tx.refs
	drop := map[string]bool{}
	for _, t := range tx.refs {
		if !packedChange(t) || (upto != nil && !upto[t]) {
			continue
		}
		if t.New == "" {
			drop[t.Name] = true
		} else {
			sets = append(sets, t)
		}
	}
	if len(sets) > 0 {
		return tx.packed.merged(sets, drop)
	}
	return tx.packed.without(drop), nil // a deletion: packed-refs holds the ref
}

// createPackedTemp creates name, a file of packed-refs' next content, at
// the top of the store, for a holder of packed-refs.lock: nobody else
// writes these files, so one that a killed holder left is removed and the
// create tried again (not removed beforehand: no system call more than
// needed). Its name ends in ".lock", so the stale-lock sweep of a later
// writer removes one a killed process left.
func (s *repo) createPackedTemp(name string) (*heldLock, error) {
	path := filepath.Join(s.path, name)
	for try := 0; ; try++ {
		f, err := s.perm.create(path, s.perm.file())
		if errors.Is(err, fs.ErrExist) && try < 8 {
			os.Remove(path)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		// flocked as a lock is, so that the stale-lock sweep of another
		// process leaves it alone while its writer lives
		l, ok, err := s.takeLock(path, f, time.Now().Add(s.opts.LockTimeout))
		if ok || err != nil {
			return l, err
		}
	}
}

// makeDurable syncs objects and the staged values before any rename, closes
// the lock files whose flock we do not hold (one we hold stays open, and
// with it the flock, until its rename or removal), and checks that a lock
// held long enough to look stale is still ours (only a lock without our
// flock can have been broken).
func (tx *txn) makeDurable(files []*os.File) error {
	if err := tx.s.syncForUpdate(files); err != nil {
		return fmt.Errorf("update refs: sync: %w", err)
	}
	for _, t := range tx.refs {
		if t.lock == nil {
			continue // written into packed-refs
		}
		if err := t.lock.closeUnflocked(); err != nil {
			return fmt.Errorf("update %s: close %s: %w", t.Name, t.lock.path, err)
		}
	}
	packed := []*heldLock{tx.packedLock}
	for _, step := range tx.packedSteps {
		if step.file != nil {
			packed = append(packed, step.file)
		}
	}
	for _, l := range packed {
		if l == nil {
			continue
		}
		if err := l.closeUnflocked(); err != nil {
			return fmt.Errorf("update refs: close %s: %w", l.path, err)
		}
	}
	// A lock held longer than half the stale age may have been broken by
	// another process: make sure every lock is still ours.
	if tx.heldLong() {
		all := packed
		for _, t := range tx.refs {
			if t.lock != nil {
				all = append(all, t.lock)
			}
		}
		for _, l := range all {
			if l != nil && !l.owned() {
				return fmt.Errorf("update refs: lock %s was removed as stale by another process: %w: retry the update", l.path, ErrLocked)
			}
		}
	}
	return nil
}

// heldLong reports whether the locks have been held long enough for another
// process to judge them stale.
func (tx *txn) heldLong() bool { return time.Since(tx.lockedAt) > tx.s.opts.StaleLockAge/2 }

// publish moves the refs in the caller's order (Store.Update says why),
// each loose ref at its own place and each version of packed-refs
// (planSteps) where the last ref it changes is listed, before that ref's
// loose file moves; then it syncs the directories. So no change is
// visible before a change listed ahead of it: renamed once where its
// first change was listed, packed-refs could delete the open ref of a run
// (packed by git gc) before the aborted or committed ref listed ahead of
// it existed, or move a packed journal before the run ref it records.
func (tx *txn) publish() error {
	dirs := map[string]bool{}
	steps := tx.packedSteps
	renamePacked := func(i int) error {
		for len(steps) > 0 && steps[0].at == i {
			l := steps[0].file
			if tx.heldLong() {
				for _, held := range []*heldLock{l, tx.packedLock} {
					if !held.owned() {
						return fmt.Errorf("update refs: %s was removed as stale by another process: %w: retry the update", held.path, ErrLocked)
					}
				}
			}
			if publishTrace != nil {
				publishTrace("packed-refs")
			}
			if err := renameFile(l.path, tx.packedPath); err != nil {
				return hint.With(fmt.Errorf("update refs: replace packed-refs: %w", err),
					"the refs listed before this version of packed-refs moved and the others did not, as if the command had been killed there: repair the file system, then run `readproof verify` to see what was recorded before running the command again")
			}
			l.renamed()
			dirs[tx.s.path] = true
			steps = steps[1:]
		}
		return nil
	}
	for i, t := range tx.given {
		if err := renamePacked(i); err != nil {
			return err
		}
		if t.packed {
			continue // in packed-refs, renamed above
		}
		if publishTrace != nil {
			publishTrace(t.Name)
		}
		changed, err := tx.publishRef(t)
		if err != nil {
			return hint.With(fmt.Errorf("update refs: %s: %w (%d of %d refs were updated)", t.Name, err, i, len(tx.refs)),
				"the refs before it moved and the others did not, as if the command had been killed there: repair the file system, then run `readproof verify` to see what was recorded before running the command again")
		}
		if changed {
			// Only a rename or a removal needs its directory synced: a
			// lock that was only taken (a ref compared, not moved) and
			// removed again left the directory as it was.
			dirs[filepath.Dir(t.path())] = true
		}
	}
	if err := tx.s.syncDirs(dirs); err != nil {
		return hint.With(fmt.Errorf("update refs: sync: %w", err),
			"every ref moved, but the file system could not make the moves durable: repair it, then run `readproof verify`")
	}
	return nil
}

// publishRef deletes, keeps or renames one ref's lock into place. It
// reports whether the ref's loose file changed (renamed into place or
// removed).
func (tx *txn) publishRef(t *refTx) (changed bool, err error) {
	switch {
	case t.New == "":
		if t.loose {
			if err := os.Remove(t.path()); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return false, err
			}
			changed = true
		}
		t.lock.release()
	case t.New == t.cur:
		t.lock.release()
	default:
		// Re-check just before the rename when the lock is old enough for
		// another process to have judged it stale: renaming a lock someone
		// else took could publish their unwritten value.
		if tx.heldLong() && !t.lock.owned() {
			return false, fmt.Errorf("lock %s was removed as stale by another process: %w: retry the update", t.lock.path, ErrLocked)
		}
		if beforeRename != nil {
			beforeRename(t.lock.path)
		}
		if err := renameFile(t.lock.path, t.path()); err != nil {
			return false, err
		}
		t.lock.renamed()
		changed = true
	}
	return changed, nil
}

// checkDirFile refuses to create a ref where a directory of refs exists, or
// under a name that is a ref itself (git's D/F rule), loose or packed.
// lookAtPath false skips the look for a directory at path (the caller's
// read found nothing there).
func (s *repo) checkDirFile(name, path string, packed *packedRefs, lookAtPath bool) error {
	if lookAtPath {
		if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
			// An empty directory is left over from deleted refs: git removes it.
			if os.Remove(path) != nil {
				return dirFileConflict(name)
			}
		}
	}
	if packed == nil {
		return nil
	}
	if hit, err := packed.hasPrefix(name + "/"); err != nil || hit {
		if err != nil {
			return fmt.Errorf("update %s: %w", name, err)
		}
		return dirFileConflict(name)
	}
	for i := strings.IndexByte(name, '/'); i >= 0; {
		if _, ok, err := packed.find(name[:i]); err != nil || ok {
			if err != nil {
				return fmt.Errorf("update %s: %w", name, err)
			}
			return dirFileConflict(name)
		}
		j := strings.IndexByte(name[i+1:], '/')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return nil
}

// publishTrace, when a test sets it, is told of each loose ref publish is
// about to move, in order.
var publishTrace func(name string)

// afterCreate, when a test sets it, is called with the path of each lock
// lockFile creates, between its create and its flock: the moment a
// stopped writer can lose its lock.
var afterCreate func(lock string)

// movedAside, when a test sets it, is called with the path of a stale lock
// breakStaleLock has just moved aside and that of the file it moved it
// to, before it checks that it moved the file it judged stale.
var movedAside func(lock, aside string)

// beforeRename, when a test sets it, is called with the path of each ref
// lock publish is about to rename into place, after the last check that
// the lock is still ours: the worst moment for the writer to stop.
var beforeRename func(lock string)
