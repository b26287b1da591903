// Package keyfile is readproof's one implementation of key-file policy: where
// a secret key file may live, which modes it may have, and how it is read and
// written. The evidence signing key (package evidence), the receipts key
// (package receipts) and the probe key (package probe) all go through it.
//
// The policy, for every key kind:
//   - a key path may not lie inside a forbidden directory the caller names
//     (the store, the project directory), compared both as written and with
//     symbolic links resolved in the longest existing prefix;
//   - it may not lie inside a git repository (a work tree holding .git, or a
//     bare repository), found by walking up from the key's directory, again as
//     written and resolved, so a key is never committed or pushed;
//   - a key file must be a regular file that grants nothing to group or
//     others (mode &0o077 == 0);
//   - a new key file is written to a temporary file, fsynced, and then linked
//     (or renamed, when replacing) into place, and the directory is fsynced:
//     a crash leaves either no key or the whole key, never a partial one.
//
// Errors wrap this package's sentinels (ErrLocation, ErrMode, ErrInvalid,
// ErrExists, ErrWrite with the failed call's error for a key that could not
// be written, and fs.ErrNotExist for a missing file) and the caller's own
// sentinels named in its Kind, so each key package keeps its error API.
//
// keyfile imports only the standard library, gitstore/gitobj and
// internal/fspath.
package keyfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/readproof/readproof/gitstore/gitobj"
	"github.com/readproof/readproof/internal/fspath"
)

var (
	// ErrLocation: the key path lies inside a forbidden directory or a git
	// repository.
	ErrLocation = errors.New("key file location refused")
	// ErrMode: the key file grants permissions to group or others.
	ErrMode = errors.New("key file open to other users")
	// ErrInvalid: the key path is not a regular file, or the file is larger
	// than any key of its kind.
	ErrInvalid = errors.New("not a key file")
	// ErrExists: a new key would overwrite an existing file. Errors wrapping
	// it also wrap fs.ErrExist.
	ErrExists = errors.New("key file already exists")
	// ErrWrite: writing a new key file failed (a full disk, an I/O error);
	// nothing was left at its path. Errors wrapping it wrap the cause too,
	// and carry a hint (a Hint method, as internal/hint's errors do).
	ErrWrite = errors.New("key file not written")
)

// writeError is a failed Write: its message and errors.Is are err's, and
// it says what to do (the CLI prints a Hint method's text after the
// message).
type writeError struct{ err error }

func (w *writeError) Error() string { return w.err.Error() }
func (w *writeError) Unwrap() error { return w.err }
func (w *writeError) Hint() string {
	const none = "nothing was written at the key's path: "
	switch {
	case errors.Is(w.err, syscall.EROFS):
		return none + "the file system that holds it is read-only; remount it read-write, or name a key path on one where you can write"
	case errors.Is(w.err, fs.ErrPermission):
		return none + "this user may not write in the directory named above (permission denied); fix its permissions (ls -ld shows its owner and mode), or name a key path in a directory this user can write"
	}
	return none + "free space on the file system that holds it (df shows it) or repair it, then run the command again"
}

// pathFileError is CheckAbsent's error for a path through a file: no key
// can be written there.
type pathFileError struct{ err error }

func (p *pathFileError) Error() string { return p.err.Error() }
func (p *pathFileError) Unwrap() error { return p.err }
func (p *pathFileError) Hint() string {
	return "name a path in a directory this user can write: readproof key init --key PATH (or set XDG_CONFIG_HOME to such a directory)"
}

// writeFailed is Write's error for a failed system call err.
func (k Kind) writeFailed(path string, err error, more string) error {
	return &writeError{k.wrap(ErrWrite, k.Any, "writing %s %s: %w%s", k.Name, path, err, more)}
}

// Kind names a kind of key file and the caller's sentinel errors, which the
// errors of this package wrap in addition to their own. A nil sentinel is
// not wrapped.
type Kind struct {
	// Name is used in messages: "signing key", "receipt key", "probe key".
	Name string
	// Location is wrapped with ErrLocation.
	Location error
	// Mode is wrapped with ErrMode.
	Mode error
	// Invalid is wrapped with ErrInvalid.
	Invalid error
	// Exists is wrapped with ErrExists.
	Exists error
	// Any is wrapped by every error reading or writing a key file fails with
	// (location refusals included), for a package with one catch-all
	// sentinel.
	Any error
}

// wrap builds an error whose message starts with the most specific sentinel
// the Kind names (its specific one, else its catch-all, else base) and which
// wraps base, specific and the catch-all for errors.Is.
func (k Kind) wrap(base, specific error, format string, args ...any) error {
	head := base
	for _, s := range []error{k.Any, specific} {
		if s != nil {
			head = s
		}
	}
	var err error = fmt.Errorf("%w: "+format, append([]any{head}, args...)...)
	for _, s := range []error{base, specific, k.Any} {
		if s != nil && !errors.Is(err, s) {
			err = &wrapped{err: err, also: s}
		}
	}
	return err
}

// notExist is the error of a key file that is not there. The message says
// so itself ("signing key PATH does not exist"), so fs.ErrNotExist is
// wrapped without heading it ("file does not exist: signing key PATH does
// not exist"); a kind's own sentinel still heads it.
func (k Kind) notExist(format string, args ...any) error {
	if k.Any == nil {
		return &wrapped{err: fmt.Errorf(format, args...), also: fs.ErrNotExist}
	}
	return k.wrap(fs.ErrNotExist, k.Any, format, args...)
}

// wrapped adds one more sentinel for errors.Is without changing the message.
type wrapped struct {
	err  error
	also error
}

func (w *wrapped) Error() string   { return w.err.Error() }
func (w *wrapped) Unwrap() []error { return []error{w.err, w.also} }

// DefaultPath is where key files live by default: name under
// $XDG_CONFIG_HOME/readproof (os.UserConfigDir), outside every repository.
func DefaultPath(name string) (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no user config directory for key files: %w", err)
	}
	return filepath.Join(dir, "readproof", name), nil
}

// CheckLocation applies the location policy to path and returns the path
// made absolute with links resolved in its longest existing prefix.
func (k Kind) CheckLocation(path string, forbidden []string) (string, error) {
	if path == "" {
		return "", k.wrap(ErrLocation, k.Location, "empty %s path: name a file outside the store and every repository", k.Name)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", k.wrap(ErrLocation, k.Location, "%s %s: %v", k.Name, path, err)
	}
	real, err := fspath.Resolve(abs)
	if err != nil {
		return "", k.wrap(ErrLocation, k.Location, "%s %s: %v", k.Name, path, err)
	}
	for _, dir := range forbidden {
		if dir == "" {
			continue
		}
		dabs, err := filepath.Abs(dir)
		if err != nil {
			return "", k.wrap(ErrLocation, k.Location, "%s %s: directory %s: %v", k.Name, path, dir, err)
		}
		dreal, err := fspath.Resolve(dabs)
		if err != nil {
			return "", k.wrap(ErrLocation, k.Location, "%s %s: directory %s: %v", k.Name, path, dir, err)
		}
		for _, d := range []string{dabs, dreal} {
			if fspath.Within(d, abs) || fspath.Within(d, real) {
				return "", k.wrap(ErrLocation, k.Location, "%s %s is inside %s, where it could be committed or shared: keep key files outside the store and every repository (the default is under the user config directory)", k.Name, path, dir)
			}
		}
	}
	if repo := EnclosingRepository(abs, real); repo != "" {
		return "", k.wrap(ErrLocation, k.Location, "%s %s is inside the git repository %s, where it could be committed or pushed: keep key files outside every repository (the default is under the user config directory)", k.Name, path, repo)
	}
	return real, nil
}

// EnclosingRepository returns the nearest directory at or above the parent of
// any of paths (absolute) that is a git repository (gitobj.IsRepository), or
// "" when there is none.
func EnclosingRepository(paths ...string) string {
	for i, p := range paths {
		if slices.Contains(paths[:i], p) {
			continue // walked already (a path without links resolves to itself)
		}
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			if gitobj.IsRepository(d) {
				return d
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return ""
}

// Read checks path's location, then reads the key file: a regular file
// (checked before it is opened, so a FIFO cannot block, and again on the
// opened file) with no permission for group or others, at most max bytes.
// The caller clears the returned bytes when done.
func (k Kind) Read(path string, forbidden []string, max int) ([]byte, error) {
	real, err := k.CheckLocation(path, forbidden)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, k.notExist("%s %s does not exist", k.Name, path)
		}
		if errors.Is(err, syscall.ENOTDIR) {
			// a directory on the way is a file (a HOME that is not a
			// directory): no key can be there
			return nil, k.notExist("%s %s does not exist (%v)", k.Name, path, err)
		}
		return nil, k.wrap(ErrInvalid, k.Any, "%s %s: %v", k.Name, path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, k.wrap(ErrInvalid, k.Invalid, "%s %s is not a regular file: point at the key file itself", k.Name, path)
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, k.wrap(ErrInvalid, k.Any, "opening %s %s: %v", k.Name, path, err)
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil {
		return nil, k.wrap(ErrInvalid, k.Any, "%s %s: %v", k.Name, path, err)
	}
	if !os.SameFile(fi, ofi) {
		return nil, k.wrap(ErrInvalid, k.Invalid, "%s %s changed while it was being opened; try again", k.Name, path)
	}
	if perm := ofi.Mode().Perm(); perm&0o077 != 0 {
		return nil, k.wrap(ErrMode, k.Mode, "%s %s has mode %04o, open to group or others: run chmod 600 %s", k.Name, path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		clear(data)
		return nil, k.wrap(ErrInvalid, k.Any, "reading %s %s: %v", k.Name, path, err)
	}
	if len(data) > max {
		clear(data)
		return nil, k.wrap(ErrInvalid, k.Invalid, "%s %s is larger than any key of its kind (%d bytes at most)", k.Name, path, max)
	}
	return data, nil
}

// WriteOptions says how Write places a file.
type WriteOptions struct {
	// Mode is the file's permission bits (0o600 for a secret).
	Mode fs.FileMode
	// Replace allows replacing an existing file (rotation); otherwise an
	// existing file is refused with ErrExists.
	Replace bool
	// MkdirAll creates missing parent directories with mode 0700; otherwise
	// a missing directory is an error.
	MkdirAll bool
}

// Write checks path's location and writes data there atomically: into a
// temporary file beside it, fsynced, then linked (new file) or renamed
// (Replace) into place, and the directory fsynced. On any failure nothing is
// left behind.
func (k Kind) Write(path string, forbidden []string, data []byte, o WriteOptions) error {
	real, err := k.CheckLocation(path, forbidden)
	if err != nil {
		return err
	}
	dir := filepath.Dir(real)
	if o.MkdirAll {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return &writeError{k.wrap(ErrWrite, k.Any, "creating the directory of %s %s: %w", k.Name, path, err)}
		}
	}
	if !o.Replace {
		if err := k.CheckAbsent(path); err != nil {
			return err
		}
	}
	sweepTemps(dir, time.Now())
	tmp, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		more := ""
		if errors.Is(err, fs.ErrNotExist) {
			more = " (create the directory first)"
		}
		return k.writeFailed(path, err, more)
	}
	name := tmp.Name()
	err = tmp.Chmod(o.Mode)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if o.Replace {
			err = os.Rename(name, real)
		} else {
			err = os.Link(name, real)
		}
	}
	_ = os.Remove(name) // after Link: the temporary name; after Rename: nothing
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return k.exists(path)
		}
		return k.writeFailed(path, err, "")
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// tempPrefix starts the name of the temporary file Write writes a key into
// beside its path (os.CreateTemp adds digits).
const tempPrefix = ".readproof-key-"

// tempStale is how old a temporary key file must be before sweepTemps
// takes it for one a killed Write left: a Write takes milliseconds.
const tempStale = time.Minute

// sweepTemps removes from dir the temporary key files a killed Write left
// (a regular file named tempPrefix and digits, older than tempStale).
// Killed before its link or rename, a Write leaves a key nobody uses;
// killed after its link, a second name of the key it wrote, which a later
// rotation would otherwise leave on disk after replacing that key.
// Failures only leave a file, as before.
func sweepTemps(dir string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix)
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > tempStale {
			_ = os.Remove(p)
		}
	}
}

// CheckAbsent returns nil when nothing is at path, and otherwise the error
// Write gives for an existing file (ErrExists, fs.ErrExist).
func (k Kind) CheckAbsent(path string) error {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return k.exists(path)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, syscall.ENOTDIR):
		// a HOME (or XDG_CONFIG_HOME) that is a file, as on some CI machines
		return &pathFileError{k.wrap(ErrWrite, k.Any, "%s %s cannot be created: a directory on its path is a file: %w", k.Name, path, err)}
	}
	return k.wrap(ErrInvalid, k.Any, "%s %s: %v", k.Name, path, err)
}

func (k Kind) exists(path string) error {
	err := k.wrap(ErrExists, k.Exists, "%s %s: refusing to overwrite a key file that exists: choose another path or remove it first", k.Name, path)
	return &wrapped{err: err, also: fs.ErrExist}
}
