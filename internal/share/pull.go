package share

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/probe"
)

// Options tune push, pull and clone.
type Options struct {
	// Progress receives git's progress meter and readproof's phase lines
	// (meant for a terminal); nil means quiet.
	Progress io.Writer
	// Interactive lets git prompt for credentials on the terminal.
	Interactive bool
	// Now is the clock for journal records written by a pull; nil means
	// time.Now.
	Now func() time.Time
	// StaleLockAge is the age after which push removes a ref lock left on
	// a remote on this machine; zero means gitstore.DefaultStaleLockAge.
	StaleLockAge time.Duration
	// ProbeKeys, when set, makes a pull check the MAC of every verdict
	// record it would adopt and refuse the pull when one fails; the checks
	// that need no key run without it (verdicts.go).
	ProbeKeys *probe.Keys
	// MaxFetchBytes bounds what one git fetch of a pull or clone may
	// receive (gitstore.TransportOptions.MaxFetchBytes); zero means
	// gitstore.DefaultMaxFetchBytes.
	MaxFetchBytes int64
	// Notice receives what the user must hear even when nothing is a
	// terminal: a change readproof made on the remote (a stale lock file it
	// removed). nil sends it to Progress.
	Notice io.Writer
}

// notice tells the user of a change made outside the local store. The
// line may name files read from the remote's directories (lock files,
// quarantines), so it is escaped (text.Escape) before it reaches a
// terminal.
func (o Options) notice(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	body, nl := strings.CutSuffix(line, "\n")
	line = text.Escape(body)
	if nl {
		line += "\n"
	}
	if o.Notice != nil {
		io.WriteString(o.Notice, line)
		return
	}
	o.say("%s", line)
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now().UTC()
	}
	return time.Now().UTC()
}

func (o Options) say(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format, args...)
	}
}

// transport is the transport of one command: the remote's configuration
// is read once (gitstore.Transport.OneCommand).
func (o Options) transport(g gitstore.Store) (*gitstore.Transport, error) {
	t, err := gitstore.NewTransport(g.Path(), gitstore.TransportOptions{Progress: o.Progress, Interactive: o.Interactive, MaxFetchBytes: o.MaxFetchBytes})
	if err != nil {
		return nil, err
	}
	return t.OneCommand(), nil
}

// RunRef names a committed run.
type RunRef struct {
	RunID    string `json:"run_id"`
	Manifest string `json:"manifest"`
}

// RunConflict is a run id with more than one manifest: Local is the
// manifest the local run ref names ("" when none), Others the manifests
// kept under refs/tags/readproof/conflicts/runs/<run-id>/.
type RunConflict struct {
	RunID  string   `json:"run_id"`
	Local  string   `json:"local"`
	Others []string `json:"others"`
}

// TagConflict is a tag that moved on both sides: Local stays in force,
// Remote is kept under refs/readproof-conflicts/tags/ until resolved.
type TagConflict struct {
	URI    string          `json:"uri"`
	Tag    string          `json:"tag"`
	Local  *store.TagState `json:"local"`
	Remote *store.TagState `json:"remote"`
}

// PullResult says what a pull adopted.
type PullResult struct {
	Remote    string   `json:"remote"`
	UpToDate  bool     `json:"up_to_date"`
	NewRuns   []RunRef `json:"new_runs"`
	Resources []string `json:"resources_updated"`
	Merged    []string `json:"resources_merged"`
	Tags      []string `json:"tags_updated"`
	// Journal is "unchanged", "adopted", "fast-forward" or "merged".
	Journal string `json:"journal"`
	// JournalUnrelated: the remote's journal, merged, shares no commit
	// with this store's: its runs come from stores this one had never
	// exchanged with (a first exchange, or another team's remote).
	JournalUnrelated bool `json:"journal_unrelated"`
	// Recorded lists manifests that were not on the remote's journal and
	// were recorded on the local one, so main reaches every manifest.
	Recorded []RunRef `json:"recorded"`
	// Verified is the number of new manifests checked entry by entry.
	Verified int `json:"manifests_verified"`
	// RunConflicts and TagConflicts are the conflicts this pull found.
	RunConflicts []RunConflict `json:"run_conflicts"`
	TagConflicts []TagConflict `json:"tag_conflicts"`
	// Receipts and Verdicts list the receipt chains ("sessions/<s>",
	// "index/<d>") and the runs whose verdict chain was adopted or
	// fast-forwarded; ReceiptsMerged and VerdictsMerged those merged
	// because both sides moved. ReceiptConflicts are receipt ids stored with
	// different content on the two sides: the local receipt stays.
	Receipts         []string          `json:"receipts_updated"`
	ReceiptsMerged   []string          `json:"receipts_merged"`
	ReceiptConflicts []ReceiptConflict `json:"receipt_conflicts"`
	Verdicts         []string          `json:"verdicts_updated"`
	VerdictsMerged   []string          `json:"verdicts_merged"`
	// ProposalsRefused are merges of tag proposals on the remote that were
	// not adopted (the proposal's base moved before the merge): the local
	// tag stays, the remote tip is kept as a tag conflict.
	ProposalsRefused []ProposalRefusal `json:"proposals_refused"`
	// ProposalsStale are this store's own pending proposals of tags this
	// pull moved: their base is no longer the tag's position.
	ProposalsStale []store.Proposal `json:"proposals_stale"`
}

// Pull fetches remote's shared refs into refs/readproof-remotes/<remote>/,
// verifies every new manifest and chain tip, and integrates them per
// docs/sync.md in one ref transaction. Data that does not verify is refused
// (ErrUnverified) before any local ref changes.
func pull(ctx context.Context, s *store.Store, remote string, opts Options) (*PullResult, error) {
	return pullWith(ctx, s, s.Git(), remote, opts)
}

// pullWith is pull through g, s's git store (a test counts what it reads).
func pullWith(ctx context.Context, s *store.Store, g gitstore.Store, remote string, opts Options) (*PullResult, error) {
	// Ask first (one round trip, no object transfer): when every remote
	// ref is already integrated, nothing is fetched.
	t, rem, err := connect(ctx, g, remote, opts, "pull")
	if err != nil {
		return nil, err
	}
	ok, local, err := upToDate(ctx, g, t, rem)
	if err != nil || (ok && proposalsFetched(g, remote, rem)) {
		if err != nil {
			return nil, err
		}
		return newPullResult(remote, true), nil
	}
	tracking, err := g.Refs(RemotesPrefix + remote + "/")
	if err != nil {
		return nil, err
	}
	// The fetch writes no ref: the tracking refs move in readproof's own
	// compare-and-swap transaction once everything passed its checks
	// (moveTracking), so a fetch refused (by the size bound, say) or a
	// pull refused or killed leaves every ref as it was.
	if err = fetchListed(ctx, g, t, remote, rem.listed, tracking); err != nil && !errors.Is(err, gitstore.ErrFetchTooLarge) && ctx.Err() == nil {
		// the remote moved since it was listed (over protocol v0 a tip it
		// no longer has cannot be fetched): list it again, and fetch what
		// that listing names, still writing no ref
		quiet := opts
		quiet.Notice = io.Discard // its warnings were given once
		t2, rem2, cerr := connect(ctx, g, remote, quiet, "pull")
		if cerr != nil {
			return nil, cerr
		}
		t, rem = t2, rem2
		err = fetchListed(ctx, g, t, remote, rem.listed, tracking)
		if err != nil && strings.Contains(err.Error(), "not our ref") {
			// once more over protocol v0: git's upload-pack no longer has
			// a tip of the second listing either
			return nil, hint.With(fmt.Errorf("pull %s: the remote no longer had a tip it had just listed, twice: %w", remote, err),
				"pushes to "+remote+" kept moving it: pull again once they pause; if this persists while nothing pushes, the remote may be damaged (`git fsck` in it lists what it lacks); no ref moved")
		}
	}
	if err != nil {
		if r := gitstore.WriteLimitRemedy(err, "the store"); r != "" {
			return nil, hint.With(fmt.Errorf("pull %s: %w", remote, err),
				"writing into the store failed, not reaching the remote: "+r+", then pull again; no run, resource, tag or journal ref moved")
		}
		if localFailure(g, err) {
			return nil, hint.With(fmt.Errorf("pull %s: %w", remote, err),
				"writing into the store failed, not reaching the remote: free space on (or repair) the file system that holds the store, then pull again; no run, resource, tag or journal ref moved")
		}
		return nil, unreachable(ctx, g, t, remote, "pull "+remote, err)
	}
	// git kept what it fetched as a pack of its own: maintenance counts it
	gitstore.NoteFetched(g)
	// what the tracking refs will hold: the listing (no second listing of
	// 10^5 tracking refs)
	fetched, listed := rem.tracked(), rem.listed
	if listed == nil {
		listed = []gitstore.Ref{} // an empty remote: every tracking ref goes
	}
	// every ref the fetch would move names a commit, adopted or not; the
	// plan's check of the chains' tips (tipFailures) reads none again
	verified := verifiedSet{}
	if failures, err := trackingTipFailures(g, remote, listed, tracking, verified); err != nil {
		return nil, err
	} else if len(failures) > 0 {
		return nil, nameRemote(unverified(failures), "pull "+remote)
	}
	reads, err := pullVerdictMACs(ctx, g, t, remote, fetched.verdicts, opts)
	if err != nil {
		return nil, err
	}
	res, err := integrate(ctx, g, t, remote, opts, verified, reads, local, fetched)
	if err != nil {
		return nil, err
	}
	res.ProposalsStale = staleProposals(s, res.Tags)
	if err := moveTracking(g, remote, listed, tracking); err != nil {
		return nil, hint.With(fmt.Errorf("pull %s: what the remote held was adopted, but its remote-tracking refs (%s%s/) were not moved: %w", remote, RemotesPrefix, remote, err),
			"nothing is missing from the store; the tracking refs, which record the remote's last listing, catch up at the next pull that finds something new on the remote (a pull with nothing new leaves them)")
	}
	return res, nil
}

// moveTracking makes remote's tracking refs (tracking: their values as the
// pull read them) what listed, the remote's listing, maps them to, in one
// compare-and-swap transaction. Another pull of the same remote that moved
// some of them meanwhile makes it read them again and retry, leaving each
// ref that pull moved (or made, or deleted) as it is: its listing may be
// the newer one, and a ref goes back to an older listing never.
func moveTracking(g gitstore.Store, remote string, listed, tracking []gitstore.Ref) error {
	listed = dropUntrackable(listed)
	var read map[string]gitstore.OID // tracking as the pull read it, once a retry needs it
	for attempt := 0; ; attempt++ {
		ups, _, err := trackingUpdates(remote, listed, tracking)
		if err != nil {
			return err
		}
		if read != nil {
			ups = slices.DeleteFunc(ups, func(u gitstore.RefUpdate) bool { return read[u.Name] != u.Old })
		}
		if len(ups) == 0 {
			return nil
		}
		err = g.Update(store.JournalLast(ups)...)
		if err == nil || !errors.Is(err, gitstore.ErrConflict) || attempt >= 20 {
			return err
		}
		if read == nil {
			read = make(map[string]gitstore.OID, len(tracking))
			for _, r := range tracking {
				read[r.Name] = r.OID
			}
		}
		time.Sleep(time.Millisecond + rand.N(10*time.Millisecond))
		if tracking, err = g.Refs(RemotesPrefix + remote + "/"); err != nil {
			return err
		}
	}
}

// connect checks the remote's name and URL and reads its shared refs (one
// ls-remote round trip, no object transfer). The URL is resolved once, by
// the question that proves the remote is configured: the push URLs for a
// push or a proposal (send pushes to them), the fetch URL otherwise
// (recognize probes it). A remote whose URL the store's own config file
// sets (gitstore.RemoteInRepoConfig) needs no such proof: its URLs are
// asked for only when needed (send, with something to send; recognize,
// with a new journal tip to probe), so a push or pull with nothing to do
// runs one git process, the listing. Unless that URL names a repository on
// this machine: then the URL is asked first, and when the configuration
// settles that git lists the remote there, the listing reads it in place
// (gitstore.LsRemoteHead), so the one git process is the `git config`.
func connect(ctx context.Context, g gitstore.Store, remote string, opts Options, verb string) (*gitstore.Transport, *state, error) {
	if err := gitstore.CheckRemoteName(remote); err != nil {
		return nil, nil, err
	}
	t, err := opts.transport(g)
	if err != nil {
		return nil, nil, err
	}
	var url string
	var pushURLs []string
	var pushErr error
	configured, known := t.RemoteInRepoConfigURL(remote)
	if known {
		if err := gitstore.CheckRemoteURL(remote, configured); err != nil {
			return nil, nil, err
		}
		if gitstore.CheckURLPassword(remote, configured) != nil {
			// written by git config or by a readproof before session 17
			opts.notice("readproof: warning: the URL of remote %s in the store's config holds a password (%s), readable by whoever reads the store: give it to git's credential helper and set the URL without it (readproof remote rm %s, then readproof remote add %s URL)\n",
				remote, gitstore.RedactURL(configured), remote, remote)
		}
	}
	// A remote on this machine is listed in place once the configuration
	// says git lists it there (gitstore.LsRemoteHead): the URL question
	// costs less than the listing by git it saves.
	if !known || gitstore.IsLocalRepo(configured) {
		warned := known && gitstore.CheckURLPassword(remote, configured) != nil
		known = false
		if url, pushURLs, pushErr, err = remoteURLs(ctx, t, remote, verb); err != nil {
			return nil, nil, err
		}
		if !warned {
			// a config readproof does not read itself (a quoted value,
			// an include), so git named the URLs: the same warning
			warnURLPassword(opts, remote, "fetches from", url)
			for _, u := range pushURLs {
				warnURLPassword(opts, remote, "pushes to", u)
			}
		}
	}
	// A push warns about the remote's HEAD, even an empty remote's unborn
	// one, which only protocol v2 lists; a pull takes the refs alone. The
	// URL in the store's config stands for git's (a rule that rewrites it
	// to another scheme costs a v2 listing, or asks a v0 one where v2 would
	// do: the same refs either way).
	whole := ""
	if verb == "pull" {
		whole = url
		if whole == "" {
			whole = configured
		}
	}
	refs, head, err := recognize(ctx, g, t, remote, url, verb+" "+remote, false, whole, nil)
	if err != nil {
		if known && !errors.Is(err, ErrNotStore) && ctx.Err() == nil {
			// A failure that the URL question would have met first is
			// reported as it was (a config git cannot read, say).
			if _, _, _, uerr := remoteURLs(ctx, t, remote, verb); uerr != nil {
				return nil, nil, uerr
			}
		}
		return nil, nil, err
	}
	st := stateFromRefs(refs)
	st.listed, st.head, st.pushURLs, st.pushErr = refs, head, pushURLs, pushErr
	return t, st, nil
}

// remoteURLs asks git for the URLs of remote that verb needs: the push
// URLs for a push or a proposal (pushErr: the reason git named none, for
// send to report; err when the remote is not configured at all), the
// fetch URL otherwise.
func remoteURLs(ctx context.Context, t *gitstore.Transport, remote, verb string) (url string, pushURLs []string, pushErr, err error) {
	if verb == "push" || verb == "propose" {
		// a remote missing from the configuration fails here; any other
		// failure to name a push URL fails in send
		if pushURLs, pushErr, err = t.PushTargets(ctx, remote); err != nil {
			return "", nil, nil, remoteHint(err, remote)
		}
		return "", pushURLs, pushErr, nil
	}
	if url, err = t.RemoteFetchURL(ctx, remote); err != nil {
		return "", nil, nil, remoteHint(err, remote)
	}
	return url, nil, nil, nil
}

// warnURLPassword warns when url, which git uses for remote (it "fetches
// from" or "pushes to" it), holds a password: git's configuration keeps it
// in plain text, in the store's config or the user's.
func warnURLPassword(opts Options, remote, does, url string) {
	if url == "" || gitstore.CheckURLPassword(remote, url) == nil {
		return
	}
	opts.notice("readproof: warning: the URL of remote %s holds a password (%s): git %s it, and keeps it in plain text in a config file (`git config --show-origin --get-regexp '^remote\\.%s\\.'` in the store names which): give it to git's credential helper and set the URL without it\n",
		remote, gitstore.RedactURL(url), does, remote)
}

func remoteHint(err error, remote string) error {
	if errors.Is(err, gitstore.ErrNoRemote) {
		return hint.With(err, "add it first: readproof remote add "+remote+" URL")
	}
	return err
}

func newPullResult(remote string, upToDate bool) *PullResult {
	return &PullResult{Remote: remote, UpToDate: upToDate, Journal: "unchanged", NewRuns: []RunRef{}, Resources: []string{},
		Merged: []string{}, Tags: []string{}, Recorded: []RunRef{}, RunConflicts: []RunConflict{}, TagConflicts: []TagConflict{},
		Receipts: []string{}, ReceiptsMerged: []string{}, ReceiptConflicts: []ReceiptConflict{}, Verdicts: []string{}, VerdictsMerged: []string{},
		ProposalsRefused: []ProposalRefusal{}, ProposalsStale: []store.Proposal{}}
}

// upToDate reports whether the local store already holds everything the
// remote advertises: every run id (with its manifest, or that manifest kept
// as a conflict or under another name), every conflict, and every chain tip
// (equal, or an ancestor of the local tip, or a tag's known conflicting
// value). It reads only local refs and objects, and returns those refs
// for the pull's plan: at 10^5 runs each reading of them costs a pull a
// tenth of its own CPU.
func upToDate(ctx context.Context, g gitstore.Store, t *gitstore.Transport, rem *state) (bool, *localRefs, error) {
	local, err := readLocal(g)
	if err != nil {
		return false, nil, err
	}
	ok, err := holdsAll(ctx, g, t, rem, local.st, local.tagConflicts)
	return ok, local, err
}

// localRefs is the local side of a pull, read once by upToDate and used by
// the first plan. A plan made again, after a local writer moved a ref
// under the pull's transaction (which compares every ref it moves with the
// value planned from), reads them anew.
type localRefs struct {
	st           *state
	tagConflicts map[string]gitstore.OID
}

func readLocal(g gitstore.Store) (*localRefs, error) {
	st, err := readState(g, localPrefixes())
	if err != nil {
		return nil, err
	}
	tc, err := readTagConflicts(g)
	if err != nil {
		return nil, err
	}
	return &localRefs{st: st, tagConflicts: tc}, nil
}

// holdsAll is upToDate's question, asked of the local refs read.
func holdsAll(ctx context.Context, g gitstore.Store, t *gitstore.Transport, rem, local *state, tagConflicts map[string]gitstore.OID) (bool, error) {
	// the manifests run refs name, a map of every run: made only when a
	// remote run id names another manifest here, or a conflict is kept
	named := lazyNamed(local, nil)
	var otherNames []RunRef
	at := 0 // both lists sorted by id: a join, no map of either
	for i := range rem.runs.refs {
		id, r := rem.runs.at(i)
		if identity.ValidateRunID(id) != nil {
			continue
		}
		l, _ := local.runs.seek(&at, id)
		if l == "" || (l != r && !named(r) && !local.conflicts[id][r]) {
			return false, nil
		}
		if l != r && named(r) && !local.conflicts[id][r] {
			otherNames = append(otherNames, RunRef{RunID: id, Manifest: string(r)})
		}
	}
	if len(otherNames) > 0 {
		// A manifest this store names under another id: the remote's name
		// for it must hold (a run renamed after it was pushed keeps its
		// old name there), or the pull plans, and refuses, it.
		heads := []gitstore.OID{local.main}
		if rem.main != "" {
			if ok, err := g.Has(rem.main); err == nil && ok {
				heads = append(heads, rem.main)
			}
		}
		failures, err := checkRunNames(g, otherNames, verifiedSet{}, &journalRenames{g: g, heads: heads})
		if err != nil || len(failures) > 0 {
			return false, err
		}
	}
	for _, set := range local.conflicts {
		for m := range set {
			if named(m) {
				return false, nil // a settled conflict to clean up
			}
		}
	}
	contained := func(l, r gitstore.OID) (bool, error) {
		if l == r {
			return true, nil
		}
		if l == "" {
			return false, nil
		}
		if ok, err := g.Has(r); err != nil || !ok {
			return false, err
		}
		rel, err := relate(ctx, g, t, l, r)
		return rel == ahead, err
	}
	for key, r := range rem.resources {
		if _, err := keyURI(key); err != nil {
			continue // ignored by integrate as well
		}
		if ok, err := contained(local.resources[key], r); err != nil || !ok {
			return false, err
		}
	}
	for key, r := range rem.tags {
		if _, _, err := splitTagKey(key); err != nil {
			continue
		}
		if c := tagConflicts[key]; c != "" {
			if c == r {
				continue // a known conflict, waiting for `conflicts resolve`
			}
			return false, nil
		}
		if ok, err := contained(local.tags[key], r); err != nil || !ok {
			return false, err
		}
	}
	for key, r := range rem.receipts {
		if _, _, ok := receiptChain(key); !ok {
			continue
		}
		if ok, err := contained(local.receipts[key], r); err != nil || !ok {
			return false, err
		}
	}
	for run, r := range rem.verdicts {
		if identity.ValidateRunID(run) != nil {
			continue
		}
		if ok, err := contained(local.verdicts[run], r); err != nil || !ok {
			return false, err
		}
	}
	if rem.main != "" {
		if ok, err := contained(local.main, rem.main); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// integrate adopts the fetched state of remote. A local writer moving a ref
// at the same time makes the transaction fail; the plan is then rebuilt on
// the new local refs. verified holds what passed its check already (the
// tracking refs' tips, trackingTipFailures) and what each plan verifies.
// local, when not nil, is the local side as upToDate read it, used by the
// first plan; fetched, when not nil, what the tracking refs hold (as
// fetchListed wrote them), used by every plan. reads holds the verdict
// commits pullVerdictMACs decoded.
func integrate(ctx context.Context, g gitstore.Store, t *gitstore.Transport, remote string, opts Options, verified verifiedSet, reads decodedVerdicts, local *localRefs, fetched *state) (*PullResult, error) {
	delay := time.Millisecond
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, ups, err := plan(ctx, g, t, remote, opts, verified, reads, local, fetched)
		local = nil // a plan made again reads the local refs again
		if err != nil {
			return nil, nameRemote(err, "pull "+remote)
		}
		if len(ups) == 0 {
			res.UpToDate = len(res.TagConflicts) == 0
			return res, nil
		}
		err = g.Update(store.JournalLast(ups)...)
		if err == nil {
			return res, nil
		}
		if !errors.Is(err, gitstore.ErrConflict) {
			return nil, fmt.Errorf("pull %s: %w", remote, err)
		}
		if attempt >= 50 {
			return nil, hint.With(fmt.Errorf("pull %s: %w: local refs kept changing: %w", remote, ErrBusy, err), "try again when other readproof processes are done")
		}
		time.Sleep(delay/2 + rand.N(delay))
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}

// verifiedSet remembers, across the retries of one pull, which commit
// passed the check of which kind. A commit that verified as a manifest has
// not verified as a tag move: each ref is checked as what its namespace
// says it is.
type verifiedSet map[verifiedKey]bool

type verifiedKey struct {
	kind string
	id   gitstore.OID
}

// verifyAll checks every manifest a pull would adopt (the chains' commits
// are checked by their steps: checkObservations, checkTagMoves).
func verifyAll(g gitstore.Store, manifests map[gitstore.OID]bool, verified verifiedSet, opts Options) error {
	if failures := verifyManifests(g, sortedOIDs(manifests), verified, opts); len(failures) > 0 {
		return unverified(failures)
	}
	return nil
}

// check runs fn unless id already passed as kind, and remembers a pass.
func (v verifiedSet) check(kind string, id gitstore.OID, fn func() error) error {
	k := verifiedKey{kind, id}
	if v[k] {
		return nil
	}
	if err := fn(); err != nil {
		return err
	}
	v[k] = true
	return nil
}

// nameRemote prefixes what ("pull origin") to an error that does not name
// the remote yet, so the user learns which remote holds the bad data.
func nameRemote(err error, what string) error {
	if strings.HasPrefix(err.Error(), what+":") {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

func unverified(failures []string) error {
	err := fmt.Errorf("%w: nothing was adopted: %s", ErrUnverified, summarize(failures, 3))
	// a commit that holds a file no readproof writes is named first: a
	// later commit that drops that file again is no append either, but the
	// file says more
	for _, f := range failures {
		if path, commit, ok := handWrittenIn(f); ok {
			return hint.With(err, fmt.Sprintf("records on the remote carry files no readproof writes: someone wrote commit %s by hand (it holds %s), and every readproof refuses it; ask whoever pushed it to restore that chain on the remote from a copy readproof wrote (`readproof verify` in a store holding the commit names it broken), and do not adopt it", commit, path))
		}
	}
	for _, f := range failures {
		if commit, ok := handWrittenCommitIn(f); ok {
			return hint.With(err, fmt.Sprintf("records on the remote hold a commit no readproof writes: someone wrote commit %s by hand, and every readproof refuses it; ask whoever pushed it to restore that chain on the remote from a copy readproof wrote (`readproof verify` in a store holding the commit names it broken), and do not adopt it", commit))
		}
	}
	return hint.With(err, "the remote holds records that do not replay; ask whoever pushed them to run `readproof verify --read-data` on their store, and do not adopt them")
}

// handWritten is the clause that ends a failure for a record whose tree
// holds a file no readproof version writes there (path, in commit): a
// commit written by hand. unverified finds it (handWrittenIn) and gives
// the hint that fits, naming the commit and the path.
func handWritten(path string, commit gitstore.OID) string {
	return fmt.Sprintf("no readproof writes %s there (commit %s)", text.Printable(path), commit)
}

// handWrittenCommit is the clause that ends a failure for a receipt chain
// commit no readproof version writes (an append that does not add the
// receipt it names); unverified finds it (handWrittenCommitIn).
func handWrittenCommit(commit gitstore.OID) string {
	return fmt.Sprintf("no readproof writes commit %s", commit)
}

// handWrittenCommitIn finds the clause handWrittenCommit wrote in failure f.
func handWrittenCommitIn(f string) (commit string, ok bool) {
	_, rest, ok := strings.Cut(f, "no readproof writes commit ")
	if !ok {
		return "", false
	}
	commit, _, _ = strings.Cut(rest, " ")
	return commit, commit != ""
}

// handWrittenIn finds the clause handWritten wrote in failure f.
func handWrittenIn(f string) (path, commit string, ok bool) {
	_, rest, ok := strings.Cut(f, "no readproof writes ")
	if !ok {
		return "", "", false
	}
	path, rest, ok = strings.Cut(rest, " there (commit ")
	if !ok {
		return "", "", false
	}
	commit, _, ok = strings.Cut(rest, ")")
	return path, commit, ok
}

func summarize(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:n], "; "), len(items)-n)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedOIDs(m map[gitstore.OID]bool) []gitstore.OID {
	ids := make([]gitstore.OID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// localFailure reports whether err, a failed fetch, failed on the store's
// side: a full disk, a used-up quota or an I/O error, git's message names
// a file in the store, or git could not write a tracking ref (it says
// "cannot lock ref 'REF': unable to create directory for PATH" or
// "couldn't set 'REF'", without the cause).
func localFailure(g gitstore.Store, err error) bool {
	// a full disk or quota, as an errno or in git's words
	if gitstore.OutOfSpace(err) || errors.Is(err, syscall.EIO) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, g.Path()+string(filepath.Separator)) ||
		strings.Contains(msg, "cannot lock ref '"+RemotesPrefix) || strings.Contains(msg, "couldn't set '"+RemotesPrefix)
}
