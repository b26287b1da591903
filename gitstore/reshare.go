package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/readproof/readproof/internal/hint"
)

// SetSharing changes who may read the existing store at path, as `git init
// --shared` re-initialises a repository: the config's core.sharedRepository
// says sharing (written by stock git, under its lock), so that the files
// readproof and git make next get its modes, and every file and directory
// already in the store gets them too, which git leaves as they were (an
// object written private stays unreadable to the group). ShareGroup gives
// the group what the owner has (directories 2770, files 0660, objects
// 0440); SharePrivate takes from group and others everything (0700, 0600,
// 0400). Others never get anything. Links are left alone.
//
// changed counts the config (when its value changed) and the files and
// directories whose mode changed: 0 means the store already was shared so.
// A file another user owns cannot be changed by this process, nor a
// directory it cannot read be walked: every other one is still changed, and
// the error names the first and the count. The config counts as changed
// only when it said other sharing than in any of git's words for it
// (sharedAs). On Windows only the config is written.
func SetSharing(ctx context.Context, path string, sharing Sharing) (changed int, err error) {
	if sharing == "" {
		sharing = SharePrivate
	}
	cfg, err := readConfig(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("share store %s: read config: %w", path, err)
	}
	if cfg == nil || !sharedAs(cfg.Section("core").Options.Get("sharedRepository"), sharing) {
		t, err := NewTransport(path, TransportOptions{})
		if err != nil {
			return 0, err
		}
		if _, err := t.run(ctx, false, "config", "--replace-all", "core.sharedRepository", sharing.configValue()); err != nil {
			return 0, fmt.Errorf("share store %s: set core.sharedRepository: %w", path, err)
		}
		changed++
	}
	if runtime.GOOS == "windows" {
		return changed, nil // no Unix modes to give
	}
	group := sharing == ShareGroup
	var first error
	failed := 0
	werr := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil && d != nil && p != path {
			// a directory that cannot be read (its mode already given
			// when it was visited): its files keep theirs, the rest of
			// the walk goes on
			if first == nil {
				first = err
			}
			failed++
			return nil
		} else if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone meanwhile (a temporary file renamed)
		} else if err != nil {
			return err
		}
		mode := fi.Mode()
		want := sharedMode(mode, group)
		if mode.Perm() == want.Perm() && mode&fs.ModeSetgid == want&fs.ModeSetgid {
			return nil
		}
		if err := os.Chmod(p, want); err != nil && !errors.Is(err, fs.ErrNotExist) {
			if first == nil {
				first = err
			}
			failed++
			return nil
		}
		changed++
		return nil
	})
	if werr != nil {
		return changed, fmt.Errorf("share store %s: %w", path, werr)
	}
	if first != nil {
		return changed, hint.With(fmt.Errorf("share store %s: %d files or directories kept their modes or could not be read (%w): a file another user owns can only be changed by that user or root", path, failed, first),
			"run the same command as the owner of those files, or as root, to change the rest; the files readproof and git write from now on get the new modes")
	}
	return changed, nil
}

// sharedMode is the mode SetSharing gives a file or directory of mode m:
// the owner's bits, for the group too when group (and setgid on a
// directory, so that what is made in it belongs to its group), none for
// others.
func sharedMode(m fs.FileMode, group bool) fs.FileMode {
	owner := m.Perm() & 0o700
	want := owner
	if group {
		want |= owner >> 3
		if m.IsDir() {
			want |= fs.ModeSetgid
		}
	}
	return want
}

// sharedAs reports whether v, a value of core.sharedRepository, says
// sharing in one of git's words for it (git_config_perm): group is
// "group" (that case only), a boolean true (true, yes, on, any case) or
// the old number 1; private, as Init writes it, the octal mode 0600.
func sharedAs(v string, sharing Sharing) bool {
	v = strings.TrimSpace(v)
	n, err := strconv.ParseUint(v, 8, 32)
	isNum := err == nil
	if sharing == ShareGroup {
		switch strings.ToLower(v) {
		case "true", "yes", "on":
			return true
		}
		return v == "group" || isNum && n == 1
	}
	return isNum && n == 0o600
}
