package commands

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

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
	e := &env{in: c.App.Reader, out: c.App.Writer, err: c.App.ErrWriter, json: c.Bool("json")}
	p := c.String("config")
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
	s := c.String("store")
	e.storeNamed = s != ""
	if s == "" {
		s = store.DefaultPath(filepath.Dir(abs))
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
	ctx, end := telemetry.Command(c.Context, telemetry.CommandOptions{Getenv: os.Getenv, Path: commandPath(c), Version: Version,
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

func (e *env) say(format string, args ...any) {
	fmt.Fprintf(e.err, format+"\n", args...)
}
