package commands

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/gitstore/gitobj"
	"github.com/readproof/readproof/internal/buildinfo"
	"github.com/readproof/readproof/internal/fspath"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/progress"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/telemetry"
	"github.com/readproof/readproof/internal/text"
)

// PolicyName is the policy file's name.
const PolicyName = "readproof.toml"

// env is what a command needs: where things are and where to write.
type env struct {
	in         io.Reader
	out, err   io.Writer
	json       bool
	policyPath string
	// policyNamed is set when --config or READPROOF_CONFIG named the
	// policy file: then it must exist (only init creates it).
	policyNamed bool
	storePath   string
	storeNamed  bool // --store or READPROOF_STORE named the store
	// policyFile is the policy file, opened (policy.Open) when
	// judgePolicy judged what it is (envFor, for the file --config or
	// READPROOF_CONFIG named; init), and not read yet: the first
	// loadPolicy reads it (the file judged, opened once) when the path
	// still names it, with policyInfo its FileInfo. nil when not judged,
	// when its open failed (the read names the error) or once read. (A
	// command that never reads the policy holds it open until it exits.)
	policyFile *os.File
	policyInfo fs.FileInfo
	// keepPolicy asks loadPolicy to keep the file it read open, as
	// policyKept, for the command to read again (resource add's append,
	// under the file's lock, policy.AppendOptions.Opened); the command
	// closes it.
	keepPolicy bool
	policyKept *os.File
}

func newEnv(c *cli.Context) (*env, error) {
	return envFor(c.App.Reader, c.App.Writer, c.App.ErrWriter, c.String("config"), c.String("store"), c.Bool("json"))
}

// envFor is newEnv from the global options' values (config and store
// empty when not given).
func envFor(in io.Reader, out, errw io.Writer, config, storeFlag string, json bool) (*env, error) {
	e := &env{in: in, out: out, err: errw, json: json}
	p := config
	if p != "" {
		e.policyNamed = true
	} else {
		p = findPolicy()
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	e.policyPath = abs
	if e.policyNamed {
		// a directory is not the policy file, and the store beside it
		// would be looked for in its parent: refused, as a named pipe or
		// a device, by every command
		if err := e.judgePolicy(); err != nil {
			return nil, err
		}
	}
	s := storeFlag
	e.storeNamed = s != ""
	if s == "" {
		s = store.DefaultPath(filepath.Dir(abs))
		if !e.policyNamed {
			s = storeHere(abs, s)
		}
	}
	if e.storePath, err = filepath.Abs(s); err != nil {
		return nil, err
	}
	return e, nil
}

// findPolicy looks for readproof.toml in the working directory and its
// parents, like git looks for .git; without one it names ./readproof.toml.
func findPolicy() string {
	wd, err := os.Getwd()
	if err != nil {
		return PolicyName
	}
	if p, ok := findPolicyFrom(wd); ok {
		return p
	}
	return filepath.Join(wd, PolicyName)
}

// findPolicyFrom is the readproof.toml a command run in dir finds: the one
// in dir or its nearest parent that has one.
func findPolicyFrom(dir string) (string, bool) {
	for {
		p := filepath.Join(dir, PolicyName)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// storeHere is the store commands use when neither --store nor
// READPROOF_STORE names one: the working directory when it is a store itself
// and no policy file was found (as git works inside a bare repository: a
// `readproof clone URL DIR` used from DIR), else def, beside the policy file.
func storeHere(policyPath, def string) string {
	if _, err := os.Stat(policyPath); err == nil {
		return def
	}
	wd, err := os.Getwd()
	if err != nil || !gitstore.IsStore(wd) {
		return def
	}
	return wd
}

// loadPolicy reads the policy file. A missing file is an empty policy,
// unless --config or READPROOF_CONFIG named it: a named file that does not
// exist is a usage error, not a policy without rules.
func (e *env) loadPolicy() (*policy.File, error) {
	// the file judgePolicy judged, opened once
	file, fi := e.policyFile, e.policyInfo
	e.policyFile, e.policyInfo = nil, nil
	if file != nil && fi.Mode().IsRegular() {
		// a command that reads it only when it needs it (openRead's
		// policy.NewLazy: a commit's signing after a long replay) may
		// read it long after envFor opened it: a file replaced by a
		// rename since (an editor's save, resource add) is not read as
		// it was when the command started, but opened and judged again
		// by its path, as before session 31
		if now, err := os.Stat(e.policyPath); err != nil || !os.SameFile(fi, now) {
			file.Close()
			file, fi = nil, nil
		}
	}
	var f *policy.File
	var err error
	if file != nil {
		f, err = policy.LoadCachedFrom(e.policyPath, file, fi, e.policyCache())
		if e.keepPolicy && e.policyKept == nil {
			e.policyKept = file
		} else {
			file.Close()
		}
	} else {
		f, err = policy.LoadCached(e.policyPath, e.policyCache())
	}
	if kerr := policyKindError(err, e.policyPath, e.policyNamed); kerr != nil {
		return nil, kerr
	}
	if errors.Is(err, fs.ErrNotExist) {
		if e.policyNamed {
			return nil, withCode(ExitUsage, hint.With(fmt.Errorf("policy file %s (named by --config or READPROOF_CONFIG): %w", e.policyPath, err),
				"fix the path, or create the file with `readproof --config "+e.policyPath+" init`"))
		}
		return policy.Empty(e.policyPath), nil
	}
	if err != nil {
		var pe *policy.Error
		if errors.As(err, &pe) && pe.Hint != "" {
			return nil, withCode(ExitUsage, hint.With(err, pe.Hint))
		}
		if !errors.As(err, &pe) && errors.Is(err, fs.ErrPermission) {
			// not the file's text: who may read it
			return nil, withCode(ExitUsage, hint.With(err, "this user may not read "+e.policyPath+" (permission denied): fix its permissions or its directory's (ls -l "+text.ShellArg(e.policyPath)+" shows the owner and mode), or run readproof as a user who may"))
		}
		return nil, withCode(ExitUsage, hint.With(err, "fix "+e.policyPath+"; readproof.toml.example documents every key"))
	}
	return f, nil
}

// judgePolicy refuses the policy file (policyPath) that policy.Open refuses
// for what it is (a named pipe, a device other than the null device, a
// directory), judged from the file opened (without waiting for a named
// pipe's writer) and not from a look at the path first: a named pipe
// would hold a reader until something wrote to it, and a device such as
// /dev/zero would be read without end. A pipe this process was handed
// (--config /dev/stdin, a shell's --config <(...)) has its writer already
// and is read. Any other error (a missing file, one too large, one this
// user may not read) is left to the read, which names it. The file
// opened is kept (policyFile) for the first loadPolicy to read: the file
// judged is the one read, opened once. A file judged already (by envFor)
// is not opened again.
func (e *env) judgePolicy() error {
	if e.policyFile != nil {
		return nil
	}
	f, fi, err := policy.Open(e.policyPath)
	if kerr := policyKindError(err, e.policyPath, e.policyNamed); kerr != nil {
		return kerr
	}
	if err == nil {
		e.policyFile, e.policyInfo = f, fi
	}
	return nil
}

// policyKindError is err, from policy.Open, as the command line words a
// policy file refused for what it is, exit 2, with a hint; nil for any
// other error.
func policyKindError(err error, path string, named bool) error {
	var ke *fspath.KindError
	if !errors.As(err, &ke) {
		return nil
	}
	if named && ke.Mode.IsDir() {
		return withCode(ExitUsage, hint.With(fmt.Errorf("policy file %s (named by --config or READPROOF_CONFIG) is a directory", path),
			"name the policy file itself: --config "+text.ShellArg(filepath.Join(path, PolicyName))))
	}
	by, h := "", "replace it with a regular file (readproof.toml.example documents every key), or name the policy file with --config"
	if named {
		by, h = " (named by --config or READPROOF_CONFIG)", "name the policy file itself with --config or READPROOF_CONFIG"
	}
	if ke.Mode.IsDir() && !named {
		h = "move the directory away and put the policy file there (readproof.toml.example documents every key), or name the policy file with --config"
	}
	return withCode(ExitUsage, hint.With(fmt.Errorf("policy file %s%s is %s, not a regular file; nothing was read from it", path, by, fspath.DescribeMode(ke.Mode)), h))
}

// policyCache is where a large policy file's parse is kept: in the store
// (policy.CacheFile and a slot of the policy file's path, one for each
// policy file used with the store, policy.CacheMaxFiles at most), for this build of readproof, and only when the store
// path is a store's git directory (a command never writes where no store
// is), authenticated under the user's policy cache key
// (keyloc.PolicyCacheKey), which the store does not hold. Without a build
// identity or a usable key there is no cache: the full parse, in silence
// (a key file refused is a missed speed-up, not the command's error).
func (e *env) policyCache() policy.Cache {
	build := policyBuild()
	if build == "" {
		return policy.Cache{}
	}
	return policy.Cache{
		Dir:   e.storePath,
		Build: build,
		Ours:  func() bool { return gitobj.IsGitDir(e.storePath) && gitstore.IsStore(e.storePath) },
		Key: func() []byte {
			key, err := keyloc.PolicyCacheKey(e.storePath, filepath.Dir(e.policyPath))
			if err != nil {
				return nil
			}
			return key
		},
	}
}

// policyBuild names the running binary for the policy cache: its path,
// size and modification time, and the Go release, so that a cache another
// build wrote, whose checks may differ, is never used; "" when the binary
// cannot be found. (The module's build information is not read: parsing
// it is a noticeable part of a short command's start.)
func policyBuild() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return exe + "\x00" + strconv.FormatInt(fi.Size(), 10) + "\x00" + strconv.FormatInt(fi.ModTime().UnixNano(), 10) + "\x00" + runtime.Version()
}

// open opens the store with the policy in force.
func (e *env) open() (*store.Store, error) {
	pol, err := e.loadPolicy()
	if err != nil {
		return nil, err
	}
	return e.openWith(pol)
}

// openWith opens the store under pol, the policy in force already loaded.
func (e *env) openWith(pol *policy.File) (*store.Store, error) {
	opts, err := e.storeOptions(pol)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(e.storePath, pol, opts)
	return st, e.parentStore(err)
}

// namedStoreMissing is err, ErrNotInitialized at the store --store or
// READPROOF_STORE named, with a hint for a path where nothing is (a typo):
// `readproof init`, the hint otherwise, would make a store beside
// readproof.toml, not there.
func (e *env) namedStoreMissing(err error) error {
	beside := store.DefaultPath(filepath.Dir(e.policyPath))
	if _, serr := os.Lstat(e.storePath); beside == e.storePath || !errors.Is(serr, fs.ErrNotExist) {
		return err // (the store beside readproof.toml: init makes it)
	}
	here := ""
	if p := beside; gitstore.IsStore(p) {
		here = " (the store here is " + text.Printable(p) + ")"
	}
	return hint.With(err, "nothing is at "+text.Printable(e.storePath)+", the path --store or READPROOF_STORE names: check it"+here+
		", or create a store there with `readproof --store "+text.ShellArg(e.storePath)+" init`")
}

// parentStore is err with, when it is ErrNotInitialized at the default
// place (no --store, no policy file found) and a parent directory holds a
// store (one `readproof clone URL` made without a policy file), a hint
// naming that store instead of `readproof init`, which would make a second
// store here.
func (e *env) parentStore(err error) error {
	if err == nil || !errors.Is(err, store.ErrNotInitialized) {
		return err
	}
	if e.storeNamed {
		return e.namedStoreMissing(err)
	}
	if e.policyNamed {
		return err
	}
	if _, serr := os.Stat(e.policyPath); serr == nil {
		return err
	}
	if h := copyHint(filepath.Dir(e.storePath)); h != "" {
		return hint.With(err, h)
	}
	inRepo := false // a parent's work tree was met (its git directory)
	for dir := filepath.Dir(filepath.Dir(e.storePath)); ; {
		if p := store.DefaultPath(dir); gitstore.IsStore(p) {
			return hint.With(err, "a store was found in a parent directory: run readproof there (cd "+text.ShellArg(dir)+"), or name it with --store "+text.ShellArg(p))
		}
		if !inRepo && gitobj.IsGitDir(filepath.Join(dir, ".git")) {
			// the work tree the working directory is in: a copy of a
			// store made with git, used from a subdirectory (before
			// session 31, "run `readproof init` first")
			inRepo = true
			if h := incompleteCopyHint(filepath.Join(dir, ".git"), "the parent directory "+text.Printable(dir), dir); h != "" {
				return hint.With(err, h)
			}
			if plainCloneOfStore(dir) {
				return hint.With(err, "the parent directory "+text.Printable(dir)+" is a plain git clone of a store, which readproof reads when named: run readproof there (cd "+text.ShellArg(dir)+") with --store ., or name it with --store "+text.ShellArg(dir))
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return err
		}
		dir = parent
	}
}

// copyHint is the hint for a working directory wd that is, or may be, a
// copy of a store made with stock git, which carries no store marker:
// readproof reads it when named, and `readproof init` there would make a
// second store inside it. A git directory (`git clone --mirror`, `--bare`)
// may be one; the work tree of a plain `git clone` is said to be one only
// when readproof reads it as a store (every project is a git work tree;
// before session 30 a plain clone's hint said to run `readproof init`).
// "" for any other directory.
//
// A shallow (git clone --depth) or partial (git clone --filter) copy of a
// store lacks objects readproof reads, and naming it would not help: the
// hint says which it is and to clone the store whole (readproof clone).
// Before session 31 such a work tree had the hint to run `readproof init`.
func copyHint(wd string) string {
	if gitobj.IsGitDir(wd) {
		if h := incompleteCopyHint(wd, "the working directory", wd); h != "" {
			return h
		}
		return "the working directory is a git repository: if it is a copy of a store made with git (git clone --mirror), name it with --store . (or --store " + text.ShellArg(wd) + ")"
	}
	if h := incompleteCopyHint(filepath.Join(wd, ".git"), "the working directory", wd); h != "" {
		return h
	}
	if !plainCloneOfStore(wd) {
		return ""
	}
	return "the working directory is a plain git clone of a store, which readproof reads when named: name it with --store . (or --store " + text.ShellArg(wd) + ")"
}

// incompleteCopyHint is the hint for dir (said as what), whose git
// directory gitDir is a shallow or a partial clone of a store (what is
// checked out, HEAD, is a journal commit, as plainCloneOfStore asks): what
// it is, and to clone the store whole with `readproof clone URL DIR`. ""
// when gitDir is no such clone (a shallow clone of a project is not one).
func incompleteCopyHint(gitDir, what, dir string) string {
	if !gitobj.IsGitDir(gitDir) {
		return ""
	}
	g, err := gitstore.Open(gitDir)
	if err != nil {
		return ""
	}
	defer g.Close()
	ierr := gitstore.IncompleteClone(g)
	if ierr == nil {
		return ""
	}
	head, err := g.Ref("HEAD")
	if err != nil {
		return ""
	}
	if c, err := g.Commit(head); err != nil || !store.IsJournalCommit(c) {
		return ""
	}
	kind := "a partial git clone of a store (git clone --filter), which lacks the objects git left with its remote"
	if errors.Is(ierr, gitstore.ErrShallowClone) {
		kind = "a shallow git clone of a store (git clone --depth), which holds only its newest commits"
	}
	return what + " is " + kind + ": readproof reads every object itself and fetches none, so it cannot check this copy; clone the store whole with `readproof clone URL DIR` (its URL: git -C " + text.ShellArg(dir) + " remote get-url origin)"
}

// plainCloneOfStore reports whether dir is the work tree of a plain `git
// clone` of a store: its .git directory is one readproof reads as a store
// (store.Open recognises it by its journal; it writes nothing there), and
// what is checked out (HEAD) is a journal commit, as `git clone` checks out
// the store's main, or nothing (a remote whose HEAD names a branch it does
// not have, as `git init --bare` on a server may make it). A project whose
// repository also holds a store's refs (`git remote add audit STORE && git
// fetch audit`: store.Open reads them too) has its own commit checked out:
// it is no copy, and init there makes the project's store (before session
// 30's re-read init refused it).
func plainCloneOfStore(dir string) bool {
	if !gitobj.IsGitDir(filepath.Join(dir, ".git")) {
		return false
	}
	s, err := store.Open(dir, nil, store.Options{})
	if err != nil {
		return false
	}
	defer s.Close()
	g := s.Objects()
	head, err := g.Ref("HEAD")
	if errors.Is(err, gitstore.ErrNotFound) {
		return true // nothing checked out: nothing of a project's
	}
	if err != nil {
		return false
	}
	c, err := g.Commit(head)
	return err == nil && store.IsJournalCommit(c) && store.ViewShape(g, c.Tree) == nil
}

// openRead opens the store for a command that reads what is recorded
// (manifest, diff, replay, history, inspect, run list, tag list and history,
// get, evidence export, verify-commit): the policy file is read when the
// command first needs it (to resolve or describe a declared resource, or
// for a key path it names), with the errors, exit code and hint open gives,
// and not at all otherwise, so a large readproof.toml costs nothing to a
// command that never consults it. A --config or READPROOF_CONFIG naming a
// file that does not exist is still refused up front. Writes made through
// the handle are signed as open's are; the signing key is looked up when a
// manifest commit is made.
func (e *env) openRead() (*store.Store, error) {
	if e.policyNamed {
		if _, err := os.Stat(e.policyPath); errors.Is(err, fs.ErrNotExist) {
			_, err := e.loadPolicy() // the usage error
			return nil, err
		}
	}
	opts, err := e.lockOptions()
	if err != nil {
		return nil, err
	}
	pol := policy.NewLazy(e.loadPolicy)
	opts.SignCommit = func(payload []byte) (string, error) {
		f, err := pol.Get()
		if err != nil {
			return "", err
		}
		var o store.Options
		if err := signCommits(e, f, &o); err != nil {
			return "", err
		}
		if o.SignCommit == nil {
			return "", nil // not configured: unsigned, as open makes it
		}
		return o.SignCommit(payload)
	}
	st, err := store.OpenLazy(e.storePath, pol, opts)
	return st, e.parentStore(err)
}

// storeOptions are the store's options from the environment and the
// policy: lock timings and commit signing.
func (e *env) storeOptions(pol *policy.File) (store.Options, error) {
	opts, err := e.lockOptions()
	if err != nil {
		return opts, err
	}
	if err := signCommits(e, pol, &opts); err != nil {
		return opts, err
	}
	return opts, nil
}

// lockOptions are the store's lock timings from the environment.
func (e *env) lockOptions() (store.Options, error) {
	var opts store.Options
	opts.Git.Warn = e.warn
	if !e.json {
		opts.Git.LockWait = e.lockWait // a terminal hears why it waits
	}
	for name, dst := range map[string]*time.Duration{
		"READPROOF_LOCK_TIMEOUT":   &opts.Git.LockTimeout,
		"READPROOF_STALE_LOCK_AGE": &opts.Git.StaleLockAge,
	} {
		if v := os.Getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return opts, withCode(ExitUsage, hint.With(fmt.Errorf("%s=%q: %w", name, v, err), "give a duration such as 10s or 2m, or unset "+name+" for the default"))
			}
			if d <= 0 {
				return opts, withCode(ExitUsage, hint.With(fmt.Errorf("%s=%q: the duration must be positive", name, v), "give a duration such as 10s or 2m, or unset "+name+" for the default"))
			}
			*dst = d
		}
	}
	return opts, nil
}

// withEnv is the adapter from a cli.Context to a command's run function:
// it reads the global options and hands them to fn.
func withEnv(c *cli.Context, fn func(*env) error) (err error) {
	e, err := newEnv(c)
	if err != nil {
		return err
	}
	// The command's root span (when OTEL_* configures traces) and the
	// incoming TRACEPARENT reach the action through c.Context.
	ctx, end := telemetry.Command(c.Context, telemetry.CommandOptions{Getenv: os.Getenv, Path: commandPath(c), Version: buildinfo.Read().Version,
		// A collector's words (a TLS name, a dial error) may reach the
		// message: escaped, it stays one plain line.
		Warn: func(s string) { fmt.Fprintf(e.err, "readproof: telemetry: %s\n", text.Escape(s)) }})
	c.Context = ctx
	defer func() { end(exitCode(ctx, err)) }()
	out := &outWriter{w: e.out}
	e.out = out
	err = e.insideStore(fn(e))
	if err == nil && out.err != nil {
		// A line or a table printed with fmt.Fprint* drops its error: the
		// command did its work, but what it printed (a manifest id, a
		// report, a token shown once) did not arrive.
		err = out.err
	}
	return err
}

// insideStore is err with, for a resource no policy file declares, asked
// for in a store's own directory with no readproof.toml around (`readproof
// clone URL DIR`, used from DIR), a hint saying where to run: the hint the
// error carries, `readproof resource add`, refuses to write a policy file
// into the store.
func (e *env) insideStore(err error) error {
	if err == nil || e.policyNamed || !errors.Is(err, store.ErrNotRegistered) || e.storePath != filepath.Dir(e.policyPath) {
		return err
	}
	if _, serr := os.Stat(e.policyPath); serr == nil {
		return err
	}
	return hint.With(err, "the working directory is a store, and no readproof.toml declares resources here: run readproof in the project directory that holds readproof.toml, naming this store with --store "+
		text.ShellArg(e.storePath)+" (or READPROOF_STORE); a tagged snapshot reads here as URI@TAG")
}

// outWriter is a command's stdout: it keeps the first write error, which
// withEnv returns when the command itself succeeded, and writes nothing
// after it (what would follow is the rest of an answer already cut).
type outWriter struct {
	w   io.Writer
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		o.err = err
	}
	return n, err
}

// rawOut is w without the outWriters of Main and withEnv: exec hands it the command's
// output, whose write errors the command itself sees and answers.
func rawOut(w io.Writer) io.Writer {
	for {
		o, ok := w.(*outWriter)
		if !ok {
			return w
		}
		w = o.w
	}
}

// withStore runs fn with the store opened under the policy in force.
func (e *env) withStore(fn func(*store.Store) error) error {
	return withOpened(context.Background(), e.open, fn)
}

// withReadStore is withStore for a command that reads what is recorded: the
// policy file is read only if fn needs it (openRead), and stdout is
// buffered (a manifest's table or a replay's bytes are thousands of small
// writes otherwise).
func (e *env) withReadStore(fn func(*store.Store) error) error {
	return e.withReadStoreCtx(context.Background(), fn)
}

// bufferedOut runs fn with e.out buffered, and flushes it after fn.
func (e *env) bufferedOut(fn func() error) error {
	w := bufio.NewWriterSize(e.out, 64<<10)
	out := e.out
	e.out = w
	err := fn()
	e.out = out
	if errors.Is(err, context.Canceled) {
		// Interrupted: what is buffered is part of an answer that will not
		// be finished; write nothing more of it.
		return err
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// withReadStoreCtx is withReadStore for work that interruptible may abandon
// when ctx ends: the store is then left open for it (the process exits
// next).
func (e *env) withReadStoreCtx(ctx context.Context, fn func(*store.Store) error) error {
	return e.bufferedOut(func() error { return withOpened(ctx, e.openRead, fn) })
}

// withOpened runs fn with the store open returns, and closes it after fn
// unless ctx has ended by then (see withReadStoreCtx); with a ctx that
// never ends (context.Background) it always closes.
func withOpened(ctx context.Context, open func() (*store.Store, error), fn func(*store.Store) error) error {
	s, err := open()
	if err != nil {
		return err
	}
	defer func() {
		if ctx.Err() == nil {
			s.Close()
		}
	}()
	return fn(s)
}

// warn prints err as a warning, and its hint: what a command could not
// do after its work was done (gitstore.Options.Warn).
func (e *env) warn(err error) {
	e.say("readproof: warning: %s", text.Escape(err.Error()))
	if h := hint.Of(err); h != "" {
		e.say("readproof: hint: %s", text.Escape(h))
	}
}

// lockWait tells the terminal that a command has waited about a second
// (progress.WaitNotice) for a lock another process holds, and what comes
// at the end of the wait: every lock wait's Options.LockWait. Like a
// progress line, only on a terminal, which is looked at only then: a
// command that does not wait pays nothing. Piped, the error that ends the
// wait names the lock.
func (e *env) lockWait(w progress.Wait) {
	if !isTerminal(e.err) {
		return
	}
	// Erase first: a progress line drawn meanwhile (run --id's last
	// count) is erased, as the line itself erases its previous text.
	e.say("%sreadproof: %s", progress.Erase, text.Escape(w.String()))
}

func (e *env) say(format string, args ...any) {
	fmt.Fprintf(e.err, format+"\n", args...)
}
