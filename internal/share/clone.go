package share

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
)

// Clone creates a store at dir from the repository at url (a path to a
// repository, file://, git://, ssh:// or http(s)://), with the remote
// "origin", and verifies everything it brought: every manifest entry by
// entry, every resource and tag tip, every receipt and verdict chain.
//
// The store is made in a staging directory beside dir
// (gitstore.InitStaged: .NAME.clone, locked while in use) and renamed to
// dir only once verification has passed and everything in it is durable:
// nothing is readable as a store at dir until then, and a process killed
// at any point leaves dir as it was (missing, or the empty directory
// given) or the whole verified store. On any failure, a refusal included,
// the staging directory is removed; one a killed clone left is removed by
// the next clone into dir. A new store has nothing to protect, so the
// fetch writes the shared refs and origin's tracking refs directly.
func Clone(ctx context.Context, url, dir string, opts Options) (res *PullResult, err error) {
	if err := gitstore.CheckURLPassword("origin", url); err != nil {
		// before anything is made: the URL would be kept in the config
		return nil, fmt.Errorf("clone %s: %w", gitstore.RedactURL(url), err)
	}
	if gitstore.IsStore(dir) {
		return nil, hint.With(fmt.Errorf("clone into %s: %w", dir, gitstore.ErrExists), "pull into it instead: readproof --store "+dir+" pull")
	}
	st, err := gitstore.InitStaged(dir, gitstore.Options{StaleLockAge: opts.StaleLockAge})
	switch {
	case errors.Is(err, gitstore.ErrExists):
		return nil, hint.With(fmt.Errorf("clone into %s: %w", dir, err), "pull into it instead: readproof --store "+dir+" pull")
	case errors.Is(err, gitstore.ErrStagingBusy):
		return nil, hint.With(fmt.Errorf("clone into %s: %w", dir, err),
			"wait for that clone to finish, then pull into the store it makes; if no clone is running, a killed clone's staging directory is removed by a clone run once it is older than the stale-lock age (10 s, READPROOF_STALE_LOCK_AGE); on a file system without flock it stays (on Windows, 12 hours): remove "+gitstore.StagingDir(dir)+" by hand")
	case errors.Is(err, gitstore.ErrStagingInTheWay):
		return nil, hint.With(fmt.Errorf("clone into %s: %w", dir, err), "move it away or remove it, then clone again")
	case err != nil && hint.Of(err) != "":
		// dir cannot become a store (a file, a directory of other files)
		return nil, fmt.Errorf("clone into %s: %w", dir, err)
	case err != nil:
		return nil, hint.With(fmt.Errorf("clone into %s: %w", dir, err),
			"nothing was made at "+dir+": check that its parent directory is writable and its file system has free space (df shows it), then clone again")
	}
	g := st.Store
	defer func() {
		if err != nil {
			st.Discard()
		}
	}()
	// A write that hit a full disk or the file size limit at any step (the
	// objects, origin's config, the refs) is the new store's, which is
	// discarded: its hint says so, not that of a write to a store kept
	// ("nothing was recorded ..., then retry").
	defer func() {
		if err != nil && !errors.Is(err, gitstore.ErrPublishedUnsynced) && gitstore.WriteLimitRemedy(err, "") != "" {
			err = hint.With(err, copyFailedHint(err, gitstore.RedactURL(url)))
		}
	}()
	t, err := opts.transport(g)
	if err != nil {
		return nil, err
	}
	shown := gitstore.RedactURL(url)
	// A repository on this machine has its objects copied, not served
	// (CopyLocalObjects: checked as a fetch checks them, no foreign index
	// trusted). The copy of a source marked a store starts now, before
	// origin is configured and while the refs are listed and recognized,
	// into the staging directory no reader sees: a refusal stops it (its
	// git killed and waited for) and the staging directory goes with
	// everything in it. Git's progress meter of the copy is held until the
	// source is recognized: a refused clone shows none of it. Any other
	// source (a project's repository) is copied only once recognized: a
	// clone killed while it is refused leaves nothing of it beside dir.
	local := absLocal(url)
	early := gitstore.IsLocalStore(local)
	ct, meter := t, (*heldWriter)(nil)
	if early {
		// its own transport: t is configured meanwhile (AddRemoteURL)
		topts := gitstore.TransportOptions{Interactive: opts.Interactive, MaxFetchBytes: opts.MaxFetchBytes}
		if opts.Progress != nil {
			meter = &heldWriter{w: opts.Progress}
			topts.Progress = meter
		}
		if ct, err = gitstore.NewTransport(g.Path(), topts); err != nil {
			return nil, err
		}
	}
	type copyResult struct {
		copied bool
		err    error
	}
	copyDone := make(chan copyResult, 1)
	// the objects the copy's index hashed, which the precheck reads
	// instead of inflating them again from the source
	var kept *gitstore.CopiedObjects
	copying, stopCopy := false, context.CancelFunc(func() {})
	defer func() { stopCopy() }()
	startCopy := func(from string) {
		var copyCtx context.Context
		copyCtx, stopCopy = context.WithCancel(ctx)
		copying = true
		kept = gitstore.NewCopiedObjects()
		k := kept
		go func() {
			copied, err := ct.CopyLocalObjectsKeeping(copyCtx, from, k)
			copyDone <- copyResult{copied, err}
		}()
	}
	stopAndWait := func() {
		if copying {
			stopCopy()
			<-copyDone
			copying = false
		}
	}
	if early {
		startCopy(local)
	}
	fetchURL, err := t.AddRemoteURL(ctx, "origin", local, fetchRefspecs("origin"))
	if err == nil && early && fetchURL != local {
		// Git's config rewrites origin's URL (url.*.insteadOf: git
		// resolves it when it fetches): what the copy took is not what
		// origin names. It is stopped and removed, and the clone goes on
		// from origin as git resolves it.
		stopAndWait()
		if meter != nil {
			meter.drop()
		}
		if err = st.DropObjects(); err == nil {
			if early = gitstore.IsLocalStore(fetchURL); early {
				startCopy(fetchURL)
			}
		}
	}
	if err != nil {
		stopAndWait()
		return nil, fmt.Errorf("clone %s: %w", shown, err)
	}
	// The store is empty: any main is new, so it is read alone while the
	// refs are listed; from a remote whose listing marks it a store, the
	// fetch starts while that read goes on (cloneEarlyFetch).
	// Git may ask for credentials on the terminal (Interactive) over
	// http(s) and ssh: there, one git talks to the remote at a time, so
	// two never prompt at once.
	alone := opts.Interactive && networkURL(fetchURL) && !gitstore.IsGitProtocolURL(fetchURL)
	ef := cloneEarlyFetch{}
	defer ef.stop()
	var listed func([]gitstore.Ref)
	// Only from git://: over http(s) a fetch killed on a refusal leaves
	// its git-remote-http (not its child, which Pdeathsig and the kill
	// reach) downloading the project's history, and Wait holding the
	// refusal until WaitDelay; there the fetch waits for main, as before.
	if !early && gitstore.IsGitProtocolURL(fetchURL) {
		listed = func(shared []gitstore.Ref) { ef.start(ctx, g, t, shared) }
	}
	refs, _, err := recognize(ctx, g, t, "origin", fetchURL, "clone "+shown, !alone, fetchURL, listed)
	if err != nil {
		ef.stop()
		stopAndWait()
		if !errors.Is(err, ErrNotStore) {
			// recognize's hint names the store being made, which a failed
			// clone removes again.
			err = hint.With(err, transportHint(err, cloneURLHint(url, dir)))
		}
		return nil, err
	}
	if meter != nil {
		meter.release()
	}
	if !early {
		startCopy(fetchURL)
	}
	// While git indexes the copy, the runs are checked by reading the same
	// objects, by id, from the source (precheckClone); verifyClone then
	// takes what passed there and checks again, on the copy, anything that
	// did not. Tips the copy lacks (a source gc'd or written meanwhile)
	// are fetched below.
	planned := cloneRefs(refs)
	pre := make(chan *cloneChecks, 1)
	if src, ok := gitstore.OpenLocalSourceWith(fetchURL, kept); ok {
		go func() {
			defer src.Close()
			// Once the copy is indexed: in Go (the common case, about 20
			// ms at 2,000 runs) the precheck then reads the commits, trees
			// and manifests the index hashed instead of inflating them
			// from the source again; left to git, it reads the source
			// while git indexes.
			<-kept.Indexed()
			pre <- precheckClone(src, planned, opts)
		}()
	} else {
		pre <- nil
	}
	cr := <-copyDone
	copied, err := cr.copied, cr.err
	if err != nil {
		<-pre
		return nil, hint.With(fmt.Errorf("clone %s: %w", shown, err), copyFailedHint(err, shown))
	}
	// The objects first, with no ref written; then every ref in one
	// packed-refs file (the store has none yet): one write instead of a
	// loose ref file per ref for git fetch and again for pack-refs, synced
	// by Publish with everything else in the staging directory. The refs
	// are the ones the remote listed and recognize accepted; a remote that
	// moved in between is listed again.
	var newRefs []gitstore.Ref
	for attempt := 0; ; attempt++ {
		newRefs = planned
		if attempt > 0 {
			newRefs = cloneRefs(refs)
		}
		var err error
		switch {
		case copied && attempt == 0:
			err = fetchMissing(ctx, g, t, "origin", refs)
		case ef.started() && attempt == 0:
			err = ef.wait()
		default:
			err = fetchTips(ctx, g, t, "origin", refs)
		}
		if err == nil {
			break
		}
		if errors.Is(err, gitstore.ErrFetchTooLarge) {
			// listing again would not make the remote send less
			<-pre
			return nil, fmt.Errorf("clone %s: %w", shown, err)
		}
		again, _, lerr := recognize(ctx, g, t, "origin", fetchURL, "clone "+shown, false, fetchURL, nil)
		if attempt >= 2 || lerr != nil || slices.Equal(again, refs) {
			<-pre
			return nil, hint.With(fmt.Errorf("clone %s: %w", shown, err), transportHint(err, cloneURLHint(url, dir)))
		}
		refs = again
	}
	if err := st.WriteNewRefs(newRefs); err != nil {
		<-pre
		return nil, fmt.Errorf("clone %s: %w", shown, err)
	}
	if res, err = verifyClone(ctx, g, t, opts, <-pre); err != nil {
		return nil, nameRemote(err, "clone "+shown)
	}
	// An interruption (Ctrl-C cancels ctx) while the runs were verified
	// stops the clone here: nothing is published, the staging directory
	// goes (the deferred Discard).
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("clone %s: %w", shown, err)
	}
	// No pack-refs pass: every fetched ref is packed already; the few refs
	// verification may add (journal records, conflicts) stay loose.
	if err := st.Publish(); err != nil {
		err = fmt.Errorf("clone into %s: %w", dir, err)
		switch {
		case errors.Is(err, gitstore.ErrPublishedUnsynced):
			// only the sync of dir's parent failed: Discard leaves the store
			// in place, so the hint says it is there and what to run, and
			// not "run the command again" (a clone into it is refused)
			verify := "readproof --store " + text.ShellArg(dir) + " verify"
			if oh, ok := hint.OpenFilesThen(err, "check it with "+verify+" (not clone again: it would refuse the store in place)"); ok {
				return nil, hint.Settled(err, "the verified store is in place at "+dir+"; only the sync of its directory failed, so its name may not survive a crash: "+oh)
			}
			return nil, hint.With(err, "the verified store is at "+dir+", but the file system could not make its name durable: repair the file system, then check it with readproof --store "+dir+" verify")
		case errors.Is(err, gitstore.ErrExists):
			// another init or clone made a store at dir meanwhile
			return nil, hint.With(err, "another process made a store at "+dir+" while this clone was verifying, and this clone was discarded: pull into that store instead: readproof --store "+dir+" pull")
		}
		return nil, hint.With(err, "nothing was made at "+dir+": the file system failed (dmesg may say why) or is full (df shows it); repair it, then clone again")
	}
	return res, nil
}

// cloneEarlyFetch is the fetch of a clone from a git:// remote, started
// while recognize reads the remote's main alone, into the staging
// directory no reader sees: git:// pays about 40 ms for each protocol v2
// request (LsRemoteWhole), and the read of main is two of them, so the
// fetch no longer waits for it (a clone of 2,000 runs from git daemon on
// 127.0.0.1: 234 ms before). It starts only when the listing names one of
// readproof's own refs (a run, a chain or a tag of readproof's): a remote
// listing no more than a main (which a project's repository could) is
// fetched from only once its main was read, so a clone refused there
// never fetched its history. A refused clone stops the fetch (its git
// killed and waited for) and the staging directory goes with whatever it
// wrote.
type cloneEarlyFetch struct {
	cancel context.CancelFunc
	done   chan error
}

// start fetches the tips of shared (fetchTips) on a goroutine, when they
// mark the remote a store.
func (f *cloneEarlyFetch) start(ctx context.Context, g gitstore.Store, t *gitstore.Transport, shared []gitstore.Ref) {
	if f.done != nil || !slices.ContainsFunc(shared, func(r gitstore.Ref) bool { return readproofOwnRef(r.Name) }) {
		return
	}
	fctx, cancel := context.WithCancel(ctx)
	f.cancel, f.done = cancel, make(chan error, 1)
	go func() { f.done <- fetchTips(fctx, g, t, "origin", shared) }()
}

func (f *cloneEarlyFetch) started() bool { return f.done != nil }

// wait returns the fetch's error, once.
func (f *cloneEarlyFetch) wait() error {
	err := <-f.done
	f.cancel()
	f.done = nil
	return err
}

// stop stops the fetch, if it runs, and waits for it.
func (f *cloneEarlyFetch) stop() {
	if f.done != nil {
		f.cancel()
		f.wait()
	}
}

// readproofOwnRef reports whether a listed ref is one only a readproof
// store holds: not main, which any repository may have.
func readproofOwnRef(name string) bool {
	return strings.HasPrefix(name, "refs/heads/readproof/") || strings.HasPrefix(name, "refs/tags/readproof/")
}

// networkURL reports whether url names a repository git reaches over the
// network (a scheme other than file://, or scp-like host:path), not a path
// on this machine.
func networkURL(url string) bool {
	if i := strings.Index(url, "://"); i >= 0 {
		return !strings.EqualFold(url[:i], "file")
	}
	i := strings.IndexByte(url, ':')
	return i > 0 && !strings.Contains(url[:i], "/")
}

// cloneURLHint is the hint of a clone from url into dir that could not
// reach it: the URL it probably meant when its scheme is probably a typo
// (schemeHint), else to check that git reaches it.
func cloneURLHint(url, dir string) string {
	if h := schemeHint(url, func(meant string) string {
		return "clone from it: readproof clone " + text.ShellArg(meant) + " " + text.ShellArg(dir)
	}); h != "" {
		return h
	}
	return "check the URL and that git can reach it: git ls-remote " + text.ShellArg(gitstore.RedactURL(url))
}

// cloneManifests returns the manifests a clone's refs name (run refs, then
// conflict refs), each with the first run id naming it, and adds the runs
// and run conflicts to what the clone reports.
func cloneManifests(local *state, res *PullResult) (map[gitstore.OID]bool, map[gitstore.OID]string) {
	manifests := map[gitstore.OID]bool{}
	name := map[gitstore.OID]string{}
	for i := range local.runs.refs {
		id, m := local.runs.at(i)
		manifests[m] = true
		if _, ok := name[m]; !ok {
			name[m] = id
		}
		res.NewRuns = append(res.NewRuns, RunRef{RunID: id, Manifest: string(m)})
	}
	for _, id := range sortedKeys(local.conflicts) {
		l, _ := local.runs.get(id)
		rc := RunConflict{RunID: id, Local: string(l), Others: []string{}}
		for _, m := range sortedOIDs(local.conflicts[id]) {
			manifests[m] = true
			if _, ok := name[m]; !ok {
				name[m] = id
				rc.Others = append(rc.Others, string(m))
			}
		}
		if len(rc.Others) > 0 {
			res.RunConflicts = append(res.RunConflicts, rc)
		}
	}
	return manifests, name
}

// cloneChecks is what the checks of a clone's journal and of the manifests
// its refs name found: the refs read, the manifests (those the refs name,
// then those the journal records), what passed, the journal's failures and
// records, the manifests' failures (early), and the verdict records the
// journal's check records name, read after the chains (verifyClone).
type cloneChecks struct {
	local           *state
	manifests       map[gitstore.OID]bool
	verified        verifiedSet
	journalFailures []string
	records         []RunRef
	early           []string
	journalVerdicts []journalVerdict
}

// checkCloneObjects checks the journal from local.main while the manifests
// the refs name are checked (both cores busy), reading through g and
// handles on it. The journal's own failures are still reported first
// (but for a `record check` commit naming what is not a verdict record of
// its run: verifyClone reports that after the manifests' failures, once
// the chains are decoded), and the manifests only it records are checked
// after it (verifyAll). The
// journal goroutine reads through its own handle and records what it
// verified in its own set (merged after): it shares no map the manifest
// workers touch. The store had no journal, so every commit reachable from
// main is new: the walk needs no `git rev-list` of it.
func checkCloneObjects(g gitstore.Store, local *state, manifests map[gitstore.OID]bool, opts Options) *cloneChecks {
	c := &cloneChecks{local: local, manifests: manifests, verified: verifiedSet{}}
	ids := sortedOIDs(manifests)
	journalVerified := verifiedSet{}
	journalDone := make(chan struct{})
	if local.main != "" {
		jr := g
		if h, ok, err := gitstore.NewReader(g); err == nil && ok {
			jr = h
			defer h.Close()
		}
		go func() {
			defer close(journalDone)
			c.journalFailures, c.records = checkJournalWhere(jr, local.main, func(gitstore.OID) bool { return true }, manifests, journalVerified, nil, &c.journalVerdicts)
		}()
	} else {
		close(journalDone)
	}
	c.early = verifyManifests(g, ids, c.verified, opts)
	<-journalDone
	for k, v := range journalVerified {
		c.verified[k] = v
	}
	return c
}

// precheckClone is checkCloneObjects of the refs a clone will write, run
// on the source repository while its objects are copied: an object is
// named by its id and every read checks the bytes against it, so what
// passes here passes on the copy. It reports no progress (verifyClone
// does), and its result counts only when nothing failed (nil otherwise:
// everything is checked again on the copy, which says what fails).
func precheckClone(src gitstore.Store, refs []gitstore.Ref, opts Options) *cloneChecks {
	local := stateFromRefs(refs)
	manifests, _ := cloneManifests(local, newPullResult("origin", false))
	opts.Progress = nil
	c := checkCloneObjects(src, local, manifests, opts)
	if len(c.early) > 0 || len(c.journalFailures) > 0 {
		return nil
	}
	return c
}

// sameRuns reports whether two states name the same journal and manifests
// (the refs precheckClone read, and the refs the clone wrote).
func sameRuns(a, b *state) bool {
	if a.main != b.main || !a.runs.equal(b.runs) || len(a.conflicts) != len(b.conflicts) {
		return false
	}
	for id, ms := range a.conflicts {
		if len(b.conflicts[id]) != len(ms) {
			return false
		}
		for m := range ms {
			if !b.conflicts[id][m] {
				return false
			}
		}
	}
	return true
}

// verifyClone checks everything a fresh clone holds, and records on the
// journal any manifest the remote's journal did not reach. pre, when not
// nil, is what precheckClone found on the source; it stands for the
// checks of the journal and of the manifests the refs name when it read
// the refs the clone holds.
func verifyClone(ctx context.Context, g gitstore.Store, t *gitstore.Transport, opts Options, pre *cloneChecks) (*PullResult, error) {
	local, err := readState(g, localPrefixes())
	if err != nil {
		return nil, err
	}
	res := newPullResult("origin", false)
	tips := verifiedSet{}
	if failures, err := trackingTipFailures(g, "origin", nil, nil, tips); err != nil {
		return nil, err
	} else if failures = append(failures, tipFailures(g, local, nil, tips)...); len(failures) > 0 {
		return nil, unverified(failures)
	}
	manifests, name := cloneManifests(local, res)
	var c *cloneChecks
	if pre != nil && sameRuns(pre.local, local) {
		c = pre
		for m := range pre.manifests {
			manifests[m] = true
		}
		if opts.Progress != nil && len(name) > 0 {
			opts.say("\rVerifying manifests: %d/%d, done.\n", len(name), len(name))
		}
	} else {
		c = checkCloneObjects(g, local, manifests, opts)
	}
	verified, journalFailures, records, early := c.verified, c.journalFailures, c.records, c.early
	var journalKept []RunRef // the other side of same-id conflicts, from the journal
	onJournal := map[gitstore.OID]bool{}
	if local.main != "" {
		res.Journal = "adopted"
		named := lazyNamed(local, nil)
		journalFailures = append(journalFailures, journalOrphans(records, local.runs.get, named)...)
		if len(journalFailures) > 0 {
			return nil, unverified(journalFailures)
		}
		journalKept = journalConflicts(records, local.runs.get, named, local.conflicts)
		// A manifest a `record run` commit records is reachable from main.
		// Whether another one named by a ref is (by some other path) is
		// the history's answer (revList: read in-process when short, else
		// git's), asked only when there is one.
		for _, r := range records {
			onJournal[gitstore.OID(r.Manifest)] = true
		}
		for m := range name {
			if !onJournal[m] {
				commits, err := revList(ctx, g, t, local.main, "")
				if err != nil {
					return nil, err
				}
				for _, c := range commits {
					onJournal[c.ID] = true
				}
				break
			}
		}
	}
	for _, key := range sortedKeys(local.resources) {
		if u, err := keyURI(key); err == nil {
			res.Resources = append(res.Resources, u.String())
		}
	}
	for _, key := range sortedKeys(local.tags) {
		if u, tag, err := splitTagKey(key); err == nil {
			res.Tags = append(res.Tags, u.String()+"@"+tag)
		}
	}
	if len(early) > 0 {
		return nil, unverified(early)
	}
	if err := verifyAll(g, manifests, verified, opts); err != nil {
		return nil, err
	}
	renames := &journalRenames{g: g, heads: []gitstore.OID{local.main}}
	failures, err := checkRunNames(g, res.NewRuns, verified, renames)
	if err != nil {
		return nil, err
	}
	for _, key := range sortedKeys(local.resources) {
		failures = append(failures, checkObservations(ctx, g, t, key, local.resources[key], "", verified)...)
	}
	for _, key := range sortedKeys(local.tags) {
		failures = append(failures, checkTagMoves(ctx, g, t, key, local.tags[key], "", verified)...)
	}
	for _, key := range sortedKeys(local.receipts) {
		if _, _, ok := receiptChain(key); ok {
			failures = append(failures, checkReceiptTree(g, key, local.receipts[key], "")...)
			failures = append(failures, checkReceiptCommits(ctx, g, t, key, local.receipts[key], "")...)
			res.Receipts = append(res.Receipts, key)
		}
	}
	// each chain decoded, then its records judged by verify's rules (MACs
	// with the key; verdicts.go) from what the decoding read, while no
	// check failed: the judging reads no record again
	var macFailures []string
	recordManifests := map[string]*manifest.Manifest{}
	reads := decodedVerdicts{}
	for _, run := range sortedKeys(local.verdicts) {
		if identity.ValidateRunID(run) != nil {
			continue
		}
		tip := local.verdicts[run]
		read := map[gitstore.OID]*store.VerdictRecord{}
		f, commits := checkVerdictChainRead(ctx, g, t, run, tip, "", read, reads)
		failures = append(failures, f...)
		// each record names the run's manifest or one of its conflicts
		// (before session 31 a clone adopted a record naming another,
		// which verify reports broken)
		named, _ := local.runs.get(run)
		kept := func(m gitstore.OID) bool {
			return local.conflicts[run][m] || slices.Contains(journalKept, RunRef{RunID: run, Manifest: string(m)})
		}
		ids := make([]gitstore.OID, len(commits))
		for i, c := range commits {
			ids[i] = c.ID
		}
		f, err = verdictManifests(run, ids, reads, named, kept, renames)
		if err != nil {
			return nil, err
		}
		failures = append(failures, f...)
		res.Verdicts = append(res.Verdicts, run)
		if len(failures) == 0 {
			f, err := checkIncomingRun(ctx, g, run, tip, commits, opts.ProbeKeys, recordManifests, read)
			if err != nil {
				return nil, err
			}
			macFailures = append(macFailures, f...)
		}
	}
	// the verdict records the journal's checks name that no chain decoded
	// (each chain's were read once, above): their failures come before
	// those of the chains and the other records, though after the
	// manifests' (before session 31 they came with the journal's, first)
	var journalVerdicts []string
	for _, jv := range c.journalVerdicts {
		if !reads.decoded(jv.run, jv.verdict) {
			if why := journalVerdictFailure(g, jv, verified); why != "" {
				journalVerdicts = append(journalVerdicts, why)
			}
		}
	}
	if len(journalVerdicts) > 0 {
		return nil, unverified(journalVerdicts)
	}
	if len(failures) == 0 {
		failures = macFailures
	}
	if len(failures) > 0 {
		return nil, unverified(failures)
	}
	res.Verified = len(manifests)
	var stray []gitstore.OID
	for m := range name {
		if !onJournal[m] {
			stray = append(stray, m)
		}
	}
	sort.Slice(stray, func(i, j int) bool { return name[stray[i]]+string(stray[i]) < name[stray[j]]+string(stray[j]) })
	tip := local.main
	for _, m := range stray {
		if tip, err = recordOnJournal(g, tip, name[m], m, opts.now()); err != nil {
			return nil, err
		}
		res.Recorded = append(res.Recorded, RunRef{RunID: name[m], Manifest: string(m)})
	}
	var ups []gitstore.RefUpdate
	if tip != local.main {
		ups = append(ups, gitstore.RefUpdate{Name: store.JournalRef, Old: local.main, New: tip})
	}
	byRun := map[string][]string{}
	for _, c := range journalKept {
		ups = append(ups, gitstore.RefUpdate{Name: store.ConflictRunRef(c.RunID, gitstore.OID(c.Manifest)), New: gitstore.OID(c.Manifest)})
		byRun[c.RunID] = append(byRun[c.RunID], c.Manifest)
	}
	for _, id := range sortedKeys(byRun) {
		l, _ := local.runs.get(id)
		res.RunConflicts = append(res.RunConflicts, RunConflict{RunID: id, Local: string(l), Others: byRun[id]})
	}
	if len(ups) > 0 {
		if err := g.Update(store.JournalLast(ups)...); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// heldWriter keeps what is written to it until release, then writes that
// to w and passes everything after straight on; what it holds when nobody
// releases it is dropped. Safe for concurrent use.
type heldWriter struct {
	mu       sync.Mutex
	w        io.Writer
	held     []byte
	released bool
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		return h.w.Write(p)
	}
	h.held = append(h.held, p...)
	return len(p), nil
}

// drop forgets what h holds.
func (h *heldWriter) drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held = nil
}

func (h *heldWriter) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.released = true
	if len(h.held) > 0 {
		h.w.Write(h.held)
		h.held = nil
	}
}

// copyFailedHint is the hint of a clone whose copy of the objects from
// the repository shown failed: a write on this side that hit a full disk
// or a file size limit, in Go or in git's index-pack, says so (the source
// is not at fault); anything else
// points at the source's objects. Nothing of the clone is kept either way.
func copyFailedHint(err error, shown string) string {
	if errors.Is(err, gitstore.ErrFetchTooLarge) {
		return hint.Of(err) // the source is larger than --max-fetch-bytes
	}
	if r := gitstore.WriteLimitRemedy(err, "the new store"); r != "" {
		return "writing the new store failed, not reading " + shown + ": " + r + ", then clone again; nothing of the clone was kept"
	}
	return "check the repository's objects, then clone again: git -C " + shown + " fsck"
}
