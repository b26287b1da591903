package gitstore

// Automatic maintenance: small writes leave loose objects (fewer than
// packThreshold per write, see pack.go), one file each, which take far more
// space than the same objects packed and slow down every copy of the store.
// After an Update whose objects went out loose, the store estimates how many
// loose objects it holds from the fan-out directories it has just written
// into (as git's gc.auto samples objects/17), and past DefaultAutoPack
// packs them into one delta-compressed pack, in this process
// (packLoose, maintain_write.go), then, when the packs no longer each hold
// twice the objects of the next smaller one, rolls the smallest into one
// as git repack --geometric=2 -d chooses them, by concatenating them
// (rollUp, maintain_pack.go): the packs stay few and no write repacks the
// whole store.
//
// This never deletes an object anyone may need: a loose file goes only once
// its object is in a pack, and a rolled-up pack only once each of its
// objects (reachable or not) is found in the new pack or in one that stays,
// so concurrent writers and in-flight objects keep existing, and
// unreachable objects keep their place until `readproof gc` prunes them
// after its grace period. One maintenance runs at a time (an flock on
// objects/pack, which the kernel drops when a process dies; where there is
// no flock, a lock file that a killed process's successor takes over after
// maintenanceStaleAge), and none while `git gc` runs: maintenance holds
// git's gc lock (gc.pid) while it works and readproof gc holds the
// maintenance lock, so the two never overlap (gcpid.go).

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// DefaultAutoPack is the estimated number of loose objects past which a
// write packs them. The config value gc.auto overrides it (0 or a
// negative value turns automatic maintenance off), as it does for git's
// own `gc --auto`.
const DefaultAutoPack = 512

const (
	maintenanceLock     = "readproof-maintenance.lock"
	maintenanceStaleAge = 30 * time.Minute
	maintenanceTimeout  = 10 * time.Minute
	// sampleDirs bounds how many fan-out directories one estimate reads.
	sampleDirs = 8
)

// autoPackFromConfig returns the loose-object threshold gc.auto sets, or
// DefaultAutoPack.
func autoPackFromConfig(cfg *gitconfig.Config) int {
	return gcSetting(cfg, "auto", DefaultAutoPack)
}

// gcSetting reads the number gc.<key> sets (gitInt): def when it is unset
// or not a number, 0 (off) when it is 0 or negative, as git reads gc.auto
// and gc.autoPackLimit.
func gcSetting(cfg *gitconfig.Config, key string, def int) int {
	if cfg == nil {
		return def
	}
	v := strings.TrimSpace(cfg.Section("gc").Options.Get(key))
	if v == "" {
		return def
	}
	n, ok := gitInt(v)
	if !ok {
		return def
	}
	return max(n, 0) // negative turns it off, as in git
}

// gitInt parses an integer as git's config does: decimal, with an
// optional unit k, m or g (any case: times 1024, 1024^2, 1024^3), so
// "16k" is 16384. ok is false for anything else, or past an int32.
func gitInt(v string) (int, bool) {
	mult := int64(1)
	if v != "" {
		switch v[len(v)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult != 1 {
			v = v[:len(v)-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, false
	}
	n *= mult
	if n > 1<<31-1 || n < -1<<31 {
		return 0, false
	}
	return int(n), true
}

// DefaultAutoPackLimit is the number of packs past which a write that
// made a small pack (writeSmallPack) packs the small ones. The config
// value gc.autoPackLimit overrides it (0 or a negative value turns this
// off), as it does for git's gc --auto, whose default (50) is higher:
// every process that looks up an object maps the index of every pack.
const DefaultAutoPackLimit = 16

// autoPackLimitFromConfig returns the pack count gc.autoPackLimit sets,
// or DefaultAutoPackLimit.
func autoPackLimitFromConfig(cfg *gitconfig.Config) int {
	return gcSetting(cfg, "autoPackLimit", DefaultAutoPackLimit)
}

// packsPastLimit reports whether objects/pack holds more than limit packs
// that maintenance may take (an index, and no .keep or .mtimes file). One
// listing of the directory, no file opened. A pack is counted or not by its
// own name: one with both a .keep and a .mtimes file, or a .keep without an
// index, takes nothing off the count of the others.
func packsPastLimit(packDir string, limit int) bool {
	names, err := readDirNames(packDir)
	if err != nil {
		return false
	}
	held := make(map[string]bool) // pack base names with a .keep or .mtimes file
	var indexed []string
	for _, name := range names {
		if !strings.HasPrefix(name, "pack-") {
			continue
		}
		if base, ok := strings.CutSuffix(name, ".idx"); ok {
			indexed = append(indexed, base)
		} else if base, ok := strings.CutSuffix(name, ".keep"); ok {
			held[base] = true
		} else if base, ok := strings.CutSuffix(name, ".mtimes"); ok {
			held[base] = true
		}
	}
	n := 0
	for _, base := range indexed {
		if !held[base] {
			n++
		}
	}
	return n > limit
}

// noteLooseDirs remembers the fan-out directories a flush wrote loose
// objects into. Called with s.mu held.
func (s *repo) noteLooseDirs(hexes []string) {
	for _, h := range hexes {
		if len(s.looseDirs) >= sampleDirs {
			return
		}
		if d := h[:2]; !slices.Contains(s.looseDirs, d) {
			s.looseDirs = append(s.looseDirs, d)
		}
	}
}

// estimateLoose estimates the loose objects of the store, besides those
// just written, from the number of entries in the fan-out directories
// just written into (each holds 1/256 of the others on average). A
// directory this store created since (made, by first byte) holds the
// objects it linked there, which are counted without listing it.
func estimateLoose(objects string, dirs []string, made map[byte]int) int {
	if len(dirs) == 0 {
		return 0
	}
	total := 0
	for _, d := range dirs {
		if b, err := strconv.ParseUint(d, 16, 8); err == nil {
			if n, ok := made[byte(b)]; ok {
				total += n - 1
				continue
			}
		}
		f, err := openRead(filepath.Join(objects, d))
		if err != nil {
			continue
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		for _, n := range names {
			if len(n) == 38 {
				total++
			}
		}
		// Not counting the object this write put there (the directory was
		// chosen because it holds one).
		total--
	}
	if total <= 0 {
		return 0
	}
	return total * 256 / len(dirs)
}

// maybeMaintain packs the loose objects when the estimate says there are
// more than the threshold. Failures are not the write's: the next write
// tries again, and `readproof gc` does everything this does.
//
// A write that made a small pack (writeSmallPack) looks at the number of
// packs instead: past autoPackLimit, the small packs are packed as the
// loose objects are (packLoose), and the packs rolled up.
func (s *repo) maybeMaintain() {
	s.mu.Lock()
	dirs, made, small := s.looseDirs, s.madeDirs, s.wroteSmall
	s.looseDirs, s.madeDirs, s.wroteSmall = nil, nil, false
	limit, packLimit := s.autoPack, s.autoPackLimit
	s.mu.Unlock()
	if limit <= 0 {
		return // gc.auto = 0: no automatic maintenance at all, as in git
	}
	if small && packLimit > 0 && packsPastLimit(filepath.Join(s.path, "objects", "pack"), packLimit) {
		s.maintain(context.Background())
		return
	}
	if len(dirs) == 0 {
		return
	}
	if estimateLoose(filepath.Join(s.path, "objects"), dirs, made) < limit {
		return
	}
	s.maintain(context.Background())
}

// maintain packs the loose objects (packLoose) and, when the packs no
// longer double in size from one to the next, rolls the smallest up as git
// repack --geometric=2 -d would (rollUp), unless another
// maintenance or a git gc is running. It reports whether it ran and succeeded.
func (s *repo) maintain(ctx context.Context) bool {
	unlock, ok := lockMaintenance(s.path)
	if !ok {
		return false
	}
	defer unlock()
	// git's gc lock too, so no git gc starts until this is done: a gc's
	// repack alongside packLoose's removal of loose files loses objects
	// (gcpid.go). It is also the check for a running git gc: a gc.pid left
	// by a killed gc or maintenance (a dead process) stops nothing, as in git.
	release, ok := holdGCPid(s.path, s.perm)
	if !ok {
		return false
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, maintenanceTimeout)
	defer cancel()
	err := s.packLoose(ctx)
	if err == nil {
		err = s.rollUp(ctx)
	}
	if err == nil {
		// The loose refs too, as git's gc --auto packs them: each
		// single-run write leaves its run's ref as a file of its own, a
		// block on disk each (2,000 runs: 8 MB of ref files, 140 KB
		// packed) and a file every listing of the refs reads. Only when
		// there are enough of them (refsWorthPacking): packing rewrites
		// the whole packed-refs. One try at packed-refs.lock: a writer
		// holding it now packs nothing here, and the next pass does.
		if perr := s.packRefsAuto(); perr != nil && !errors.Is(perr, ErrLocked) {
			err = perr
		}
	}
	s.mu.Lock()
	s.st.Reindex()
	s.mu.Unlock()
	return err == nil
}

// NoteFetched tells g, a store's objects, that a git fetch has just added
// a pack to it: git keeps each fetch's pack as it arrived
// (fetch.unpackLimit=1, fetchbound.go), so a store that only pulls gains a
// pack per pull, which no write of its own counted. Its next Update then
// counts the packs as after a write of a small pack, and past
// gc.autoPackLimit rolls them up (maybeMaintain). A g that is not a
// store's (a staged clone's) is left as it is.
func NoteFetched(g Store) {
	if s, ok := g.(*repo); ok {
		s.mu.Lock()
		s.wroteSmall = true
		s.mu.Unlock()
	}
}
