package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/readproof/readproof/internal/diskfull"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/text"
)

// Garbage collection packs the refs itself (packrefs.go: git's pack-refs
// can lose a ref deleted and made again while it runs), then shells out to
// stock git: `git gc` packs loose objects into delta-compressed packs
// (window 10, depth 50) and prunes unreachable objects older than a
// cutoff, and it takes git's own gc lock so two collections never overlap.
// go-git's RepackObjects/Prune neither delta-compress as well nor keep
// unreachable packed objects by age.
//
// Writers keep an object they are about to reference young (freshen, as git
// does): putObject re-stamps an existing loose object, and touches the packs
// when the object is packed (or writes a loose copy when cruft packs, whose
// objects carry their own times, are present). See docs/store-format.md,
// "Garbage collection".

var (
	// ErrGitMissing is returned by GC when stock git is not installed.
	ErrGitMissing = errors.New("stock git is not installed")
	// ErrGCRunning is returned by GC when another git gc holds the
	// repository's gc lock.
	ErrGCRunning = errors.New("another git gc is running on this store")
)

// DefaultGrace is the grace period GC uses when GCOptions.Grace is zero:
// git's own default (gc.pruneExpire = 2.weeks.ago).
const DefaultGrace = 14 * 24 * time.Hour

// gitTempAge is how old (by modification time) a temporary file of stock
// git in objects/pack must be before a gc that succeeded removes it. No
// lock keeps gc from a concurrent git fetch (a pull's, or a user's) that
// writes into the store, and its tmp_pack_XXXXXX can go unwritten for
// long: a stalled network, index-pack resolving the deltas of a large
// pack. git prune itself removes tmp_ files only past gc.pruneExpire; an
// hour is far past any stall a live fetch survives, and what a killed git
// left still goes on the first gc after it.
const gitTempAge = time.Hour

// freshenSlack is how stale a pack's time may get before a writer that
// reuses one of its objects touches it again. It must stay far below any
// grace period used with concurrent writers.
const freshenSlack = time.Minute

// GCOptions tune GC.
type GCOptions struct {
	// Grace keeps unreachable objects younger than this. Zero means
	// DefaultGrace; PruneNow removes every unreachable object.
	Grace time.Duration
	// PruneNow removes unreachable objects whatever their age (git gc
	// --prune=now). Only safe when nothing else writes to the store.
	PruneNow bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// StaleLockAge and LockTimeout are the store's (gitstore.Options):
	// packing the refs breaks a packed-refs.lock only once older than
	// StaleLockAge and waits for a held one up to LockTimeout, and the hint
	// of a gc lock a killed git left names StaleLockAge. Zero means
	// DefaultStaleLockAge, DefaultLockTimeout.
	StaleLockAge time.Duration
	LockTimeout  time.Duration
	// LockWait is the store's (gitstore.Options): it hears of a long wait
	// for packed-refs.lock or for a running maintenance. Nil: the waits
	// are silent.
	LockWait func(LockWaitInfo)
	// LockWaitNotice is how long a wait lasts before LockWait hears of
	// it; zero means DefaultLockWaitNotice.
	LockWaitNotice time.Duration
	// Progress, when set, gets git gc's stderr as it comes, progress meter
	// included: give it the terminal's *os.File, since git draws the meter
	// only when its stderr is a terminal. A failure's message then goes
	// there too. Nil keeps git quiet.
	Progress io.Writer
}

// ObjectStats describes the object database, as `git count-objects -v`
// reports it.
type ObjectStats struct {
	Loose      int   `json:"loose"`
	LooseBytes int64 `json:"loose_bytes"`
	Packed     int   `json:"packed"`
	Packs      int   `json:"packs"`
	PackBytes  int64 `json:"pack_bytes"`
}

// Bytes is the space the objects take.
func (o ObjectStats) Bytes() int64 { return o.LooseBytes + o.PackBytes }

// GCResult is what GC did.
type GCResult struct {
	Before ObjectStats `json:"before"`
	After  ObjectStats `json:"after"`
	// Cutoff is the age limit: unreachable objects older than it were
	// removed (zero with PruneNow).
	Cutoff time.Time `json:"cutoff"`
}

// GC packs the refs of the repository at path (packRefs), then packs its
// objects and removes unreachable objects older than the grace period,
// with stock `git gc`. It fails with ErrGitMissing when git is not on PATH.
func GC(ctx context.Context, path string, opts GCOptions) (*GCResult, error) {
	res, err := gc(ctx, path, opts)
	if err != nil && ctx.Err() != nil {
		// SIGINT or SIGTERM: git gc was killed; what it left (a partial
		// pack) goes with the sweep of stale temporary files, and it
		// removes nothing before what replaces it is complete.
		return nil, hint.With(fmt.Errorf("gc %s: interrupted: %w", path, ctx.Err()),
			"nothing was lost: git gc removes a pack or an object only once what replaces it is complete; run `readproof gc` again to finish")
	}
	return res, err
}

func gc(ctx context.Context, path string, opts GCOptions) (*GCResult, error) {
	gitDir, err := findGitDir(path)
	if err != nil {
		return nil, fmt.Errorf("gc %s: %w", path, err)
	}
	git, err := findGit()
	if err != nil {
		return nil, hint.With(fmt.Errorf("gc %s: %w", path, ErrGitMissing), "install git: readproof gc runs `git gc --prune=<date>`")
	}
	// git gc reads a loose object through a symbolic link (or a FIFO)
	// where git writes its file, packs what it finds under the object's
	// id and removes the file: damage verify reports would be gone (before
	// session 31's last re-read it was). Refused first, nothing changed.
	if id, mode, ok := irregularLoose(filepath.Join(gitDir, "objects")); ok {
		why := fmt.Errorf("%w (its mode %s)", ErrObjectNotRegular, mode.Type())
		if mode&os.ModeSymlink != 0 {
			why = ErrLooseLink
		}
		return nil, hint.With(fmt.Errorf("gc %s: the file of loose object %s: %w; git gc would pack what it leads to under that id and remove it, so nothing was changed", path, id, why),
			"`readproof verify` reports it: put the object's own file in its place (from another copy of the store), then run `readproof gc` again")
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	grace := opts.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	// the store's lock ages and waits, for packRefsAt and the hints
	lockOpts := Options{StaleLockAge: opts.StaleLockAge, LockTimeout: opts.LockTimeout, LockWait: opts.LockWait, LockWaitNotice: opts.LockWaitNotice}.withDefaults()
	res := &GCResult{}
	prune := "now"
	if !opts.PruneNow {
		res.Cutoff = now().Add(-grace).UTC().Truncate(time.Second)
		prune = "@" + strconv.FormatInt(res.Cutoff.Unix(), 10)
	}
	if res.Before, err = countObjects(ctx, git, gitDir); err != nil {
		return nil, fmt.Errorf("gc %s: %w", path, err)
	}
	// gc.auto=0 keeps git from deciding by itself. gc.cruftPacks=true:
	// the unreachable objects younger than the cutoff go into one cruft
	// pack, each with its time (the newest of its loose file's, its
	// pack's or its earlier cruft pack's) in the pack's .mtimes, instead
	// of out of their packs as loose files (`repack -A` did that, and a
	// store with many young unreachable objects grew at each gc). Writers
	// keep reused objects young: see freshenPacked.
	// gc.packRefs=false: the refs are packed by packRefs, before git gc
	// runs (packrefs.go says why). A writer holds packed-refs.lock from
	// its compare to the removal of its deleted refs' loose files, fsyncs
	// included, which on a busy disk can pass git's default wait of one
	// second for that lock: a step of git gc that takes it (none does
	// without pack-refs in git 2.39) waits up to ten.
	// repack.cruftWindow=0: the cruft pack is written without a search
	// for deltas (the pack of reachable objects still has one, window
	// 10). Unreachable objects that were loose go in whole, each deflated
	// as its loose file was; those an earlier pack held keep the deltas
	// they had there when their base goes too. The search read every
	// loose object once more and cost up to a quarter of gc's CPU where
	// the garbage was loose, to save 6-17% of the store's bytes
	// (docs/scaling.md, session 25) until the garbage ages out.
	args := []string{"-c", "gc.auto=0", "-c", "gc.cruftPacks=true", "-c", "repack.cruftWindow=0", "-c", "gc.packRefs=false", "-c", "gc.reflogExpire=never",
		"-c", "gc.reflogExpireUnreachable=never", "-c", "core.packedRefsTimeout=10000", "gc", "--prune=" + prune}
	if opts.Progress == nil {
		args = append(args, "--quiet")
	}
	// No automatic maintenance alongside git gc (gcpid.go): wait for one
	// that runs, and keep others from starting until git gc is done.
	unlock, err := waitMaintenance(ctx, gitDir, lockOpts.LockWait, lockOpts.LockWaitNotice)
	if err != nil {
		return nil, fmt.Errorf("gc %s: %w", path, err)
	}
	// git 2.39's repack --cruft names every *.pack file of objects/pack
	// to pack-objects, which dies on one without an index ("could not
	// find pack"): the .tmp-PID-pack-* files of a repack that was killed
	// go first, whatever their age when no gc holds gc.pid (repack writes
	// them only inside a gc, or when run by hand, which is not safe
	// alongside readproof writers anyway), and other stale temporary
	// files of git with them.
	removeKilledRepackTemps(gitDir, now().Add(-gitTempAge))
	// and so do the halves of packs a killed writer left, as maintenance
	// removes them: by the real clock, as their writers' is
	removeOrphanPacks(filepath.Join(gitDir, "objects", "pack"), time.Now().Add(-maintenanceStaleAge))
	err = packRefsAt(gitDir, lockOpts)
	if err == nil {
		err = removingGitTemps(gitDir, func() error { return runGC(ctx, git, gitDir, opts.Progress, args) })
	}
	unlock()
	if err != nil {
		if strings.Contains(err.Error(), "gc is already running") {
			return nil, gcRunningError(path, gitDir, err.Error())
		}
		if lock := filepath.Join(gitDir, "gc.pid.lock"); strings.Contains(err.Error(), "gc.pid.lock': File exists") {
			// another git gc (or maintenance) was taking git's gc lock
			// at that moment: it writes gc.pid next
			return nil, hint.With(fmt.Errorf("gc %s: %w (git found %s)", path, ErrGCRunning, lock),
				"wait for it to finish, then run `readproof gc` again; a "+lock+" that a killed git gc left is removed by the next write to the store once older than the stale-lock age ("+lockOpts.StaleLockAge.String()+"), or remove it: rm "+text.ShellArg(lock))
		}
		if pack := unindexedPackMsg(err.Error()); pack != "" {
			f := filepath.Join(gitDir, "objects", "pack", pack)
			return nil, hint.With(fmt.Errorf("gc %s: %w", path, err),
				"nothing was removed: "+f+" has no index, so git gc stops on it; a git fetch installing it leaves it so for a moment (run `readproof gc` again), a git or readproof killed while writing it leaves it for good, and `readproof gc` removes it once "+maintenanceStaleAge.String()+" old; when nothing else uses the store, remove it now (rm "+text.ShellArg(f)+") and run `readproof gc` again")
		}
		err = fmt.Errorf("gc %s: %w", path, err)
		if r := WriteLimitRemedy(err, "the store"); hint.Of(err) == "" && r != "" {
			err = hint.With(err, "no object was lost: git gc removes a pack only once its replacement is complete, and the one it was writing was removed; "+r+", then run `readproof gc` again")
		}
		if hint.Of(err) == "" {
			// git gc removes a pack or an object only once what replaces
			// it is complete: a failed gc lost nothing.
			err = hint.With(err, "no object was lost: git gc removes a pack only once its replacement is complete; free space on (or repair) the file system that holds the store, then run `readproof gc` again")
		}
		return nil, err
	}
	// git prune removes git's tmp_* files only once older than the
	// grace: what a killed git left (a full copy of the packed objects)
	// goes now, once older than gitTempAge (a live fetch's is younger).
	removeStaleGitTemps(gitDir, now().Add(-gitTempAge))
	if res.After, err = countObjects(ctx, git, gitDir); err != nil {
		return nil, fmt.Errorf("gc %s: %w", path, err)
	}
	return res, nil
}

// gcRunningError is GC's error when git gc refused to start beside
// another (msg, git's message, names it): the holder of gc.pid, its pid and
// host as git's message or gc.pid gives them. A `readproof gc` killed with
// kill -9 leaves its git gc running to its end, unseen: the pid says which
// process to wait for.
func gcRunningError(path, gitDir, msg string) error {
	pidFile := filepath.Join(gitDir, "gc.pid")
	host, pid := "", ""
	// git: "gc is already running on machine '%s' pid %d (use --force if not)"
	if _, rest, ok := strings.Cut(msg, "gc is already running on machine '"); ok {
		if i := strings.LastIndex(rest, "' pid "); i >= 0 {
			host = rest[:i]
			pid, _, _ = strings.Cut(rest[i+len("' pid "):], " ")
		}
	}
	if _, err := strconv.ParseUint(pid, 10, 63); err != nil || host == "" {
		host, pid = "", ""
		if b, err := os.ReadFile(pidFile); err == nil && len(b) <= 512 {
			p, h, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
			if _, err := strconv.ParseUint(p, 10, 63); err == nil && ok && h != "" {
				host, pid = h, p
			}
		}
	}
	if pid == "" {
		return hint.With(fmt.Errorf("gc %s: %w", path, ErrGCRunning), "wait for it to finish, then run `readproof gc` again")
	}
	err := fmt.Errorf("gc %s: %w: pid %s on %s (%s)", path, ErrGCRunning, pid, text.Escape(host), pidFile)
	if self, _ := os.Hostname(); host != self {
		return hint.With(err, "it runs on the machine "+text.Escape(host)+" that shares the store: wait for it to finish there, then run `readproof gc` again")
	}
	return hint.With(err, "wait for it to finish (ps -p "+pid+" shows it; a `readproof gc` killed with kill -9 leaves its git gc running to its end), then run `readproof gc` again")
}

// removeStaleGitTemps removes stock git's temporary files in objects/pack
// (gitTempFiles) last modified before cutoff: one older than gitTempAge
// was left by a git that was killed.
func removeStaleGitTemps(gitDir string, cutoff time.Time) {
	for name := range gitTempFiles(gitDir, nil) {
		if fi, err := os.Lstat(name); err == nil && fi.ModTime().Before(cutoff) {
			os.Remove(name)
		}
	}
}

// removeKilledRepackTemps removes, before git gc runs, stock git's
// temporary files in objects/pack last modified before cutoff, and the
// temporary packs of git repack (isRepackTemp) of any age when no gc holds
// gc.pid: the caller holds the maintenance lock, so none starts meanwhile
// but a user's, which git's own lock then refuses.
func removeKilledRepackTemps(gitDir string, cutoff time.Time) {
	host, _ := os.Hostname()
	running := gcPidHeld(filepath.Join(gitDir, "gc.pid"), host)
	for name := range gitTempFiles(gitDir, nil) {
		if !running && isRepackTemp(filepath.Base(name)) {
			os.Remove(name)
		} else if fi, err := os.Lstat(name); err == nil && fi.ModTime().Before(cutoff) {
			os.Remove(name)
		}
	}
}

// unindexedPackMsg returns the file named by git's message that it could
// not find a pack it listed (a *.pack without its .idx), else "".
func unindexedPackMsg(msg string) string {
	_, rest, ok := strings.Cut(msg, "could not find pack '")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, "'")
	if !ok || name == "" || strings.ContainsAny(name, "/\\") {
		return ""
	}
	return name
}

// packRefsAt packs the refs of the repository at gitDir (packRefs), with
// the store's lock ages in opts.
func packRefsAt(gitDir string, opts Options) error {
	g, err := OpenWithOptions(gitDir, opts)
	if err != nil {
		return err
	}
	defer g.Close()
	_, err = g.(*repo).packRefs()
	err = unpublished(err) // packing changes no ref's value
	return err
}

// gcAttempts is how many times runGC runs git gc when each failure is the
// deleted-ref race (refRace).
const gcAttempts = 3

// runGC runs git gc, and runs it again (gcAttempts in all) when it failed
// only because a ref was deleted while git walked the refs.
//
// git (2.36 and later: GIT_REF_PARANOIA is on by default) reads a loose
// ref after listing its directory; a ref deleted in between (a run
// committed, aborted or reopened: its open or aborted ref goes) reads as a
// broken ref with no object, and git prune dies with "unable to parse
// object: <ref>", git pack-objects (in repack) with "bad object <ref>".
// Both die while they mark what is reachable, before they remove
// anything, and the steps before them are complete, so the store is as a
// gc stopped there leaves it. git gc is run again only when the ref git
// named is now absent or names an object that exists (refGoneOrValid): a
// ref that is still broken is damage, reported as git reported it.
//
// The messages are read in the C locale. When progress is set, git's
// stderr is the terminal, so they are read from git's trace2 events
// (GIT_TRACE2_EVENT, written by git gc and each git it runs).
func runGC(ctx context.Context, git, gitDir string, progress io.Writer, args []string) error {
	var err error
	for attempt := 1; ; attempt++ {
		var msgs []string
		msgs, err = runGCOnce(ctx, git, gitDir, progress, args)
		if err == nil || ctx.Err() != nil {
			return err
		}
		broken := ""
		if !raceOnly(msgs, func(ref string) bool {
			ok := refGoneOrValid(ctx, git, gitDir, ref)
			if !ok {
				broken = ref
			}
			return ok
		}) {
			if broken != "" {
				// git stopped while it marked what is reachable, before
				// it removed anything (see above).
				return hint.With(fmt.Errorf("%w: ref %s names a missing object: run readproof verify", err, broken),
					"nothing was removed: restore the object "+broken+" names from a clone (readproof pull) or a backup, or delete the ref (`readproof verify` names the run, resource or tag it is), then run `readproof gc` again")
			}
			return err
		}
		if attempt == gcAttempts {
			return fmt.Errorf("%w: refs were deleted under git gc %d times in a row: run readproof gc again", err, gcAttempts)
		}
		if progress != nil {
			// git's message is on the terminal: say why gc goes on.
			fmt.Fprintf(progress, "readproof: git gc stopped on a ref deleted while it read the refs (nothing was removed); running it again\n")
		}
	}
}

// raceOnly reports whether git's fatal messages are the deleted-ref race
// and nothing else: at least one names a ref (refRace) that gone says is
// gone or valid, and the others are git gc's "failed to run <step>".
func raceOnly(msgs []string, gone func(ref string) bool) bool {
	raced := false
	for _, m := range msgs {
		if strings.HasPrefix(m, "failed to run ") {
			continue
		}
		ref := refRace(m)
		if ref == "" || !gone(ref) {
			return false
		}
		raced = true
	}
	return raced
}

// runGCOnce runs git gc once, and on failure returns git's fatal messages
// (each without its "fatal: " prefix).
func runGCOnce(ctx context.Context, git, gitDir string, progress io.Writer, args []string) ([]string, error) {
	env := []string{"LC_ALL=C"}
	var trace string
	if progress != nil {
		f, err := os.CreateTemp("", "readproof-gc-trace2-*")
		if err == nil {
			trace = f.Name()
			f.Close()
			defer os.Remove(trace)
			env = append(env, "GIT_TRACE2_EVENT="+trace)
		}
	}
	_, err := runGitEnv(ctx, git, gitDir, "gc", progress, nil, env, args...)
	if err == nil {
		return nil, nil
	}
	if progress == nil {
		return fatalLines(err.Error()), err
	}
	if trace == "" {
		return nil, err
	}
	b, rerr := os.ReadFile(trace)
	if rerr != nil {
		return nil, err
	}
	return trace2Errors(b), err
}

// fatalLines returns the "fatal: " messages of git's stderr as runGitFull
// reports it (lines joined with "; ").
func fatalLines(msg string) []string {
	var out []string
	for _, l := range strings.Split(msg, "; ") {
		if _, rest, ok := strings.Cut(l, "fatal: "); ok {
			out = append(out, rest)
		}
	}
	return out
}

// trace2Errors returns the fatal messages of a trace2 event log (one JSON
// object a line): of each git process (sid) that exited with die()'s code
// 128, its last "error" event, which is what die() writes there (error()
// writes one too, for a message the process lived on after).
func trace2Errors(log []byte) []string {
	last := map[string]string{}
	var out []string
	for _, line := range bytes.Split(log, []byte("\n")) {
		var ev struct {
			Event string `json:"event"`
			Sid   string `json:"sid"`
			Msg   string `json:"msg"`
			Code  *int   `json:"code"`
		}
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		switch {
		case ev.Event == "error":
			last[ev.Sid] = ev.Msg
		case ev.Event == "exit" && ev.Code != nil && *ev.Code == 128:
			if m, ok := last[ev.Sid]; ok {
				out = append(out, m)
				delete(last, ev.Sid)
			}
		}
	}
	return out
}

// refRace returns the ref a message of git's names when it is one git
// dies with in its walk of the refs on a ref changed meanwhile, else "":
// a ref that reads as broken ("unable to parse object: <ref>" from prune,
// "bad object <ref>" from pack-objects), or one a directory listing met
// twice, before and after it was deleted and made again or renamed over
// ("Duplicated ref, and SHA1s don't match: <ref>", any of them).
func refRace(msg string) string {
	for _, prefix := range refRacePrefixes {
		if ref, ok := strings.CutPrefix(msg, prefix); ok && strings.HasPrefix(ref, "refs/") && CheckRefName(ref) == nil {
			return ref
		}
	}
	return ""
}

var refRacePrefixes = [...]string{"unable to parse object: ", "bad object ", "Duplicated ref, and SHA1s don't match: "}

// refGoneOrValid reports whether ref is now absent, or names an object
// that exists: git for-each-ref lists a broken ref too (paranoia), and
// dies on its object type when the object is missing.
func refGoneOrValid(ctx context.Context, git, gitDir, ref string) bool {
	out, err := runGit(ctx, git, gitDir, "for-each-ref", "for-each-ref", "--format=%(refname) %(objecttype)", ref)
	if err != nil {
		return false
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, typ, _ := strings.Cut(l, " ")
		if name == ref && typ == "" {
			return false
		}
	}
	return true
}

// runGit runs stock git on gitDir with every GIT_* variable of the
// environment removed (a hook's GIT_DIR or GIT_INDEX_FILE must not
// redirect it), and returns stdout.
func runGit(ctx context.Context, git, gitDir, what string, args ...string) ([]byte, error) {
	return runGitTo(ctx, git, gitDir, what, nil, args...)
}

// runGitTo is runGit with git's stderr given to progress as it is (nil:
// kept for the error message).
func runGitTo(ctx context.Context, git, gitDir, what string, progress io.Writer, args ...string) ([]byte, error) {
	return runGitFull(ctx, git, gitDir, what, progress, nil, args...)
}

// runGitWith is runGit with stdin.
func runGitWith(ctx context.Context, git, gitDir, what string, stdin io.Reader, args ...string) ([]byte, error) {
	return runGitFull(ctx, git, gitDir, what, nil, stdin, args...)
}

func runGitFull(ctx context.Context, git, gitDir, what string, progress io.Writer, stdin io.Reader, args ...string) ([]byte, error) {
	return runGitEnv(ctx, git, gitDir, what, progress, stdin, nil, args...)
}

// runGitEnv is runGitFull with env added to git's environment.
func runGitEnv(ctx context.Context, git, gitDir, what string, progress io.Writer, stdin io.Reader, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, git, append([]string{"--git-dir=" + gitDir}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_TERMINAL_PROMPT=0")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if progress != nil {
		cmd.Stderr = progress
	}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if note := oldGitNote(git, ee.ExitCode(), msg); note != "" {
				msg += "\n" + note
			}
		}
		err = fmt.Errorf("git %s: %s", what, strings.ReplaceAll(msg, "\n", "; "))
		if lim := gitLimit(msg); lim != nil {
			err = fmt.Errorf("%w: %w", err, lim) // "git: too many open files"
		}
		return nil, err
	}
	return stdout.Bytes(), nil
}

// countObjects parses `git count-objects -v`.
func countObjects(ctx context.Context, git, gitDir string) (ObjectStats, error) {
	out, err := runGit(ctx, git, gitDir, "count-objects", "count-objects", "-v")
	if err != nil {
		return ObjectStats{}, err
	}
	var st ObjectStats
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "count":
			st.Loose = int(n)
		case "size":
			st.LooseBytes = n * 1024
		case "in-pack":
			st.Packed = int(n)
		case "packs":
			st.Packs = int(n)
		case "size-pack":
			st.PackBytes = n * 1024
		}
	}
	return st, nil
}

// freshenLoose re-stamps a loose object a writer is about to reference
// again, so a concurrent gc does not take it for old garbage. It reports
// false when the file is gone (the caller then writes the object).
func freshenLoose(path string) bool {
	now := time.Now()
	return os.Chtimes(path, now, now) == nil
}

// freshenPacked is called when the object h, which a writer is about to
// reference, exists only in a pack. It touches every pack older than
// freshenSlack, so the unreachable objects of those packs count as young,
// and reports true. A cruft pack (one with a .mtimes file: gc writes the
// unreachable objects it keeps into one) is not touched: git ages its
// objects by the times its .mtimes records, not by the pack's. So with
// cruft packs present it reports true only when h is in a pack that is not
// one (git's gc gives an object in several packs the newest of their
// times), and false otherwise, the caller then writing a loose copy, as git
// does.
//
// A call that found nothing to touch or touched what it had to holds until
// the oldest pack it left would need touching again (freshUntil), as long
// as the object reader keeps the list of packs it had then, which was the
// one this call saw (refreshPacks takes a new list within packCheckEvery of
// any change): a run that reuses many packed objects lists objects/pack
// and stats each pack once, not once an object. Called with s.mu held.
//
// listed, when not nil, is a listing of objects/pack refreshPacks took
// just now, used instead of listing it again.
func (s *repo) freshenPacked(h plumbing.Hash, listed []os.DirEntry) bool {
	now := time.Now()
	if s.freshGen != 0 && s.st.scanned && s.st.gen == s.freshGen && now.Before(s.freshUntil) {
		return len(s.freshCruft) == 0 || s.inPlainPack(h, s.freshCruft)
	}
	dir := filepath.Join(s.path, "objects", "pack")
	entries := listed
	if entries == nil {
		var err error
		if entries, err = readDir(dir); err != nil {
			return false
		}
	}
	cruft := cruftPacks(entries)
	// the reader's packs are those of this listing: which of them holds h
	// is known
	current := s.st.scanned && s.st.listing == idxListing(entries)
	if len(cruft) > 0 && !(current && s.inPlainPack(h, cruft)) {
		return false
	}
	oldest := now
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".pack")
		if !ok || cruft[name] {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return false
		}
		if now.Sub(info.ModTime()) < freshenSlack {
			if info.ModTime().Before(oldest) {
				oldest = info.ModTime()
			}
			continue
		}
		if err := os.Chtimes(filepath.Join(dir, e.Name()), now, now); err != nil {
			return false
		}
	}
	s.freshGen, s.freshCruft = 0, nil
	if current {
		s.freshGen, s.freshUntil, s.freshCruft = s.st.gen, oldest.Add(freshenSlack), cruft
	}
	return true
}

// cruftPacks returns the names ("pack-<checksum>") of the cruft packs of a
// listing of objects/pack: those with a .mtimes file. Nil when there is
// none.
func cruftPacks(entries []os.DirEntry) map[string]bool {
	var cruft map[string]bool
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".mtimes"); ok {
			if cruft == nil {
				cruft = map[string]bool{}
			}
			cruft[name] = true
		}
	}
	return cruft
}

// inPlainPack reports whether one of the reader's packs that is not a
// cruft pack (named in cruft) holds h. Called with s.mu held.
func (s *repo) inPlainPack(h plumbing.Hash, cruft map[string]bool) bool {
	for _, p := range s.st.packs {
		if cruft[p.name] {
			continue
		}
		if _, ok, err := p.find(h); ok && err == nil {
			return true
		}
	}
	return false
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// writeLoose writes one loose object. A concurrent `git prune` removes
// empty fan-out directories (objects/ab/), so go-git's rename of the object
// into a directory it has just created can fail with "no such file"; the
// write is then tried again, as git's own writers do. Called with s.mu held.
func (s *repo) writeLoose(h plumbing.Hash, t plumbing.ObjectType, data []byte) error {
	var err error
	for attempt := 0; attempt < 8; attempt++ {
		if err = s.writeLooseOnce(h, t, data); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// afterMiss repeats a lookup that missed, re-reading the pack list first:
// a concurrent git gc may have packed the object or replaced the pack that
// held it. While gc is between writing its new pack and deleting the old
// ones (and their loose objects) a lookup can miss an object that exists,
// so the lookup is repeated, briefly backing off, as long as a gc is
// running (gc.pid) or the pack list keeps changing. Called with s.mu held.
//
// The listing taken to compare with is handed to the reader as its new
// list of packs, so each attempt lists objects/pack twice, not three times.
func (s *repo) afterMiss(lookup func() error) error {
	var err error
	entries, lerr := s.readPackDir()
	seen := idxListing(entries)
	for attempt := 0; attempt < 6; attempt++ {
		s.st.Reindex()
		s.st.scanFrom(entries, lerr)
		if err = lookup(); err == nil {
			return nil
		}
		entries, lerr = s.readPackDir()
		now := idxListing(entries)
		if now == seen && !fileExists(filepath.Join(s.path, "gc.pid")) {
			return err
		}
		seen = now
		time.Sleep(time.Duration(1+attempt*attempt) * time.Millisecond)
	}
	return err
}

// readPackDir lists objects/pack.
func (s *repo) readPackDir() ([]os.DirEntry, error) {
	return readDir(filepath.Join(s.path, "objects", "pack"))
}

// removingGitTemps runs f, which runs a git that writes objects into the
// repository at gitDir (git gc, git fetch), and when it fails for want of
// space removes the temporary files that git left in objects/pack
// (gitTempFiles): the pack it was writing is then as large as the space
// that was free, so the disk stays full and no writer gets to sweep it
// (sweepStale runs after a write that succeeded). After any other failure
// they are left to that sweep, which takes them once stale: a concurrent
// git's file at work (another pull's fetch) is younger.
func removingGitTemps(gitDir string, f func() error) error {
	before := gitTempFiles(gitDir, nil)
	err := f()
	if err != nil && (OutOfSpace(err) || FileSizeLimited(err)) {
		for name := range gitTempFiles(gitDir, before) {
			os.Remove(name)
		}
	}
	return err
}

// OutOfSpace reports whether err, of a git command or of a write here,
// says the disk or the quota is full: the errno, or git's words for it
// (index-pack: "write error: No space left on device"; pack-objects: "Out
// of diskspace").
func OutOfSpace(err error) bool {
	if diskfull.Is(err) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"No space left on device", "Out of diskspace", "Disk quota exceeded"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// FileSizeLimited reports whether err, of a git command, says a file passed
// the process's file size limit (ulimit -f): EFBIG, or git killed by
// SIGXFSZ (25 on Linux and the BSDs), the partial file then left behind.
func FileSizeLimited(err error) bool {
	msg := err.Error()
	return errors.Is(err, syscall.EFBIG) || strings.Contains(msg, "File too large") || strings.Contains(msg, "died of signal 25")
}

// gitTempFiles lists the temporary files of stock git in objects/pack
// (tmp_pack_XXXXXX, tmp_idx_XXXXXX and the like: six letters and digits
// from mkstemp; git repack's .tmp-PID-pack-*) that are not in skip. readproof's own temporary files end in
// decimal digits only (createTempIn) and are never listed: a writer may be
// at work on one. A stock git writing into the store at the moment a git of
// readproof's runs out of space (a user's git fetch) could lose its
// temporary pack to the caller, and fail; nothing it had stored is lost.
func gitTempFiles(gitDir string, skip map[string]bool) map[string]bool {
	dir := filepath.Join(gitDir, "objects", "pack")
	entries, _ := readDir(dir)
	out := map[string]bool{}
	for _, e := range entries {
		n := e.Name()
		if !isGitTemp(n) || e.IsDir() {
			continue
		}
		if f := filepath.Join(dir, n); !skip[f] {
			out[f] = true
		}
	}
	return out
}

// isGitTemp reports whether n, a name in objects/pack, is a temporary
// file of stock git (gitTempFiles).
func isGitTemp(n string) bool {
	i := strings.LastIndexByte(n, '_')
	mkstemp := strings.HasPrefix(n, "tmp_") && i >= 0 && isMkstempSuffix(n[i+1:])
	return mkstemp || isRepackTemp(n)
}

// isRepackTemp reports whether n is a file git repack writes before it
// renames it into place: .tmp-PID-pack-HASH.pack (.idx, .bitmap, ...), its
// pack-objects' output, a complete copy of the objects packed.
func isRepackTemp(n string) bool {
	rest, ok := strings.CutPrefix(n, ".tmp-")
	if !ok {
		return false
	}
	pid, rest, ok := strings.Cut(rest, "-")
	if !ok || pid == "" || strings.Trim(pid, "0123456789") != "" {
		return false
	}
	return strings.HasPrefix(rest, "pack")
}

// isMkstempSuffix reports whether s is what git's mkstemp puts in place of
// XXXXXX: six letters and digits, at least one of them a letter.
func isMkstempSuffix(s string) bool {
	if len(s) != 6 {
		return false
	}
	letter := false
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return letter
}
