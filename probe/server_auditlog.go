package probe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
)

// Audit log file defaults: 10 MiB per file, the 5 previous files kept.
const (
	DefaultAuditMaxBytes = 10 << 20
	DefaultAuditKeep     = 5
)

// AuditLogOptions bound an [AuditLog]. Zero values mean the defaults.
type AuditLogOptions struct {
	// MaxBytes is the size a file may reach before the next line starts a
	// new one.
	MaxBytes int64
	// Keep is how many rotated files (PATH.1 the newest, PATH.Keep the
	// oldest) are kept; older ones are removed.
	Keep int
}

// AuditLog is a size-rotated audit log file for [ServerOptions.Audit]. A
// line never straddles two files: when the current file would grow past
// MaxBytes, it is renamed PATH.1 (PATH.1 to PATH.2, and so on, the oldest
// dropped past Keep) and a new PATH is created, all files with mode 0600.
// So the log takes at most (Keep+1)*MaxBytes plus one line on disk, however
// many requests the server answers.
type AuditLog struct {
	path string
	opts AuditLogOptions

	mu   sync.Mutex
	f    *os.File
	size int64
}

// OpenAuditLog opens (or creates) the audit log at path for appending.
func OpenAuditLog(path string, opts AuditLogOptions) (*AuditLog, error) {
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultAuditMaxBytes
	}
	if opts.Keep == 0 {
		opts.Keep = DefaultAuditKeep
	}
	// Zero means the default, so at least one old file is always kept.
	if opts.MaxBytes < 0 || opts.Keep < 0 {
		return nil, fmt.Errorf("%w: audit log size %d and kept files %d must not be negative", ErrOptions, opts.MaxBytes, opts.Keep)
	}
	l := &AuditLog{path: path, opts: opts}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *AuditLog) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would take the file past MaxBytes
// (a file that is still empty takes p whatever its size).
func (l *AuditLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, fs.ErrClosed
	}
	if l.size > 0 && l.size+int64(len(p)) > l.opts.MaxBytes {
		if err := l.rotate(); err != nil {
			if l.f == nil && l.open() != nil {
				return 0, fmt.Errorf("rotate audit log %s: %w", l.path, err)
			}
			// Keep logging to the file we have; the next line retries.
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// rotate shifts PATH.i to PATH.i+1 (dropping PATH.Keep), PATH to PATH.1,
// and opens a new PATH.
func (l *AuditLog) rotate() error {
	if err := l.f.Close(); err != nil {
		return err
	}
	l.f = nil
	name := func(i int) string { return l.path + "." + strconv.Itoa(i) }
	if err := os.Remove(name(l.opts.Keep)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for i := l.opts.Keep - 1; i >= 1; i-- {
		if err := os.Rename(name(i), name(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.Rename(l.path, name(1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return l.open()
}

// Close closes the current file.
func (l *AuditLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
