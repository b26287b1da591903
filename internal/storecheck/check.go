package storecheck

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/fspath"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// Options choose how deep Check reads.
type Options struct {
	// ReadData reads every blob (recomputing its git id) and re-hashes every
	// snapshot against the content hashes the records carry.
	ReadData bool
	// Subset re-hashes only the snapshots of one bucket: "N/M" or "P%"
	// (see ParseSubset). Ignored when ReadData is set. Empty means the
	// default structure sample.
	Subset string
	// Progress, when set, is called as refs and snapshots are checked.
	Progress func(done, total int)
	// AllowedSigners is the allowed_signers file that makes manifest
	// signatures checkable; "" means [signing] allowed_signers of the
	// store's policy file. When neither is set, signatures are counted but
	// not verified.
	AllowedSigners string
	// ProbeKeys, when set, checks the MAC of every verdict record
	// (docs/PROBE_PROTOCOL.md §10.6); without it the MACs are counted and
	// a warning says they were not checked.
	ProbeKeys *probe.Keys
	// ProbeKeyUnusable, when set (and ProbeKeys is not), is why a probe key
	// file that exists could not be loaded; a warning names it, so MACs
	// left unchecked are not mistaken for a store without a key.
	ProbeKeyUnusable error
}

// Check verifies the whole store and returns what it found. The error is
// non-nil only when the check could not run at all (bad options, the refs
// cannot be listed, ctx cancelled); every finding about the store's content
// is a Problem in the report.
func check(ctx context.Context, s *store.Store, opts Options) (*Report, error) {
	c := &checker{
		ctx:      ctx,
		s:        s,
		g:        s.Objects(),
		opts:     opts,
		rep:      &Report{Problems: []Problem{}},
		seen:     map[gitstore.OID]struct{}{},
		bad:      map[gitstore.OID]bool{},
		refBad:   map[string]bool{},
		commits:  map[gitstore.OID]gitstore.Commit{},
		trees:    map[gitstore.OID][]gitstore.TreeEntry{},
		hashes:   map[gitstore.OID]blobHash{},
		claims:   map[gitstore.OID][]claim{},
		observed: map[string]map[string]bool{},
		noChain:  map[string]*chainless{},
	}
	switch {
	case opts.ReadData:
		c.smp = sampler{all: true, desc: "read-data"}
	case opts.Subset != "":
		smp, err := parseSubset(opts.Subset)
		if err != nil {
			return nil, err
		}
		c.smp = smp
	default:
		c.smp = sampler{desc: "structure"}
	}
	c.rep.Mode = c.smp.desc
	c.loadTrust()
	if err := c.run(); err != nil {
		return nil, err
	}
	c.unindexedPacks()
	return c.rep, nil
}

// unindexedPacks names, ahead of the problems they cause, the packs whose
// index is missing or cannot be read: every object in one reads as
// missing, and `git index-pack` brings them all back. Looked for only when
// something is broken: a writer renames its pack into place a moment before
// its index.
func (c *checker) unindexedPacks() {
	if c.rep.Broken() == 0 {
		return
	}
	// gitstore's advice (a hint's text) starts with the file, which the
	// problem shows as its Path
	problem := func(subject, path, advice string) Problem {
		return Problem{Kind: Broken, Check: "pack", Subject: subject, Path: path, Message: strings.TrimPrefix(advice, path+" ")}
	}
	var first []Problem
	for _, pack := range gitstore.UnindexedPacks(c.g.Path()) {
		first = append(first, problem("pack "+filepath.Base(pack), pack, gitstore.UnindexedPackAdvice(pack)))
	}
	for _, d := range gitstore.DamagedPackIndexes(c.g.Path()) {
		first = append(first, problem("pack index "+filepath.Base(d.Path), d.Path, d.Advice()))
	}
	c.rep.Problems = append(first, c.rep.Problems...)
}

type blobHash struct {
	hash string
	size int64
}

// hashBlob hashes blob id as it is inflated (store.HashBlob), unbounded: a
// record's blob may be a snapshot of any size, or anything a damaged store
// holds.
func (c *checker) hashBlob(id gitstore.OID) (blobHash, error) {
	hash, size, err := store.HashBlob(c.g, id, -1)
	return blobHash{hash: hash, size: size}, err
}

// claim is one record saying what a snapshot's bytes hash to.
type claim struct {
	hash              string
	size              int64 // -1 when the record carries no size
	subject, ref, run string
	path, what        string
}

type checker struct {
	ctx  context.Context
	s    *store.Store
	g    gitstore.Reader
	opts Options
	smp  sampler
	rep  *Report

	seen    map[gitstore.OID]struct{}
	bad     map[gitstore.OID]bool // objects already reported
	refBad  map[string]bool       // refs whose graph had a problem
	commits map[gitstore.OID]gitstore.Commit
	trees   map[gitstore.OID][]gitstore.TreeEntry
	hashes  map[gitstore.OID]blobHash // read-data: every blob read
	claims  map[gitstore.OID][]claim
	// observed holds the snapshots recorded per resource key.
	observed map[string]map[string]bool
	// noChain holds, per resource key a committed run records entries of
	// without the store holding that resource's chain, the runs that do.
	noChain map[string]*chainless
	// copied: the store is a copy stock git made (no readproof marker); one
	// that holds no ref of a kind was made without them (git clone
	// --single-branch, --no-tags), rather than had them deleted
	copied bool
	// chains: the store holds at least one resource chain
	chains bool

	// walked holds every ref as the listing that step 1 walked saw it: the
	// later steps that list refs again (resource chains, tags) check each
	// at that tip, whose commits are the ones read. A writer may move a ref
	// meanwhile; its new commits were never read, and a chain checked at
	// its new tip read as empty.
	walked map[string]gitstore.OID

	// strays holds the receipts (ref NUL id) checkReceiptsAdded found
	// in a receipt chain without their own append commit.
	strays map[string]bool

	// stale holds the refs that a killed commit, abort or reopen left
	// (store.HalfDone): checked, but not counted as runs of their kind.
	stale map[string]bool

	// renames holds, per manifest, the run renames the journal records
	// (old id -> new ids), written by `readproof conflicts rename`.
	renames map[gitstore.OID]map[string][]string

	trust   bool
	signers evidence.AllowedSigners // nil when trust is set but unreadable

	done, total int
	steps       int
	unsigned    int
}

// maxNamed bounds how many runs one kind of warning names one by one.
const maxNamed = 20

// checkReplaced names what makes stock git read other objects than readproof
// does: a ref under refs/replace/ (git replace, git replace --graft) and an
// info/grafts file. git log, cat-file and verify-commit on the repository,
// or on a mirror clone of it, follow them; readproof never does, so the
// store and an auditor's git would disagree about its records.
func (c *checker) checkReplaced(other []gitstore.Ref) {
	for _, r := range other {
		// under GIT_REPLACE_REF_BASE only what git takes for a replace ref
		id := store.ReplaceRefObject(r.Name)
		if id == "" {
			continue
		}
		c.add(Problem{Kind: Broken, Check: "replace", Subject: "ref " + r.Name, Ref: r.Name,
			Message: fmt.Sprintf("stock git reads object %s in place of %s (git log, cat-file and verify-commit follow refs/replace/, readproof does not): remove it with git update-ref -d %s",
				r.OID, text.Printable(id), text.Printable(r.Name))})
	}
	grafts := filepath.Join(c.g.Path(), "info", "grafts")
	if _, err := os.Lstat(grafts); err == nil {
		c.add(Problem{Kind: Broken, Check: "replace", Subject: "info/grafts",
			Message: fmt.Sprintf("%s gives commits other parents for stock git, not for readproof: remove it", grafts)})
	}
	if msg := store.CommonDirProblem(c.g.Path()); msg != "" {
		c.add(Problem{Kind: Broken, Check: "replace", Subject: "commondir", Message: msg})
	}
}

func (c *checker) add(p Problem) { c.rep.Problems = append(c.rep.Problems, p) }

func (c *checker) progress() {
	c.done++
	if c.opts.Progress != nil {
		c.opts.Progress(c.done, c.total)
	}
}

// MaxAllowedSignersBytes bounds the allowed_signers file verify reads:
// 16 MiB, as evidence verify and verify-commit bound theirs.
const MaxAllowedSignersBytes = 16 << 20

// loadTrust reads allowed_signers when trust is configured.
func (c *checker) loadTrust() {
	path := c.opts.AllowedSigners
	if path == "" {
		if pol, err := c.s.Policy(); err == nil {
			path = pol.AllowedSigners
		}
	}
	if path == "" {
		return
	}
	c.trust, c.rep.Trust = true, true
	// judged from the file opened, as the other commands read it: a
	// named pipe held verify at its open, unmoved by SIGTERM, and
	// /dev/zero was read until memory ran out
	data, err := fspath.ReadRegular(path, MaxAllowedSignersBytes, "an allowed_signers file")
	if err == nil {
		c.signers, err = evidence.ParseAllowedSigners(data)
		if err == nil && len(c.signers) == 0 {
			err = errors.New("the file lists no key")
		}
	}
	if err != nil {
		c.signers = nil
		named := "[signing] allowed_signers in readproof.toml"
		if c.opts.AllowedSigners != "" {
			named = "--allowed-signers"
		}
		c.add(Problem{Kind: CouldNotCheck, cause: err, Check: "signature", Subject: "store", Path: path,
			Message: fmt.Sprintf("cannot use allowed_signers: %v; manifest signatures were not verified (fix the file named by %s)", err, named)})
	}
}

func (c *checker) cancelled() error {
	c.steps++
	if c.steps%1024 == 0 {
		return c.ctx.Err()
	}
	return nil
}

func (c *checker) run() error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	all, err := c.g.Refs("refs/")
	if err != nil {
		return fmt.Errorf("list refs of %s: %w", c.g.Path(), err)
	}
	c.rep.Counts.Refs = len(all)
	c.walked = make(map[string]gitstore.OID, len(all))
	c.copied = !gitstore.IsStore(c.s.Path())
	for _, r := range all {
		c.walked[r.Name] = r.OID
	}
	broken, err := c.s.BrokenRefs("refs/")
	if err != nil {
		return fmt.Errorf("list refs of %s: %w", c.g.Path(), err)
	}
	for _, b := range broken {
		what := "unreadable ref file"
		if b.Packed {
			what = "packed-refs record git ignores"
		}
		c.add(Problem{Kind: Broken, Check: "ref", Subject: "ref " + b.Name, Ref: b.Name,
			Message: fmt.Sprintf("%s: %v", what, b.Err)})
	}

	var runs, open, aborted, resources, tags, journal, verdicts, other []gitstore.Ref
	for _, r := range all {
		switch {
		case strings.HasPrefix(r.Name, store.VerdictsPrefix):
			verdicts = append(verdicts, r)
		case strings.HasPrefix(r.Name, store.RunsPrefix):
			runs = append(runs, r)
		case strings.HasPrefix(r.Name, store.OpenPrefix):
			open = append(open, r)
		case strings.HasPrefix(r.Name, store.AbortedPrefix):
			aborted = append(aborted, r)
		case strings.HasPrefix(r.Name, store.ResourcesPrefix):
			resources = append(resources, r)
		case strings.HasPrefix(r.Name, store.TagsPrefix):
			tags = append(tags, r)
		case r.Name == store.JournalRef:
			journal = append(journal, r)
		default:
			other = append(other, r)
		}
	}
	c.total = len(all)
	c.chains = len(resources) > 0
	c.checkReplaced(other)

	// 1. The object graph of every ref, in an order that names the most
	// specific owner of a broken object: runs first, the journal (which
	// reaches every manifest) after them.
	for _, group := range [][]gitstore.Ref{runs, open, aborted, resources, tags, journal, verdicts, other} {
		for _, r := range group {
			if err := c.walk(r); err != nil {
				return err
			}
			c.progress()
		}
	}
	if c.smp.all {
		if err := c.checkRaw(); err != nil {
			return err
		}
	}
	// 2. What the objects say.
	var reach []gitstore.OID // every commit reachable from the journal's tip
	if len(journal) > 0 {
		reach = c.commitsFrom(journal[0].OID)
	}
	c.renames = c.journalRenames(reach)
	for _, r := range runs {
		c.checkRun(r)
	}
	c.halfDone(runs, open, aborted)
	for _, r := range open {
		c.checkOpen(r)
	}
	for _, r := range aborted {
		c.checkAborted(r)
	}
	c.checkResources()
	c.checkChainless()
	c.checkTags()
	c.checkJournal(runs, journal, reach)
	c.checkVerdicts(verdicts)
	c.checkReceipts()
	if c.unsigned > maxNamed {
		c.add(Problem{Kind: Warning, Check: "signature", Subject: "store",
			Message: fmt.Sprintf("%d more manifests are not signed", c.unsigned-maxNamed)})
	}
	if c.rep.Counts.Signed > 0 && !c.trust {
		c.add(Problem{Kind: Warning, Check: "signature", Subject: "store",
			Message: fmt.Sprintf("%d signed manifest%s not verified: pass --allowed-signers FILE, or set [signing] allowed_signers in readproof.toml, to check them", c.rep.Counts.Signed, text.Plural(c.rep.Counts.Signed, "", "s"))})
	}
	c.checkIgnored()
	// 3. The snapshots.
	return c.checkSnapshots()
}

func subjectOf(ref string) (subject, run string) {
	switch {
	case strings.HasPrefix(ref, store.RunsPrefix):
		run = strings.TrimPrefix(ref, store.RunsPrefix)
		return "run " + run, run
	case strings.HasPrefix(ref, store.OpenPrefix):
		run = strings.TrimPrefix(ref, store.OpenPrefix)
		return "open run " + run, run
	case strings.HasPrefix(ref, store.AbortedPrefix):
		if id, _, err := store.SplitAbortedRef(strings.TrimPrefix(ref, store.AbortedPrefix)); err == nil {
			return "aborted run " + id, id
		}
	case strings.HasPrefix(ref, store.ResourcesPrefix):
		if u, err := store.KeyURI(strings.TrimPrefix(ref, store.ResourcesPrefix)); err == nil {
			return "resource " + u.String(), ""
		}
	case strings.HasPrefix(ref, store.TagsPrefix):
		rest := strings.TrimPrefix(ref, store.TagsPrefix)
		if i := strings.LastIndexByte(rest, '/'); i > 0 {
			if u, err := store.KeyURI(rest[:i]); err == nil {
				return "tag " + u.String() + "@" + rest[i+1:], ""
			}
		}
	case ref == store.JournalRef:
		return "journal", ""
	}
	return "ref " + ref, ""
}

// objectProblem records a failed read of object id, telling a missing or
// corrupt object (broken) from an I/O error (could not check). A read the
// system refused or could not complete (gitstore.Unreadable: the limit on
// open files met, an I/O error) could not check, whatever else the error
// wraps: an audit never reports its environment as damage.
func (c *checker) objectProblem(ref string, id gitstore.OID, path, want string, err error) {
	subject, run := subjectOf(ref)
	p := Problem{Kind: CouldNotCheck, Check: "object", Subject: subject, Ref: ref, Run: run, Object: string(id), Path: path}
	switch {
	case gitstore.Unreadable(err):
		p.Message, p.cause = fmt.Sprintf("cannot read %s: %v", want, err), err
	case errors.Is(err, gitstore.ErrNotFound):
		ok, herr := c.g.Has(id)
		switch {
		case herr != nil:
			p.Message, p.cause = fmt.Sprintf("cannot read %s: %v", want, herr), herr
		case !ok:
			p.Kind, p.Message = Broken, "missing "+want
		case gitstore.CheckObjectSize(c.g, id, manifest.MaxBytes) != nil:
			// its type is not worth inflating gigabytes for
			p.Kind, p.Message = Broken, fmt.Sprintf("expected a %s, found an object of more than %d bytes", want, manifest.MaxBytes)
		default:
			kind, _, _ := c.g.RawObject(id)
			p.Kind, p.Message = Broken, fmt.Sprintf("expected a %s, found a %s", want, kind)
		}
	case errors.Is(err, gitstore.ErrCorrupt):
		p.Kind, p.Message = Broken, fmt.Sprintf("corrupt %s: %v", want, err)
	case errors.Is(err, gitstore.ErrTooLarge):
		p.Kind, p.Message = Broken, fmt.Sprintf("%s is larger than readproof writes it: %v", strings.TrimSpace(path+" "+want), err)
	default:
		p.Message, p.cause = fmt.Sprintf("cannot read %s: %v", want, err), err
	}
	c.bad[id] = true
	c.refBad[ref] = true
	c.add(p)
}

// walk reads the object graph reachable from one ref: commits and trees are
// read and decoded (which recomputes their ids), blobs are checked for
// presence, or read when every blob is to be re-hashed.
func (c *checker) walk(r gitstore.Ref) error {
	type item struct {
		id   gitstore.OID
		kind byte // 'c', 't', 'b'
		path string
	}
	stack := []item{{r.OID, 'c', ""}}
	for len(stack) > 0 {
		if err := c.cancelled(); err != nil {
			return err
		}
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, ok := c.seen[it.id]; ok {
			if c.bad[it.id] {
				c.refBad[r.Name] = true
			}
			continue
		}
		c.seen[it.id] = struct{}{}
		switch it.kind {
		case 'c':
			// A commit over a manifest's bound (a ref that names a blob
			// of gigabytes) is refused from its header, as pull refuses
			// it, not inflated to learn that it is no commit.
			err := gitstore.CheckObjectSize(c.g, it.id, manifest.MaxBytes)
			var cm gitstore.Commit
			if err == nil {
				cm, err = c.g.Commit(it.id)
			}
			if err != nil {
				want := "commit"
				if it.path != "" {
					want = "commit (" + it.path + ")"
				}
				c.objectProblem(r.Name, it.id, "", want, err)
				continue
			}
			c.rep.Counts.Commits++
			c.commits[it.id] = cm
			stack = append(stack, item{cm.Tree, 't', ""})
			for _, p := range cm.Parents {
				stack = append(stack, item{p, 'c', "parent of " + short(it.id)})
			}
		case 't':
			entries, err := c.g.Tree(it.id)
			if err != nil {
				c.objectProblem(r.Name, it.id, it.path, "tree", err)
				continue
			}
			c.rep.Counts.Trees++
			c.trees[it.id] = entries
			for _, e := range entries {
				p := e.Name
				if it.path != "" {
					p = it.path + "/" + e.Name
				}
				switch e.Mode {
				case gitstore.ModeDir:
					stack = append(stack, item{e.OID, 't', p})
				case gitstore.ModeFile:
					stack = append(stack, item{e.OID, 'b', p})
				default:
					subject, run := subjectOf(r.Name)
					c.add(Problem{Kind: Warning, Check: "object", Subject: subject, Ref: r.Name, Run: run, Object: string(e.OID), Path: p,
						Message: fmt.Sprintf("tree entry with mode %o, which readproof never writes; not followed", uint32(e.Mode))})
				}
			}
		case 'b':
			c.rep.Counts.Blobs++
			if c.smp.all {
				h, err := c.hashBlob(it.id)
				if err != nil {
					c.objectProblem(r.Name, it.id, it.path, "blob", err)
					continue
				}
				c.hashes[it.id] = h
				continue
			}
			ok, err := c.g.Has(it.id)
			if err != nil {
				c.objectProblem(r.Name, it.id, it.path, "blob", err)
			} else if !ok {
				c.objectProblem(r.Name, it.id, it.path, "blob", fmt.Errorf("blob %s: %w", it.id, gitstore.ErrNotFound))
			}
		}
	}
	return nil
}

func short(id gitstore.OID) string {
	if len(id) > 12 {
		return string(id[:12])
	}
	return string(id)
}

// lookup finds path in a tree already read by walk. ok is false when the
// path is absent; known is false when part of the tree could not be read
// (already reported).
func (c *checker) lookup(root gitstore.OID, path string) (id gitstore.OID, ok, known bool) {
	cur := root
	parts := strings.Split(path, "/")
	for i, name := range parts {
		entries, read := c.trees[cur]
		if !read {
			return "", false, false
		}
		found := false
		for _, e := range entries {
			if e.Name == name {
				last := i == len(parts)-1
				if last != (e.Mode == gitstore.ModeFile) {
					return "", false, true
				}
				cur, found = e.OID, true
				break
			}
		}
		if !found {
			return "", false, true
		}
	}
	return cur, true, true
}

// readTree lists a tree walk read; one it could not read fails (walk
// reported it).
func (c *checker) readTree(id gitstore.OID) ([]gitstore.TreeEntry, error) {
	if t, ok := c.trees[id]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("tree %s: %w", id, gitstore.ErrNotFound)
}

// file reads the blob at path in a commit's tree. It reports a missing file
// as broken (naming what) and returns ok false; unreadable objects were
// reported by walk or are reported here.
func (c *checker) file(ref string, cm gitstore.Commit, commit gitstore.OID, path, check string) ([]byte, bool) {
	id, ok, known := c.lookup(cm.Tree, path)
	if !known {
		return nil, false
	}
	subject, run := subjectOf(ref)
	if !ok {
		c.add(Problem{Kind: Broken, Check: check, Subject: subject, Ref: ref, Run: run, Object: string(commit),
			Message: fmt.Sprintf("commit has no %s: not a readproof %s record", path, check)})
		return nil, false
	}
	if c.bad[id] {
		return nil, false
	}
	// its size is checked before it is inflated
	data, err := c.g.BlobAtMost(id, store.MaxBytesOf(path))
	if err != nil {
		c.objectProblem(ref, id, path, "blob", err)
		return nil, false
	}
	return data, true
}

func (c *checker) claim(id string, cl claim) {
	c.claims[gitstore.OID(id)] = append(c.claims[gitstore.OID(id)], cl)
}

// checkRun checks a committed run: the manifest decodes, names this run,
// and every entry's file in the tree is its snapshot.
func (c *checker) checkRun(r gitstore.Ref) {
	c.rep.Counts.Runs++
	subject, id := subjectOf(r.Name)
	broken := func(object, path, format string, args ...any) {
		c.add(Problem{Kind: Broken, Check: "manifest", Subject: subject, Ref: r.Name, Run: id, Object: object, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if err := identity.ValidateRunID(id); err != nil {
		broken("", "", "ref name is not a valid run id: %v", err)
	}
	cm, ok := c.commits[r.OID]
	if !ok {
		return
	}
	if len(cm.Parents) != 0 {
		broken(string(r.OID), "", "manifest commit has %d parent(s); a manifest is a root commit", len(cm.Parents))
	}
	data, ok := c.file(r.Name, cm, r.OID, "manifest.json", "manifest")
	if !ok {
		return
	}
	m, err := manifest.Decode(data)
	if errors.Is(err, manifest.ErrNewerFormat) {
		// not broken: this readproof cannot read it, a newer one can
		c.add(Problem{Kind: CouldNotCheck, cause: err, Check: "manifest", Subject: subject, Ref: r.Name, Run: id, Object: string(r.OID),
			Message: fmt.Sprintf("manifest.json %v; upgrade readproof to check this run", err)})
		return
	}
	if err != nil {
		broken(string(r.OID), "", "manifest.json does not decode: %v", err)
		return
	}
	if m.RunID != id && !c.renamed(r.OID, m.RunID, id) {
		broken(string(r.OID), "", "manifest.json records run %q, but the ref names run %q", m.RunID, id)
	}
	for _, e := range m.Entries {
		what := fmt.Sprintf("entry %d %s", e.Position, e.URI)
		if e.File != "" {
			f, ok, known := c.lookup(cm.Tree, e.File)
			switch {
			case !known:
			case !ok:
				broken(string(r.OID), "", "%s: file %s is missing from the manifest tree", what, e.File)
			case string(f) != e.Snapshot:
				broken(string(f), e.File, "%s: tree file is blob %s, the entry records snapshot %s", what, f, e.Snapshot)
			}
		}
		c.claim(e.Snapshot, claim{hash: e.ContentHash, size: e.Bytes, subject: subject, ref: r.Name, run: id, path: e.File, what: what})
		if u, err := identity.ParseURI(e.URI); err == nil {
			c.noteChain(u, id)
		}
	}
	if p, err := store.ManifestTreeExtra(c.readTree, cm.Tree, m.Entries); err == nil && p != "" {
		broken(string(r.OID), p, "tree entry %s is not part of the run: no entry records it, yet `git show` and `git diff` show it with the run (%s); readproof did not write this commit: restore the run from a copy that holds it as readproof wrote it", p, store.ManifestTreeRule)
	}
	c.checkSignature(r, cm, subject, id)
}

// journalRenames reads the renames recorded on the journal (reach: the
// commits reachable from its tip): commits whose message is "rename run OLD
// to NEW", a blank line and "manifest ID" (store.ParseJournalRename, which
// `conflicts rename` reads them with too).
func (c *checker) journalRenames(reach []gitstore.OID) map[gitstore.OID]map[string][]string {
	out := map[gitstore.OID]map[string][]string{}
	for _, id := range reach {
		from, to, ms, ok := store.ParseJournalRename(c.commits[id].Message)
		if !ok {
			continue
		}
		for _, m := range ms {
			if out[m] == nil {
				out[m] = map[string][]string{}
			}
			out[m][from] = append(out[m][from], to)
		}
	}
	return out
}

// renamed reports whether the journal records renames of manifest m that
// lead from run id from to run id to (a rename of a rename included).
func (c *checker) renamed(m gitstore.OID, from, to string) bool {
	return store.RenameLeads(c.renames[m], from, to)
}

// checkSignature verifies a manifest commit's SSH signature against the
// configured allowed signers.
func (c *checker) checkSignature(r gitstore.Ref, cm gitstore.Commit, subject, run string) {
	p := Problem{Kind: Broken, Check: "signature", Subject: subject, Ref: r.Name, Run: run, Object: string(r.OID)}
	if cm.Signature == "" {
		if c.trust {
			c.unsigned++
			if c.unsigned <= maxNamed {
				p.Kind, p.Message = Warning, "manifest commit is not signed, although [signing] allowed_signers is configured"
				c.add(p)
			}
		}
		return
	}
	c.rep.Counts.Signed++
	// Without usable allowed signers the signature is still checked against
	// its own key: only "who signed" needs trust (store.CommitSigner, which
	// evidence verify uses too).
	var signers evidence.AllowedSigners
	if c.trust && c.signers != nil {
		signers = c.signers
	}
	if _, _, err := c.s.CommitSigner(r.OID, signers); err != nil {
		if errors.Is(err, gitstore.ErrNotFound) || errors.Is(err, gitstore.ErrCorrupt) {
			c.objectProblem(r.Name, r.OID, "", "commit", err)
			return
		}
		p.Message = fmt.Sprintf("bad signature: %v", err)
		c.add(p)
		return
	}
	if signers != nil {
		c.rep.Counts.Verified++
	}
}

// halfDone warns of each transition that a killed process left half done
// (store.HalfDone: the commits say which state the run is in) and notes
// the stale ref, which is not counted as a run of its own kind. An open ref
// on an abort commit with no aborted ref beside it counts as the aborted
// run it is.
func (c *checker) halfDone(runs, open, aborted []gitstore.Ref) {
	committed := make(map[string]gitstore.OID, len(runs))
	for _, r := range runs {
		committed[strings.TrimPrefix(r.Name, store.RunsPrefix)] = r.OID
	}
	have := make(map[string]bool, len(aborted))
	for _, r := range aborted {
		have[r.Name] = true
	}
	c.stale = map[string]bool{}
	for _, r := range open {
		id := strings.TrimPrefix(r.Name, store.OpenPrefix)
		if identity.ValidateRunID(id) != nil || c.refBad[r.Name] {
			continue
		}
		kind, stale, err := c.s.HalfDone(id, r.OID, committed[id])
		if err != nil || kind == "" {
			continue // checkOpen reports a tip that does not read
		}
		c.stale[stale] = true
		p := Problem{Kind: Warning, Check: "half-done", Subject: "run " + id, Ref: stale, Run: id}
		switch kind {
		case store.HalfDoneCommit:
			p.Object = string(r.OID)
			p.Message = "`run commit` was interrupted before it removed the open ref: the run is committed; `readproof gc` removes the open ref"
		case store.HalfDoneAbort:
			p.Object = string(r.OID)
			p.Message = "`run abort` was interrupted before it removed the open ref: the run is aborted; `readproof run abort " + id + "` or `readproof gc` completes it"
			if !have[store.AbortedPrefix+id+"/"+string(r.OID)] {
				c.rep.Counts.AbortedRuns++
			}
		case store.HalfDoneReopen:
			p.Object = strings.TrimPrefix(stale, store.AbortedPrefix+id+"/")
			p.Message = "`run reopen` was interrupted before it removed the aborted ref: the run is open; its next mount, commit or abort, or `readproof gc`, removes the aborted ref"
		case store.HalfDoneOldAbort:
			p.Object = strings.TrimPrefix(stale, store.AbortedPrefix+id+"/")
			p.Message = "`run abort` of an earlier readproof was interrupted before it removed the open ref: the run is open, with every entry the abort saw; its next commit or abort, or `readproof gc`, removes the aborted ref"
		}
		c.add(p)
	}
}

// checkOpen checks that an open run decodes and names existing snapshots.
func (c *checker) checkOpen(r gitstore.Ref) {
	if !c.stale[r.Name] {
		c.rep.Counts.OpenRuns++
	}
	subject, id := subjectOf(r.Name)
	p := Problem{Kind: Broken, Check: "open-run", Subject: subject, Ref: r.Name, Run: id, Object: string(r.OID)}
	if err := identity.ValidateRunID(id); err != nil {
		p.Message = fmt.Sprintf("ref name is not a valid run id: %v", err)
		c.add(p)
		return
	}
	if c.refBad[r.Name] {
		return
	}
	st, err := c.s.OpenRunAt(r.OID)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			p.Kind, p.cause = CouldNotCheck, err
		}
		p.Message = fmt.Sprintf("open run does not decode: %v", err)
		c.add(p)
		return
	}
	if st.RunID != id {
		p.Message = fmt.Sprintf("run.json records run %q, but the ref names run %q", st.RunID, id)
		c.add(p)
	}
	for _, e := range st.Entries {
		what := fmt.Sprintf("entry %d %s", e.Position, e.URI)
		if !identity.IsObjectID(e.Snapshot) || !manifest.IsContentHash(e.ContentHash) {
			p.Message = fmt.Sprintf("%s: snapshot %q or content hash %q is malformed", what, e.Snapshot, e.ContentHash)
			c.add(p)
			continue
		}
		c.claim(e.Snapshot, claim{hash: e.ContentHash, size: e.Bytes, subject: subject, ref: r.Name, run: id, path: "entries/" + fmt.Sprintf("%08d.json", e.Position), what: what})
	}
}

// checkAborted checks an aborted run (store.AbortedPrefix): the ref names
// its run and abort commit, the abort commit sits on the open run's tip
// with the same tree, and the entries claim their snapshots as an open
// run's do.
func (c *checker) checkAborted(r gitstore.Ref) {
	if !c.stale[r.Name] {
		c.rep.Counts.AbortedRuns++
	}
	subject, id := subjectOf(r.Name)
	p := Problem{Kind: Broken, Check: "aborted-run", Subject: subject, Ref: r.Name, Run: id, Object: string(r.OID)}
	if c.refBad[r.Name] {
		return
	}
	a, err := c.s.AbortedRunAt(r)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			p.Kind, p.cause = CouldNotCheck, err
		}
		p.Message = fmt.Sprintf("aborted run does not decode: %v", err)
		c.add(p)
		return
	}
	st, err := c.s.OpenRunAt(a.Tip)
	if err != nil {
		p.Message = fmt.Sprintf("aborted run does not decode: %v", err)
		c.add(p)
		return
	}
	for _, e := range st.Entries {
		what := fmt.Sprintf("entry %d %s", e.Position, e.URI)
		if !identity.IsObjectID(e.Snapshot) || !manifest.IsContentHash(e.ContentHash) {
			p.Message = fmt.Sprintf("%s: snapshot %q or content hash %q is malformed", what, e.Snapshot, e.ContentHash)
			c.add(p)
			continue
		}
		c.claim(e.Snapshot, claim{hash: e.ContentHash, size: e.Bytes, subject: subject, ref: r.Name, run: id, path: "entries/" + fmt.Sprintf("%08d.json", e.Position), what: what})
	}
}

// commitsFrom lists the commits reachable from tip that walk read, in no
// particular order.
func (c *checker) commitsFrom(tip gitstore.OID) []gitstore.OID {
	var out []gitstore.OID
	seen := map[gitstore.OID]bool{tip: true}
	stack := []gitstore.OID{tip}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		cm, ok := c.commits[id]
		if !ok {
			continue
		}
		out = append(out, id)
		for _, p := range cm.Parents {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return out
}

// checkResources checks every observation of every resource chain.
func (c *checker) checkResources() {
	chains, bad, err := c.s.ResourceChains()
	if err != nil {
		c.add(Problem{Kind: CouldNotCheck, cause: err, Check: "observation", Subject: "store", Message: fmt.Sprintf("cannot list resource chains: %v", err)})
		return
	}
	for _, b := range bad {
		c.add(Problem{Kind: Broken, Check: "ref", Subject: "store", Message: b.Error()})
	}
	for _, ch := range chains {
		tip, ok := c.walked[ch.Ref]
		if !ok {
			continue // made since the refs were walked: the next check has it
		}
		ch.Tip = tip
		c.rep.Counts.Resources++
		subject := "resource " + ch.URI.String()
		seen := map[string]bool{}
		c.observed[ch.URI.Key()] = seen
		for _, id := range c.commitsFrom(ch.Tip) {
			cm := c.commits[id]
			broken := func(path, format string, args ...any) {
				c.add(Problem{Kind: Broken, Check: "observation", Subject: subject, Ref: ch.Ref, Object: string(id), Message: path + ": " + fmt.Sprintf(format, args...)})
			}
			// A merge's tree is its newest parent's (share.mergeObservations):
			// it holds what an observation holds, like every commit of the chain.
			if entries, read := c.trees[cm.Tree]; read {
				if p := store.ObservationTreeExtra(entries); p != "" {
					broken(p, "tree entry %s is not part of the observation: no reader reads it, yet `git show` and `git log -p` of the chain show it with the observation (%s); readproof did not write this commit: restore the chain from a copy that holds it as readproof wrote it", p, store.ObservationTreeRule)
				}
			}
			if len(cm.Parents) > 1 {
				continue // a merge after sync repeats its newest parent's observation
			}
			c.rep.Counts.Observations++
			data, ok := c.file(ch.Ref, cm, id, "observation.json", "observation")
			if !ok {
				continue
			}
			o, err := store.DecodeObservation(data)
			if err != nil {
				broken("observation.json", "observation does not decode: %v", err)
				continue
			}
			if o.URI != ch.URI.String() {
				broken("observation.json", "observation of %s on the chain of %s", o.URI, ch.URI)
			}
			if f, ok, known := c.lookup(cm.Tree, "content"); known && (!ok || string(f) != o.Snapshot) {
				broken("content", "content is %q, observation.json records snapshot %s", f, o.Snapshot)
			}
			if _, ok, known := c.lookup(cm.Tree, "resource.json"); known && !ok {
				broken("resource.json", "observation commit has no resource.json")
			}
			seen[o.Snapshot] = true
			c.claim(o.Snapshot, claim{hash: o.ContentHash, size: o.Bytes, subject: subject, ref: ch.Ref, path: "content", what: "observation " + short(id)})
		}
	}
}

// chainless is a resource whose entries committed runs record while the
// store holds no observation chain for it.
type chainless struct {
	uri  identity.URI
	runs []string // the runs, up to maxNamed, in the order checked
	n    int      // how many runs
	last string   // the run noted last
}

// noteChain notes that run records an entry of u, when the store's refs, as
// step 1 listed them, hold no chain for u. Every entry a run records was
// observed on its resource's chain first, and no command removes a chain:
// one missing is a deleted ref or, in a copy made by stock git, a branch
// the copy left out (git clone --single-branch).
func (c *checker) noteChain(u identity.URI, run string) {
	key := u.Key()
	if _, ok := c.walked[store.ResourcesPrefix+key]; ok {
		return
	}
	cl := c.noChain[key]
	if cl == nil {
		cl = &chainless{uri: u}
		c.noChain[key] = cl
	}
	if cl.n > 0 && cl.last == run {
		return // the run mounted it twice
	}
	cl.n, cl.last = cl.n+1, run
	if len(cl.runs) < maxNamed {
		cl.runs = append(cl.runs, run)
	}
}

// checkChainless reports the resources noteChain found without a chain. In
// a store readproof made it is a warning: a pull adopts run refs before the
// resource chains (docs/sync.md), so one stopped in between leaves this
// state, which the next pull completes; a deleted ref looks the same. In a
// copy stock git made that holds no chain at all (git clone --single-branch
// fetched main alone), the runs cannot be checked against their
// observations: could-not-check, never "ok".
func (c *checker) checkChainless() {
	if len(c.noChain) == 0 {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(c.noChain)) {
		cl := c.noChain[k]
		runs := strings.Join(cl.runs, ", ")
		if cl.n > len(cl.runs) {
			runs += fmt.Sprintf(", and %d more", cl.n-len(cl.runs))
		}
		ref := store.ResourcesPrefix + k
		p := Problem{Kind: Warning, Check: "observation", Subject: "resource " + cl.uri.String(), Ref: ref,
			Message: fmt.Sprintf("%d run%s (%s) record entries of it, but its observation chain %s is not in the store: a pull stopped before it adopted the chain leaves it so (readproof pull again completes it); otherwise the ref was deleted: restore it from a clone or a backup",
				cl.n, text.Plural(cl.n, "", "s"), runs, ref)}
		if c.copied && !c.chains {
			p.Kind = CouldNotCheck
			p.Message = fmt.Sprintf("%d run%s (%s) record entries of it, but its observation chain %s is not in this copy (git clone --single-branch, or a fetch of main alone, leaves the other branches out): clone the store with git clone --mirror URL",
				cl.n, text.Plural(cl.n, "", "s"), runs, ref)
		}
		c.add(p)
	}
}

// checkTags checks every move of every tag: it decodes, belongs to its ref,
// and names a snapshot recorded in its resource's chain.
func (c *checker) checkTags() {
	tags, bad, err := c.s.TagRefs()
	if err != nil {
		c.add(Problem{Kind: CouldNotCheck, cause: err, Check: "tag", Subject: "store", Message: fmt.Sprintf("cannot list tags: %v", err)})
		return
	}
	for _, b := range bad {
		c.add(Problem{Kind: Broken, Check: "ref", Subject: "store", Message: b.Error()})
	}
	for _, tr := range tags {
		tip, ok := c.walked[tr.Ref]
		if !ok {
			continue // made since the refs were walked: the next check has it
		}
		tr.Tip = tip
		c.rep.Counts.Tags++
		subject := "tag " + tr.URI.String() + "@" + tr.Tag
		recorded := c.observed[tr.URI.Key()]
		for _, id := range c.commitsFrom(tr.Tip) {
			c.rep.Counts.TagMoves++
			cm := c.commits[id]
			broken := func(path, format string, args ...any) {
				c.add(Problem{Kind: Broken, Check: "tag", Subject: subject, Ref: tr.Ref, Object: string(id), Message: path + ": " + fmt.Sprintf(format, args...)})
			}
			data, ok := c.file(tr.Ref, cm, id, "tag.json", "tag")
			if !ok {
				continue
			}
			t, err := store.DecodeTagState(data)
			if err != nil {
				broken("tag.json", "tag move does not decode: %v", err)
				continue
			}
			if t.URI != tr.URI.String() || t.Tag != tr.Tag {
				broken("tag.json", "move of %s@%s on the chain of %s@%s", t.URI, t.Tag, tr.URI, tr.Tag)
			}
			if entries, read := c.trees[cm.Tree]; read {
				if p := store.TagTreeExtra(entries); p != "" {
					broken(p, "tree entry %s is not part of the tag move: no reader reads it, yet `git show` and `git log -p` of the tag's branch show it with the move (%s); readproof did not write this commit: restore the chain from a copy that holds it as readproof wrote it", p, store.TagTreeRule)
				}
			}
			f, ok, known := c.lookup(cm.Tree, "content")
			if t.Deleted {
				if known && ok {
					broken("content", "a deletion carries content %s", f)
				}
				continue
			}
			if known && (!ok || string(f) != t.Snapshot) {
				broken("content", "content is %q, tag.json records snapshot %s", f, t.Snapshot)
			}
			if t.Observation != nil && t.Observation.Snapshot != t.Snapshot {
				broken("tag.json", "the observation copy names snapshot %s, the tag %s", t.Observation.Snapshot, t.Snapshot)
			}
			if t.Observation != nil && t.Observation.URI != tr.URI.String() {
				// get refuses it: the move would put that URI in a manifest
				broken("tag.json", "the observation copy is of %s, on the chain of %s@%s", t.Observation.URI, tr.URI, tr.Tag)
			}
			if !recorded[t.Snapshot] {
				broken("tag.json", "snapshot %s is not recorded in the observation chain of %s", t.Snapshot, tr.URI)
			}
			c.claim(t.Snapshot, claim{hash: t.ContentHash, size: -1, subject: subject, ref: tr.Ref, path: "content", what: "tag move " + short(id)})
		}
	}
}

// checkJournal warns about committed runs the journal does not reach: the
// runs are intact, but `git log` on a clone will not list them. reach is
// every commit reachable from the journal's tip.
func (c *checker) checkJournal(runs, journal []gitstore.Ref, reach []gitstore.OID) {
	if len(journal) == 0 {
		if len(runs) > 0 {
			c.add(Problem{Kind: Warning, Check: "journal", Subject: "journal", Ref: store.JournalRef,
				Message: "no journal: refs/heads/main is missing, so a plain clone's default branch lists no run"})
		}
		return
	}
	reached := map[gitstore.OID]bool{}
	for _, id := range reach {
		reached[id] = true
	}
	c.checkJournalShape(journal[0].OID)
	c.checkJournalView(journal[0].OID)
	c.checkJournalRecords(runs, reach)
	missed := 0
	for _, r := range runs {
		// A run or a journal whose objects are broken is reported as
		// such: the journal's reach is then unknown, and the run is not
		// "intact".
		if reached[r.OID] || c.refBad[r.Name] || c.refBad[store.JournalRef] {
			continue
		}
		missed++
		if missed <= maxNamed {
			subject, run := subjectOf(r.Name)
			c.add(Problem{Kind: Warning, Check: "journal", Subject: subject, Ref: r.Name, Run: run, Object: string(r.OID),
				Message: "the journal (refs/heads/main) does not reach this manifest (its writer stopped before recording it); the run is intact, but `git log` on a clone will not list it until `readproof gc` or `readproof run commit " + run + "` records it"})
		}
	}
	if missed > maxNamed {
		c.add(Problem{Kind: Warning, Check: "journal", Subject: "journal", Ref: store.JournalRef,
			Message: fmt.Sprintf("%d more runs are not reached by the journal; `readproof gc` records them", missed-maxNamed)})
	}
}

// checkSnapshots confirms every snapshot a record names exists, and
// re-hashes the sampled ones against every content hash recorded for them.
func (c *checker) checkSnapshots() error {
	ids := make([]gitstore.OID, 0, len(c.claims))
	for id := range c.claims {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	c.rep.Counts.Snapshots = len(ids)
	c.total += len(ids)
	for _, id := range ids {
		if err := c.cancelled(); err != nil {
			return err
		}
		c.progress()
		cls := c.claims[id]
		if c.bad[id] {
			continue
		}
		first := cls[0]
		if !c.smp.pick(id, len(ids)) {
			if _, seen := c.seen[id]; !seen {
				ok, err := c.g.Has(id)
				if err != nil || !ok {
					if err == nil {
						err = fmt.Errorf("blob %s: %w", id, gitstore.ErrNotFound)
					}
					c.objectProblem(first.ref, id, first.path, "snapshot blob named by "+first.what, err)
				}
			}
			continue
		}
		h, ok := c.hashes[id]
		if !ok {
			var err error
			if h, err = c.hashBlob(id); err != nil {
				c.objectProblem(first.ref, id, first.path, "snapshot blob named by "+first.what, err)
				continue
			}
		}
		c.rep.Counts.Rehashed++
		c.rep.Counts.RehashedBytes += h.size
		reported := 0
		for _, cl := range cls {
			var msg string
			switch {
			case cl.hash != h.hash:
				msg = fmt.Sprintf("%s records content hash %s, but the snapshot blob hashes to %s", cl.what, cl.hash, h.hash)
			case cl.size >= 0 && cl.size != h.size:
				msg = fmt.Sprintf("%s records %d bytes, but the snapshot blob has %d", cl.what, cl.size, h.size)
			default:
				continue
			}
			reported++
			if reported > 5 {
				continue
			}
			c.refBad[cl.ref] = true
			c.add(Problem{Kind: Broken, Check: "content", Subject: cl.subject, Ref: cl.ref, Run: cl.run, Object: string(id), Path: cl.path, Message: msg})
		}
		if reported > 5 {
			c.add(Problem{Kind: Broken, Check: "content", Subject: "snapshot " + string(id), Object: string(id),
				Message: fmt.Sprintf("%d more records disagree with this snapshot's content", reported-5)})
		}
	}
	return nil
}

// checkIgnored warns when a store made by readproof (it carries the marker)
// lacks its ignore file, so an enclosing work tree would pick it up.
func (c *checker) checkIgnored() {
	path := c.s.Path()
	if filepath.Base(path) == ".git" || !gitstore.IsStore(path) {
		return
	}
	ok, err := store.Ignored(path)
	if err != nil {
		c.add(Problem{Kind: CouldNotCheck, cause: err, Check: "ignore", Subject: "store", Message: fmt.Sprintf("read %s: %v", store.IgnoreFile, err)})
		return
	}
	if !ok {
		c.add(Problem{Kind: Warning, Check: "ignore", Subject: "store",
			Message: fmt.Sprintf("%s has no %s with the line `*`, so a git work tree around it can pick the store up: run `readproof init` to add it", path, store.IgnoreFile)})
	}
	// A store committed into the project before it had the file stays
	// tracked: the ignore file does not untrack it.
	if top, files := gitstore.TrackedByWorkTree(c.ctx, path); len(files) > 0 {
		rel, err := filepath.Rel(top, path)
		if err != nil {
			rel = path
		}
		c.add(Problem{Kind: Warning, Check: "ignore", Subject: "store",
			Message: fmt.Sprintf("the git repository %s tracks %s of the store (%s…), committed before the store ignored itself: every run changes them; run `git rm -r --cached -- %s` there and commit", top, text.Count(len(files), "file", "files"), files[0], rel)})
	}
}

// checkJournalRecords checks that every run the journal records still has
// its run ref: a "record run ID" commit names manifest M (its second
// parent), so refs/tags/readproof/runs/ID must name M, or the journal must
// record a rename of M from ID to a run whose ref names M, or a same-id
// conflict ref (refs/tags/readproof/conflicts/runs/ID/M) must hold it. A run
// ref deleted while the journal still records the run is broken.
func (c *checker) checkJournalRecords(runs []gitstore.Ref, reach []gitstore.OID) {
	byRun := map[string]gitstore.OID{}
	byManifest := map[gitstore.OID][]string{}
	for _, r := range runs {
		id := strings.TrimPrefix(r.Name, store.RunsPrefix)
		byRun[id] = r.OID
		byManifest[r.OID] = append(byManifest[r.OID], id)
	}
	ids := slices.Clone(reach)
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	reported := map[string]bool{}
	for _, jid := range ids {
		cm := c.commits[jid]
		head, _, _ := strings.Cut(cm.Message, "\n")
		runID, ok := strings.CutPrefix(head, "record run ")
		if !ok || len(cm.Parents) != 2 || identity.ValidateRunID(runID) != nil {
			continue
		}
		m := cm.Parents[1]
		if byRun[runID] == m {
			continue
		}
		moved := false
		for _, other := range byManifest[m] {
			if c.renamed(m, runID, other) {
				moved = true
				break
			}
		}
		if moved {
			continue
		}
		if id, err := c.g.Ref(store.ConflictRunRef(runID, m)); err == nil && id == m {
			continue
		}
		if reported[runID+" "+string(m)] {
			continue
		}
		reported[runID+" "+string(m)] = true
		msg := fmt.Sprintf("the journal records run %s (manifest %s, journal commit %s) but %s%s is missing: the run ref was deleted; restore it with `git update-ref %s%s %s` or from a clone",
			runID, m, short(jid), store.RunsPrefix, runID, store.RunsPrefix, runID, m)
		kind := Broken
		if cur, ok := byRun[runID]; ok {
			msg = fmt.Sprintf("the journal records run %s as manifest %s (journal commit %s) but %s%s names %s and no rename is recorded",
				runID, m, short(jid), store.RunsPrefix, runID, cur)
		} else if c.copied && len(runs) == 0 {
			// a copy stock git made without the run tags
			kind, msg = CouldNotCheck, fmt.Sprintf("the journal records run %s (manifest %s, journal commit %s) but this copy has no %s%s (git clone --no-tags, or a fetch of branches alone, leaves the run tags out): clone the store with git clone --mirror URL",
				runID, m, short(jid), store.RunsPrefix, runID)
		}
		c.add(Problem{Kind: kind, Check: "journal", Subject: "run " + runID, Ref: store.RunsPrefix + runID, Run: runID, Object: string(m), Message: msg})
	}
}

// checkRaw (--read-data) checks git's own checksums: every loose object
// read by walk decompresses whole with a matching Adler-32 and hashes to its
// name, and every pack and index matches its trailing SHA-1.
func (c *checker) checkRaw() error {
	ids := make([]gitstore.OID, 0, len(c.seen))
	for id := range c.seen {
		if !c.bad[id] {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if err := c.cancelled(); err != nil {
			return err
		}
		if err := c.s.CheckLooseObject(id); err != nil {
			p := Problem{Kind: Broken, Check: "object", Subject: "object " + short(id), Object: string(id),
				Message: fmt.Sprintf("%v; restore the object from a clone (readproof pull) or a backup", err)}
			if !errors.Is(err, gitstore.ErrCorrupt) {
				p.Kind, p.Message, p.cause = CouldNotCheck, fmt.Sprintf("cannot read loose object %s: %v", id, err), err
			}
			c.bad[id] = true
			c.add(p)
		}
	}
	bad, err := c.s.CheckPacks()
	for _, b := range bad {
		c.add(Problem{Kind: Broken, Check: "object", Subject: "store", Message: b.Error()})
	}
	if err != nil {
		c.add(Problem{Kind: CouldNotCheck, cause: err, Check: "object", Subject: "store", Message: fmt.Sprintf("cannot read packs: %v", err)})
	}
	return nil
}
