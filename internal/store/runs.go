package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/telemetry"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
)

// runState is run.json in an open run's tree.
type runState struct {
	RunID     string    `json:"run_id"`
	StartedAt time.Time `json:"started_at"`
	// Caller is who started the run through an authenticated front end
	// (Options.Caller): the caller its manifest names, whoever commits it,
	// and the only caller that mounts into it, commits or aborts it
	// (ownRun). Absent for a run started otherwise.
	Caller string `json:"caller,omitempty"`
}

// ownRun refuses a mount into run id (started as st), its commit or its
// abort through a handle of a caller other than the one that started it:
// a manifest names one caller for every entry (docs/store-format.md,
// "Callers"). The store's own user (a handle without a caller: the
// command line, mcp over stdio) may act on any run, as it may write
// anything in the store.
func (s *Store) ownRun(id string, st runState) error {
	// a token's run open across the upgrade to callers in run.json reads
	// as one without a caller
	return s.callerOwns(id, "started", st.Caller, "runs",
		"start a run of your own with another id: a run's manifest names one caller for all its entries; an operator can commit or abort it from the command line")
}

// callerOwns refuses, with ErrRunCaller and fix as its hint, an act on run
// id through a handle of another caller than owner, the one that did
// (started or committed) it; records names what recorded the caller since.
// The store's own user (a handle without a caller) may act on any run.
func (s *Store) callerOwns(id, did, owner, records, fix string) error {
	if s.opts.Caller == "" || owner == s.opts.Caller {
		return nil
	}
	by := "by caller " + strconv.Quote(owner)
	if owner == "" {
		by = "without a caller (from the command line, mcp over stdio, or before " + records + " recorded their caller)"
	}
	return hint.With(fmt.Errorf("run %s was %s %s: %w, refused for caller %q", id, did, by, ErrRunCaller, s.opts.Caller), fix)
}

func entryName(pos int) string { return fmt.Sprintf("%08d.json", pos) }

func validRun(id string) error {
	if err := identity.ValidateRunID(id); err != nil {
		return hint.With(err, "run ids are letters, digits, '.', '_' and '-', starting with a letter or digit")
	}
	return nil
}

// runStatus reports the open tip and the committed manifest of a run.
func (s *Store) runStatus(id string) (open, committed gitstore.OID, err error) {
	if open, err = s.ref(openRef(id)); err != nil {
		return
	}
	committed, err = s.ref(runRef(id))
	return
}

// committedErr says that run id is committed as manifest m. The hint
// names the manifest first: the usual cause is a retried commit (an agent
// host whose first answer was lost), whose work is done and is m.
func committedErr(id string, m gitstore.OID) error {
	return hint.With(fmt.Errorf("run %s: %w as manifest %s", id, ErrRunCommitted, m),
		fmt.Sprintf("if that commit was yours, it is done: see it with `readproof manifest %s`. A committed run never changes: new work goes in a run with another id", m))
}

// unknownRun says that run id is not open. A misspelt id of an open run
// gets that run first: starting the id as typed would open a stray run
// beside it.
func (s *Store) unknownRun(id string) error {
	h := "start it first: readproof run start " + id
	if near := s.nearRun(id, OpenPrefix); near != "" {
		h += " (unless you meant " + near + ", which is open)"
	}
	return hint.With(fmt.Errorf("run %s: %w (not open)", id, ErrUnknownRun), h)
}

// NearRun is the id of an open or committed run that id is a slip of
// (text.Nearest), or "" when none is near.
func (s *Store) NearRun(id string) string {
	if near := s.nearRun(id, OpenPrefix); near != "" {
		return near
	}
	return s.nearRun(id, RunsPrefix)
}

// nearRun is the run id under prefix nearest to id, or "".
func (s *Store) nearRun(id, prefix string) string {
	refs, err := s.git.Refs(prefix)
	if err != nil {
		return ""
	}
	ids := make([]string, 0, len(refs))
	for _, r := range refs {
		if other := strings.TrimPrefix(r.Name, prefix); validRun(other) == nil && other != id {
			ids = append(ids, other)
		}
	}
	return text.Nearest(id, ids)
}

// StartRun opens a run.
func (s *Store) StartRun(id string) error {
	if err := validRun(id); err != nil {
		return err
	}
	return retry("run start", func() error {
		open, committed, err := s.liveOpen(id)
		if err != nil {
			return err
		}
		if committed != "" {
			return committedErr(id, committed)
		}
		if open != "" {
			return s.openRefusal(id, open)
		}
		now := s.now()
		data, _ := json.MarshalIndent(runState{RunID: id, StartedAt: now, Caller: s.opts.Caller}, "", "  ")
		blob, err := s.git.PutBlob(append(data, '\n'))
		if err != nil {
			return err
		}
		tree, err := s.git.PutTree([]gitstore.TreeEntry{{Name: "run.json", Mode: gitstore.ModeFile, OID: blob}})
		if err != nil {
			return err
		}
		sig := s.signature(now)
		c, err := s.git.PutCommit(gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: "start run " + id + "\n"})
		if err != nil {
			return err
		}
		err = s.git.Update(
			gitstore.RefUpdate{Name: openRef(id), Old: "", New: c},
			gitstore.RefUpdate{Name: runRef(id), Old: "", New: ""},
		)
		var ce *gitstore.ConflictError
		if errors.As(err, &ce) && ce.Ref == openRef(id) {
			open, _ := s.ref(openRef(id))
			return s.openRefusal(id, open)
		}
		return err
	})
}

// openRefusal is StartRun's refusal of id, open at tip ("": unknown), with
// a hint this handle can follow: a caller may mount into and commit only a
// run of its own (ownRun), so another caller's run sends it to another id.
func (s *Store) openRefusal(id string, tip gitstore.OID) error {
	err := fmt.Errorf("run %s: %w", id, ErrRunOpen)
	if s.opts.Caller != "" && tip != "" {
		if c, cerr := s.git.Commit(tip); cerr == nil {
			if st, serr := s.runStateOf(tip, c); serr != nil || s.ownRun(id, st) != nil {
				return hint.With(err, "it is another caller's open run: start a run of your own with another id")
			}
		}
	}
	return hint.With(err, "mount documents into it and commit it (readproof run commit "+id+"), or discard it: readproof run abort "+id)
}

// runStateOf reads run.json of c, the open run commit tip.
func (s *Store) runStateOf(tip gitstore.OID, c gitstore.Commit) (runState, error) {
	var st runState
	data, err := s.readFile(c, "run.json")
	if err != nil {
		return st, err
	}
	// caller apart: a run.json whose caller is not a caller's name (edited
	// by hand: another type, a newline) still gives the run's id and start,
	// so that the store's own user can abort the run (badRunCaller).
	var raw struct {
		runState
		Caller json.RawMessage `json:"caller"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return st, fmt.Errorf("open run %s: %w", tip, err)
	}
	st = raw.runState
	if len(raw.Caller) == 0 || string(raw.Caller) == "null" {
		return st, nil
	}
	if err := json.Unmarshal(raw.Caller, &st.Caller); err != nil {
		return st, st.badCaller(fmt.Errorf("open run %s: run.json: caller %s is not a string: %w", tip, text.Printable(string(raw.Caller)), err))
	}
	if st.Caller != "" {
		if err := identity.ValidateCaller(st.Caller); err != nil {
			// %v: the store's run.json is damaged, the command's
			// arguments are not (identity.ErrInvalid is a usage error)
			return st, st.badCaller(fmt.Errorf("open run %s: run.json: %v", tip, err))
		}
	}
	return st, nil
}

// badCaller is err as runStateOf's refusal of st's caller, with the way
// out as its hint.
func (st runState) badCaller(err error) error {
	id := st.RunID
	if validRun(id) != nil {
		id = "RUN"
	}
	return hint.With(badRunCaller{err}, "its run.json was changed outside readproof; clear the run from the command line: readproof run abort "+id)
}

// badRunCaller is runStateOf's refusal of run.json's caller: the run is
// neither mounted into nor committed, but its entries are read
// (openEntries) and the store's own user may abort it.
type badRunCaller struct{ err error }

func (e badRunCaller) Error() string { return e.err.Error() }
func (e badRunCaller) Unwrap() error { return e.err }

func isBadRunCaller(err error) bool { return errors.As(err, new(badRunCaller)) }

// openEntries reads run.json and the entries of an open run commit. A
// caller in run.json that runStateOf refuses (badRunCaller) is returned
// with the entries, all read.
func (s *Store) openEntries(tip gitstore.OID) (runState, []manifest.Entry, gitstore.Commit, error) {
	c, err := s.git.Commit(tip)
	if err != nil {
		return runState{}, nil, c, err
	}
	st, stErr := s.runStateOf(tip, c)
	if stErr != nil && !isBadRunCaller(stErr) {
		return st, nil, c, stErr
	}
	root, err := s.git.Tree(c.Tree)
	if err != nil {
		return st, nil, c, err
	}
	var entries []manifest.Entry
	for _, e := range root {
		if e.Name != "entries" {
			continue
		}
		list, err := s.git.Tree(e.OID)
		if err != nil {
			return st, nil, c, err
		}
		for i, le := range list {
			data, err := s.git.Blob(le.OID)
			if err != nil {
				return st, nil, c, err
			}
			var en manifest.Entry
			if err := json.Unmarshal(data, &en); err != nil {
				return st, nil, c, fmt.Errorf("open run entry %s: %w", le.Name, err)
			}
			if en.Position != i || le.Name != entryName(i) {
				return st, nil, c, fmt.Errorf("open run %s: entry %s out of order", st.RunID, le.Name)
			}
			entries = append(entries, en)
		}
	}
	return st, entries, c, stErr
}

// Mount resolves ref and records it at the next position of the open run.
// Concurrent mounts into one run get distinct, gap-free positions.
func (s *Store) Mount(ctx context.Context, runID, ref string) (*Delivery, error) {
	return s.MountWithPosition(ctx, runID, ref, nil)
}

func refOf(e manifest.Entry) string {
	if e.Ref != "" {
		return e.URI + "@" + e.Ref
	}
	return e.URI
}

// CommitRun freezes an open run into a manifest commit and returns it.
func (s *Store) CommitRun(runID string) (*manifest.Manifest, error) {
	return s.CommitRunContext(context.Background(), runID)
}

// CommitRunContext is CommitRun in ctx's trace: its span is a child of
// ctx's and the manifest records ctx's trace id.
func (s *Store) CommitRunContext(ctx context.Context, runID string) (_ *manifest.Manifest, err error) {
	ctx, span := startCommit(ctx, runID)
	m, err := s.commitRun(ctx, runID)
	endCommit(ctx, span, m, err)
	return m, err
}

func (s *Store) commitRun(ctx context.Context, runID string) (*manifest.Manifest, error) {
	if err := validRun(runID); err != nil {
		return nil, err
	}
	var out *manifest.Manifest
	err := retry("run commit", func() error {
		tip, committed, err := s.runStatus(runID)
		if err != nil {
			return err
		}
		if committed != "" {
			return s.committedRefusal(runID, committed)
		}
		if tip == "" {
			return s.unknownRun(runID)
		}
		st, entries, c, err := s.openEntries(tip)
		if err != nil {
			return err
		}
		if err := s.ownRun(runID, st); err != nil {
			return err
		}
		if isAbortCommit(c, runID) {
			// a killed abort: the run is aborted (complete it)
			if err := s.settleRun(runID); err != nil {
				return err
			}
			return abortedErr(runID)
		}
		// the aborted ref a killed reopen left goes first, in a
		// transaction of its own. (It had to: until session 13 gitstore
		// renamed packed-refs once, and a packed-refs holding it and the
		// open ref dropped both before the run's ref existed. Publishing
		// in order now, it could join the commit's transaction after the
		// run's ref; it is left on its own, as the kill tests cover it,
		// for a case that only a killed reopen makes.)
		leftover, err := s.staleAborted(runID, tip, c)
		if err == nil && len(leftover) > 0 {
			err = s.git.Update(leftover...)
		}
		if err != nil {
			return err
		}
		m := &manifest.Manifest{Format: manifest.Format, RunID: runID, StartedAt: st.StartedAt, CreatedAt: s.now(), Caller: st.Caller, Entries: entries}
		if m.Entries == nil {
			m.Entries = []manifest.Entry{}
		}
		m.TraceID = telemetry.TraceID(ctx)
		id, err := s.writeManifest(m)
		if err != nil {
			return err
		}
		journal, err := s.journal(runID, id, m)
		if err != nil {
			return err
		}
		// The run's ref, then the open run's removal, then the journal
		// that records the run: a process killed among the renames
		// leaves the run whole (gitstore.Store.Update), and readers take
		// an open ref beside the run's ref as committed (HalfDone).
		ups := append([]gitstore.RefUpdate{
			{Name: runRef(runID), Old: "", New: id},
			{Name: openRef(runID), Old: tip, New: ""}}, journal...)
		if err := s.git.Update(ups...); err != nil {
			return err
		}
		m.ID = string(id)
		out = m
		return nil
	})
	return out, err
}

// RunOnce resolves refs into a new run and commits it: start, mount and
// commit in one transaction.
func (s *Store) RunOnce(ctx context.Context, runID string, refs []string) (*manifest.Manifest, []*Delivery, error) {
	return s.runOnce(ctx, runID, refs, nil, true)
}

// RunOnceProgress is RunOnce reporting each document resolved to progress
// as (done, total). It returns the manifest only, and its entries hold only
// what manifest.Validate checks (position, URI, ref, snapshot, content hash,
// decision, size and file; ManifestAt reads the whole record): a run of
// many documents holds a few words per document, not its bytes nor its
// whole record, once the document is stored; from spoolFrom documents the
// records wait in a scratch file until the manifest is written.
func (s *Store) RunOnceProgress(ctx context.Context, runID string, refs []string, progress func(done, total int)) (*manifest.Manifest, error) {
	m, _, err := s.runOnce(ctx, runID, refs, progress, false)
	return m, err
}

func (s *Store) runOnce(ctx context.Context, runID string, refs []string, progress func(done, total int), keepContent bool) (_ *manifest.Manifest, _ []*Delivery, err error) {
	if err := validRun(runID); err != nil {
		return nil, nil, err
	}
	open, committed, err := s.liveOpen(runID)
	if err != nil {
		return nil, nil, err
	}
	if committed != "" {
		return nil, nil, s.committedRefusal(runID, committed)
	}
	if open != "" {
		return nil, nil, hint.With(fmt.Errorf("run %s: %w", runID, ErrRunOpen), "mount into it with `readproof run mount`, or use another id")
	}
	start := s.now()
	b := newRunBatch(len(refs))
	b.reuseReads = !keepContent
	var ds []*Delivery
	var sp *entrySpool
	if !keepContent && len(refs) >= spoolFrom {
		sp = s.newEntrySpool()
		defer sp.close()
	}
	m := &manifest.Manifest{Format: manifest.Format, RunID: runID, StartedAt: start, Caller: s.opts.Caller, Entries: make([]manifest.Entry, 0, len(refs))}
	for i, r := range refs {
		if progress != nil {
			progress(i, len(refs))
		}
		d, err := s.resolve(ctx, r, b)
		if err != nil {
			return nil, nil, err
		}
		d.Position = i
		if d.URI == r {
			// The argument's own string (as given, outside the heap for
			// the CLI's arguments) instead of the copy resolving made: a
			// run holds each URI once, not twice.
			d.URI = r
		}
		if keepContent {
			ds = append(ds, d)
		}
		if sp == nil {
			m.Entries = append(m.Entries, d.Entry)
			continue
		}
		if err := sp.sp.Add(&d.Entry); err != nil {
			return nil, nil, spoolError(runID, err)
		}
		m.Entries = append(m.Entries, lightEntry(d.Entry))
	}
	if progress != nil {
		progress(len(refs), len(refs))
	}
	m.CreatedAt = s.now()
	m.TraceID = telemetry.TraceID(ctx)
	ctx, span := startCommit(ctx, runID)
	defer func() { endCommit(ctx, span, m, err) }()
	id, err := s.writeManifestFrom(m, sp)
	if err != nil {
		return nil, nil, err
	}
	err = s.publish(b, func() ([]gitstore.RefUpdate, error) {
		open, committed, err := s.liveOpen(runID)
		if err != nil {
			return nil, err
		}
		if committed != "" {
			return nil, committedErr(runID, committed)
		}
		if open != "" {
			return nil, hint.With(fmt.Errorf("run %s: %w", runID, ErrRunOpen), "use another id")
		}
		journal, err := s.journal(runID, id, m)
		if err != nil {
			return nil, err
		}
		// The journal last: it records the run (gitstore.Store.Update).
		return append([]gitstore.RefUpdate{
			{Name: runRef(runID), Old: "", New: id},
			{Name: openRef(runID), Old: "", New: ""}}, journal...), nil
	})
	if err != nil {
		return nil, nil, err
	}
	m.ID = string(id)
	if !keepContent && sp == nil {
		for i := range m.Entries {
			m.Entries[i] = lightEntry(m.Entries[i])
		}
	}
	return m, ds, nil
}

// spoolError is a failed write of a run's spooled entries (a full disk,
// most likely).
func spoolError(runID string, err error) error {
	return hint.With(fmt.Errorf("run %s: write the manifest entries' scratch file: %w", runID, err),
		"make room on the store's file system and run again; nothing was recorded")
}

// checkManifestSize refuses a manifest.json of size bytes over
// manifest.MaxBytes, before it is stored.
func checkManifestSize(m *manifest.Manifest, size int64) error {
	if size <= manifest.MaxBytes {
		return nil
	}
	return hint.With(fmt.Errorf("run %s: manifest.json would be %d bytes (%d documents), more than the %d a manifest may hold: nothing was recorded",
		m.RunID, size, len(m.Entries), manifest.MaxBytes),
		"split the run: record its documents in several runs of fewer documents each")
}

// writeManifest writes a manifest's tree and commit (no ref).
func (s *Store) writeManifest(m *manifest.Manifest) (gitstore.OID, error) {
	return s.writeManifestFrom(m, nil)
}

// writeManifestFrom is writeManifest of a manifest whose entries were
// spooled to sp (its entries light), or held whole when sp is nil.
func (s *Store) writeManifestFrom(m *manifest.Manifest, sp *entrySpool) (gitstore.OID, error) {
	manifest.AssignFiles(m.Entries)
	var blob gitstore.OID
	var err error
	if sp != nil {
		blob, err = sp.put(s.git, m)
	} else {
		var data []byte
		if data, err = manifest.Encode(m); err == nil {
			if err = checkManifestSize(m, int64(len(data))); err == nil {
				blob, err = s.git.PutBlob(data)
			}
		}
	}
	if err != nil {
		return "", err
	}
	// The entries' files are distinct (Validate), and none is manifest.json
	// (they are under content/).
	files := make([]treeFile, 0, len(m.Entries)+1)
	files = append(files, treeFile{"manifest.json", blob})
	for _, e := range m.Entries {
		files = append(files, treeFile{e.File, gitstore.OID(e.Snapshot)})
	}
	tree, err := s.putTreeFiles(files)
	if err != nil {
		return "", err
	}
	sig := s.signature(m.CreatedAt)
	c := gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: manifest.Message(m)}
	if s.opts.SignCommit != nil {
		payload, err := gitstore.CommitPayload(c)
		if err != nil {
			return "", err
		}
		if c.Signature, err = s.opts.SignCommit(payload); err != nil {
			return "", fmt.Errorf("sign manifest commit: %w", err)
		}
	}
	return s.git.PutCommit(c)
}

// journal builds the next commit of refs/heads/main, which records each
// committed run with the manifest as second parent, so a plain `git clone`
// carries every manifest and `git log` lists them; its tree is the journal
// view with the run applied (JournalTree).
func (s *Store) journal(runID string, manifestID gitstore.OID, m *manifest.Manifest) ([]gitstore.RefUpdate, error) {
	tip, err := s.ref(JournalRef)
	if err != nil {
		return nil, err
	}
	j, err := s.journalOn(tip, runID, manifestID, m)
	if err != nil {
		return nil, err
	}
	return []gitstore.RefUpdate{{Name: JournalRef, Old: tip, New: j}}, nil
}

// journalOn writes the journal commit on tip ("" for none) that records
// run runID as manifestID (decoded as m, or nil to read it).
func (s *Store) journalOn(tip gitstore.OID, runID string, manifestID gitstore.OID, m *manifest.Manifest) (gitstore.OID, error) {
	parents := []gitstore.OID{manifestID}
	var journalParents []gitstore.OID
	if tip != "" {
		parents = []gitstore.OID{tip, manifestID}
		journalParents = []gitstore.OID{tip}
	}
	// The view is computed from the tip read above, so a writer that loses
	// the compare-and-swap computes it again on the new tip.
	tree, err := s.viewBuilder(s.git).withRun(manifestID, m).tree(journalParents, manifestID)
	if err != nil {
		return "", err
	}
	sig := s.signature(s.now())
	return s.git.PutCommit(gitstore.Commit{Tree: tree, Parents: parents, Author: sig, Committer: sig,
		Message: fmt.Sprintf("record run %s\n\nmanifest %s\n", runID, manifestID)})
}

// ManifestID resolves a run id or a manifest id to the manifest commit.
func (s *Store) ManifestID(target string) (gitstore.OID, error) {
	if identity.IsObjectID(target) {
		// the null id is well formed and names no object: not found, as
		// any other unknown id (Has refuses it as malformed)
		ok := false
		if strings.Trim(target, "0") != "" {
			var err error
			if ok, err = s.git.Has(gitstore.OID(target)); err != nil {
				return "", err
			}
		}
		if !ok {
			return "", hint.With(fmt.Errorf("manifest %s: %w", target, ErrUnknownTarget), "list runs with: readproof run list")
		}
		return gitstore.OID(target), nil
	}
	if err := identity.ValidateRunID(target); err != nil {
		return "", hint.With(fmt.Errorf("%q is neither a run id nor a manifest id: %w", identity.Shorten(target, 64), err), "give a run id or a 40-hex manifest id")
	}
	open, committed, err := s.runStatus(target)
	if err != nil {
		return "", err
	}
	if committed != "" {
		return committed, nil
	}
	if open != "" {
		if s.abortedTip(target, open) {
			return "", hint.With(fmt.Errorf("run %s was aborted: %w", target, ErrUnknownTarget), "open it again with: readproof run reopen "+target)
		}
		return "", hint.With(fmt.Errorf("run %s is still open: %w", target, ErrUnknownTarget), "commit it first: readproof run commit "+target)
	}
	// an aborted run (its open ref gone): said as for one whose abort
	// left the open ref above
	if ab, err := s.abortedRuns(target); err == nil && len(ab) > 0 {
		return "", hint.With(fmt.Errorf("run %s was aborted: %w", target, ErrUnknownTarget), "open it again with: readproof run reopen "+target)
	}
	return "", hint.With(fmt.Errorf("run %s: %w", target, ErrUnknownTarget), s.runHint(target))
}

// firstFew joins the first five of names, then "…" when there are more.
func firstFew(names []string) string {
	const most = 5
	s := strings.Join(names[:min(len(names), most)], ", ")
	if len(names) > most {
		s += ", …"
	}
	return s
}

// runHint is the hint for target, which names no run: the manifests whose
// ids start with it (readproof prints ids cut short), each with its run (at
// most five named), else the committed run ids it is the start of, else the
// committed run id nearest to it when one is near, else `run list`.
func (s *Store) runHint(target string) string {
	const list = "list runs with: readproof run list"
	refs, err := s.git.Refs(RunsPrefix)
	if err != nil {
		return list
	}
	if len(target) >= 4 && strings.Trim(target, "0123456789abcdef") == "" {
		// the manifests it starts, each with its (first) run, in ref order
		var ids []gitstore.OID
		runOf := map[gitstore.OID]string{}
		for _, r := range refs {
			if strings.HasPrefix(string(r.OID), target) {
				if _, ok := runOf[r.OID]; !ok {
					ids = append(ids, r.OID)
					runOf[r.OID] = strings.TrimPrefix(r.Name, RunsPrefix)
				}
			}
		}
		switch {
		case len(ids) == 1:
			return fmt.Sprintf("manifest ids are written in full: %s is the start of %s, the manifest of run %s", target, ids[0], runOf[ids[0]])
		case len(ids) > 1:
			names := make([]string, len(ids))
			for i, id := range ids {
				names[i] = string(id) + " (run " + runOf[id] + ")"
			}
			return fmt.Sprintf("manifest ids are written in full: %s is the start of %d manifests: %s (%s)", target, len(ids), firstFew(names), list)
		}
	}
	ids := make([]string, len(refs))
	var starts []string
	for i, r := range refs {
		ids[i] = strings.TrimPrefix(r.Name, RunsPrefix)
		if strings.HasPrefix(ids[i], target) {
			starts = append(starts, ids[i])
		}
	}
	// the start of longer ids (nightly for nightly-1 and nightly-2, or
	// for weekly-2026-12-05): every one it starts, however long the rest
	switch {
	case len(starts) == 1:
		return "did you mean " + starts[0] + "? (" + list + ")"
	case len(starts) > 1:
		return fmt.Sprintf("%s is the start of %d runs: %s (%s)", target, len(starts), firstFew(starts), list)
	}
	if best := text.Nearest(target, ids); best != "" {
		return "did you mean " + best + "? (" + list + ")"
	}
	return list
}

// Manifest reads the manifest of a run id or manifest id.
func (s *Store) Manifest(target string) (*manifest.Manifest, error) {
	id, err := s.ManifestID(target)
	if err != nil {
		return nil, err
	}
	return s.ManifestAt(id)
}

// ManifestAt reads the manifest stored in commit id.
func (s *Store) ManifestAt(id gitstore.OID) (*manifest.Manifest, error) {
	m, _, err := s.manifestData(id)
	return m, err
}

// manifestData is ManifestAt that also returns the manifest.json bytes m
// was decoded from.
func (s *Store) manifestData(id gitstore.OID) (*manifest.Manifest, []byte, error) {
	var m *manifest.Manifest
	data, err := s.decodeManifest(id, func(data []byte) (err error) {
		m, err = manifest.Decode(data)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	m.ID = string(id)
	return m, data, nil
}

// ManifestView is Manifest for a reader that only shows the manifest: what
// manifest.DecodeView keeps of it, read without building the Manifest.
func (s *Store) ManifestView(target string) (*manifest.View, error) {
	id, err := s.ManifestID(target)
	if err != nil {
		return nil, err
	}
	var v *manifest.View
	if _, err := s.decodeManifest(id, func(data []byte) (err error) {
		v, err = manifest.DecodeView(data)
		return err
	}); err != nil {
		return nil, err
	}
	v.ID = string(id)
	return v, nil
}

// ManifestSome is ManifestView for a reader that also needs some entries
// whole (a page of the MCP tools readproof_manifest and readproof_diff):
// the View of every entry, and whole the entries at the positions keep
// accepts (manifest.DecodeSome), without the Manifest of every entry.
func (s *Store) ManifestSome(target string, keep func(i int) bool) (*manifest.Some, error) {
	id, err := s.ManifestID(target)
	if err != nil {
		return nil, err
	}
	var m *manifest.Some
	if _, err := s.decodeManifest(id, func(data []byte) (err error) {
		m, err = manifest.DecodeSome(data, keep)
		return err
	}); err != nil {
		return nil, err
	}
	m.ID = string(id)
	return m, nil
}

// decodeManifest reads the manifest.json of manifest commit id and calls
// decode with its bytes, which it returns.
func (s *Store) decodeManifest(id gitstore.OID, decode func(data []byte) error) ([]byte, error) {
	c, err := s.git.Commit(id)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", id, err)
	}
	notManifest := func(err error) error {
		// A damaged or missing object of a manifest commit is the
		// store's damage, not a wrong id: its own error and hint stand.
		if errors.Is(err, gitstore.ErrCorrupt) || hint.Of(err) != "" {
			return fmt.Errorf("manifest %s: %w", id, err)
		}
		return hint.With(fmt.Errorf("commit %s is not a readproof manifest: %w", id, err), "give a run id or a manifest id printed by `readproof run commit`")
	}
	// A large manifest is decoded while its bytes are checked against
	// their id; nothing decoded is returned unless they match, and a
	// mismatch is the error readFile would have given.
	data, check, err := s.readFileVerifying(c, "manifest.json")
	if errors.Is(err, gitstore.ErrTooLarge) {
		return nil, hint.With(fmt.Errorf("manifest %s: manifest.json: %w (a manifest holds at most %d bytes)", id, err, manifest.MaxBytes),
			"this manifest was not written by readproof; run `readproof verify` and remove the run ref that names it")
	}
	if err != nil {
		return nil, notManifest(err)
	}
	err = decode(data)
	if cerr := check(); cerr != nil {
		return nil, notManifest(cerr)
	}
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", id, err)
	}
	return data, nil
}

// blobVerifier is a store that hands out a blob's bytes while it checks
// them (gitstore's BlobVerifying).
type blobVerifier interface {
	BlobVerifyingAtMost(id gitstore.OID, max int64) ([]byte, func() error, error)
}

// readFileVerifying is readFile through BlobVerifying where the store has
// it: check must return nil before anything made of the bytes is used.
func (s *Store) readFileVerifying(c gitstore.Commit, path string) ([]byte, func() error, error) {
	max := MaxBytesOf(path)
	id, err := s.file(c.Tree, path)
	if err != nil {
		return nil, nil, err
	}
	bv, ok := s.git.(blobVerifier)
	if !ok {
		data, err := s.git.BlobAtMost(id, max)
		return data, func() error { return nil }, err
	}
	return bv.BlobVerifyingAtMost(id, max)
}

// Content returns a snapshot's bytes.
func (s *Store) Content(snapshot string) ([]byte, error) {
	return s.git.Blob(gitstore.OID(snapshot))
}

// RunInfo is one run in a listing.
type RunInfo struct {
	RunID    string `json:"run_id"`
	Manifest string `json:"manifest,omitempty"`
	Open     bool   `json:"open"`
	// Aborted runs are listed by the commands that show them (run list),
	// from AbortedRuns; Runs never returns one.
	Aborted   bool       `json:"aborted,omitempty"`
	AbortedAt *time.Time `json:"aborted_at,omitempty"`
}

// Runs lists committed runs, then open ones, each sorted by id. An open
// ref that a killed commit or abort left (HalfDone) is not an open run:
// its run is listed as committed, or by AbortedRuns.
func (s *Store) Runs() ([]RunInfo, error) {
	var out []RunInfo
	refs, err := s.git.Refs(RunsPrefix)
	if err != nil {
		return nil, err
	}
	committed := make(map[string]bool, len(refs))
	for _, r := range refs {
		id := strings.TrimPrefix(r.Name, RunsPrefix)
		committed[id] = true
		out = append(out, RunInfo{RunID: id, Manifest: string(r.OID)})
	}
	refs, err = s.git.Refs(OpenPrefix)
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		id := strings.TrimPrefix(r.Name, OpenPrefix)
		if committed[id] {
			continue
		}
		if s.abortedTip(id, r.OID) {
			continue
		}
		out = append(out, RunInfo{RunID: id, Open: true})
	}
	return out, nil
}

// JournalLast returns ups with the journal's update, if it has one, moved
// to the end, the others in their order: the journal records runs and
// checks, so it is renamed after the refs it records
// (gitstore.Store.Update).
func JournalLast(ups []gitstore.RefUpdate) []gitstore.RefUpdate {
	i := slices.IndexFunc(ups, func(u gitstore.RefUpdate) bool { return u.Name == JournalRef })
	if i < 0 || i == len(ups)-1 {
		return ups
	}
	out := append(append(make([]gitstore.RefUpdate, 0, len(ups)), ups[:i]...), ups[i+1:]...)
	return append(out, ups[i])
}
