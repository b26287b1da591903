package share

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/receipts"
)

// A guarded remote (docs/sync.md, "A guarded shared remote"): a bare
// repository whose git configuration refuses deletions, non-fast-forward
// updates and malformed objects, and whose pre-receive hook runs
// CheckIncoming, so that plain git (`git push --mirror` from a stale store,
// a forced push) cannot lose runs on it.

// ErrRefused: a pre-receive check refused a push.
var ErrRefused = errors.New("push refused by the readproof guard")

// GuardConfig is the git configuration `remote init` sets: git's own
// guards, and readproof.remote = 1, which tells people and tools that the
// repository is a guarded shared remote.
var GuardConfig = [][2]string{
	{"receive.denyDeletes", "true"},
	{"receive.denyNonFastForwards", "true"},
	{"receive.fsckObjects", "true"},
	{"readproof.remote", "1"},
}

// HookScript returns the pre-receive hook that runs exe (an absolute path)
// as `readproof hook pre-receive`; when exe is gone (readproof was moved or
// reinstalled), the readproof found on PATH runs instead.
func HookScript(exe string) string {
	q := text.SingleQuoted(exe) // sh runs the hook: POSIX quoting
	return "#!/bin/sh\n" +
		"# Installed by `readproof remote init`: refuse pushes that would lose or forge readproof records.\n" +
		"rp=" + q + "\n" +
		"if [ ! -x \"$rp\" ]; then\n" +
		"\trp=$(command -v readproof) || { echo \"readproof guard: readproof is not at $rp nor on PATH; reinstall the hook with: readproof remote init --hook-only .\" >&2; exit 1; }\n" +
		"fi\n" +
		"exec \"$rp\" hook pre-receive\n"
}

// InitRemoteResult says what InitRemote created.
type InitRemoteResult struct {
	Path string `json:"path"`
	Hook string `json:"hook"`
	Exe  string `json:"readproof"`
}

// InitRemote creates a bare repository at path (which must not exist or be
// an empty directory) set up as a guarded shared remote: GuardConfig, HEAD
// on main, and the pre-receive hook running exe. With hookOnly, path must
// already be a bare repository: the configuration and hook are installed
// into it (to guard an existing remote or to repair the hook's path).
func InitRemote(ctx context.Context, path, exe string, hookOnly bool) (*InitRemoteResult, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(exe) {
		return nil, fmt.Errorf("remote init: the hook needs readproof's absolute path, got %q", exe)
	}
	if !hookOnly {
		entries, err := os.ReadDir(abs)
		if err == nil && len(entries) > 0 {
			return nil, hint.With(fmt.Errorf("remote init %s: the directory is not empty", path),
				"choose a new path; to guard an existing bare repository run: readproof remote init --hook-only "+text.ShellArg(path))
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remote init %s: %w", path, err)
		}
		// as `git init --bare a/b/c.git` does, the leading directories
		// are made (git, run on the absolute path, refuses a missing one)
		if err := os.MkdirAll(filepath.Dir(abs), 0o777); err != nil {
			return nil, hint.With(fmt.Errorf("remote init %s: %w", path, err), "choose a path in a directory you can create or write")
		}
	} else if fi, err := os.Stat(filepath.Join(abs, "objects")); err != nil || !fi.IsDir() {
		return nil, hint.With(fmt.Errorf("remote init --hook-only %s: not a bare git repository", path), "create a new guarded remote with: readproof remote init PATH")
	}
	t, err := gitstore.NewTransport(abs, gitstore.TransportOptions{})
	if err != nil {
		return nil, err
	}
	if err := t.InitBare(ctx, !hookOnly, GuardConfig); err != nil {
		return nil, fmt.Errorf("remote init %s: %w", path, err)
	}
	hook := filepath.Join(abs, "hooks", "pre-receive")
	if err := os.MkdirAll(filepath.Dir(hook), 0o777); err != nil {
		return nil, fmt.Errorf("remote init %s: %w", path, err)
	}
	tmp := hook + ".tmp"
	if err := os.WriteFile(tmp, []byte(HookScript(exe)), 0o755); err != nil {
		return nil, fmt.Errorf("remote init %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, hook); err != nil {
		return nil, fmt.Errorf("remote init %s: %w", path, err)
	}
	return &InitRemoteResult{Path: abs, Hook: hook, Exe: exe}, nil
}

// Incoming is one line of a pre-receive hook's input.
type Incoming struct {
	Old, New gitstore.OID
	Ref      string
}

const zeroOID gitstore.OID = "0000000000000000000000000000000000000000"

// ReadIncoming parses "<old> <new> <ref>" lines (git's pre-receive input).
func ReadIncoming(r io.Reader) ([]Incoming, error) {
	var list []Incoming
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 || !identity.IsObjectID(f[0]) || !identity.IsObjectID(f[1]) {
			return nil, fmt.Errorf("pre-receive input: unexpected line %q", sc.Text())
		}
		in := Incoming{Old: gitstore.OID(f[0]), New: gitstore.OID(f[1]), Ref: f[2]}
		if in.Old == zeroOID {
			in.Old = ""
		}
		if in.New == zeroOID {
			in.New = ""
		}
		list = append(list, in)
	}
	return list, sc.Err()
}

// CheckIncoming judges a push to a shared remote as its pre-receive hook:
// g and t must see the pushed objects (gitstore.OpenGitReader and a
// transport with HookObjects in the hook's environment). It returns one
// reason per refused ref; none means the push may land. The rules:
//   - only the shared namespaces are accepted (run tags, resource, tag,
//     receipt and verdict chains, main); nothing is ever deleted;
//   - a run tag is created once, never moved, and names a manifest that
//     verifies entry by entry, recorded under its id or renamed to it on
//     the journal;
//   - a chain only moves forward, and every commit it gains verifies as
//     its kind;
//   - main only moves forward and every new commit on it is a journal
//     commit or a manifest that verifies, recording only runs a run ref
//     names once the push lands.
func CheckIncoming(ctx context.Context, g gitstore.Store, t *gitstore.Transport, updates []Incoming) []string {
	var refused []string
	no := func(in Incoming, format string, args ...any) {
		refused = append(refused, fmt.Sprintf("%s: %s", in.Ref, fmt.Sprintf(format, args...)))
	}
	forward := func(in Incoming) bool {
		if in.Old == "" {
			return true
		}
		ok, err := t.IsAncestor(ctx, in.Old, in.New)
		if err != nil {
			no(in, "%v", err)
			return false
		}
		if !ok {
			no(in, "not a fast-forward: chains only move forward (pull, then push)")
		}
		return ok
	}
	verified := verifiedSet{}
	var runs []Incoming // run tags whose manifest verified
	var journal Incoming
	var journalRecords []RunRef // what the pushed journal commits record
	// the verdict chains pushed, and what their new commits decoded to
	verdicts, verdictNew, verdictReads := []Incoming{}, map[string][]gitstore.OID{}, decodedVerdicts{}
	heads := []gitstore.OID{}
	if main, err := g.Ref(store.JournalRef); err == nil {
		heads = append(heads, main)
	}
	for _, in := range updates {
		if in.New == "" {
			no(in, "deleting refs is refused: shared records are never removed")
			continue
		}
		name := in.Ref
		switch {
		case strings.HasPrefix(name, store.RunsPrefix):
			id := strings.TrimPrefix(name, store.RunsPrefix)
			if err := identity.ValidateRunID(id); err != nil {
				no(in, "%v", err)
			} else if in.Old != "" {
				no(in, "run tags are created once and never moved")
			} else if err := verified.check("manifest", in.New, func() error {
				m, err := checkManifest(g, in.New)
				if err == nil {
					verified[verifiedKey{recordsRun + m.RunID, in.New}] = true
				}
				return err
			}); err != nil {
				no(in, "%v", err)
			} else {
				runs = append(runs, in)
			}
		case strings.HasPrefix(name, store.ResourcesPrefix):
			if _, err := keyURI(strings.TrimPrefix(name, store.ResourcesPrefix)); err != nil {
				no(in, "%v", err)
			} else if forward(in) {
				// every commit the push adds, not the tip alone: pull
				// and clone refuse a forged one below a good tip
				for _, f := range checkObservations(ctx, g, t, strings.TrimPrefix(name, store.ResourcesPrefix), in.New, in.Old, verified) {
					no(in, "%s", f)
				}
			}
		case strings.HasPrefix(name, store.ProposalsPrefix):
			if err := checkIncomingProposal(g, in); err != nil {
				no(in, "%v", err)
			}
		case strings.HasPrefix(name, store.TagsPrefix):
			if _, _, err := splitTagKey(strings.TrimPrefix(name, store.TagsPrefix)); err != nil {
				no(in, "%v", err)
			} else if forward(in) {
				for _, f := range checkTagMoves(ctx, g, t, strings.TrimPrefix(name, store.TagsPrefix), in.New, in.Old, verified) {
					no(in, "%s", f)
				}
				for _, f := range checkIncomingTagMerges(ctx, g, t, in) {
					no(in, "%s", f)
				}
			}
		case strings.HasPrefix(name, receipts.RefPrefix):
			key := strings.TrimPrefix(name, receipts.RefPrefix)
			if _, _, ok := receiptChain(key); !ok {
				no(in, "not a receipt chain name")
			} else if forward(in) {
				for _, f := range append(checkReceiptTree(g, key, in.New, in.Old), checkReceiptCommits(ctx, g, t, key, in.New, in.Old)...) {
					no(in, "%s", f)
				}
			}
		case strings.HasPrefix(name, store.VerdictsPrefix):
			run := strings.TrimPrefix(name, store.VerdictsPrefix)
			if err := identity.ValidateRunID(run); err != nil {
				no(in, "%v", err)
			} else if forward(in) {
				failures, commits := checkVerdictChainRead(ctx, g, t, run, in.New, in.Old, nil, verdictReads)
				for _, f := range failures {
					no(in, "%s", f)
				}
				verdicts = append(verdicts, in)
				for _, c := range commits {
					verdictNew[run] = append(verdictNew[run], c.ID)
				}
			}
		case name == store.JournalRef:
			if !forward(in) {
				continue
			}
			var exclude []gitstore.OID
			if in.Old != "" {
				exclude = []gitstore.OID{in.Old}
			}
			commits, err := t.RevList(ctx, []gitstore.OID{in.New}, exclude)
			if err != nil {
				no(in, "%v", err)
				continue
			}
			manifests := map[gitstore.OID]bool{}
			failures, records := checkJournal(g, in.New, commits, manifests, verified, nil)
			for _, f := range failures {
				no(in, "%s", f)
			}
			journal, journalRecords = in, records
			for _, m := range sortedOIDs(manifests) {
				if err := verified.check("manifest", m, func() error { _, err := checkManifest(g, m); return err }); err != nil {
					no(in, "%v", err)
				}
			}
		default:
			no(in, "not a shared readproof ref (runs, resources, tags, tag proposals, receipts, verdicts, main)")
		}
		if in.Ref == store.JournalRef && in.New != "" {
			heads = append(heads, in.New)
		}
	}
	// the manifest each run ref pushed names, by run id (the last update
	// of a name wins, as it lands), built once: the verdict chains' check
	// below looked each up in every update, 10^10 comparisons for a first
	// push of 10^5 runs
	pushedRuns := map[string]gitstore.OID{}
	for _, in := range updates {
		if strings.HasPrefix(in.Ref, store.RunsPrefix) && in.New != "" {
			pushedRuns[strings.TrimPrefix(in.Ref, store.RunsPrefix)] = in.New
		}
	}
	// A journal records only runs a run ref names once the push lands, as
	// pull and clone require (journalOrphans).
	if journalRecords != nil {
		final := map[string]gitstore.OID{}
		named := map[gitstore.OID]bool{}
		have, err := g.Refs(store.RunsPrefix)
		if err != nil {
			no(journal, "%v", err)
		}
		for _, r := range have {
			final[strings.TrimPrefix(r.Name, store.RunsPrefix)] = r.OID
		}
		for id, m := range pushedRuns {
			final[id] = m
		}
		for _, m := range final {
			named[m] = true
		}
		run := func(id string) (gitstore.OID, bool) { m, ok := final[id]; return m, ok }
		for _, f := range journalOrphans(journalRecords, run, func(m gitstore.OID) bool { return named[m] }) {
			no(journal, "%s", f)
		}
	}
	// Every new verdict record names the manifest its run's ref names once
	// the push lands, or one the journal (the remote's, or the one pushed
	// with it) records renamed away from the run, as pull and clone require
	// (verdictManifests; a remote keeps no conflict of a run id): before
	// session 31's re-read the hook took one naming another, which every
	// pull then refused.
	renames := &journalRenames{g: g, heads: heads}
	for _, in := range verdicts {
		run := strings.TrimPrefix(in.Ref, store.VerdictsPrefix)
		named, err := g.Ref(store.RunsPrefix + run)
		if err != nil && !errors.Is(err, gitstore.ErrNotFound) {
			no(in, "%v", err)
			continue
		}
		if m, ok := pushedRuns[run]; ok {
			named = m
		}
		f, err := verdictManifests(run, verdictNew[run], verdictReads, named, func(gitstore.OID) bool { return false }, renames)
		if err != nil {
			no(in, "%v", err)
		}
		for _, f := range f {
			no(in, "%s", f)
		}
	}
	// A run tag names a manifest recorded under its id, or one the journal
	// (the remote's, or the one pushed with it) records renamed to it, as
	// pull and clone require (checkRunNames).
	for _, in := range runs {
		failures, err := checkRunNames(g, []RunRef{{RunID: strings.TrimPrefix(in.Ref, store.RunsPrefix), Manifest: string(in.New)}}, verified, renames)
		if err != nil {
			failures = append(failures, err.Error())
		}
		for _, f := range failures {
			no(in, "%s", f)
		}
	}
	return refused
}

// Guard runs the pre-receive check on the repository at gitDir in the
// hook's environment, reading git's input from r. A refusal returns an
// error wrapping ErrRefused that lists every refused ref.
func Guard(ctx context.Context, gitDir string, r io.Reader) error {
	updates, err := ReadIncoming(r)
	if err != nil {
		return err
	}
	g, err := gitstore.OpenGitReader(ctx, gitDir)
	if err != nil {
		return err
	}
	defer g.Close()
	t, err := gitstore.NewTransport(gitDir, gitstore.TransportOptions{HookObjects: true})
	if err != nil {
		return err
	}
	if refused := CheckIncoming(ctx, g, t, updates); len(refused) > 0 {
		return fmt.Errorf("%w:\n  %s", ErrRefused, strings.Join(refused, "\n  "))
	}
	return nil
}
