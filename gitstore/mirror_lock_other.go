//go:build !unix

package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// lockMirror takes an exclusive lock file (O_EXCL), polling until it is free
// or ctx ends; shared locks are exclusive here. A lock older than ten
// minutes is taken to be left by a dead process and removed.
// waiting, when not nil, is called after each attempt that found the lock
// held (Mirror.waiting).
func lockMirror(ctx context.Context, path string, _ bool, waiting func()) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("git mirror: cache directory %s: %w", filepath.Dir(path), err)
	}
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			f.Close()
			return func() { os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("git mirror: lock %s: %w", path, err)
		}
		if st, err := os.Stat(path); err == nil && time.Since(st.ModTime()) > 10*time.Minute {
			os.Remove(path)
			continue
		}
		if waiting != nil {
			waiting()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
