package commands

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/adapters/sourcespec"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/gitstore/gitobj"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/fspath"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
)

func initCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "create the store (a bare git repository) and, if missing, readproof.toml",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "shared", Value: "private", Usage: "who may read the store: private (owner only: directories 0700, files 0600) or group (the directory's group too), whatever the umask; given for a store that exists, changes the modes of what it holds too, as git init --shared re-initialises a repository"},
		},
		Action: func(c *cli.Context) error {
			if err := needArgs(c, 0, 0, "[--shared private|group]"); err != nil {
				return err
			}
			sharing, err := gitstore.ParseSharing(c.String("shared"))
			if err != nil {
				return withCode(ExitUsage, hint.With(fmt.Errorf("init: --shared: %v", err), "--shared=private (the default) or --shared=group"))
			}
			return withEnv(c, func(e *env) error {
				return runInit(c.Context, e, initOptions{Sharing: sharing, SharingSet: c.IsSet("shared")})
			})
		},
	}
}

func resourceCommand() *cli.Command {
	return &cli.Command{
		Name:  "resource",
		Usage: "declare and list resources in readproof.toml",
		Subcommands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "declare a resource: its identity, source and freshness policy",
				ArgsUsage: "URI --source-type TYPE [source flags] [--policy P]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "source-type", Usage: "filesystem, http, github or git"},
					&cli.StringFlag{Name: "path", Usage: "file path (filesystem, relative to readproof.toml), or path in the repository (github, git)"},
					&cli.StringFlag{Name: "url", Usage: "document URL (http) or repository URL (git)"},
					&cli.StringSliceFlag{Name: "header", Usage: "HTTP header 'Name: ${VAR}' (http); the value names a variable listed in [sources].env, expanded at fetch time and never stored"},
					&cli.StringSliceFlag{Name: "public-header", Usage: "HTTP header 'Name: value' that is not secret (http); stored and shown as written"},
					&cli.StringFlag{Name: "owner", Usage: "repository owner (github)"},
					&cli.StringFlag{Name: "repo", Usage: "repository name (github)"},
					&cli.StringFlag{Name: "ref", Usage: "branch, tag or commit (github, git)"},
					&cli.StringFlag{Name: "api-base", Usage: "GitHub API base URL (github)"},
					&cli.StringFlag{Name: "token-env", Usage: "environment variable holding the GitHub token (github)"},
					&cli.StringFlag{Name: "policy", Usage: "require_fresh, allow_stale or pinned (default: [defaults].policy)"},
					&cli.StringFlag{Name: "max-age", Usage: "how old a snapshot allow_stale may reuse (e.g. 1h, 2d)"},
					&cli.StringFlag{Name: "snapshot", Usage: "snapshot id for pinned"},
					&cli.StringFlag{Name: "content-type", Usage: "override the detected content type"},
					&cli.StringFlag{Name: "description", Usage: "what the document is"},
				},
				Action: resourceAdd,
			},
			{
				Name:   "list",
				Usage:  "list declared resources, their sources (redacted), policies, current snapshots and tags",
				Action: resourceList,
			},
		},
	}
}

func resourceAdd(c *cli.Context) error {
	if err := needArgs(c, 1, 1, "URI --source-type TYPE [...]"); err != nil {
		return err
	}
	opts := resourceAddOptions{SourceType: c.String("source-type"), Path: c.String("path"), URL: c.String("url"), Owner: c.String("owner"), Repo: c.String("repo"), Ref: c.String("ref"), APIBase: c.String("api-base"), TokenEnv: c.String("token-env"), ContentType: c.String("content-type"), Description: c.String("description"), Header: c.StringSlice("header"), PublicHeader: c.StringSlice("public-header"), Policy: c.String("policy"), MaxAge: c.String("max-age"), Snapshot: c.String("snapshot")}
	return withEnv(c, func(e *env) error { return runResourceAdd(c.Context, e, opts, c.Args().Slice()) })
}

// redactHeaderArg hides a header value in an error message.
func redactHeaderArg(h string) string {
	if name, _, ok := strings.Cut(h, ":"); ok {
		return name + ": " + adapters.Redacted
	}
	if len(h) > 12 {
		return h[:4] + "…"
	}
	return h
}

func describePolicy(p store.PolicyView) string {
	switch p.Strategy {
	case string(policy.AllowStale):
		return fmt.Sprintf("allow_stale (max_age %s)", policy.FormatDuration(time.Duration(p.MaxAgeSeconds)*time.Second))
	case string(policy.Pinned):
		return "pinned " + manifest.Short(p.Snapshot)
	}
	return p.Strategy
}

func resourceList(c *cli.Context) error {
	if err := needArgs(c, 0, 0, ""); err != nil {
		return err
	}
	return withEnv(c, func(e *env) error { return runResourceList(c.Context, e) })
}

// resourceAddOptions are the flags of `readproof resource add`.
type resourceAddOptions struct {
	SourceType   string   // filesystem, http, github or git
	Path         string   // file path (filesystem, relative to readproof.toml), or path in the ...
	URL          string   // document URL (http) or repository URL (git)
	Owner        string   // repository owner (github)
	Repo         string   // repository name (github)
	Ref          string   // branch, tag or commit (github, git)
	APIBase      string   // GitHub API base URL (github)
	TokenEnv     string   // environment variable holding the GitHub token (github)
	ContentType  string   // override the detected content type
	Description  string   // what the document is
	Header       []string // HTTP header 'Name: value'; values may use ${VAR} for variables listed in ...
	PublicHeader []string // HTTP header that is not secret (http); stored and shown as written
	Policy       string   // require_fresh, allow_stale or pinned (default: [defaults].policy)
	MaxAge       string   // how old a snapshot allow_stale may reuse (e.g. 1h, 2d)
	Snapshot     string   // snapshot id for pinned
}

// runResourceAdd is `readproof resource add`.
func runResourceAdd(_ context.Context, e *env, opts resourceAddOptions, args []string) error {
	u, err := identity.ParseURI(args[0])
	if err != nil {
		return hint.With(err, identity.URIHint(args[0], false))
	}
	if u.Tag != "" {
		tag := u.Tag
		u.Tag = ""
		return withCode(ExitUsage, hint.With(fmt.Errorf("resource add %s@%s: a declared URI takes no @tag", u, tag), "declare "+u.String()+", then name a snapshot with: readproof tag set "+u.String()+" "+tag))
	}
	if opts.SourceType == "" {
		return withCode(ExitUsage, hint.With(fmt.Errorf("resource add %s: --source-type is required", u), "one of: "+strings.Join(adapters.Types(), ", ")))
	}
	r := policy.Resource{
		URI: u,
		Source: adapters.Spec{
			Type: opts.SourceType, Path: opts.Path, URL: opts.URL,
			Owner: opts.Owner, Repo: opts.Repo, Ref: opts.Ref,
			APIBase: opts.APIBase, TokenEnv: opts.TokenEnv,
		},
		ContentType: opts.ContentType,
		Description: opts.Description,
	}
	for _, h := range opts.Header {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return usageError("resource add: header %q: want 'Name: value'", redactHeaderArg(h))
		}
		if r.Source.Headers == nil {
			r.Source.Headers = map[string]string{}
		}
		r.Source.Headers[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	for _, h := range opts.PublicHeader {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return usageError("resource add: public header %q: want 'Name: value'", redactHeaderArg(h))
		}
		if r.Source.PublicHeaders == nil {
			r.Source.PublicHeaders = map[string]string{}
		}
		r.Source.PublicHeaders[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	// the policy file read here is read again, under its lock, by the
	// append: opened once (e.policyKept)
	e.keepPolicy = true
	defer func() {
		if e.policyKept != nil {
			e.policyKept.Close()
		}
	}()
	// (judged and opened here unless envFor did, for --config)
	if err := e.judgePolicy(); err != nil {
		return err
	}
	pol, err := e.loadPolicy()
	if err != nil {
		return err
	}
	r.Freshness.Strategy = policy.Strategy(opts.Policy)
	if r.Freshness.Strategy == "" {
		r.Freshness.Strategy = pol.Defaults.Policy
	}
	if s := opts.MaxAge; s != "" {
		d, err := policy.ParseDuration(s)
		if err != nil {
			return withCode(ExitUsage, hint.With(fmt.Errorf("resource add: --max-age %q: %v", s, err), "write a duration such as 90s, 15m, 1h or 7d"))
		}
		r.Freshness.MaxAge = d
	} else if r.Freshness.Strategy == policy.AllowStale {
		r.Freshness.MaxAge = pol.Defaults.MaxAge
	}
	r.Freshness.Snapshot = opts.Snapshot
	// A file or local repository outside the roots is refused now, with the
	// answer `get` would give later, naming the flag that gave the path.
	flag := ""
	switch {
	case r.Source.Type == "filesystem" && opts.Path != "":
		flag = "--path"
	case r.Source.Type == "git" && opts.URL != "":
		flag = "--url"
	}
	if flag != "" {
		if err := adapters.CheckRoots(u.String(), r.Source, pol.AdapterEnv(), flag); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	var missing string // a declared file that is not there (yet): warned of once added
	if r.Source.Type == "filesystem" && opts.Path != "" {
		named := "" // the policy file, when named: from elsewhere a relative name names another
		if e.policyNamed {
			named = e.policyPath
		}
		if missing, err = checkFilePath(u, opts.Path, cmp.Or(pol.AdapterEnv().BaseDir, filepath.Dir(e.policyPath)), named); err != nil {
			return err
		}
	}
	create, err := storeToCreate(e, pol)
	if err != nil {
		return err
	}
	var created bool
	makeStore := func() error {
		if !create {
			return nil
		}
		lo, err := e.lockOptions()
		if err != nil {
			return err
		}
		if err := store.InitWith(e.storePath, lo.Git); err != nil && !errors.Is(err, store.ErrExists) {
			return fmt.Errorf("resource add: %w", err)
		} else if err == nil {
			created = true
		}
		return nil
	}
	lo, err := e.lockOptions()
	if err != nil {
		return err
	}
	if err := policy.AppendResourceWith(e.policyPath, r, policy.AppendOptions{BeforeWrite: makeStore,
		LockTimeout: lo.Git.LockTimeout, StaleLockAge: lo.Git.StaleLockAge, LockWait: lo.Git.LockWait, Opened: e.policyKept}); err != nil {
		var pe *policy.Error
		if errors.As(err, &pe) && pe.Line == 0 {
			// a problem of the block the flags make: name the flag
			if flag, ok := addFlagOf(pe.Key, opts); ok {
				err = &flagError{msg: fmt.Sprintf("resource add %s: %s: %s", u, flag, pe.Msg), err: err}
				if h := addFlagHint(pe.Key, opts, r, pe.Hint); h != "" {
					err = hint.With(err, h)
				}
				return withCode(ExitUsage, err)
			}
		}
		if kerr := policyKindError(err, e.policyPath, e.policyNamed); kerr != nil {
			return kerr
		}
		switch {
		case errors.As(err, &pe) && pe.Hint != "":
			return withCode(ExitUsage, hint.With(err, pe.Hint))
		case errors.As(err, &pe):
			return withCode(ExitUsage, err)
		case hint.Of(err) == "" && gitstore.WriteLimitRemedy(err, "") != "":
			// the file is written whole (a temporary file renamed over
			// it) or not at all
			return hint.With(err, filepath.Base(e.policyPath)+" is unchanged: "+gitstore.WriteLimitRemedy(err, filepath.Dir(e.policyPath))+", then run the same resource add again")
		}
		return err
	}
	if created {
		e.say("readproof: created an empty readproof store in %s (beside %s)", e.storePath, filepath.Base(e.policyPath))
	}
	if missing != "" {
		e.say("readproof: warning: %s: no file at %s yet (--path is relative to the directory of %s, %s); `readproof get %s` fails until there is one",
			u, text.Printable(missing), filepath.Base(e.policyPath), text.Printable(filepath.Dir(e.policyPath)), u)
	}
	if e.json {
		out := map[string]any{"uri": u.String(), "policy_file": e.policyPath, "source": r.Source.Redacted(), "policy": string(r.Freshness.Strategy)}
		if created {
			out["store_created"] = e.storePath
		}
		return printJSON(e.out, out)
	}
	fmt.Fprintf(e.out, "Added %s (%s, %s) to %s\n", u, r.Source.Type, r.Freshness.Strategy, e.policyPath)
	return nil
}

// flagError is err, a policy error of the block `resource add` was about
// to append, worded with the flag that gave the value (msg).
type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// addFlagOf names the flag of `resource add` (with its value, but not a
// header's) that set key, a key of the [[resource]] block it was about to
// append (resource[N].source.path, ...).
func addFlagOf(key string, opts resourceAddOptions) (string, bool) {
	i := strings.Index(key, "].")
	if !strings.HasPrefix(key, "resource[") || i < 0 {
		return "", false
	}
	with := func(flag, value string) (string, bool) {
		if value == "" {
			return flag, true
		}
		return flag + " " + value, true
	}
	switch k := key[i+2:]; {
	case strings.HasPrefix(k, "source.headers."):
		return "--header " + strings.TrimPrefix(k, "source.headers."), true
	case strings.HasPrefix(k, "source.public_headers."):
		return "--public-header " + strings.TrimPrefix(k, "source.public_headers."), true
	case k == "source.type":
		return with("--source-type", opts.SourceType)
	case k == "source.path":
		return with("--path", opts.Path)
	case k == "source.url":
		// The refusal may be of the credentials the URL carries: never
		// repeated.
		return with("--url", sourcespec.RedactURL(opts.URL))
	case k == "source.owner":
		return with("--owner", opts.Owner)
	case k == "source.repo":
		return with("--repo", opts.Repo)
	case k == "source.ref":
		return with("--ref", opts.Ref)
	case k == "source.api_base":
		return with("--api-base", sourcespec.RedactURL(opts.APIBase))
	case k == "source.token_env":
		return with("--token-env", opts.TokenEnv)
	case k == "content_type":
		return with("--content-type", opts.ContentType)
	case k == "description":
		return "--description", true
	case k == "policy":
		return with("--policy", opts.Policy)
	case k == "max_age":
		return with("--max-age", opts.MaxAge)
	case k == "snapshot":
		return with("--snapshot", opts.Snapshot)
	}
	return "", false
}

// addFlagHint is the hint for a refusal of the block `resource add` was
// about to append, where key (addFlagOf's) is a value a flag gives or
// lacks: the policy file's hint says which key to write in readproof.toml,
// while here a flag is what to give or drop. Other hints (a bad value)
// are the policy file's, h.
func addFlagHint(key string, opts resourceAddOptions, r policy.Resource, h string) string {
	_, k, _ := strings.Cut(key, "].")
	switch {
	case k == "max_age" && r.Freshness.Strategy != policy.AllowStale:
		return "drop --max-age, or add --policy allow_stale"
	case k == "max_age" && opts.MaxAge == "":
		return "give --max-age 1h (or another duration), or set max_age in [defaults] of readproof.toml for every allow_stale resource"
	case k == "snapshot" && r.Freshness.Strategy != policy.Pinned:
		return "drop --snapshot, or add --policy pinned"
	case k == "snapshot" && opts.Snapshot == "":
		// a pin delivers a snapshot recorded for its own URI (get refuses
		// another's), and history lists only a declared resource's: the
		// resource is declared and read first, then pinned in the file
		u := r.URI.String()
		return "a pinned resource delivers a snapshot recorded for its own URI, and `readproof history` lists them only once it is declared: add " + u +
			" with --policy require_fresh, record it (`readproof get " + u + "`), then in its block of readproof.toml set policy = \"pinned\" and snapshot = the 40-hex id `readproof history --json " + u + "` prints"
	}
	return h
}

// storeToCreate says whether `resource add` creates the store: only at the
// default place beside the policy file (never one --store or
// READPROOF_STORE names), and only where nothing is yet or an empty
// directory. A store, or a git copy of one, is used as it is; anything else
// there refuses the add before anything is written.
func storeToCreate(e *env, pol *policy.File) (bool, error) {
	if e.storeNamed {
		return false, nil
	}
	if e.storePath == filepath.Dir(e.policyPath) {
		// run inside a store (a clone DIR) with no readproof.toml around:
		// the policy file would land inside the store
		return false, withCode(ExitUsage, hint.With(fmt.Errorf("resource add: the working directory %s is a readproof store, and readproof.toml does not belong inside it; nothing was written", e.storePath),
			"run resource add in the project directory, or name the policy file with --config and the store with --store"))
	}
	fi, err := os.Lstat(e.storePath)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("resource add: store %s: %w", e.storePath, err)
	}
	if fi.IsDir() {
		names, err := os.ReadDir(e.storePath)
		if err != nil {
			return false, fmt.Errorf("resource add: store %s: %w", e.storePath, err)
		}
		if len(names) == 0 {
			return true, nil
		}
	}
	s, err := store.Open(e.storePath, pol, store.Options{})
	if err == nil {
		s.Close()
		return false, nil
	}
	h := "move it away so that readproof can create the store there, or name a store with --store or READPROOF_STORE"
	switch {
	case errors.Is(err, store.ErrNotInitialized):
		return false, hint.With(fmt.Errorf("resource add: %s is in the store's place and is not a readproof store; nothing was written", e.storePath), h)
	case errors.Is(err, store.ErrNotAStore):
		return false, hint.With(fmt.Errorf("resource add: %s is in the store's place and is a git repository, %w; nothing was written", e.storePath, store.ErrNotAStore), h)
	}
	return false, fmt.Errorf("resource add: %w", err)
}

// runResourceList is `readproof resource list`.
func runResourceList(_ context.Context, e *env) error {
	return e.withStore(func(s *store.Store) error {
		list, err := s.Resources()
		if err != nil {
			return err
		}
		if e.json {
			return printJSON(e.out, list)
		}
		if len(list) == 0 {
			e.say("no resources declared in %s; add one with `readproof resource add`", e.policyPath)
			return nil
		}
		tw := tabwriter.NewWriter(e.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "URI\tSOURCE\tPOLICY\tCURRENT\tTAGS")
		for _, r := range list {
			cur := "-"
			if r.Current != nil {
				cur = manifest.Short(r.Current.Snapshot)
			}
			tags := strings.Join(r.Tags, ",")
			if tags == "" {
				tags = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.URI, r.Source.Type+" · "+text.Escape(r.Source.Describe()), describePolicy(r.Policy), cur, tags)
		}
		return tw.Flush()
	})
}

// initOptions are the flags of `readproof init`.
type initOptions struct {
	Sharing gitstore.Sharing // who may read the new store's files
	// SharingSet: --shared was given, and a store that exists gets Sharing
	// too (gitstore.SetSharing); otherwise it keeps its own.
	SharingSet bool
}

// runInit is `readproof init`.
func runInit(ctx context.Context, e *env, opts initOptions) error {
	lo, err := e.lockOptions()
	if err != nil {
		return err
	}
	gopts := lo.Git
	gopts.Sharing = opts.Sharing
	// --config inside a bare repository (a work tree's .git): neither the
	// policy file nor a store beside it belongs there, as initExisting
	// says for an existing store
	// Nor in a working directory that is a git directory and not the store
	// (a `git clone --mirror` of a store, where an auditor who ran a
	// command was told "run `readproof init` first": before session 29
	// init then made a second, empty store and readproof.toml inside it).
	// (A linked work tree's git directory, .git/worktrees/NAME, holds
	// neither objects/ nor refs/, so IsGitDir does not see it: workTreeOf
	// does, by its gitdir file.)
	if dir := filepath.Dir(e.policyPath); inGitDir(dir) && (e.policyNamed || dir != e.storePath) {
		if _, err := os.Lstat(e.policyPath); errors.Is(err, fs.ErrNotExist) {
			if !e.policyNamed {
				what, h := "a bare one, as `git clone --mirror` makes", "to read a copy of a store made with git, name it: `readproof --store . verify`; to create a store, run `readproof init` in the project directory"
				if wt, linked, ok := workTreeOf(dir); ok {
					// not a copy of anything: the project's own .git
					what = "the .git directory of the work tree " + text.Printable(wt)
					if linked {
						what = "the git directory of the linked work tree " + text.Printable(wt)
					}
					h = "to create the project's store, run `readproof init` in the work tree: cd " + text.ShellArg(wt)
				}
				return hint.With(fmt.Errorf("init: the working directory %s is a git repository (%s), where neither %s nor a store belongs; nothing was written", text.Printable(dir), what, PolicyName), h)
			}
			return hint.With(fmt.Errorf("init: the policy file %s would be inside a git repository, where it does not belong; nothing was written", e.policyPath),
				"name a policy file outside the repository with --config")
		}
	}
	// Nor in the work tree of a plain `git clone` of a store, whose hint
	// names it with --store . (copyHint): before session 30 init made a
	// second, empty store and readproof.toml inside the copy.
	// (One store open of the project's repository, only when init is to
	// write the policy file.)
	if dir := filepath.Dir(e.policyPath); !e.policyNamed {
		if _, err := os.Lstat(e.policyPath); errors.Is(err, fs.ErrNotExist) {
			if h := incompleteCopyHint(filepath.Join(dir, ".git"), "it", dir); h != "" {
				// a shallow or partial copy (session 31)
				return hint.With(fmt.Errorf("init: the working directory %s is an incomplete git clone of a readproof store, where neither %s nor a second store belongs; nothing was written", text.Printable(dir), PolicyName), h)
			}
			if plainCloneOfStore(dir) {
				return hint.With(fmt.Errorf("init: the working directory %s is a plain git clone of a readproof store, where neither %s nor a second store belongs; nothing was written", text.Printable(dir), PolicyName),
					"to read the copy, name it: `readproof --store . verify`; to create a store, run `readproof init` in the project directory")
			}
		}
	}
	// a policy file that is not a file (a named pipe, a device) is refused
	// before the store is made: reading it to warn would hang or not end
	if err := e.judgePolicy(); err != nil {
		return err
	}
	if err := store.InitWith(e.storePath, gopts); errors.Is(err, store.ErrExists) {
		return initExisting(ctx, e, err, opts)
	} else if err != nil {
		return err
	}
	created := false
	if _, err := os.Stat(e.policyPath); errors.Is(err, os.ErrNotExist) {
		if err := policy.CreateFile(e.policyPath); err != nil {
			return policyNotCreated(e, err, "was made")
		}
		created = true
	}
	if e.json {
		err = printJSON(e.out, map[string]any{"store": e.storePath, "store_created": e.storePath, "policy": e.policyPath, "policy_created": created})
	} else {
		_, err = fmt.Fprintf(e.out, "Initialized empty readproof store in %s\n", e.storePath)
		if created && err == nil {
			_, err = fmt.Fprintf(e.out, "Created %s\n", e.policyPath)
		}
	}
	if !created {
		warnPolicy(e)
	}
	return err
}

// workTreeOf is the work tree whose git directory gitDir is, and whether
// it is one: a directory named .git, as `git init` and `git clone` make
// one inside the project, unless its config says it is bare (`git clone
// --bare x .git`); or a linked work tree's (`git worktree add`:
// .git/worktrees/NAME, whose gitdir file names the work tree's .git file).
// A bare repository is no work tree's.
func workTreeOf(gitDir string) (wt string, linked, ok bool) {
	if filepath.Base(filepath.Dir(gitDir)) == "worktrees" {
		if b, err := fspath.ReadRegular(filepath.Join(gitDir, "gitdir"), 64<<10, "a linked work tree's gitdir file"); err == nil {
			if p := strings.TrimSpace(string(b)); filepath.IsAbs(p) && filepath.Base(p) == ".git" {
				return filepath.Dir(p), true, true
			}
		}
	}
	if filepath.Base(gitDir) != ".git" || configSaysBare(gitDir) {
		return "", false, false
	}
	wt = filepath.Dir(gitDir)
	return wt, false, wt != gitDir
}

// inGitDir reports whether dir is a git directory: a repository's
// (gitobj.IsGitDir) or a linked work tree's (workTreeOf).
func inGitDir(dir string) bool {
	if gitobj.IsGitDir(dir) {
		return true
	}
	_, linked, _ := workTreeOf(dir)
	return linked
}

// configSaysBare reports whether the config file of gitDir sets
// core.bare to true, as git reads it: the last value set wins, a section
// header may have a key after it on its line, a value may be quoted or go
// on past a line ending in a backslash, and true is true, yes, on, a key
// alone or a nonzero integer. (Included files, [include], are not read.)
// Before session 31's last re-read the first value won and a quoted one
// or one after the header on its line was missed.
func configSaysBare(gitDir string) bool {
	b, err := fspath.ReadRegular(filepath.Join(gitDir, "config"), 1<<20, "a git config file")
	if err != nil {
		return false
	}
	core, bare := false, false
	for _, line := range strings.Split(strings.ReplaceAll(string(b), "\\\n", ""), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				core = false
				continue
			}
			core = strings.EqualFold(line[1:end], "core")
			line = strings.TrimSpace(line[end+1:])
		}
		if !core || line == "" {
			continue
		}
		k, v, set := strings.Cut(line, "=")
		if !strings.EqualFold(strings.TrimSpace(configValue(k)), "bare") {
			continue
		}
		if !set {
			bare = true // a key alone is true
			continue
		}
		switch v := strings.ToLower(configValue(v)); v {
		case "true", "yes", "on":
			bare = true
		default:
			n, err := strconv.ParseInt(v, 0, 64)
			bare = err == nil && n != 0
		}
	}
	return bare
}

// configValue is a git config value as written (after the '='): its
// comment (from a '#' or ';' outside quotes) cut, quotes removed,
// backslash escapes read, and the whitespace around it trimmed.
func configValue(v string) string {
	var out strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			out.WriteByte(v[i])
		case !quoted && (c == '#' || c == ';'):
			return strings.TrimSpace(out.String())
		default:
			out.WriteByte(c)
		}
	}
	return strings.TrimSpace(out.String())
}

// policyNotCreated is init's error when the store is there (made by this
// init, or kept: kept says which) but the new policy file could not be
// written (nothing of it is left): what stopped the write, and that init
// run again writes the file beside the store it keeps.
func policyNotCreated(e *env, err error, kept string) error {
	err = fmt.Errorf("init: the store %s %s, but the policy file was not written: %w", e.storePath, kept, err)
	dir := filepath.Dir(e.policyPath)
	what := gitstore.WriteLimitRemedy(err, dir)
	switch {
	case what != "":
	case errors.Is(err, syscall.EROFS):
		what = dir + " is on a read-only file system; remount it read-write"
	case errors.Is(err, fs.ErrPermission):
		what = "this user may not create files in " + dir + " (permission denied); fix its permissions (ls -ld " + text.ShellArg(dir) + " shows its owner and mode)"
	default:
		what = "fix what the error names"
	}
	// the same store and policy file as this init: --store or --config
	// given on the line are not there when the command is run as written
	again := "readproof"
	if e.storeNamed {
		again += " --store " + text.ShellArg(e.storePath)
	}
	if e.policyNamed {
		again += " --config " + text.ShellArg(e.policyPath)
	}
	return hint.With(err, what+", then run `"+again+" init` again: it keeps the store and writes "+filepath.Base(e.policyPath))
}

// warnPolicy warns, after init made the store (or found it) beside a
// readproof.toml it kept, when that file does not load: every command that reads it refuses
// it, and the first to say so should not be the first run.
func warnPolicy(e *env) {
	if _, err := e.loadPolicy(); err != nil {
		e.warn(hint.With(fmt.Errorf("%w (kept as it is: every command that reads it refuses it until it is fixed)", err), hint.Of(err)))
	}
}

// initExisting is `readproof init` where the store exists already (exists is
// store.ErrExists): a store made before the ignore file existed gets it, and
// a missing readproof.toml is created (after `readproof clone URL`), unless
// it would land inside the store or another bare repository, the working
// directory when it is the store (`readproof clone URL DIR` used from DIR).
// With --shared (opts.SharingSet) the store gets that sharing, files and
// directories it holds included, as `git init --shared` re-initialises a
// repository. Nothing to do is exists, exit 1.
func initExisting(ctx context.Context, e *env, exists error, opts initOptions) error {
	added, err := store.EnsureIgnored(e.storePath)
	if err != nil {
		return errors.Join(exists, err)
	}
	if added {
		fmt.Fprintf(e.err, "readproof: added %s so that an enclosing git repository ignores the store\n", filepath.Join(e.storePath, store.IgnoreFile))
	}
	reshared := false
	if opts.SharingSet {
		changed, err := gitstore.SetSharing(ctx, e.storePath, opts.Sharing)
		if err != nil {
			return fmt.Errorf("init --shared=%s: %w", opts.Sharing, err)
		}
		if reshared = changed > 0; reshared && !e.json {
			if opts.Sharing == gitstore.ShareGroup {
				fmt.Fprintf(e.out, "Shared the store %s with its group (core.sharedRepository = group; %s changed)\n", e.storePath, text.Count(changed, "file or directory", "files and directories"))
			} else {
				fmt.Fprintf(e.out, "Made the store %s private to its owner (core.sharedRepository = 0600; %s changed)\n", e.storePath, text.Count(changed, "file or directory", "files and directories"))
			}
		}
		if !reshared {
			already := "private to its owner"
			if opts.Sharing == gitstore.ShareGroup {
				already = "shared with its group"
			}
			exists = hint.With(fmt.Errorf("%w at %s, already %s", store.ErrExists, e.storePath, already), "nothing to do: the store is ready to use (`readproof run list` lists its runs, `readproof verify` checks it)")
		}
	}
	// what init's --json object says this call did beside the policy file
	result := func(created bool) map[string]any {
		m := map[string]any{"store": e.storePath, "policy": e.policyPath, "policy_created": created}
		if reshared {
			m["sharing_changed"] = string(opts.Sharing)
		}
		return m
	}
	if _, err := os.Lstat(e.policyPath); !errors.Is(err, fs.ErrNotExist) {
		// the file kept, as a new store's init keeps it: one that does
		// not load is said before "the store is ready to use"
		warnPolicy(e)
		if !added && !reshared {
			return exists
		}
		if e.json {
			// exit 0 prints init's object, as every --json success does
			return printJSON(e.out, result(false))
		}
		return nil
	}
	if dir := filepath.Dir(e.policyPath); fspath.Within(e.storePath, dir) || gitstore.IsStore(dir) || gitobj.IsGitDir(dir) {
		if added || reshared {
			if e.json {
				return printJSON(e.out, result(false))
			}
			return nil
		}
		if dir == e.storePath && !e.policyNamed {
			return hint.With(fmt.Errorf("%w at %s: the working directory is the store itself, and %s does not belong inside it; nothing was written", store.ErrExists, e.storePath, PolicyName),
				"run `readproof --store "+text.ShellArg(e.storePath)+" init` in the project directory to create "+PolicyName+" there")
		}
		return hint.With(fmt.Errorf("%w at %s: the policy file %s would be inside a git repository, where it does not belong; nothing was written", store.ErrExists, e.storePath, e.policyPath),
			"run `readproof --store "+text.ShellArg(e.storePath)+" init` in the project directory, or name a policy file outside the repository with --config")
	}
	if err := policy.CreateFile(e.policyPath); err != nil {
		return policyNotCreated(e, err, "is kept as it was")
	}
	if e.json {
		return printJSON(e.out, result(true))
	}
	if !reshared {
		e.say("readproof: the store %s exists already and is kept as it is", e.storePath)
	}
	fmt.Fprintf(e.out, "Created %s\n", e.policyPath)
	return nil
}

// checkFilePath looks for the file a filesystem source's --path names,
// relative to base (the directory of readproof.toml) unless absolute. It
// returns the absolute path when no file is there yet (a document may come
// later: resource add declares it, with a warning). A path that names no
// file there but does name one relative to the working directory is the
// mistake of a user in a subdirectory, who meant that file: refused, with
// the --path that names it, and where to run from to declare the file
// still to come (there, it is declared with the warning), with --config
// naming policy when it is not "" (the policy file named by --config or
// READPROOF_CONFIG: a relative name would name another file from there).
func checkFilePath(u identity.URI, path, base, policy string) (missing string, err error) {
	abs := filepath.Clean(filepath.FromSlash(path))
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(base, abs)
	}
	if _, err := os.Stat(abs); !errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if filepath.IsAbs(filepath.FromSlash(path)) {
		return abs, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return abs, nil
	}
	here := filepath.Join(wd, filepath.FromSlash(path))
	fi, err := os.Stat(here)
	if err != nil || !fi.Mode().IsRegular() {
		return abs, nil
	}
	rel, err := filepath.Rel(base, here)
	if err != nil {
		return abs, nil
	}
	from := text.Printable(base)
	if policy != "" {
		from += " with --config " + text.ShellArg(policy)
	}
	return "", withCode(ExitUsage, hint.With(
		fmt.Errorf("resource add %s: --path %s: no file at %s: --path is relative to the directory of readproof.toml (%s), not the working directory", u, text.Printable(path), text.Printable(abs), text.Printable(base)),
		fmt.Sprintf("for the file %s here, give --path %s; for a file still to come at %s, run the same command from %s",
			text.Printable(path), text.Printable(filepath.ToSlash(rel)), text.Printable(abs), from)))
}
