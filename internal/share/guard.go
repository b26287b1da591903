package share

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
)

// StoreMarker is the trailer on the journal's root commit of stores created
// by this version (docs/store-format.md, "Recognising a store").
const StoreMarker = "Readproof-Store: 1"

// journalCheckPrefix starts the first line of a journal commit that records
// a proof-of-read check (store.ParseJournalCheck).
const journalCheckPrefix = "record check "

// sharedNamespace reports whether a ref on a remote may belong to a
// readproof store: the journal, the shared namespaces, and the local-only
// namespaces a `git push --mirror` of a store carries.
func sharedNamespace(name string) bool {
	return name == store.JournalRef ||
		strings.HasPrefix(name, "refs/heads/readproof/") ||
		strings.HasPrefix(name, "refs/tags/readproof/") ||
		strings.HasPrefix(name, RemotesPrefix) ||
		strings.HasPrefix(name, "refs/readproof-conflicts/") ||
		hostReviewRef(name)
}

// hostReviewRef reports whether a ref is one a git host keeps for the pull
// requests opened against a store's branches (GitHub and Gitea
// refs/pull/N/head, GitLab refs/merge-requests/N/head): listed by the
// host, never fetched, never read as records.
func hostReviewRef(name string) bool {
	return strings.HasPrefix(name, "refs/pull/") || strings.HasPrefix(name, "refs/merge-requests/")
}

// recognize lists every ref of remote and refuses a repository that is not
// a readproof store (ErrNotStore), before anything is fetched into the
// local store or written to the remote:
//   - no refs at all: an empty repository, fine to push to;
//   - a ref outside readproof's namespaces (a project's branch or tag): not
//     a store;
//   - main: its tip must be a journal commit (one of the journal's
//     messages with its parent count). When the tip is not in the local store and the
//     remote holds nothing else of readproof's, the tip alone is fetched
//     into a temporary repository to look at it.
//
// It returns the remote's shared refs and the ref its HEAD names (the same
// listing; "" when none). what names the operation in errors ("pull
// origin"). url is the URL git fetches from for remote (RemoteFetchURL),
// or "" when not known yet: it is asked for only when the journal's tip
// has to be probed.
//
// eager (a clone into an empty store, where any main is new) reads main
// alone while the refs are listed, when url is known: the read goes to its
// own scratch repository, so nothing reaches the store whatever the listing
// then says; a failed early read is made again after the listing, as
// without eager.
//
// whole, when not "", is the remote's URL for a caller that needs no
// empty remote's unborn HEAD (a clone, a pull): the refs are listed with
// LsRemoteWhole, in protocol v0 from a git:// URL. listed, when not nil, is
// called with the shared refs once the listing has passed and main is new
// to the store, before its tip is read: a clone starts its fetch into its
// staging directory then (cloneEarlyFetch), and stops it when recognize
// refuses.
func recognize(ctx context.Context, g gitstore.Store, t *gitstore.Transport, remote, url, what string, eager bool, whole string, listed func([]gitstore.Ref)) ([]gitstore.Ref, string, error) {
	var early func() ([]byte, error)
	if eager && url != "" {
		pctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		var raw []byte
		var perr error
		go func() {
			defer close(done)
			raw, perr = t.ProbeCommitAt(pctx, url, store.JournalRef)
		}()
		// the probe ends (its scratch repository removed) before recognize
		// returns
		defer func() { cancel(); <-done }()
		early = func() ([]byte, error) { <-done; return raw, perr }
	}
	var all []gitstore.Ref
	var head string
	var err error
	if whole != "" {
		all, head, err = t.LsRemoteWhole(ctx, remote, whole)
	} else {
		all, head, err = t.LsRemoteHead(ctx, remote)
	}
	if err != nil {
		return nil, "", unreachable(ctx, g, t, remote, what, err)
	}
	var foreign []string
	var main gitstore.OID
	// nearly all of them, kept in all's own array (the listing made it for
	// this call): at 10^6 runs a copy was 32 MB
	shared := all[:0]
	for _, r := range all {
		switch {
		case r.Name == store.JournalRef:
			main = r.OID
		case !sharedNamespace(r.Name):
			foreign = append(foreign, r.Name)
			continue
		}
		if strings.HasPrefix(r.Name, "refs/heads/") || strings.HasPrefix(r.Name, "refs/tags/readproof/") {
			shared = append(shared, r)
		}
	}
	if len(foreign) > 0 {
		if replaceOnly(foreign) {
			return nil, "", replacedRemote(what, foreign)
		}
		return nil, "", notStore(remote, what, fmt.Sprintf("it has refs outside readproof's namespaces: %s", summarize(foreign, 3)))
	}
	if main == "" {
		return shared, head, nil
	}
	var why error
	if ok, err := g.Has(main); err != nil {
		return nil, "", err
	} else if ok {
		// as the probe reads it: the size first, unread
		if why = gitstore.CheckObjectSize(g, main, gitstore.MaxProbeCommitBytes); why == nil {
			if c, err := g.Commit(main); err != nil {
				why = err
			} else {
				why = journalShape(c)
			}
		}
	} else {
		// main is new to this store: read that one commit alone (into a
		// scratch repository) before fetching anything into the store, even
		// when readproof refs sit beside it, so a project's history never
		// reaches the store.
		if listed != nil {
			listed(shared)
		}
		var raw []byte
		if early != nil {
			raw, err = early()
		}
		if early == nil || err != nil {
			if url == "" {
				if url, err = t.RemoteFetchURL(ctx, remote); err != nil {
					return nil, "", unreachable(ctx, g, t, remote, what, err)
				}
			}
			raw, err = t.ProbeCommitAt(ctx, url, store.JournalRef)
		}
		switch {
		case errors.Is(err, gitstore.ErrNotCommit) || errors.Is(err, gitstore.ErrTooLarge):
			why = err // read, and not a journal commit
		case err != nil:
			return nil, "", unreachable(ctx, g, t, remote, what, err)
		default:
			why = journalShape(parseRawCommit(raw))
		}
	}
	if why != nil {
		return nil, "", notStore(remote, what, fmt.Sprintf("its main (%s) is not a readproof journal: %v", main, why))
	}
	return shared, head, nil
}

// unreachable is err of operation what ("pull origin") on remote, with
// the hint to check that git reaches it, or, when the remote's URL has a
// scheme that is probably a typo (remoteSchemeHint), to replace it.
func unreachable(ctx context.Context, g gitstore.Store, t *gitstore.Transport, remote, what string, err error) error {
	otherwise := "check the remote's URL (`readproof remote list`) and that git can reach it: git --git-dir " + text.ShellArg(g.Path()) + " ls-remote " + text.ShellArg(remote)
	// a clone's caller gives its own hint, naming the URL given
	if !strings.HasPrefix(what, "clone ") {
		if url, uerr := t.RemoteURL(ctx, remote); uerr == nil {
			if h := remoteSchemeHint(url, remote); h != "" {
				otherwise = h
			}
		}
	}
	return hint.With(fmt.Errorf("%s: %w", what, err), transportHint(err, otherwise))
}

// transportHint is the hint for a failure to list or fetch a remote: the
// remote is damaged (damagedMessage), it wants credentials git does not
// have (authMessage), or else otherwise, which names the URL to try.
func transportHint(err error, otherwise string) string {
	switch {
	case errors.Is(err, gitstore.ErrUnreadableRepoFile):
		return hint.Of(err) // not git ls-remote: it would block on the file
	case errors.Is(err, gitstore.ErrFetchTooLarge):
		return hint.Of(err) // the remote is reached; it sends too much
	case damagedMessage(err.Error()):
		return damagedHint
	case authMessage(err.Error()):
		return authHint
	}
	if dir, ok := dubiousOwner(err.Error()); ok {
		return "git refuses to read " + text.Escape(dir) + ": another user owns it (git's safe.directory rule); run readproof as its owner, or if you trust the repository: `git config --global --add safe.directory " + text.ShellArg(dir) + "`; nothing was changed here or there"
	}
	return otherwise
}

// dubiousOwner returns the repository git named when it refused one that
// another user owns ("detected dubious ownership in repository at 'DIR'").
func dubiousOwner(s string) (string, bool) {
	_, rest, ok := strings.Cut(s, "detected dubious ownership in repository at '")
	if !ok {
		return "", false
	}
	if dir, _, ok := strings.Cut(rest, "';"); ok {
		return dir, true
	}
	return strings.TrimSuffix(rest, "'"), true
}

// authMessage: git's words when an HTTP server asks for credentials and
// git has none, or none the server takes.
func authMessage(s string) bool {
	for _, p := range []string{"Authentication failed", "could not read Username", "could not read Password", "The requested URL returned error: 401", "The requested URL returned error: 403"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

const authHint = "the remote is reachable but refused git's credentials (or git had none to give): give git the right ones through its credential helper (git config --global credential.helper NAME; `git credential fill` shows what it gives), or use an ssh URL; readproof never stores a credential, and nothing was changed here or there"

// damagedMessage: git's words for a remote whose refs name objects it does
// not hold (a disk fault, a file removed under objects/, a broken backup):
// its receive-pack refuses a push on top of them, its upload-pack will not
// send them. The remote is reachable; checking the network does not help.
func damagedMessage(s string) bool {
	for _, p := range []string{"missing necessary objects", "not our ref", "bad object", "did not send all necessary objects"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

const damagedHint = "the remote is reachable but damaged: its refs name objects it does not hold (`git fsck` in the remote repository lists them); nothing was changed here or there. Ask its owner to restore them from a backup, or seed a new remote from a store that holds every run (readproof verify; readproof remote init PATH; readproof push to it)"

// replaceOnly reports whether every ref of refs is a git replace ref.
func replaceOnly(refs []string) bool {
	for _, r := range refs {
		if !strings.HasPrefix(r, "refs/replace/") {
			return false
		}
	}
	return true
}

// replacedRemote refuses a store's remote that carries refs/replace/: stock
// git on a copy would read other objects than readproof checks. It is a
// store otherwise, so the hint says how to remove them rather than to look
// for another remote.
func replacedRemote(what string, refs []string) error {
	which := summarize(refs, 3)
	them, does := "it", "makes stock git read another object in place of that one"
	if len(refs) > 1 {
		them, does = "them", "make stock git read other objects in place of those"
	}
	verb, _, _ := strings.Cut(what, " ")
	kept, again := "nothing was fetched or sent", verb+" again"
	if verb == "clone" {
		kept = "nothing of it was kept"
	}
	err := fmt.Errorf("%s: %w: it has %s, which %s (readproof never does); %s", what, ErrNotStore, which, does, kept)
	return hint.With(err, "remove "+them+" on the remote (git --git-dir REMOTE update-ref -d refs/replace/ID, or git push REMOTE :refs/replace/ID), then "+again+"; `readproof --store REMOTE verify` names every one")
}

func notStore(remote, what, why string) error {
	if strings.HasPrefix(what, "clone ") {
		// A clone from git:// may have begun its fetch into the staging
		// directory while main was read (cloneEarlyFetch): what it
		// received goes with that directory.
		err := fmt.Errorf("%s: %w: %s; nothing of it was kept", what, ErrNotStore, why)
		return hint.With(err, "clone a readproof store's remote (one made by `readproof remote init PATH` and pushed to), not a project's repository")
	}
	err := fmt.Errorf("%s: %w: %s; nothing was fetched or sent", what, ErrNotStore, why)
	return hint.With(err, "point the remote at a readproof store: a new one from `readproof remote init PATH`, an empty bare repository, or a clone of a store (`readproof remote rm "+remote+"`, then `readproof remote add "+remote+" URL`)")
}

// parseRawCommit reads the tree, the parents and the message of a commit
// in git's raw form (the rest is not needed to judge its shape).
func parseRawCommit(raw []byte) gitstore.Commit {
	var c gitstore.Commit
	head, msg, _ := strings.Cut(string(raw), "\n\n")
	c.Message = msg
	for _, l := range strings.Split(head, "\n") {
		if id, ok := strings.CutPrefix(l, "tree "); ok {
			c.Tree = gitstore.OID(id)
		} else if id, ok := strings.CutPrefix(l, "parent "); ok {
			c.Parents = append(c.Parents, gitstore.OID(id))
		}
	}
	return c
}

// journalShape says why c is not a journal commit (store.IsJournalCommit:
// one of the journal's forms with its parent count, docs/store-format.md),
// or nil when it is one. Its tree is checked by checkJournal, which has the
// objects (store.ViewShape, store.ExpectedJournalTree).
func journalShape(c gitstore.Commit) error {
	if !store.IsJournalCommit(c) && c.Tree != store.EmptyTree {
		// A project's commit, as a rule: name its files first.
		return fmt.Errorf("its tree is not empty")
	}
	if !store.IsJournalCommit(c) {
		first, _, _ := strings.Cut(c.Message, "\n")
		return fmt.Errorf("%q with %d parents is not a journal record", text.Shorten(first, 60), len(c.Parents))
	}
	return nil
}

// warnHead returns a warning when the remote holds main (hasMain) but its
// HEAD names another branch, or one the remote lacks: a plain `git clone`
// of it would then not check out the journal. git lists HEAD only when it
// names an existing ref, so "no HEAD listed" counts as another branch.
// listed is what HEAD named in the listing made before the push: a ref
// there needs no second question (a push moves no HEAD and deletes no
// branch), nor does anything when nothing was pushed (the listing is the
// remote as it is). Only "none listed" after a push that created a ref
// (pushed: a refspec named a ref the listing lacked) is asked again: HEAD may
// name a branch that only the push created (main, on the first push to an
// empty repository), and the listing cannot say which branch an unborn
// HEAD names (git ls-remote prints no unborn HEAD). A push that only moved
// refs the listing had left an unborn HEAD unborn: its answer would be the
// listing's. A detached HEAD is listed as none too, and asked again.
func warnHead(ctx context.Context, t *gitstore.Transport, remote string, hasMain bool, listed string, pushed bool) []string {
	if !hasMain || listed == store.JournalRef {
		return []string{}
	}
	head := listed
	if pushed && listed == "" {
		var err error
		if head, err = t.RemoteHead(ctx, remote); err != nil || head == store.JournalRef {
			return []string{}
		}
	}
	what := "a branch it does not have"
	if head != "" {
		what = head
	}
	return []string{fmt.Sprintf("%s's HEAD names %s, not %s: a plain `git clone` of it will not check out the journal; on the server run: git symbolic-ref HEAD %s",
		remote, what, store.JournalRef, store.JournalRef)}
}

// checkJournal checks the commits new on a journal (commits: every commit
// reachable from tip and not from the local main). It walks from tip along
// the journal's own edges, within the new commits: each is a journal
// commit (journalShape); a `record run` commit's last parent is a manifest
// (added to manifests, for the manifest check); a `record check` commit's
// second parent is a verdict record of that run. Commits the journal merely
// points at (manifests, verdict chains) are not journal commits. It also
// returns what the new `record run` commits record (run id and manifest).
// A verdict record reads holds as decoded for its run is not read again.
func checkJournal(g gitstore.Store, tip gitstore.OID, commits []gitstore.RevListCommit, manifests map[gitstore.OID]bool, verified verifiedSet, reads decodedVerdicts) (failures []string, records []RunRef) {
	isNew := make(map[gitstore.OID]bool, len(commits))
	for _, c := range commits {
		isNew[c.ID] = true
	}
	return checkJournalWhere(g, tip, func(id gitstore.OID) bool { return isNew[id] }, manifests, verified, reads, nil)
}

// journalVerdict is a verdict record a journal's `record check` commit
// names (journal), of run.
type journalVerdict struct {
	journal, verdict gitstore.OID
	run              string
}

// checkJournalWhere is checkJournal with the new commits given as a
// predicate: a clone, whose store has no journal yet, passes one that holds
// for every commit (everything reachable from tip is new), which is what
// checkJournal does with the whole `git rev-list` of tip, without listing it.
// A verdict record a `record check` commit names is taken as read when
// reads holds it for that run; deferred, when not nil, receives each other
// one unread (a clone decodes the chains after the journal, and checks
// after them what they did not decode: journalVerdictFailure), the walk
// going on as though it passed.
func checkJournalWhere(g gitstore.Store, tip gitstore.OID, isNew func(gitstore.OID) bool, manifests map[gitstore.OID]bool, verified verifiedSet, reads decodedVerdicts, deferred *[]journalVerdict) (failures []string, records []RunRef) {
	fail := func(id gitstore.OID, format string, args ...any) {
		failures = append(failures, fmt.Sprintf("journal commit %s: %s", id, fmt.Sprintf(format, args...)))
	}
	isManifest := func(id gitstore.OID) bool {
		if manifests[id] {
			return true
		}
		cm, err := g.Commit(id)
		if err != nil || len(cm.Parents) != 0 {
			return false
		}
		_, err = gitstore.FileAt(g, cm.Tree, "manifest.json")
		return err == nil
	}
	views := store.CachingReader(g)
	viewTrees := map[gitstore.OID]gitstore.OID{}
	walked := map[gitstore.OID][]gitstore.OID{}
	seen := map[gitstore.OID]bool{tip: true}
	stack := []gitstore.OID{tip}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !isNew(id) {
			continue // known: reachable from the local journal
		}
		cm, err := commitFields(g, id) // tree, parents and message are all this reads
		if err != nil {
			fail(id, "%v", err)
			continue
		}
		if err := journalShape(cm); err != nil {
			fail(id, "%v", err)
			continue
		}
		if err := store.ViewShape(g, cm.Tree); err != nil {
			fail(id, "%v", err)
			continue
		}
		if cm.Tree != store.EmptyTree {
			// The view is derived data: it must be the one this store
			// computes from the runs the journal records. Checked below,
			// parents first, so the views' document index (kept in views)
			// moves forward from one commit to the next.
			viewTrees[id] = cm.Tree
		}
		parents := cm.Parents
		switch first, _, _ := strings.Cut(cm.Message, "\n"); {
		case strings.HasPrefix(first, "record run "):
			m := parents[len(parents)-1]
			parents = parents[:len(parents)-1]
			if !isManifest(m) {
				fail(id, "it records %s, which is not a manifest", m)
				continue
			}
			manifests[m] = true
			records = append(records, RunRef{RunID: strings.TrimPrefix(first, "record run "), Manifest: string(m)})
		case strings.HasPrefix(first, journalCheckPrefix):
			run, _, ok := store.ParseJournalCheck(cm)
			if !ok {
				fail(id, "%q is not a check record", text.Shorten(first, 60))
				continue
			}
			v := parents[1]
			parents = parents[:1]
			if reads.decoded(run, v) {
				// read by the chain check
			} else if deferred != nil {
				*deferred = append(*deferred, journalVerdict{journal: id, verdict: v, run: run})
			} else if why := journalVerdictFailure(g, journalVerdict{journal: id, verdict: v, run: run}, verified); why != "" {
				failures = append(failures, why)
				continue
			}
		}
		walked[id] = parents
		for _, p := range parents {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	for _, id := range parentsFirst(tip, walked) {
		tree, ok := viewTrees[id]
		if !ok {
			continue
		}
		want, err := store.ExpectedJournalTree(views, id)
		if err != nil {
			fail(id, "cannot compute its document view: %v", err)
		} else if want != tree {
			fail(id, "its tree %s is not the document view of the runs it records (%s)", tree, want)
		}
	}
	return failures, records
}

// journalVerdictFailure says why jv's verdict record is not one of its
// run ("" when it is), reading it unless verified holds it.
func journalVerdictFailure(g gitstore.Store, jv journalVerdict, verified verifiedSet) string {
	if err := verified.check("verdict", jv.verdict, func() error { _, _, err := verdictsAt(g, jv.run, jv.verdict); return err }); err != nil {
		return fmt.Sprintf("journal commit %s: it records %s, which is not a verdict record of run %s: %v", jv.journal, jv.verdict, jv.run, err)
	}
	return ""
}

// parentsFirst orders the commits of walked (each with its journal parents)
// reachable from tip so that every commit comes after its parents.
func parentsFirst(tip gitstore.OID, walked map[gitstore.OID][]gitstore.OID) []gitstore.OID {
	type frame struct {
		id   gitstore.OID
		next int
	}
	var order []gitstore.OID
	if _, ok := walked[tip]; !ok {
		return nil
	}
	entered := map[gitstore.OID]bool{tip: true}
	stack := []frame{{id: tip}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if ps := walked[f.id]; f.next < len(ps) {
			p := ps[f.next]
			f.next++
			if _, ok := walked[p]; ok && !entered[p] {
				entered[p] = true
				stack = append(stack, frame{id: p})
			}
			continue
		}
		order = append(order, f.id)
		stack = stack[:len(stack)-1]
	}
	return order
}

// journalOrphans returns a failure for each journal record (run id,
// manifest) whose run id no run ref has and whose manifest no run ref names
// (runs, named: the refs as they would be after the pull or clone): the
// remote deleted the run's ref, and `verify` would call the store broken
// ("the run ref was deleted").
func journalOrphans(records []RunRef, runs func(id string) (gitstore.OID, bool), named func(gitstore.OID) bool) []string {
	var out []string
	for _, r := range records {
		if _, ok := runs(r.RunID); ok || named(gitstore.OID(r.Manifest)) || identity.ValidateRunID(r.RunID) != nil {
			continue
		}
		out = append(out, fmt.Sprintf("the journal records run %s (manifest %s), but no run ref names that manifest: the remote lacks %s%s", r.RunID, r.Manifest, store.RunsPrefix, r.RunID))
	}
	return out
}

// journalConflicts returns the journal records (run id, manifest) whose run
// id names another manifest in runs while no run ref names the manifest:
// the other side of a same-id conflict, which reaches a store with the
// journal (conflict refs are never shared). Each is kept as a local
// conflict ref, unless known already.
func journalConflicts(records []RunRef, runs func(id string) (gitstore.OID, bool), named func(gitstore.OID) bool, known map[string]map[gitstore.OID]bool) []RunRef {
	var out []RunRef
	seen := map[RunRef]bool{}
	for _, r := range records {
		m := gitstore.OID(r.Manifest)
		cur, ok := runs(r.RunID)
		if !ok || cur == m || named(m) || known[r.RunID][m] || seen[r] || identity.ValidateRunID(r.RunID) != nil {
			continue
		}
		seen[r] = true
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunID+out[i].Manifest < out[j].RunID+out[j].Manifest })
	return out
}
