package gitstore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// heldLock is a lock file we created with O_CREAT|O_EXCL.
type heldLock struct {
	path string      // the lock file
	f    *os.File    // open until its content is durable
	fi   os.FileInfo // identity of our lock file
	done bool        // renamed into place or removed
}

// release closes the lock and removes it if it is still ours.
func (l *heldLock) release() {
	if l == nil || l.done {
		return
	}
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	if fi, err := os.Lstat(l.path); err == nil && os.SameFile(fi, l.fi) {
		os.Remove(l.path)
	}
	l.done = true
}

// owned reports whether the lock file is still the one we created.
func (l *heldLock) owned() bool {
	fi, err := os.Lstat(l.path)
	return err == nil && os.SameFile(fi, l.fi)
}

// lockFile takes target+".lock" with git's protocol: O_CREAT|O_EXCL, retried
// with jittered backoff until deadline. A lock file older than StaleLockAge
// is taken to be left by a crashed process and removed.
func (s *repo) lockFile(target, refName string, deadline time.Time) (*heldLock, error) {
	lock := target + ".lock"
	backoff := time.Millisecond
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			fi, err := f.Stat()
			if err != nil {
				f.Close()
				os.Remove(lock)
				return nil, fmt.Errorf("lock %s: %w", lock, err)
			}
			return &heldLock{path: lock, f: f, fi: fi}, nil
		}
		switch {
		case errors.Is(err, fs.ErrExist):
			if s.breakStaleLock(lock) {
				continue
			}
		case errors.Is(err, fs.ErrNotExist) && attempt < 64:
			// The directory is missing, or git removed it as empty while
			// pruning refs: (re)create it and try again.
			if err := os.MkdirAll(filepath.Dir(lock), 0o777); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // a parent was pruned as empty meanwhile
				}
				if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
					return nil, dirFileConflict(refName)
				}
				return nil, fmt.Errorf("lock %s: %w", lock, err)
			}
			continue
		case errors.Is(err, syscall.ENOTDIR):
			return nil, dirFileConflict(refName)
		default:
			return nil, fmt.Errorf("lock %s: %w", lock, err)
		}
		now := time.Now()
		if !now.Before(deadline) {
			return nil, fmt.Errorf("lock %s: %w: still held after %s; if no git or readproof process is using the store, remove the file",
				lock, ErrLocked, s.opts.LockTimeout)
		}
		sleep := backoff/2 + time.Duration(mrand.Int64N(int64(backoff)))
		if rest := deadline.Sub(now); sleep > rest {
			sleep = rest
		}
		time.Sleep(sleep)
		if backoff < 64*time.Millisecond {
			backoff *= 2
		}
	}
}

func dirFileConflict(name string) error {
	return fmt.Errorf("update %s: a ref cannot also be a directory of refs (%s or one of its parents is taken): choose another name", name, name)
}

// breakStaleLock removes lock if it is older than StaleLockAge. It reports
// whether the caller should retry at once (the lock is gone).
func (s *repo) breakStaleLock(lock string) bool {
	fi, err := os.Lstat(lock)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	if time.Since(fi.ModTime()) < s.opts.StaleLockAge {
		return false
	}
	// Move it aside first and check it is the file we judged stale: another
	// process may have broken it and taken a fresh lock meanwhile. The
	// aside name ends in ".lock" so git never reads it as a ref.
	var rnd [6]byte
	rand.Read(rnd[:])
	aside := strings.TrimSuffix(lock, ".lock") + ".stale-" + hex.EncodeToString(rnd[:]) + ".lock"
	if err := os.Rename(lock, aside); err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	got, err := os.Lstat(aside)
	if err == nil && os.SameFile(got, fi) {
		os.Remove(aside)
		return true
	}
	// We moved a fresh lock: put it back unless the name is taken again.
	if os.Link(aside, lock) != nil {
		os.Rename(aside, lock) // fails harmlessly where links are unsupported
	}
	os.Remove(aside)
	return false
}

// refTx is one ref of an Update.
type refTx struct {
	RefUpdate
	path     string // loose ref file
	lock     *heldLock
	cur      OID  // current value
	loose    bool // a loose file exists
	inPacked bool // packed-refs has the ref
}

// Update applies updates as one compare-and-swap transaction with git's
// lock-file protocol; see Store.Update.
func (s *repo) Update(updates ...RefUpdate) (err error) {
	if len(updates) == 0 {
		return nil
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return errClosed
	}

	txs := make([]*refTx, len(updates))
	deletes := false
	for i, u := range updates {
		if err := CheckRefName(u.Name); err != nil {
			return fmt.Errorf("update refs: %w", err)
		}
		if u.Old != "" {
			if _, err := parseOID(u.Old); err != nil {
				return fmt.Errorf("update %s: old value: %w", u.Name, err)
			}
		}
		if u.New != "" {
			if _, err := parseOID(u.New); err != nil {
				return fmt.Errorf("update %s: new value: %w", u.Name, err)
			}
		} else {
			deletes = true
		}
		txs[i] = &refTx{RefUpdate: u, path: s.refPath(u.Name)}
	}
	sort.Slice(txs, func(i, j int) bool { return txs[i].Name < txs[j].Name })
	for i := 1; i < len(txs); i++ {
		if txs[i].Name == txs[i-1].Name {
			return fmt.Errorf("update refs: %s appears twice: give each ref one update", txs[i].Name)
		}
	}

	// Buffered objects are written and made durable before any lock is
	// taken, so locks are held only for the ref files themselves.
	if err := s.Sync(); err != nil {
		return fmt.Errorf("update refs: %w", err)
	}
	// A ref may only name an object that exists.
	s.mu.Lock()
	checked := map[OID]bool{}
	for _, t := range txs {
		if t.New == "" || checked[t.New] {
			continue
		}
		checked[t.New] = true
		ok, err := s.has(t.New)
		if err == nil && !ok {
			err = fmt.Errorf("object %s: %w: write the object before pointing a ref at it", t.New, ErrNotFound)
		}
		if err != nil {
			s.mu.Unlock()
			return fmt.Errorf("update %s: %w", t.Name, err)
		}
	}
	s.mu.Unlock()

	// Lock every ref in name order, then packed-refs (git's order).
	deadline := time.Now().Add(s.opts.LockTimeout)
	var packedLock *heldLock
	defer func() {
		for _, t := range txs {
			t.lock.release()
		}
		packedLock.release()
	}()
	for _, t := range txs {
		if t.lock, err = s.lockFile(t.path, t.Name, deadline); err != nil {
			return err
		}
	}
	lockedAt := time.Now()
	packedPath := filepath.Join(s.path, "packed-refs")
	if deletes {
		// Always, like git: a concurrent pack-refs could otherwise pack a
		// ref we are about to delete.
		if packedLock, err = s.lockFile(packedPath, "packed-refs", deadline); err != nil {
			return err
		}
	}

	// Compare.
	packed, err := s.loadPacked()
	if err != nil {
		return fmt.Errorf("update refs: %w", err)
	}
	for _, t := range txs {
		oid, target, found, err := s.readLoose(t.Name)
		if err != nil {
			return fmt.Errorf("update %s: %w", t.Name, err)
		}
		if target != "" {
			return fmt.Errorf("update %s: it is a symbolic ref to %s: update %s instead", t.Name, target, target)
		}
		t.loose = found
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
			if err := s.checkDirFile(t.Name, t.path, packed); err != nil {
				return err
			}
		}
	}

	// Write the new values into the locks, and packed-refs without the
	// deleted refs into its lock.
	var files []*os.File
	for _, t := range txs {
		if t.New == "" || t.New == t.cur {
			continue
		}
		if _, err := t.lock.f.WriteString(string(t.New) + "\n"); err != nil {
			return fmt.Errorf("update %s: write %s: %w", t.Name, t.lock.path, err)
		}
		files = append(files, t.lock.f)
	}
	rewritePacked := false
	if packedLock != nil {
		drop := map[string]bool{}
		for _, t := range txs {
			if t.New == "" && t.inPacked {
				drop[t.Name] = true
			}
		}
		if len(drop) > 0 {
			rewritePacked = true
			if _, err := packedLock.f.Write(packed.without(drop)); err != nil {
				return fmt.Errorf("update refs: write %s: %w", packedLock.path, err)
			}
			files = append(files, packedLock.f)
		}
	}

	// Objects, then the new ref values, become durable before any rename.
	if err := s.syncForUpdate(files); err != nil {
		return fmt.Errorf("update refs: sync: %w", err)
	}
	for _, t := range txs {
		if err := t.lock.f.Close(); err != nil {
			return fmt.Errorf("update %s: close %s: %w", t.Name, t.lock.path, err)
		}
		t.lock.f = nil
	}
	if packedLock != nil {
		if err := packedLock.f.Close(); err != nil {
			return fmt.Errorf("update refs: close %s: %w", packedLock.path, err)
		}
		packedLock.f = nil
	}
	// A lock held longer than half the stale age may have been broken by
	// another process: make sure every lock is still ours.
	if time.Since(lockedAt) > s.opts.StaleLockAge/2 {
		all := []*heldLock{packedLock}
		for _, t := range txs {
			all = append(all, t.lock)
		}
		for _, l := range all {
			if l != nil && !l.owned() {
				return fmt.Errorf("update refs: lock %s was removed as stale by another process: %w: retry the update", l.path, ErrLocked)
			}
		}
	}

	// Publish: packed-refs first (so a deleted ref never shows its old
	// packed value), then each loose ref.
	dirs := map[string]bool{}
	if rewritePacked {
		if err := os.Rename(packedLock.path, packedPath); err != nil {
			return fmt.Errorf("update refs: replace packed-refs: %w", err)
		}
		packedLock.done = true
		dirs[s.path] = true
	}
	for i, t := range txs {
		var err error
		switch {
		case t.New == "":
			if t.loose {
				if err = os.Remove(t.path); err != nil && errors.Is(err, fs.ErrNotExist) {
					err = nil
				}
			}
			if err == nil {
				t.lock.release()
			}
		case t.New == t.cur:
			t.lock.release()
		default:
			// Re-check just before the rename when the lock is old enough
			// for another process to have judged it stale: renaming a lock
			// someone else took could publish their unwritten value.
			if time.Since(lockedAt) > s.opts.StaleLockAge/2 && !t.lock.owned() {
				err = fmt.Errorf("lock %s was removed as stale by another process: %w: retry the update", t.lock.path, ErrLocked)
			} else if err = os.Rename(t.lock.path, t.path); err == nil {
				t.lock.done = true
			}
		}
		if err != nil {
			return fmt.Errorf("update refs: %s: %w (%d of %d refs were updated)", t.Name, err, i, len(txs))
		}
		dirs[filepath.Dir(t.path)] = true
	}
	if err := s.syncDirs(dirs); err != nil {
		return fmt.Errorf("update refs: sync: %w", err)
	}
	return nil
}

// checkDirFile refuses to create a ref where a directory of refs exists, or
// under a name that is a ref itself (git's D/F rule), loose or packed.
func (s *repo) checkDirFile(name, path string, packed *packedRefs) error {
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		// An empty directory is left over from deleted refs: git removes it.
		if os.Remove(path) != nil {
			return dirFileConflict(name)
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
