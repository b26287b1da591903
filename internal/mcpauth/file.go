package mcpauth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/readproof/readproof/internal/keyfile"
	"github.com/readproof/readproof/internal/lockfile"
	"github.com/readproof/readproof/internal/progress"
)

// MaxFileSize bounds the token file (thousands of tokens).
const MaxFileSize = 1 << 20

// kind is the token file's key-file policy: the same as every key's.
func kind() keyfile.Kind { return keyfile.Kind{Name: "MCP token file"} }

// Load reads the token file at path under the key-file policy (outside the
// forbidden directories and every git repository, mode 0600), owned by the
// user running readproof. A file that
// does not exist is returned as empty along with an error wrapping
// fs.ErrNotExist, so `token add` can create it and the server can refuse.
func Load(path string, forbidden []string) (*File, error) {
	if fi, err := os.Stat(path); err == nil {
		if err := checkOwner(path, fi); err != nil {
			return nil, err
		}
	}
	data, err := kind().Read(path, forbidden, MaxFileSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Empty(), err
		}
		return nil, err
	}
	defer clear(data)
	f, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Update applies fn to the token file at path under an exclusive lock
// (path + ".lock", so two `token add` at once cannot lose one) and writes
// the result atomically with mode 0600, creating the file and its
// directory when missing.
func Update(path string, forbidden []string, fn func(*File) error) error {
	return UpdateWith(path, forbidden, LockOptions{}, fn)
}

// LockOptions bound UpdateWith's wait for another process's lock of the
// token file.
type LockOptions struct {
	// Timeout bounds the wait, and a lock older than StaleAge was left by
	// a killed process and is taken over (zero: 10s and a minute).
	Timeout, StaleAge time.Duration
	// Wait, when set, hears once of a wait that has lasted
	// progress.WaitNotice.
	Wait func(progress.Wait)
}

// ErrLocked is wrapped by the error of a token file whose lock another
// process held past the timeout; the error carries a hint (Hint).
var ErrLocked = errors.New("the MCP token file is locked")

// UpdateWith is Update with the lock's wait bounded and told by lo.
func UpdateWith(path string, forbidden []string, lo LockOptions, fn func(*File) error) error {
	if _, err := kind().CheckLocation(path, forbidden); err != nil {
		return err
	}
	l, err := lock(path, lo)
	if err != nil {
		return err
	}
	defer l.Release()
	f, err := Load(path, forbidden)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := fn(f); err != nil {
		return err
	}
	return kind().Write(path, forbidden, f.Encode(), keyfile.WriteOptions{Mode: 0o600, Replace: true, MkdirAll: true})
}

// lockWait bounds the wait for another process's lock; a lock older than
// staleLock is left by a killed process and is taken over.
const (
	lockWait  = 10 * time.Second
	staleLock = time.Minute
)

func lock(path string, lo LockOptions) (*lockfile.Lock, error) {
	// the token file's directory may not exist yet (the first token add)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("locking the MCP token file: %w", err)
	}
	owner := lockfile.Owner{Timeout: lockWait, StaleAge: staleLock, Task: "changing the token file",
		Locked: fmt.Errorf("locking the MCP token file: %w by another readproof", ErrLocked), Failed: "locking the MCP token file"}
	return owner.Acquire(path, lockfile.Options{Timeout: lo.Timeout, StaleAge: lo.StaleAge, Wait: lo.Wait})
}

// Verifier checks presented tokens against the token file, re-reading it
// when it changes (a token added or revoked while the server runs takes
// effect on the next request). It is safe for concurrent use.
type Verifier struct {
	path      string
	forbidden []string
	now       func() time.Time

	mu    sync.Mutex
	file  *File
	stamp stamp
}

type stamp struct {
	mod  time.Time
	size int64
	mode os.FileMode
	uid  int64
	ino  os.FileInfo
}

// NewVerifier loads the token file; it refuses a missing file or one
// without a single active token, since nobody could call the server.
func NewVerifier(path string, forbidden []string, now func() time.Time) (*Verifier, error) {
	if now == nil {
		now = time.Now
	}
	v := &Verifier{path: path, forbidden: forbidden, now: now}
	f, err := v.current()
	if err != nil {
		return nil, err
	}
	for _, e := range f.Tokens {
		if e.State(now()) == "active" {
			return v, nil
		}
	}
	return nil, fmt.Errorf("%w: %s holds no active token", ErrNotFound, path)
}

// current returns the file as it is now, re-read when its size, time,
// mode, owner or identity changed: a chmod that opens the file to others changes
// neither its time nor its size, and must be refused like a file found so.
func (v *Verifier) current() (*File, error) {
	fi, err := os.Stat(v.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("MCP token file %s does not exist: %w", v.path, err)
		}
		return nil, fmt.Errorf("MCP token file %s: %w", v.path, err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.file != nil && fi.ModTime().Equal(v.stamp.mod) && fi.Size() == v.stamp.size && fi.Mode() == v.stamp.mode && ownerOf(fi) == v.stamp.uid && os.SameFile(fi, v.stamp.ino) {
		return v.file, nil
	}
	f, err := Load(v.path, v.forbidden)
	if err != nil {
		return nil, err
	}
	v.file, v.stamp = f, stamp{mod: fi.ModTime(), size: fi.Size(), mode: fi.Mode(), uid: ownerOf(fi), ino: fi}
	return f, nil
}

// Verify returns the caller of a presented token (see File.Verify). A
// string not shaped as a token is refused with ErrMalformed before the
// token file is looked at: no stat, no read, no hash, so a flood of junk
// costs the server no file-system access (before session 30 each one
// stat'ed the file and was hashed).
func (v *Verifier) Verify(token string) (Caller, error) {
	if err := ParseToken(token); err != nil {
		return Caller{}, err
	}
	f, err := v.current()
	if err != nil {
		return Caller{}, err
	}
	return f.Verify(token, v.now())
}
