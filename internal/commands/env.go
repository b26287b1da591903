package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/buildinfo"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/telemetry"
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
	for dir := wd; ; {
		p := filepath.Join(dir, PolicyName)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join(wd, PolicyName)
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
	f, err := policy.Load(e.policyPath)
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
		return nil, withCode(ExitUsage, hint.With(err, "fix "+e.policyPath+"; readproof.toml.example documents every key"))
	}
	return f, nil
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
	return store.Open(e.storePath, pol, opts)
}

// storeOptions are the store's options from the environment and the
// policy: lock timings and commit signing.
func (e *env) storeOptions(pol *policy.File) (store.Options, error) {
	var opts store.Options
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
	if err := signCommits(e, pol, &opts); err != nil {
		return opts, err
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
		Warn: func(s string) { fmt.Fprintf(e.err, "readproof: telemetry: %s\n", s) }})
	c.Context = ctx
	defer func() { end(exitCode(ctx, err)) }()
	return fn(e)
}

// withStore runs fn with the store opened under the policy in force.
func (e *env) withStore(fn func(*store.Store) error) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

// withStoreCtx is withStore for work that interruptible may abandon when
// ctx ends: the store is then left open for it (the process exits next).
func (e *env) withStoreCtx(ctx context.Context, fn func(*store.Store) error) error {
	s, err := e.open()
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

func (e *env) say(format string, args ...any) {
	fmt.Fprintf(e.err, format+"\n", args...)
}
