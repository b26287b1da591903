package storecheck

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/receipts"
)

// checkReceipts decodes every receipt of every session chain and index
// chain and cross-checks the two (receipts.Ledger.Check), on the commits
// and trees walk decoded (walked): the binding check's walk of a chain's
// history, and checkReceiptGrowth's, read each commit once between them.
// A receipt that came into a chain otherwise than by its own append commit
// is reported once, by the growth check, which names the commit that
// brought it and how; Check's report of its binding line (no append
// commit, or the line of a commit that does not add it) says less and is
// left out.
func (c *checker) checkReceipts() {
	issues, err := receipts.NewReadOnlyLedger(walked{c.g, c}).Check()
	if err != nil {
		c.add(Problem{Kind: CouldNotCheck, cause: err, Check: "receipts", Subject: "receipts", Message: err.Error()})
		return
	}
	n := len(c.rep.Problems)
	c.strays = map[string]bool{}
	c.checkReceiptGrowth()
	growth := slices.Clone(c.rep.Problems[n:])
	c.rep.Problems = c.rep.Problems[:n]
	for _, is := range issues {
		if is.Binding && c.strays[is.Ref+"\x00"+is.ID] {
			continue
		}
		c.add(Problem{Kind: Broken, Check: "receipts", Subject: "receipts " + strings.TrimPrefix(is.Ref, receipts.RefPrefix), Ref: is.Ref,
			Path: is.ID, Message: is.Message})
	}
	c.rep.Problems = append(c.rep.Problems, growth...)
}

// walked answers Commit and Tree from the objects walk decoded, and
// everything else (or an object walk did not reach) from the store.
type walked struct {
	gitstore.Reader
	c *checker
}

func (w walked) Commit(id gitstore.OID) (gitstore.Commit, error) {
	if cm, ok := w.c.commits[id]; ok {
		return cm, nil
	}
	return w.Reader.Commit(id)
}

func (w walked) Tree(id gitstore.OID) ([]gitstore.TreeEntry, error) {
	if t, ok := w.c.trees[id]; ok {
		return t, nil
	}
	return w.Reader.Tree(id)
}

// checkReceiptGrowth checks every commit of every receipt chain against its
// parents (receipts.Shrinks, on the trees walk read): a chain only grows,
// so a file a commit in the middle adds and a later one removes, hidden
// from the tip that Ledger.Check reads while `git log -p` of the chain
// shows it, is reported at the commit that drops it. A merge keeps one
// side's blob of an id both sides hold with other bytes: there the other
// blob is decoded as a receipt of that id.
func (c *checker) checkReceiptGrowth() {
	for _, ref := range sortedKeys(c.walked) {
		if !strings.HasPrefix(ref, receipts.RefPrefix) || c.refBad[ref] {
			continue
		}
		subject := "receipts " + strings.TrimPrefix(ref, receipts.RefPrefix)
		for _, id := range c.commitsFrom(c.walked[ref]) {
			cm := c.commits[id]
			c.checkReceiptsAdded(ref, subject, id, cm)
			for _, parent := range cm.Parents {
				pc, ok := c.commits[parent]
				if !ok {
					continue
				}
				shrunk, err := receipts.Shrinks(c.readTree, pc.Tree, cm.Tree)
				if err != nil {
					continue
				}
				for _, d := range shrunk {
					p := Problem{Kind: Broken, Check: "receipts", Subject: subject, Ref: ref, Object: string(id), Path: d.Path}
					switch {
					case d.Gone:
						p.Message = fmt.Sprintf("the file of parent %s is gone: a receipt chain only grows, so a file one commit adds and a later one removes is hidden from the tip while `git log -p` of the chain shows it; readproof did not write these commits: restore the chain from a copy that holds it as readproof wrote it", parent)
					case len(cm.Parents) == 1:
						p.Message = fmt.Sprintf("blob %s of parent %s is replaced by %s: a receipt chain only grows; readproof did not write this commit: restore the chain from a copy that holds it as readproof wrote it", d.Was, parent, d.Now)
					default:
						_, name := path.Split(d.Path)
						rid, _ := strings.CutSuffix(name, ".json")
						data, err := c.g.BlobAtMost(d.Was, store.MaxRecordBytes)
						if err == nil {
							var r receipts.Receipt
							if r, err = receipts.DecodeReceipt(data); err == nil && r.ID != rid {
								err = fmt.Errorf("the blob holds receipt %s", r.ID)
							}
						}
						if err == nil {
							continue
						}
						p.Message = fmt.Sprintf("the blob of parent %s: %v", parent, err)
					}
					c.add(p)
				}
			}
		}
	}
}

// checkReceiptsAdded checks how the files commit id of receipt chain ref
// adds reached the chain (receipts.CheckAdded, on the trees walk read):
// each receipt by its own append commit, whose binding line is checked, so
// an append adds only the receipt its first line names and a merge only
// files one of its parents holds. A receipt brought in otherwise, by a
// merge or beside another receipt's append, has no binding line checked:
// for a version 1 receipt, whose binding is that line, nothing else reports
// it. This is the rule pull, clone and the guarded remote apply to the
// commits they take; a store that took such commits before them is told
// here. A commit whose parents walk did not read is skipped: walk reported
// them.
func (c *checker) checkReceiptsAdded(ref, subject string, id gitstore.OID, cm gitstore.Commit) {
	pts := make([]gitstore.OID, len(cm.Parents))
	for i, parent := range cm.Parents {
		pc, ok := c.commits[parent]
		if !ok {
			return
		}
		pts[i] = pc.Tree
	}
	strays, err := receipts.CheckAdded(c.readTree, ref, pts, cm.Tree, cm.Message)
	if err != nil {
		return // a tree walk could not read, reported by walk
	}
	for _, s := range strays {
		c.add(Problem{Kind: Broken, Check: "receipts", Subject: subject, Ref: ref, Object: string(id), Path: s.Path,
			Message: fmt.Sprintf("%s; readproof did not write this commit: restore the chain from a copy that holds it as readproof wrote it", s.Why)})
		if rid, ok := strings.CutSuffix(path.Base(s.Path), ".json"); ok && s.Path != "" {
			c.strays[ref+"\x00"+rid] = true
		}
	}
}

// checkVerdicts decodes every record of every verdict chain: it names the
// run's manifest and fits it, check numbers count up by one along the
// chain, an adjudicated entry stays adjudicated with its first verdict, and
// with the probe key every record's MAC authenticates it. Then every check
// the journal records must still be in its run's chain.
func (c *checker) checkVerdicts(refs []gitstore.Ref) {
	var unauth, otherKey, noKey, verified int
	for _, r := range refs {
		run := strings.TrimPrefix(r.Name, store.VerdictsPrefix)
		subject := "verdicts of run " + run
		broken := func(id gitstore.OID, format string, args ...any) {
			c.add(Problem{Kind: Broken, Check: "verdicts", Subject: subject, Ref: r.Name, Run: run, Object: string(id), Message: fmt.Sprintf(format, args...)})
		}
		if c.refBad[r.Name] {
			continue // its objects were reported
		}
		mid, err := c.g.Ref(store.RunsPrefix + run)
		if err != nil {
			broken(r.OID, "a verdict chain for run %s, which has no run ref", run)
			continue
		}
		m, err := c.s.ManifestAt(mid)
		if err != nil {
			continue // the run's own check reports it
		}
		// the manifest a record is judged with: the one it names when that
		// is the run's, one a pull keeps as a conflict of this run id
		// (the remote's run of the same id, whose checks its chain brought:
		// docs/sync.md; pull and clone adopt such a record, and before
		// session 31's re-read verify reported it broken), or one
		// recorded under this run id that the journal records renamed
		// away from it (a settled conflict: a rename moves no chain, so the checks of the manifest
		// while it was this run stay here; before, verify reported them
		// broken once `conflicts rename` had run); any other record is
		// judged with the run's, which it does not fit
		var conflicts map[string]*manifest.Manifest
		manifestOf := func(id string) *manifest.Manifest {
			if id == m.ID {
				return m
			}
			if conflicts == nil {
				conflicts = map[string]*manifest.Manifest{}
				refs, _ := c.g.Refs(store.ConflictRunsPrefix + run + "/")
				for _, ref := range refs {
					if ref.Name == store.ConflictRunRef(run, ref.OID) {
						if cm, err := c.s.ManifestAt(ref.OID); err == nil && cm.ID == string(ref.OID) {
							conflicts[cm.ID] = cm
						}
					}
				}
			}
			if cm, ok := conflicts[id]; ok {
				return cm
			}
			if edges := c.renames[gitstore.OID(id)]; len(edges[run]) > 0 {
				if cm, err := c.s.ManifestAt(gitstore.OID(id)); err == nil && cm.ID == id && store.RenamedAway(edges, cm.RunID, run) {
					conflicts[id] = cm
					return cm
				}
			}
			return m
		}
		var newer *store.VerdictRecord
		var newerID gitstore.OID
		var links []store.VerdictLink // newest first
		for id := r.OID; id != ""; {
			cm, ok := c.commits[id]
			if !ok {
				break
			}
			next := gitstore.OID("")
			if len(cm.Parents) > 0 {
				next = cm.Parents[0]
			}
			if next != "" {
				if pc, ok := c.commits[next]; ok && store.IsVerdictMergeCopy(cm, pc.Tree) {
					id = next // a sync merge repeats its first parent's record
					continue
				}
			}
			data, ok := c.file(r.Name, cm, id, store.VerdictsFile, "verdicts")
			if !ok {
				break
			}
			if entries, read := c.trees[cm.Tree]; read {
				if p := store.VerdictTreeExtra(entries); p != "" {
					broken(id, "%s: tree entry %s is not part of the verdict record: no reader reads it, yet `git show` and `git log -p` of the chain show it with the check (%s); readproof did not write this commit: restore the chain from a copy that holds it as readproof wrote it", p, p, store.VerdictTreeRule)
				}
			}
			rec, err := store.DecodeVerdicts(run, data)
			if err == nil {
				err = rec.Validate(run, manifestOf(rec.ManifestID))
			}
			if err != nil {
				broken(id, "record does not decode: %v", err)
				break
			}
			rec.ID = string(id)
			if newer != nil {
				if newer.Check != rec.Check+1 {
					broken(newerID, "check %d follows check %d: the chain lost or reordered a record", newer.Check, rec.Check)
				}
				for _, v := range rec.Entries {
					nv := newer.Entry(v.Position)
					if v.Adjudicated && (nv == nil || !nv.Adjudicated || nv.AdjudicatedVerdict != v.AdjudicatedVerdict) {
						broken(newerID, "check %d drops the adjudication of entry %d that check %d recorded: replay protection was reset", newer.Check, v.Position, rec.Check)
					}
				}
			} else if next == "" && rec.Check != 1 {
				broken(id, "the chain starts at check %d, not 1", rec.Check)
			}
			links = append(links, store.VerdictLink{Record: rec, Parent: next})
			newer, newerID = rec, id
			id = next
		}
		// the MACs, by the rules pull and evidence verify apply as well
		slices.Reverse(links)
		mounted := map[string]map[int]bool{} // by manifest, the entries mounted with the key in use, read once a chain
		for i, j := range store.JudgeVerdictChain(links, c.opts.ProbeKeys) {
			rec := links[i].Record
			id := gitstore.OID(rec.ID)
			// a record the rules below pass that was still written
			// without the key, as evidence verify judges it (before
			// session 29 verify only warned of it)
			rm := manifestOf(rec.ManifestID)
			seen := mounted[rm.ID]
			why := c.s.VerdictWithoutKey(rec, j, rm, c.opts.ProbeKeys, &seen)
			mounted[rm.ID] = seen
			if why != "" {
				broken(id, "%s", why)
				continue
			}
			switch j.Standing {
			case store.VerdictNotChecked:
				// a MAC, or a mac_key without one (a cut MAC): a key
				// checks it, so it is not a record without a MAC
				noKey++
			case store.VerdictVerified:
				verified++
			case store.VerdictUnauthenticated:
				unauth++
			case store.VerdictOtherKey:
				otherKey++ // rotated since: no record under the key in use precedes it
			case store.VerdictFails:
				broken(id, "%v", j.Err)
			case store.VerdictStripped:
				unauth++ // with the key or without: it carries none
				broken(id, "check %d carries no MAC although check %d does: it was written or edited without the probe key", rec.Check, j.Before.Check)
			case store.VerdictRotatedBackwards:
				broken(id, "%v; check %d before it is under the probe key in use, and keys only rotate forward", j.Err, j.Before.Check)
			}
		}
	}
	if unauth > 0 {
		c.add(Problem{Kind: Warning, Check: "verdicts", Subject: "store",
			Message: fmt.Sprintf("%d verdict record%s no MAC (recorded before verdict records were authenticated, or without the probe key)", unauth, text.Plural(unauth, " carries", "s carry"))})
	}
	if otherKey > 0 {
		c.add(Problem{Kind: Warning, Check: "verdicts", Subject: "store",
			Message: fmt.Sprintf("%d verdict record%s authenticated under another probe key (rotated since) could not be checked", otherKey, text.Plural(otherKey, "", "s"))})
	}
	if c.opts.ProbeKeys == nil && c.opts.ProbeKeyUnusable != nil {
		c.add(Problem{Kind: Warning, Check: "verdicts", Subject: "probe key",
			Message: fmt.Sprintf("%d verdict record MAC%s not checked: %v", noKey, text.Plural(noKey, "", "s"), c.opts.ProbeKeyUnusable)})
	} else if noKey > 0 {
		c.add(Problem{Kind: Warning, Check: "verdicts", Subject: "store",
			Message: fmt.Sprintf("%d verdict record MAC%s not checked: no probe key (create or name it: readproof probe key init, [probe] key)", noKey, text.Plural(noKey, "", "s"))})
	}
	c.rep.Counts.Verdicts = verified
	c.checkRecordedChecks()
}

// checkRecordedChecks: every check the journal records must be in its run's
// verdict chain; a deleted or rewound chain would otherwise reset replay
// protection unnoticed.
func (c *checker) checkRecordedChecks() {
	recorded, err := c.s.RecordedChecks()
	if err != nil {
		c.add(Problem{Kind: CouldNotCheck, cause: err, Check: "verdicts", Subject: "journal", Ref: store.JournalRef, Message: fmt.Sprintf("cannot read the checks the journal records: %v", err)})
		return
	}
	for _, run := range sortedKeys(recorded) {
		jc := recorded[run]
		ref := store.VerdictsPrefix + run
		p := Problem{Kind: Broken, Check: "verdicts", Subject: "verdicts of run " + run, Ref: ref, Run: run, Object: string(jc.Verdicts)}
		tip, err := c.g.Ref(ref)
		if errors.Is(err, gitstore.ErrNotFound) {
			p.Message = fmt.Sprintf("the journal records check %d of run %s (verdict commit %s, journal commit %s) but %s is missing: the verdict chain was deleted; the next `readproof probe check` continues it from the journal, or restore it from a clone",
				jc.Check, run, short(jc.Verdicts), short(jc.Journal), ref)
			c.add(p)
			continue
		}
		if err != nil {
			continue
		}
		found := false
		for _, id := range c.commitsFrom(tip) {
			if id == jc.Verdicts {
				found = true
				break
			}
		}
		if !found {
			p.Message = fmt.Sprintf("the journal records check %d of run %s (verdict commit %s) but the verdict chain does not contain it: the chain was rewound or replaced", jc.Check, run, short(jc.Verdicts))
			c.add(p)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkJournalShape checks that main is a journal (docs/store-format.md,
// "Journal"): every commit its journal history holds has the empty tree or
// a journal view as its tree, and is the store's root, a run record (last parent a manifest), a check record
// (second parent a verdict commit), a rename or a merge of journals.
func (c *checker) checkJournalShape(main gitstore.OID) {
	named := 0
	broken := func(id gitstore.OID, format string, args ...any) {
		named++
		if named <= maxNamed {
			c.add(Problem{Kind: Broken, Check: "journal", Subject: "journal", Ref: store.JournalRef, Object: string(id), Message: fmt.Sprintf(format, args...)})
		}
	}
	has := func(id gitstore.OID, file string) bool {
		cm, ok := c.commits[id]
		if !ok {
			return true // unreadable: reported by walk
		}
		_, found, known := c.lookup(cm.Tree, file)
		return found || !known
	}
	seen := map[gitstore.OID]bool{main: true}
	stack := []gitstore.OID{main}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		cm, ok := c.commits[id]
		if !ok {
			continue
		}
		head, _, _ := strings.Cut(cm.Message, "\n")
		if !store.IsJournalCommit(cm) {
			broken(id, "commit %s on the journal is not a journal record (%q, %d parents)", short(id), head, len(cm.Parents))
			continue
		}
		var shape error
		if entries, read := c.trees[cm.Tree]; read && cm.Tree != store.EmptyTree && id != main {
			shape = store.CheckViewRoot(entries) // the tip's run.json is decoded below
		} else {
			shape = store.ViewShape(c.g, cm.Tree)
		}
		if err := shape; err != nil {
			broken(id, "commit %s on the journal (%q): %v: refs/heads/main must be the readproof journal", short(id), head, err)
			continue
		}
		next := cm.Parents
		switch {
		case strings.HasPrefix(head, "record run "):
			m := cm.Parents[len(cm.Parents)-1]
			if !has(m, "manifest.json") {
				broken(id, "journal commit %s (%q) names %s, which is not a manifest", short(id), head, short(m))
			}
			next = cm.Parents[:len(cm.Parents)-1]
		case strings.HasPrefix(head, "record check "):
			if !has(cm.Parents[1], store.VerdictsFile) {
				broken(id, "journal commit %s (%q) names %s, which is not a verdict record", short(id), head, short(cm.Parents[1]))
			}
			next = cm.Parents[:1]
		}
		for _, p := range next {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	if named > maxNamed {
		c.add(Problem{Kind: Broken, Check: "journal", Subject: "journal", Ref: store.JournalRef, Message: fmt.Sprintf("%d more commits on the journal are not journal records", named-maxNamed)})
	}
}

// checkJournalView checks the journal's document view (docs/store-format.md,
// "Journal view"): a journal still in format 1 (empty trees on a journal
// that records runs) gets a warning naming the migration; a view at the tip
// that is not the view of the runs the journal records is broken (it is
// derived data: `readproof migrate` writes the right one). The recompute
// reads every manifest the journal records, so it runs with --read-data.
func (c *checker) checkJournalView(main gitstore.OID) {
	format, err := store.JournalFormat(c.g, main)
	if err != nil {
		c.add(Problem{Kind: CouldNotCheck, cause: err, Check: "journal", Subject: "journal", Ref: store.JournalRef, Message: fmt.Sprintf("cannot read the journal's view: %v", err)})
		return
	}
	if format < store.JournalFormatVersion {
		c.add(Problem{Kind: Warning, Check: "journal", Subject: "journal", Ref: store.JournalRef, Object: string(main),
			Message: fmt.Sprintf("the journal is in store format %d (no document view on main); run `readproof migrate` to bring it to format %d (one commit on main; nothing else changes)", format, store.JournalFormatVersion)})
		return
	}
	if !c.opts.ReadData {
		return
	}
	cm, ok := c.commits[main]
	if !ok {
		return
	}
	want, err := store.FullJournalTree(c.g, main)
	if err != nil {
		c.add(Problem{Kind: CouldNotCheck, cause: err, Check: "journal", Subject: "journal", Ref: store.JournalRef, Message: fmt.Sprintf("cannot compute the journal's view: %v", err)})
		return
	}
	if want != cm.Tree && !(want == store.EmptyTree && cm.Tree == store.EmptyTree) {
		c.add(Problem{Kind: Broken, Check: "journal", Subject: "journal", Ref: store.JournalRef, Object: string(main),
			Message: fmt.Sprintf("the journal's tree %s is not the view of the runs it records (expected %s); run `readproof migrate` to write the right one", short(cm.Tree), short(want))})
	}
}
